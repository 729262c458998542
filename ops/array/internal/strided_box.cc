#include "ops/array/internal/strided_box.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/array/internal/array_kernel_util.h"

namespace sluice {
namespace internal {
namespace {

// Copies `n` elements from `src` (stepping `step` elements) to the
// contiguous `dst`, or with Scatter from the contiguous `src` to `dst`
// stepping `step`.
template <bool Scatter>
void CopyRow(char* dst, const char* src, int64_t n, int64_t step, size_t esize) {
  if (step == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * esize);
    return;
  }
  DispatchBySize(esize, [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* d = reinterpret_cast<U*>(dst);
    const U* s = reinterpret_cast<const U*>(src);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (Scatter) {
        d[i * step] = s[i];
      } else {
        d[i] = s[i * step];
      }
    }
  });
}

}  // namespace

template <bool Scatter>
void StridedBoxCopy(char* full, absl::Span<const int64_t> full_dims,
                    absl::Span<const int64_t> begin, absl::Span<const int64_t> strides,
                    absl::Span<const int64_t> box_dims, char* compact, size_t esize) {
  const int rank = static_cast<int>(full_dims.size());
  for (int64_t d : box_dims) {
    if (d == 0) return;
  }
  std::vector<int64_t> full_strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) full_strides[i] = full_strides[i + 1] * full_dims[i + 1];
  int64_t base = 0;
  for (int i = 0; i < rank; ++i) base += begin[i] * full_strides[i];
  if (rank == 0) {
    if (Scatter) {
      std::memcpy(full, compact, esize);
    } else {
      std::memcpy(compact, full, esize);
    }
    return;
  }
  // Trailing dimensions that form one contiguous run merge into the row.
  int inner = rank - 1;  // the row's dimension
  int64_t row = box_dims[rank - 1];
  int64_t step = strides[rank - 1];
  if (step == 1) {
    while (inner > 0 && begin[inner] == 0 && box_dims[inner] == full_dims[inner] &&
           strides[inner - 1] == 1) {
      --inner;
      row *= box_dims[inner];
    }
    // Rows of dims [inner, rank) are contiguous iff every dim after `inner`
    // is whole; the loop above only merges while that holds.
  }
  std::vector<int64_t> idx(inner, 0);
  const size_t row_bytes = static_cast<size_t>(row) * esize;
  char* out = compact;
  int64_t offset = base;
  while (true) {
    char* f = full + offset * static_cast<int64_t>(esize);
    if (Scatter) {
      CopyRow<true>(f, out, row, step, esize);
    } else {
      CopyRow<false>(out, f, row, step, esize);
    }
    out += row_bytes;
    int d = inner - 1;
    for (; d >= 0; --d) {
      offset += strides[d] * full_strides[d];
      if (++idx[d] < box_dims[d]) break;
      offset -= strides[d] * full_strides[d] * box_dims[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}

template void StridedBoxCopy<false>(char*, absl::Span<const int64_t>, absl::Span<const int64_t>,
                                    absl::Span<const int64_t>, absl::Span<const int64_t>, char*,
                                    size_t);
template void StridedBoxCopy<true>(char*, absl::Span<const int64_t>, absl::Span<const int64_t>,
                                   absl::Span<const int64_t>, absl::Span<const int64_t>, char*,
                                   size_t);

absl::StatusOr<Tensor> BroadcastValue(const Tensor& value, const TensorShape& shape,
                                      absl::string_view op) {
  if (value.shape() == shape) return value;
  const int rank = shape.rank();
  const int vrank = value.dims();
  bool ok = vrank <= rank;
  for (int i = 0; ok && i < vrank; ++i) {
    const int64_t v = value.dim_size(i), d = shape.dim(rank - vrank + i);
    ok = v == 1 || v == d;
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": cannot broadcast a value of shape ",
                                                   value.shape().DebugString(),
                                                   " to the slice's shape ", shape.DebugString()));
  }
  Tensor out(value.dtype(), shape);
  if (out.NumElements() == 0) return out;
  // Source strides per output dimension: 0 where the value repeats.
  std::vector<int64_t> src_strides(rank, 0);
  int64_t stride = 1;
  for (int i = vrank - 1; i >= 0; --i) {
    if (value.dim_size(i) != 1) src_strides[rank - vrank + i] = stride;
    stride *= value.dim_size(i);
  }
  const size_t esize = static_cast<size_t>(DataTypeSize(value.dtype()));
  const char* src = static_cast<const char*>(value.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  std::vector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    std::memcpy(dst + i * esize, src + offset * esize, esize);
    for (int d = rank - 1; d >= 0; --d) {
      offset += src_strides[d];
      if (++idx[d] < shape.dim(d)) break;
      offset -= src_strides[d] * shape.dim(d);
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace internal
}  // namespace sluice
