// The GPU's loops, stacks and TensorArrays (ops/control_flow registers the
// kernels; this file gives them the GPU's memory operations) and the host
// kernels that keep a loop's counters and predicate off the device.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/control_flow/control_flow_family.h"
#include "ops/gpu/cwise.cu.h"
#include "ops/gpu/cwise_type.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/internal/array_kernel_util.h"
#include "runtime/gpu/cuda_status.h"
#include "runtime/gpu/gpu_device.h"

namespace sluice {
namespace {

absl::StatusOr<GpuDevice*> GpuOfDevice(Device* device, const char* what) {
  auto* gpu = dynamic_cast<GpuDevice*>(device);
  if (gpu == nullptr) {
    return absl::InternalError(
        absl::StrCat("a GPU TensorArray ", what, " on ", device->name(), ", not a CUDA GPU"));
  }
  RETURN_IF_ERROR(gpu->Activate());
  return gpu;
}

// Both tensors are the GPU's (the kernels' inputs and outputs are in device
// memory): the copy is queued on the compute stream like a kernel.
absl::Status CopyRowsOnGpu(Device* device, const Tensor& src, int64_t src_row, Tensor* dst,
                           int64_t dst_row, int64_t rows, int64_t row_elements) {
  ASSIGN_OR_RETURN(GpuDevice * gpu, GpuOfDevice(device, "copy"));
  const size_t row_bytes = static_cast<size_t>(row_elements) * DataTypeSize(src.dtype());
  const char* from = static_cast<const char*>(src.raw_data()) + src_row * row_bytes;
  char* to = static_cast<char*>(dst->raw_data()) + dst_row * row_bytes;
  return CudaStatus(cudaMemcpyAsync(to, from, rows * row_bytes, cudaMemcpyDeviceToDevice,
                                    gpu->compute_stream()),
                    absl::StrCat("copying TensorArray rows on ", gpu->name()));
}

absl::Status ZeroOnGpu(Device* device, Tensor* t) {
  ASSIGN_OR_RETURN(GpuDevice * gpu, GpuOfDevice(device, "fill"));
  if (t->TotalBytes() == 0) return absl::OkStatus();
  return CudaStatus(cudaMemsetAsync(t->raw_data(), 0, t->TotalBytes(), gpu->compute_stream()),
                    absl::StrCat("zeroing a TensorArray element on ", gpu->name()));
}

// Two writes to one index of a gradient array: the element-wise Add kernel
// on the compute stream, after the kernels that wrote them (float, double,
// half, bfloat16, int64; another type is an error).
absl::Status AddOnGpu(Device* device, const Tensor& a, const Tensor& b, Tensor* sum) {
  ASSIGN_OR_RETURN(gpu::CwiseType type, CwiseTypeOf(a.dtype()));
  ASSIGN_OR_RETURN(GpuDevice * gpu, GpuOfDevice(device, "sum"));
  return CudaStatus(gpu::LaunchBinary(gpu::BinaryFn::kAdd, type,
                                      gpu::FlatCwiseLayout<2>(a.NumElements()), a.raw_data(),
                                      b.raw_data(), sum->raw_data(), gpu->compute_stream()),
                    absl::StrCat("adding TensorArray elements on ", gpu->name()));
}

}  // namespace

void RegisterGpuControlFlowKernels(KernelRegistry* kernels) {
  static const TensorArrayDeviceOps kGpuMemory{&CopyRowsOnGpu, &ZeroOnGpu, &AddOnGpu};
  RegisterControlFlowFamilyDeviceKernels(kernels, kDeviceTypeGpu, internal::GpuArrayTypes(),
                                         &kGpuMemory);
  // A loop's counter and condition (i < n, a LogicalAnd of two of them, as
  // tf.while_loop and dynamic_rnn build it) on the host, beside LoopCond
  // and the Switches' predicates: no copy per iteration. After the device
  // kernels, so only the int32 and bool nodes fall through to these.
  for (const char* op : {"Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"}) {
    kernels->RegisterHostKernels(op, kDeviceTypeGpu, internal::OnlyInt32);
  }
  // And the checks beside a loop (a dynamic_rnn's Assert that its sequence
  // lengths have the batch's shape: All(Equal(Shape, [batch]))).
  for (const char* op : {"LogicalAnd", "LogicalOr", "LogicalNot", "All", "Any", "Assert"}) {
    kernels->RegisterHostKernels(op, kDeviceTypeGpu, internal::AnyKernel);
  }
}

}  // namespace sluice
