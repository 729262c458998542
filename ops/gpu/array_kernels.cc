// GPU kernels of the array ops (RegisterGpuArrayKernels, ops/gpu/gpu_kernels.h):
// constants, the identity-like and shape ops (which only touch shapes and
// share buffers: the device-agnostic kernels of ops/array/internal/shape_kernels.h),
// Fill / ZerosLike / OnesLike, and the host kernels for
// int32 shape arithmetic. The kernels that move elements (Transpose, Tile,
// Concat, Split, Pack, Unpack, Slice, StridedSlice(Grad), Gather,
// UnsortedSegmentSum) are in array_index_kernels.cc.
//
// Types. Device kernels serve every fixed-size dtype but int32; int32
// tensors of GPU nodes live in host memory (TensorFlow's convention: they
// describe shapes), so each op's int32 instance is its CPU kernel registered
// for the GPU with every argument in host memory.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "ops/array/const_kernel.h"
#include "ops/array/fill_kernels.h"
#include "ops/gpu/array.cu.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/internal/array_kernel_util.h"
#include "ops/array/internal/array_kernel_checks.h"
#include "ops/array/internal/shape_kernels.h"

namespace sluice {
namespace {

using internal::ExpandDimsOp;
using internal::AnyKernel;
using internal::GpuArrayTypes;
using internal::OnlyInt32;
using internal::OnlyString;
using internal::ServesInt32;
using internal::ServesResource;
using internal::IdentityOp;
using internal::NoOpKernel;
using internal::ReshapeOp;
using internal::ShapeOp;
using internal::SqueezeOp;

// ---- Creating -----------------------------------------------------------------

// The GPU's writes for the shells of ops/array/fill_kernels.h. Fill's dims are in
// host memory, its value scalar on the GPU (read by the kernel).
struct GpuFillImpl {
  static absl::Status Fill(OpKernelContext* ctx, const Tensor& value, Tensor* out) {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(
        ctx, gpu::LaunchFillFromDevice(out->raw_data(), out->NumElements(),
                                       DataTypeSize(value.dtype()), value.raw_data(), stream));
  }
  static absl::Status Zero(OpKernelContext* ctx, Tensor* out) { return FillZeros(ctx, out); }
  static absl::Status FillBits(OpKernelContext* ctx, uint64_t bits, Tensor* out) {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchFillBits(out->raw_data(), out->NumElements(),
                                                 DataTypeSize(out->dtype()), bits, stream));
  }
};


}  // namespace

void RegisterGpuArrayKernels(KernelRegistry* kernels) {
  const std::vector<DataType>& types = GpuArrayTypes();
  auto gpu = [](const char* op) { return GpuKernel(op); };

  kernels->Register<ConstOp<ConstMemory::kUploaded>>(gpu("Const").TypeConstraint("dtype", types));
  kernels->Register<ConstOp<ConstMemory::kHost>>(
      gpu("Const").TypeConstraint("dtype", DT_INT32).HostMemory("output"));

  for (const char* op : {"Identity", "StopGradient", "PreventGradient"}) {
    kernels->Register<IdentityOp>(gpu(op).TypeConstraint("T", types));
  }
  kernels->Register<IdentityOp>(gpu("PlaceholderWithDefault").TypeConstraint("dtype", types));
  kernels->Register<NoOpKernel>(gpu("NoOp"));
  // What an inlined function call leaves behind (ops/functional).
  // Its int32 values (loop counters), handles and strings stay in host
  // memory, as the kernels beside it keep them.
  kernels->Register<internal::IdentityNOp>(gpu("IdentityN").HostMemoryForTypes(
      {DT_INT32, DT_STRING, DT_RESOURCE, ::tensorflow::DT_VARIANT}));
  kernels->Register<ReshapeOp>(gpu("Reshape").TypeConstraint("T", types).HostMemory("shape"));
  kernels->Register<ExpandDimsOp>(gpu("ExpandDims").TypeConstraint("T", types).HostMemory("dim"));
  kernels->Register<SqueezeOp>(gpu("Squeeze").TypeConstraint("T", types));
  kernels->Register(gpu("Shape").TypeConstraint("T", types).HostMemory("output"),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kShape); });
  kernels->Register(gpu("Size").TypeConstraint("T", types).HostMemory("output"),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kSize); });
  kernels->Register(gpu("Rank").TypeConstraint("T", types).HostMemory("output"),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kRank); });
  kernels->Register<internal::ShapeNOp>(
      gpu("ShapeN").TypeConstraint("T", types).HostMemory("output"));  // Conv2D's gradient

  kernels->Register<FillOp<GpuFillImpl>>(
      gpu("Fill").TypeConstraint("T", types).HostMemory("dims"));
  kernels->Register<ZerosLikeOp<GpuFillImpl>>(gpu("ZerosLike").TypeConstraint("T", types));
  kernels->Register<OnesLikeOp<GpuFillImpl>>(gpu("OnesLike").TypeConstraint("T", types));

  internal::RegisterGpuIndexKernels(kernels);

  // int32: the CPU kernels, on the host. After the device kernels above
  // (see ServesInt32); the CPU kernels must be registered already.
  for (const char* op : {"Identity",
                         "StopGradient",
                         "PreventGradient",
                         "PlaceholderWithDefault",
                         "Reshape",
                         "ExpandDims",
                         "Squeeze",
                         "Shape",
                         "Size",
                         "Rank",
                         "Fill",
                         "ZerosLike",
                         "OnesLike",
                         "Transpose",
                         "Tile",
                         "ConcatV2",
                         "Concat",
                         "Split",
                         "Pack",
                         "Unpack",
                         "Slice",
                         "StridedSlice",
                         "StridedSliceGrad",
                         "GatherV2",
                         "Gather",
                         "UnsortedSegmentSum"}) {
    kernels->RegisterHostKernels(op, kDeviceTypeGpu, ServesInt32);
  }
  // Shape arithmetic of the gradients (math_grad.cc, array_grad.cc). Range
  // has no kernel yet; it is listed so that one is picked up when added.
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "FloorDiv", "FloorMod", "Maximum",
                         "Minimum", "Neg", "Cast", "Prod", "Sum", "Range"}) {
    kernels->RegisterHostKernels(op, kDeviceTypeGpu, OnlyInt32);
  }
  // Every argument is an index vector.
  for (const char* op : {"BroadcastGradientArgs", "ConcatOffset", "InvertPermutation"}) {
    kernels->RegisterHostKernels(op, kDeviceTypeGpu, AnyKernel);
  }
  // The bounds of a dynamic_rnn's sequence lengths (rnn/Min, rnn/Max): its
  // loop bound is computed on the host, where the loop condition reads it.
  for (const char* op : {"Min", "Max"}) {
    kernels->RegisterHostKernels(op, kDeviceTypeGpu, OnlyInt32);
  }
  // Strings (an Assert's message) stay in host memory.
  kernels->RegisterHostKernels("Const", kDeviceTypeGpu, OnlyString);
  // A resource handle passed through Identity (a function's argument, a
  // loop variable) stays with its resource (placement colocates them), on
  // the host like every handle.
  kernels->RegisterHostKernels("Identity", kDeviceTypeGpu, ServesResource);
}

}  // namespace sluice
