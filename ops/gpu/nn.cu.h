// CUDA launchers of the neural-network kernels (nn.cu): Relu, ReluGrad,
// BiasAdd, Softmax, LogSoftmax and the two softmax cross-entropies.
// Plain C++: g++-compiled callers include this header, nvcc compiles the
// definitions, instantiated for T = float and double.
//
//   cudaError_t e = gpu::LaunchSoftmax<float>(logits, out, rows, depth, /*log_softmax=*/false,
//                                             sm_count, stream);
//
// Every launcher only enqueues work on `stream` and returns the launch's
// error (cudaGetLastError()); nothing synchronizes. Pointers are device
// memory kept alive by the caller until the work is done. Element counts of
// zero launch nothing. Outputs may alias the input they are computed from
// where the comment says so. Thread-safe.
#ifndef SLUICE_OPS_GPU_NN_CU_H_
#define SLUICE_OPS_GPU_NN_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sluice {
namespace gpu {

// y[i] = max(x[i], 0) (NaN stays NaN); y may equal x.
template <typename T>
cudaError_t LaunchRelu(const T* x, T* y, int64_t n, cudaStream_t stream);

// y[i] = features[i] > 0 ? gradients[i] : 0; y may equal either input.
template <typename T>
cudaError_t LaunchReluGrad(const T* gradients, const T* features, T* y, int64_t n,
                           cudaStream_t stream);

// x viewed as [outer, channels, inner] (NHWC: inner 1; NCHW: outer = batch):
// y = x + bias[channel]; y may equal x.
template <typename T>
cudaError_t LaunchBiasAdd(const T* x, const T* bias, T* y, int64_t outer, int64_t channels,
                          int64_t inner, cudaStream_t stream);

// Row-wise over x [rows, depth]: softmax (log_softmax: log-softmax), computed with
// the row maximum subtracted; y may equal x.
template <typename T>
cudaError_t LaunchSoftmax(const T* x, T* y, int64_t rows, int64_t depth, bool log_softmax,
                          int sm_count, cudaStream_t stream);

// features, labels [batch, classes] -> loss [batch] and backprop [batch,
// classes]: loss = logsumexp(f) * sum(labels) - sum(labels * f), backprop =
// softmax(f) - labels. backprop may equal features. classes == 0: loss 0.
template <typename T>
cudaError_t LaunchSoftmaxXent(const T* features, const T* labels, T* loss, T* backprop,
                              int64_t batch, int64_t classes, int sm_count, cudaStream_t stream);

// As LaunchSoftmaxXent with one-hot labels given as class indices (L =
// int32_t or int64_t, device memory). A label outside [0, classes) cannot be
// reported without a synchronization: that row's loss and backprop are NaN
// (TensorFlow's GPU behaviour; the CPU kernel returns InvalidArgument).
template <typename T, typename L>
cudaError_t LaunchSparseSoftmaxXent(const T* features, const L* labels, T* loss, T* backprop,
                                    int64_t batch, int64_t classes, int sm_count,
                                    cudaStream_t stream);

// The 16-bit types of Relu, ReluGrad and BiasAdd (mixed precision keeps the
// ops between two bfloat16 GEMMs in bfloat16): storage only, the arithmetic
// in float, each result rounded once (to nearest even). Same contracts as
// the float launchers above; pointers to 2-byte elements.
enum class Float16Type : int { kHalf, kBFloat16 };
cudaError_t LaunchRelu16(Float16Type type, const void* x, void* y, int64_t n,
                         cudaStream_t stream);
cudaError_t LaunchReluGrad16(Float16Type type, const void* gradients, const void* features,
                             void* y, int64_t n, cudaStream_t stream);
cudaError_t LaunchBiasAdd16(Float16Type type, const void* x, const void* bias, void* y,
                            int64_t outer, int64_t channels, int64_t inner, cudaStream_t stream);

}  // namespace gpu
}  // namespace sluice

#endif  // SLUICE_OPS_GPU_NN_CU_H_
