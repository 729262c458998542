#include "ops/random/random_family.h"

#include "base/status_macros.h"
#include "ops/random/distribution_ops.h"
#include "ops/random/multinomial_ops.h"
#include "ops/random/random_ops.h"
#include "ops/random/random_shuffle_ops.h"
#include "ops/random/stateful_random_ops.h"

namespace sluice {

absl::Status RegisterRandomFamilyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterRandomOps(ops));
  RETURN_IF_ERROR(RegisterRandomShuffleOps(ops));
  RETURN_IF_ERROR(RegisterMultinomialOps(ops));
  RETURN_IF_ERROR(RegisterStatefulRandomOps(ops));
  RETURN_IF_ERROR(RegisterDistributionOps(ops));
  return absl::OkStatus();
}

void RegisterRandomFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterRandomKernels(kernels);
  RegisterRandomShuffleKernels(kernels);
  RegisterMultinomialKernels(kernels);
  RegisterStatefulRandomKernels(kernels);
  RegisterDistributionKernels(kernels);
}

}  // namespace sluice
