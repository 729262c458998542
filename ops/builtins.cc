#include "ops/builtins.h"

#include <cstdlib>
#include <iostream>

#include "base/status_macros.h"
#include "ops/array_ops.h"
#include "ops/collective_ops.h"
#include "ops/control_flow_ops.h"
#include "ops/data_flow_ops.h"
#include "ops/cpu_backend.h"
#include "ops/gpu/gpu_backend.h"
#include "ops/gradients.h"
#include "ops/io_ops.h"
#include "ops/math_ops.h"
#include "ops/nn_ops.h"
#include "ops/random_ops.h"
#include "ops/stack_ops.h"
#include "ops/activation_ops.h"
#include "ops/array_layout_ops.h"
#include "ops/index_ops.h"
#include "ops/array_rearrange_ops.h"
#include "ops/batch_matmul_ops.h"
#include "ops/fused_ops.h"
#include "ops/batch_norm_ops.h"
#include "ops/check_ops.h"
#include "ops/resource_variable_ops.h"
#include "ops/scan_ops.h"
#include "ops/activation_grad_ops.h"
#include "ops/batch_norm_grad_ops.h"
#include "ops/depthwise_conv_ops.h"
#include "ops/nn3d_ops.h"
#include "ops/lrn_ops.h"
#include "ops/rnn_block_ops.h"
#include "ops/tensor_array_ops.h"
#include "ops/state_ops.h"
#include "ops/summary_ops.h"
#include "ops/scatter_ops.h"
#include "ops/sharded_checkpoint_ops.h"
#include "ops/queue_ops.h"
#include "ops/training_ops.h"
#include "runtime/frame_ops.h"
#include "runtime/sendrecv_ops.h"

namespace sluice {

absl::Status RegisterBuiltinOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterFrameOps(ops));
  RETURN_IF_ERROR(RegisterSendRecvOps(ops));
  RETURN_IF_ERROR(RegisterArrayOps(ops));
  RETURN_IF_ERROR(RegisterControlFlowOps(ops));
  RETURN_IF_ERROR(RegisterStackOps(ops));
  RETURN_IF_ERROR(RegisterTensorArrayOps(ops));
  RETURN_IF_ERROR(RegisterLrnOps(ops));
  RETURN_IF_ERROR(RegisterRnnBlockOps(ops));
  RETURN_IF_ERROR(RegisterNn3dOps(ops));
  RETURN_IF_ERROR(RegisterDepthwiseConvOps(ops));
  RETURN_IF_ERROR(RegisterBatchNormGradOps(ops));
  RETURN_IF_ERROR(RegisterActivationGradOps(ops));
  RETURN_IF_ERROR(RegisterActivationOps(ops));
  RETURN_IF_ERROR(RegisterArrayLayoutOps(ops));
  RETURN_IF_ERROR(RegisterIndexOps(ops));
  RETURN_IF_ERROR(RegisterArrayRearrangeOps(ops));
  RETURN_IF_ERROR(RegisterScanOps(ops));
  RETURN_IF_ERROR(RegisterCheckOps(ops));
  RETURN_IF_ERROR(RegisterResourceVariableOps(ops));
  RETURN_IF_ERROR(RegisterBatchNormOps(ops));
  RETURN_IF_ERROR(RegisterBatchMatMulOps(ops));
  RETURN_IF_ERROR(RegisterFusedOps(ops));
  RETURN_IF_ERROR(RegisterMathOps(ops));
  RETURN_IF_ERROR(RegisterNnOps(ops));
  RETURN_IF_ERROR(RegisterStateOps(ops));
  RETURN_IF_ERROR(RegisterRandomOps(ops));
  RETURN_IF_ERROR(RegisterTrainingOps(ops));
  RETURN_IF_ERROR(RegisterScatterOps(ops));
  RETURN_IF_ERROR(RegisterShardedCheckpointOps(ops));
  RETURN_IF_ERROR(RegisterQueueOps(ops));
  RETURN_IF_ERROR(RegisterDataFlowOps(ops));
  RETURN_IF_ERROR(RegisterSummaryOps(ops));
  RETURN_IF_ERROR(RegisterIoOps(ops));
  RETURN_IF_ERROR(RegisterCollectiveOps(ops));
  RETURN_IF_ERROR(RegisterArrayGradients(ops));
  RETURN_IF_ERROR(RegisterMathGradients(ops));
  RETURN_IF_ERROR(RegisterNnGradients(ops));
  RETURN_IF_ERROR(RegisterControlFlowGradients(ops));
  RETURN_IF_ERROR(RegisterTensorArrayGradients(ops));
  RETURN_IF_ERROR(RegisterActivationGradients(ops));
  RETURN_IF_ERROR(RegisterArrayLayoutGradients(ops));
  RETURN_IF_ERROR(RegisterIndexGradients(ops));
  RETURN_IF_ERROR(RegisterArrayRearrangeGradients(ops));
  RETURN_IF_ERROR(RegisterScanAndCheckGradients(ops));
  RETURN_IF_ERROR(RegisterBatchNormGradients(ops));
  RETURN_IF_ERROR(RegisterBatchMatMulGradients(ops));
  RETURN_IF_ERROR(RegisterLrnGradients(ops));
  RETURN_IF_ERROR(RegisterRnnBlockGradients(ops));
  RETURN_IF_ERROR(RegisterNn3dGradients(ops));
  RETURN_IF_ERROR(RegisterDepthwiseConvGradients(ops));
  RETURN_IF_ERROR(RegisterCollectiveGradients(ops));
  return absl::OkStatus();
}

void RegisterBuiltinKernels(KernelRegistry* kernels) { BuiltinBackends()->RegisterKernels(kernels); }

const BackendRegistry* BuiltinBackends() {
  static const BackendRegistry* const kBackends = [] {
    auto* backends = new BackendRegistry();
    // CPU first: the GPU's host kernels for int32 copy the CPU kernels.
    absl::Status s = backends->Add(NewCpuBackend());
    if (s.ok()) s = backends->Add(NewGpuBackend());
    if (!s.ok()) {
      std::cerr << "sluice: registering the built-in backends failed: " << s << "\n";
      std::abort();
    }
    return backends;
  }();
  return kBackends;
}

const OpRegistry* BuiltinOps() {
  static const OpRegistry* const kOps = [] {
    auto* ops = new OpRegistry();
    absl::Status s = RegisterBuiltinOps(ops);
    if (!s.ok()) {
      // A broken built-in definition is a bug in Sluice itself, never user input.
      std::cerr << "sluice: registering built-in ops failed: " << s << "\n";
      std::abort();
    }
    return ops;
  }();
  return kOps;
}

const KernelRegistry* BuiltinKernels() {
  static const KernelRegistry* const kKernels = [] {
    auto* kernels = new KernelRegistry();
    RegisterBuiltinKernels(kernels);
    return kernels;
  }();
  return kKernels;
}

}  // namespace sluice
