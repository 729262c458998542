// GPU kernels of the 2-D window ops over NHWC data: Conv2D,
// Conv2DBackpropInput, Conv2DBackpropFilter, MaxPool, MaxPoolGrad, AvgPool
// and AvgPoolGrad for
// float, bfloat16 and half (16-bit elements, float sums).
//
// A convolution is im2col (conv.cu) and one cuBLAS GEMM per chunk of whole
// images, as the CPU kernels (ops/nn/conv_kernels.cc) do it: the column
// matrix of a chunk's output pixels times the filter [patch, out_depth].
// Its input gradient is the GEMM into a float column matrix, then col2im
// gathering each input element's entries; its filter gradient the GEMM of
// the columns and out_backprop, accumulated over chunks. A 1x1 convolution
// with stride 1 and no padding uses the input as its column matrix.
//
// Why not cuDNN: it is a separate library (about 1 GB with its engines)
// that a CUDA install need not have and the GPU bundle cannot carry
// (tests/gpu/bundle.sh ships under 64 MiB); im2col plus a GEMM needs only
// cuBLAS, which every CUDA runtime install has, and its tensor cores.
// The shape checks are the CPU kernels' (ops/nn/internal/window_checks.h).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/gpu/conv.cu.h"
#include "ops/gpu/cwise.cu.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/internal/float16_type.h"
#include "ops/gpu/internal/gpu_gemm.h"
#include "ops/nn/internal/window_checks.h"

namespace sluice {
namespace {

using internal::Conv2DGeometry;

// Column-matrix budget of one chunk, in elements (256 MiB of float): a
// chunk is as many whole images as fit, at least one.
constexpr int64_t kMaxColumnElements = int64_t{1} << 26;

gpu::Window2D WindowOf(const Conv2DGeometry& g) {
  gpu::Window2D w;
  w.batch = g.batch;
  w.in_rows = g.in_rows;
  w.in_cols = g.in_cols;
  w.in_depth = g.in_depth;
  w.filter_rows = g.filter_rows;
  w.filter_cols = g.filter_cols;
  w.out_depth = g.out_depth;
  w.stride_rows = g.stride_rows;
  w.stride_cols = g.stride_cols;
  w.dilation_rows = g.dilation_rows;
  w.dilation_cols = g.dilation_cols;
  w.out_rows = g.out_rows;
  w.out_cols = g.out_cols;
  w.pad_top = g.pad_top;
  w.pad_left = g.pad_left;
  return w;
}

bool IsDirect(const gpu::Window2D& w) {
  return w.filter_rows == 1 && w.filter_cols == 1 && w.stride_rows == 1 && w.stride_cols == 1 &&
         w.pad_top == 0 && w.pad_left == 0 && w.out_rows == w.in_rows && w.out_cols == w.in_cols;
}

int64_t ImagesPerChunk(const gpu::Window2D& w) {
  const int64_t per_image = std::max<int64_t>(1, w.image_pixels() * w.patch());
  return std::clamp<int64_t>(kMaxColumnElements / per_image, 1, std::max<int64_t>(1, w.batch));
}

// The element type's names in the libraries.
template <typename T>
struct WindowTypes;
template <>
struct WindowTypes<float> {
  static constexpr cudaDataType_t kBlas = CUDA_R_32F;
  static constexpr gpu::WindowType kWindow = gpu::WindowType::kFloat;
  static constexpr gpu::CwiseType kCwise = gpu::CwiseType::kFloat;
};
template <>
struct WindowTypes<BFloat16> {
  static constexpr cudaDataType_t kBlas = CUDA_R_16BF;
  static constexpr gpu::WindowType kWindow = gpu::WindowType::kBFloat16;
  static constexpr gpu::CwiseType kCwise = gpu::CwiseType::kBFloat16;
};
template <>
struct WindowTypes<Half> {
  static constexpr cudaDataType_t kBlas = CUDA_R_16F;
  static constexpr gpu::WindowType kWindow = gpu::WindowType::kHalf;
  static constexpr gpu::CwiseType kCwise = gpu::CwiseType::kHalf;
};

// A GEMM of T operands (float sums) in the process-wide float precision.
template <typename T>
internal::GpuGemmArgs GemmOf(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a,
                             int64_t lda, const void* b, int64_t ldb, void* c) {
  return internal::RowMajorGemm(
      ta, tb, m, n, k, a, lda, b, ldb, c, WindowTypes<T>::kBlas,
      internal::GpuGemmComputeType(DataTypeToEnum<T>::value, GetGpuMatMulPrecision()));
}

// cuBLAS takes int sizes and leading dimensions.
absl::Status CheckGemmSizes(absl::string_view op, const gpu::Window2D& w) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  const int64_t images = ImagesPerChunk(w);
  if (w.patch() > kMax || w.out_depth > kMax || images * w.image_pixels() > kMax ||
      w.batch * w.image_pixels() > kMax) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": too large for the GPU's GEMM (more than 2^31 - 1 rows or columns)"));
  }
  return absl::OkStatus();
}

