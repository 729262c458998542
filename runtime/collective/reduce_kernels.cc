#include "runtime/collective/reduce_kernels.h"

#include <algorithm>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "absl/strings/str_cat.h"

namespace sluice {
namespace internal {
namespace {

template <typename T>
void Add(void* dst, const void* src, int64_t n) {
  T* __restrict d = static_cast<T*>(dst);
  const T* __restrict s = static_cast<const T*>(src);
  for (int64_t i = 0; i < n; ++i) d[i] += s[i];
}

template <typename T>
void Sum(void* dst, const void* a, const void* b, int64_t n) {
  T* __restrict d = static_cast<T*>(dst);
  const T* __restrict x = static_cast<const T*>(a);
  const T* __restrict y = static_cast<const T*>(b);
  for (int64_t i = 0; i < n; ++i) d[i] = x[i] + y[i];
}

template <typename T>
void Divide(void* dst, int64_t n, int64_t divisor) {
  T* __restrict d = static_cast<T*>(dst);
  const T div = static_cast<T>(divisor);
  for (int64_t i = 0; i < n; ++i) d[i] /= div;
}

template <typename T>
void Finish(void* t, const void* in, void* out, int64_t n, int64_t divisor) {
  T* __restrict x = static_cast<T*>(t);
  const T* __restrict y = static_cast<const T*>(in);
  T* __restrict o = static_cast<T*>(out);
  if (divisor == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = x[i] = x[i] + y[i];
  } else {
    const T div = static_cast<T>(divisor);
    for (int64_t i = 0; i < n; ++i) o[i] = x[i] = (x[i] + y[i]) / div;
  }
}

template <typename T>
constexpr ReduceKernels KernelsOf(DataType dtype) {
  return ReduceKernels{dtype, &Add<T>, &Sum<T>, &Divide<T>, &Finish<T>};
}

constexpr ReduceKernels kFloat = KernelsOf<float>(DT_FLOAT);
constexpr ReduceKernels kDouble = KernelsOf<double>(DT_DOUBLE);
constexpr ReduceKernels kInt32 = KernelsOf<int32_t>(DT_INT32);
constexpr ReduceKernels kInt64 = KernelsOf<int64_t>(DT_INT64);

}  // namespace

void CopyToResult(void* dst, const void* src, size_t bytes) {
#if defined(__AVX__)
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  // Up to the first 32-byte boundary of the destination, then whole
  // 32-byte streaming stores, then the tail.
  const size_t head = std::min(bytes, (32 - reinterpret_cast<uintptr_t>(d) % 32) % 32);
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  const size_t body = bytes / 32 * 32;
  for (size_t i = 0; i < body; i += 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
  }
  _mm_sfence();  // the streamed stores are visible before whoever reads next
  std::memcpy(d + body, s + body, bytes - body);
#else
  std::memcpy(dst, src, bytes);
#endif
}

absl::StatusOr<const ReduceKernels*> ReduceKernelsFor(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT:
      return &kFloat;
    case DT_DOUBLE:
      return &kDouble;
    case DT_INT32:
      return &kInt32;
    case DT_INT64:
      return &kInt64;
    default:
      return absl::UnimplementedError(
          absl::StrCat("collective sums of ", DataTypeName(dtype),
                       " are not implemented (float, double, int32, int64 are)"));
  }
}

}  // namespace internal
}  // namespace sluice
