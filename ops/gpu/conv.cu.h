// CUDA launchers of the 2-D window kernels (ops/gpu/conv.cu): im2col and
// its adjoint col2im for Conv2D and its backprops (whose GEMMs go to
// cuBLAS), MaxPool, MaxPoolGrad, AvgPool and AvgPoolGrad. The index
// arithmetic is ops/gpu/window_index.h.
//
//   cudaError_t e = gpu::LaunchIm2Col(input, col, /*element_size=*/4, w, p0, pixels, stream);
//
// Plain C++: g++-compiled callers include this header, nvcc compiles the
// definitions. Every launcher only enqueues work on `stream` and returns
// the launch's error; pointers are device memory; zero elements launch
// nothing. Thread-safe.
#ifndef SLUICE_OPS_GPU_CONV_CU_H_
#define SLUICE_OPS_GPU_CONV_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ops/gpu/window_index.h"

namespace sluice::gpu {

// col [pixels, w.patch()] = the input patches under output pixels
// [p0, p0 + pixels), zeros in the padding. Moves elements of
// `element_size` bytes (2, 4 or 8): any float type.
cudaError_t LaunchIm2Col(const void* input, void* col, int element_size, const Window2D& w,
                         int64_t p0, int64_t pixels, cudaStream_t stream);

// The element types col2im writes.
enum class WindowType : int { kFloat, kDouble, kBFloat16, kHalf };

// For every element of images [image0, image0 + images) of the input
// gradient (type `type`): the sum of the column entries that read it, col
// being the column matrix (float; double for kDouble) of those images'
// output pixels. Overwrites; 16-bit types are rounded once, from the
// float sum.
cudaError_t LaunchCol2Im(const void* col, void* input_grad, WindowType type, const Window2D& w,
                         int64_t image0, int64_t images, cudaStream_t stream);

// MaxPool (float, bfloat16, half; not double): each window's maximum,
// from the lowest float (a window of NaNs gives it, as the CPU kernel).
cudaError_t LaunchMaxPool(const void* input, void* output, WindowType type, const Window2D& w,
                          cudaStream_t stream);

// MaxPoolGrad (types as MaxPool): each input element gets the sum (in
// float, rounded once) of the gradients of the windows whose first maximum
// it is, gathered in window order: no atomics. Two kernels: the first
// writes each window's first maximum (per channel) into `first_max`,
// device scratch of batch * out_rows * out_cols * depth int64s; the second
// gathers. So each window is scanned once, not once per element it holds
// (a global max pool would otherwise cost window^2 per element).
cudaError_t LaunchMaxPoolGrad(const void* input, const void* grad, void* input_grad,
                              int64_t* first_max, WindowType type, const Window2D& w,
                              cudaStream_t stream);

// AvgPool (types as MaxPool): each window's mean over its elements inside
// the input, summed in float (window_index.h's AvgPoolOf).
cudaError_t LaunchAvgPool(const void* input, void* output, WindowType type, const Window2D& w,
                          cudaStream_t stream);

// AvgPoolGrad: each input element gathers grad / count of the windows
// holding it, in window order (the CPU's scatter order), no atomics; w is
// the forward op's geometry.
cudaError_t LaunchAvgPoolGrad(const void* grad, void* input_grad, WindowType type,
                              const Window2D& w, cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_CONV_CU_H_