std::string What(const OpKernelContext& ctx) {
  return absl::StrCat(ctx.node().op(), " '", ctx.node().name(), "'");
}

// For each chunk of whole images: the column matrix of its output pixels
// (im2col of `input` into a scratch of ImagesPerChunk(w) images), then
// gemm(first pixel, pixels, columns) to enqueue its product.
template <typename T, typename Gemm>
absl::Status ForEachColumnChunk(OpKernelContext* ctx, const gpu::Window2D& w,
                                const Tensor& input, Gemm&& gemm) {
  const int64_t images = ImagesPerChunk(w);
  ASSIGN_OR_RETURN(Tensor col, ctx->allocate_temp(DataTypeToEnum<T>::value,
                                                  TensorShape({images * w.image_pixels() *
                                                               w.patch()})));
  for (int64_t b0 = 0; b0 < w.batch; b0 += images) {
    const int64_t p0 = b0 * w.image_pixels();
    const int64_t np = std::min(images, w.batch - b0) * w.image_pixels();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    RETURN_IF_ERROR(LaunchStatus(
        ctx, gpu::LaunchIm2Col(input.raw_data(), col.raw_data(), sizeof(T), w, p0, np, stream)));
    RETURN_IF_ERROR(gemm(p0, np, col.raw_data()));
  }
  return absl::OkStatus();
}

template <bool kPool>
using GpuWindowOpKernel = internal::WindowOpKernel<kPool, kDeviceTypeGpu>;

template <typename T>
class GpuConv2DOp : public GpuWindowOpKernel</*kPool=*/false> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    ASSIGN_OR_RETURN(Conv2DGeometry g, internal::CheckConv2DInputs(attrs_, input, filter));
    const gpu::Window2D w = WindowOf(g);
    ASSIGN_OR_RETURN(
        Tensor * output,
        ctx->allocate_output(0, TensorShape({g.batch, g.out_rows, g.out_cols, g.out_depth})));
    const int64_t pixels = w.batch * w.image_pixels();
    if (pixels == 0 || w.out_depth == 0) return absl::OkStatus();
    if (w.patch() == 0) return FillZeros(ctx, output);
    RETURN_IF_ERROR(CheckGemmSizes("Conv2D", w));
    const std::string what = What(*ctx);
    T* out = output->data<T>();
    if (IsDirect(w)) {
      return internal::EnqueueGpuGemm(
          ctx,
          GemmOf<T>(false, false, pixels, w.out_depth, w.patch(), input.raw_data(), w.patch(),
                    filter.raw_data(), w.out_depth, out),
          what);
    }
    return ForEachColumnChunk<T>(ctx, w, input, [&](int64_t p0, int64_t np, const void* col) {
      return internal::EnqueueGpuGemm(
          ctx,
          GemmOf<T>(false, false, np, w.out_depth, w.patch(), col, w.patch(), filter.raw_data(),
                    w.out_depth, out + p0 * w.out_depth),
          what);
    });
  }
};

