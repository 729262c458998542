#include "ops/nn/nn_family.h"

#include "base/status_macros.h"
#include "ops/nn/activation_grad_ops.h"
#include "ops/nn/activation_ops.h"
#include "ops/nn/batch_norm_grad_ops.h"
#include "ops/nn/batch_norm_ops.h"
#include "ops/nn/candidate_sampling_ops.h"
#include "ops/nn/ctc_ops.h"
#include "ops/nn/depthwise_conv_ops.h"
#include "ops/nn/fused_ops.h"
#include "ops/nn/lrn_ops.h"
#include "ops/nn/data_format_ops.h"
#include "ops/nn/fake_quant_ops.h"
#include "ops/nn/max_pool_ops.h"
#include "ops/nn/nn3d_ops.h"
#include "ops/nn/nn_gradients.h"
#include "ops/nn/nn_ops.h"
#include "ops/nn/rnn_block_ops.h"

namespace sluice {

absl::Status RegisterNnFamilyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterLrnOps(ops));
  RETURN_IF_ERROR(RegisterCandidateSamplingOps(ops));
  RETURN_IF_ERROR(RegisterCtcOps(ops));
  RETURN_IF_ERROR(RegisterMaxPoolOps(ops));
  RETURN_IF_ERROR(RegisterFakeQuantOps(ops));
  RETURN_IF_ERROR(RegisterDataFormatOps(ops));
  RETURN_IF_ERROR(RegisterRnnBlockOps(ops));
  RETURN_IF_ERROR(RegisterNn3dOps(ops));
  RETURN_IF_ERROR(RegisterDepthwiseConvOps(ops));
  RETURN_IF_ERROR(RegisterBatchNormGradOps(ops));
  RETURN_IF_ERROR(RegisterActivationGradOps(ops));
  RETURN_IF_ERROR(RegisterActivationOps(ops));
  RETURN_IF_ERROR(RegisterBatchNormOps(ops));
  RETURN_IF_ERROR(RegisterFusedOps(ops));
  RETURN_IF_ERROR(RegisterNnOps(ops));
  return absl::OkStatus();
}

absl::Status RegisterNnFamilyGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterNnGradients(ops));
  RETURN_IF_ERROR(RegisterActivationGradients(ops));
  RETURN_IF_ERROR(RegisterBatchNormGradients(ops));
  RETURN_IF_ERROR(RegisterLrnGradients(ops));
  RETURN_IF_ERROR(RegisterMaxPoolGradients(ops));
  RETURN_IF_ERROR(RegisterFakeQuantGradients(ops));
  RETURN_IF_ERROR(RegisterRnnBlockGradients(ops));
  RETURN_IF_ERROR(RegisterNn3dGradients(ops));
  RETURN_IF_ERROR(RegisterDepthwiseConvGradients(ops));
  return absl::OkStatus();
}

void RegisterNnFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterLrnKernels(kernels);
  RegisterCandidateSamplingKernels(kernels);
  RegisterCtcKernels(kernels);
  RegisterMaxPoolKernels(kernels);
  RegisterFakeQuantKernels(kernels);
  RegisterDataFormatKernels(kernels);
  RegisterLstmBlockKernels(kernels);
  RegisterGruBlockKernels(kernels);
  RegisterNn3dKernels(kernels);
  RegisterDepthwiseConvKernels(kernels);
  RegisterBatchNormGradKernels(kernels);
  RegisterActivationGradKernels(kernels);
  RegisterActivationKernels(kernels);
  RegisterBatchNormKernels(kernels);
  RegisterFusedKernels(kernels);
  RegisterNnKernels(kernels);
}

}  // namespace sluice
