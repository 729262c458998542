#include "ops/math/math_family.h"

#include "base/status_macros.h"
#include "ops/math/bessel_functions.h"
#include "ops/math/batch_matmul_ops.h"
#include "ops/math/bincount_ops.h"
#include "ops/math/bitwise_ops.h"
#include "ops/math/check_ops.h"
#include "ops/math/compat_math_ops.h"
#include "ops/math/composite_ops.h"
#include "ops/math/einsum.h"
#include "ops/math/histogram_ops.h"
#include "ops/math/incomplete_functions.h"
#include "ops/math/linalg_ops.h"
#include "ops/math/math_gradients.h"
#include "ops/math/math_ops.h"
#include "ops/math/scan_ops.h"
#include "ops/math/special_functions.h"
#include "ops/math/special_integrals.h"

namespace sluice {

absl::Status RegisterMathFamilyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterScanOps(ops));
  RETURN_IF_ERROR(RegisterCheckOps(ops));
  RETURN_IF_ERROR(RegisterBatchMatMulOps(ops));
  RETURN_IF_ERROR(RegisterMathOps(ops));
  RETURN_IF_ERROR(RegisterEinsumOps(ops));
  RETURN_IF_ERROR(RegisterBincountOps(ops));
  RETURN_IF_ERROR(RegisterLinalgOps(ops));
  RETURN_IF_ERROR(RegisterBitwiseOps(ops));
  RETURN_IF_ERROR(RegisterSpecialFunctionOps(ops));
  RETURN_IF_ERROR(RegisterIncompleteFunctionOps(ops));
  RETURN_IF_ERROR(RegisterBesselFunctionOps(ops));
  RETURN_IF_ERROR(RegisterSpecialIntegralOps(ops));
  RETURN_IF_ERROR(RegisterHistogramOps(ops));
  RETURN_IF_ERROR(RegisterCompositeOps(ops));
  RETURN_IF_ERROR(RegisterCompatMathOps(ops));
  return absl::OkStatus();
}

absl::Status RegisterMathFamilyGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterMathGradients(ops));
  RETURN_IF_ERROR(RegisterScanAndCheckGradients(ops));
  RETURN_IF_ERROR(RegisterBatchMatMulGradients(ops));
  RETURN_IF_ERROR(RegisterLinalgGradients(ops));
  RETURN_IF_ERROR(RegisterSpecialFunctionGradients(ops));
  RETURN_IF_ERROR(RegisterCompatMathGradients(ops));
  return absl::OkStatus();
}

void RegisterMathFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterScanKernels(kernels);
  RegisterCheckKernels(kernels);
  RegisterBatchMatMulKernels(kernels);
  RegisterMathKernels(kernels);
  RegisterBincountKernels(kernels);
  RegisterLinalgKernels(kernels);
  RegisterBitwiseKernels(kernels);
  RegisterSpecialFunctionKernels(kernels);
  RegisterIncompleteFunctionKernels(kernels);
  RegisterBesselFunctionKernels(kernels);
  RegisterSpecialIntegralKernels(kernels);
  RegisterHistogramKernels(kernels);
  RegisterCompatMathKernels(kernels);
}

}  // namespace sluice