template <typename T>
class GpuConv2DBackpropInputOp : public GpuWindowOpKernel</*kPool=*/false> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    constexpr char kOp[] = "Conv2DBackpropInput";
    const Tensor& filter = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    ASSIGN_OR_RETURN(internal::ConvBackpropGeometry b,
                     internal::CheckConv2DBackpropInputInputs(attrs_, ctx->input(0), filter, dy));
    const gpu::Window2D w = WindowOf(b.geometry);
    ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, b.shape));
    if (output->NumElements() == 0) return absl::OkStatus();
    const int64_t pixels = w.batch * w.image_pixels();
    if (pixels == 0 || w.patch() == 0 || w.out_depth == 0) return FillZeros(ctx, output);
    RETURN_IF_ERROR(CheckGemmSizes(kOp, w));
    const std::string what = What(*ctx);
    if (IsDirect(w)) {  // dx = dy · filterᵀ
      return internal::EnqueueGpuGemm(
          ctx,
          GemmOf<T>(false, true, pixels, w.patch(), w.out_depth, dy.raw_data(), w.out_depth,
                    filter.raw_data(), w.out_depth, output->raw_data()),
          what);
    }
    // The column matrix's gradient in float, then gathered into dx.
    const int64_t images = ImagesPerChunk(w);
    ASSIGN_OR_RETURN(Tensor col, ctx->allocate_temp(DT_FLOAT, TensorShape({images *
                                                                           w.image_pixels() *
                                                                           w.patch()})));
    const T* dyp = dy.data<T>();
    for (int64_t b0 = 0; b0 < w.batch; b0 += images) {
      const int64_t n = std::min(images, w.batch - b0);
      const int64_t p0 = b0 * w.image_pixels();
      internal::GpuGemmArgs gemm =
          GemmOf<T>(false, true, n * w.image_pixels(), w.patch(), w.out_depth,
                    dyp + p0 * w.out_depth, w.out_depth, filter.raw_data(), w.out_depth,
                    col.raw_data());
      gemm.c_type = CUDA_R_32F;
      RETURN_IF_ERROR(internal::EnqueueGpuGemm(ctx, gemm, what));
      ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
      RETURN_IF_ERROR(LaunchStatus(ctx, gpu::LaunchCol2Im(col.raw_data(), output->raw_data(),
                                                          WindowTypes<T>::kWindow, w, b0, n,
                                                          stream)));
    }
    return absl::OkStatus();
  }
};

template <typename T>
class GpuConv2DBackpropFilterOp : public GpuWindowOpKernel</*kPool=*/false> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    constexpr char kOp[] = "Conv2DBackpropFilter";
    const Tensor& input = ctx->input(0);
    const Tensor& dy = ctx->input(2);
    ASSIGN_OR_RETURN(internal::ConvBackpropGeometry b,
                     internal::CheckConv2DBackpropFilterInputs(attrs_, input, ctx->input(1), dy));
    const TensorShape& filter_shape = b.shape;
    const gpu::Window2D w = WindowOf(b.geometry);
    ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, filter_shape));
    if (output->NumElements() == 0) return absl::OkStatus();
    const int64_t pixels = w.batch * w.image_pixels();
    if (pixels == 0) return FillZeros(ctx, output);
    RETURN_IF_ERROR(CheckGemmSizes(kOp, w));
    const std::string what = What(*ctx);
    if (IsDirect(w)) {  // dw = inputᵀ · dy
      return internal::EnqueueGpuGemm(
          ctx,
          GemmOf<T>(true, false, w.patch(), w.out_depth, pixels, input.raw_data(), w.patch(),
                    dy.raw_data(), w.out_depth, output->raw_data()),
          what);
    }
    const int64_t images = ImagesPerChunk(w);
    // Several chunks of a 16-bit type sum in a float scratch, rounded once.
    const bool float_sums = images < w.batch && internal::kSixteen<T>;
    Tensor sums;
    if (float_sums) {
      ASSIGN_OR_RETURN(sums, ctx->allocate_temp(DT_FLOAT, filter_shape));
    }
    void* target = float_sums ? sums.raw_data() : output->raw_data();
    const T* dyp = dy.data<T>();
    RETURN_IF_ERROR(
        ForEachColumnChunk<T>(ctx, w, input, [&](int64_t p0, int64_t np, const void* col) {
          internal::GpuGemmArgs gemm =
              GemmOf<T>(true, false, w.patch(), w.out_depth, np, col, w.patch(),
                        dyp + p0 * w.out_depth, w.out_depth, target);
          if (float_sums) gemm.c_type = CUDA_R_32F;
          gemm.beta = p0 == 0 ? 0.0f : 1.0f;  // the chunks' sums add up
          return internal::EnqueueGpuGemm(ctx, gemm, what);
        }));
    if (!float_sums) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchCast(gpu::CwiseType::kFloat, WindowTypes<T>::kCwise,
                                             sums.raw_data(), output->raw_data(),
                                             output->NumElements(), stream));
  }
};

