#include "ops/cpu_backend.h"

#include "ops/array_ops.h"
#include "ops/collective_ops.h"
#include "ops/control_flow_ops.h"
#include "ops/data_flow_ops.h"
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
#include "runtime/local_devices.h"
#include "runtime/sendrecv_ops.h"

namespace sluice {
namespace {

class CpuBackend : public Backend {
 public:
  std::string device_type() const override { return kDeviceTypeCpu; }
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
      const LocalDevicesOptions& options) const override {
    return CreateLocalDevices(options);
  }
  void RegisterKernels(KernelRegistry* kernels) const override { RegisterCpuKernels(kernels); }
};

}  // namespace

void RegisterCpuKernels(KernelRegistry* kernels) {
  RegisterFrameKernels(kernels);
  RegisterSendRecvKernels(kernels);
  RegisterArrayKernels(kernels);
  RegisterControlFlowKernels(kernels);
  RegisterStackKernels(kernels);
  RegisterTensorArrayKernels(kernels);
  RegisterLrnKernels(kernels);
  RegisterLstmBlockKernels(kernels);
  RegisterGruBlockKernels(kernels);
  RegisterNn3dKernels(kernels);
  RegisterDepthwiseConvKernels(kernels);
  RegisterBatchNormGradKernels(kernels);
  RegisterActivationGradKernels(kernels);
  RegisterActivationKernels(kernels);
  RegisterArrayLayoutKernels(kernels);
  RegisterIndexKernels(kernels);
  RegisterArrayRearrangeKernels(kernels);
  RegisterScanKernels(kernels);
  RegisterCheckKernels(kernels);
  RegisterResourceVariableKernels(kernels);
  RegisterBatchNormKernels(kernels);
  RegisterBatchMatMulKernels(kernels);
  RegisterFusedKernels(kernels);
  RegisterMathKernels(kernels);
  RegisterNnKernels(kernels);
  RegisterStateKernels(kernels);
  RegisterRandomKernels(kernels);
  RegisterTrainingKernels(kernels);
  RegisterScatterKernels(kernels);
  RegisterShardedCheckpointKernels(kernels);
  RegisterQueueKernels(kernels);
  RegisterDataFlowKernels(kernels);
  RegisterSummaryKernels(kernels);
  RegisterIoKernels(kernels);
  RegisterCollectiveKernels(kernels);
}

std::unique_ptr<Backend> NewCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace sluice