template <typename T>
class GpuMaxPoolOp : public GpuWindowOpKernel</*kPool=*/true> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    ASSIGN_OR_RETURN(Conv2DGeometry g, internal::PoolGeometry("MaxPool", attrs_, input));
    ASSIGN_OR_RETURN(
        Tensor * output,
        ctx->allocate_output(0, TensorShape({g.batch, g.out_rows, g.out_cols, g.in_depth})));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchMaxPool(input.raw_data(), output->raw_data(),
                                                WindowTypes<T>::kWindow, WindowOf(g), stream));
  }
};

template <typename T>
class GpuMaxPoolGradOp : public GpuWindowOpKernel</*kPool=*/true> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    ASSIGN_OR_RETURN(Conv2DGeometry g,
                     internal::CheckMaxPoolGradInputs(attrs_, input, ctx->input(1), grad));
    ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, input.shape()));
    ASSIGN_OR_RETURN(Tensor first_max, ctx->allocate_temp(DT_INT64, grad.shape()));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchMaxPoolGrad(
                                 input.raw_data(), grad.raw_data(), output->raw_data(),
                                 first_max.data<int64_t>(), WindowTypes<T>::kWindow, WindowOf(g),
                                 stream));
  }
};

template <typename T>
class GpuAvgPoolOp : public GpuWindowOpKernel</*kPool=*/true> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    ASSIGN_OR_RETURN(Conv2DGeometry g, internal::PoolGeometry("AvgPool", attrs_, input));
    ASSIGN_OR_RETURN(
        Tensor * output,
        ctx->allocate_output(0, TensorShape({g.batch, g.out_rows, g.out_cols, g.in_depth})));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchAvgPool(input.raw_data(), output->raw_data(),
                                                WindowTypes<T>::kWindow, WindowOf(g), stream));
  }
};

template <typename T>
class GpuAvgPoolGradOp : public GpuWindowOpKernel</*kPool=*/true> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& grad = ctx->input(1);
    ASSIGN_OR_RETURN(const internal::ConvBackpropGeometry checked,
                     internal::CheckAvgPoolGradInputs(attrs_, ctx->input(0), grad));
    ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, checked.shape));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchAvgPoolGrad(grad.raw_data(), output->raw_data(),
                                                    WindowTypes<T>::kWindow,
                                                    WindowOf(checked.geometry), stream));
  }
};

template <typename T>
void RegisterConvOfType(KernelRegistry* kernels, DataType type) {
  kernels->Register<GpuConv2DOp<T>>(GpuKernel("Conv2D").TypeConstraint("T", type));
  kernels->Register<GpuConv2DBackpropInputOp<T>>(
      GpuKernel("Conv2DBackpropInput").TypeConstraint("T", type).HostMemory("input_sizes"));
  kernels->Register<GpuConv2DBackpropFilterOp<T>>(
      GpuKernel("Conv2DBackpropFilter").TypeConstraint("T", type).HostMemory("filter_sizes"));
  kernels->Register<GpuMaxPoolOp<T>>(GpuKernel("MaxPool").TypeConstraint("T", type));
  kernels->Register<GpuMaxPoolGradOp<T>>(GpuKernel("MaxPoolGrad").TypeConstraint("T", type));
  kernels->Register<GpuAvgPoolOp<T>>(GpuKernel("AvgPool").TypeConstraint("T", type));
  kernels->Register<GpuAvgPoolGradOp<T>>(
      GpuKernel("AvgPoolGrad").TypeConstraint("T", type).HostMemory("orig_input_shape"));
}

}  // namespace

void RegisterGpuConvKernels(KernelRegistry* kernels) {
  RegisterConvOfType<float>(kernels, DT_FLOAT);
  RegisterConvOfType<BFloat16>(kernels, DT_BFLOAT16);
  RegisterConvOfType<Half>(kernels, DT_HALF);
}

}  // namespace sluice
