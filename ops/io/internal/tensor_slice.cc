#include "ops/io/internal/tensor_slice.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace sluice {
namespace internal {
namespace {

absl::Status Bad(absl::string_view spec, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("bad shape_and_slices '", spec, "': ", why));
}

// Copies the overlap along axes >= `axis`, given element offsets so far.
void CopyAxis(const char* src, char* dst, size_t elem, const std::vector<int64_t>& lo,
              const std::vector<int64_t>& hi, const ShapeAndSlice& s, const ShapeAndSlice& d,
              const std::vector<int64_t>& s_stride, const std::vector<int64_t>& d_stride,
              size_t axis, int64_t s_off, int64_t d_off, bool strings) {
  for (int64_t i = lo[axis]; i < hi[axis]; ++i) {
    const int64_t so = s_off + (i - s.start[axis]) * s_stride[axis];
    const int64_t doff = d_off + (i - d.start[axis]) * d_stride[axis];
    if (axis + 1 < lo.size()) {
      CopyAxis(src, dst, elem, lo, hi, s, d, s_stride, d_stride, axis + 1, so, doff, strings);
    } else if (strings) {
      reinterpret_cast<std::string*>(dst)[doff] = reinterpret_cast<const std::string*>(src)[so];
    } else {
      std::memcpy(dst + doff * elem, src + so * elem, elem);
    }
  }
}

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

}  // namespace

bool ShapeAndSlice::IsFull() const {
  for (size_t i = 0; i < start.size(); ++i) {
    if (start[i] != 0 || length[i] != full_shape.dim(static_cast<int>(i))) return false;
  }
  return true;
}

std::string ShapeAndSlice::SliceString() const {
  std::vector<std::string> axes;
  for (size_t i = 0; i < start.size(); ++i) {
    axes.push_back(start[i] == 0 && length[i] == full_shape.dim(static_cast<int>(i))
                       ? "-"
                       : absl::StrCat(start[i], ",", length[i]));
  }
  return absl::StrJoin(axes, ":");
}

std::string ShapeAndSlice::ToString() const {
  return absl::StrCat(absl::StrJoin(full_shape.dims(), " "), " ", SliceString());
}

absl::StatusOr<ShapeAndSlice> ParseShapeAndSlice(absl::string_view spec) {
  std::vector<absl::string_view> parts = absl::StrSplit(spec, ' ', absl::SkipEmpty());
  if (parts.size() < 2) return Bad(spec, "expected the full shape, then the slice");
  ShapeAndSlice out;
  std::vector<int64_t> dims;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int64_t d = 0;
    if (!absl::SimpleAtoi(parts[i], &d) || d < 0) return Bad(spec, "a dimension is not >= 0");
    dims.push_back(d);
  }
  out.full_shape = TensorShape(dims);
  std::vector<absl::string_view> axes = absl::StrSplit(parts.back(), ':');
  if (axes.size() != dims.size()) {
    return Bad(spec, absl::StrCat("the slice has ", axes.size(), " axes, the shape ", dims.size()));
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] == "-") {
      out.start.push_back(0);
      out.length.push_back(dims[i]);
      continue;
    }
    std::vector<absl::string_view> sl = absl::StrSplit(axes[i], ',');
    int64_t start = 0, length = 0;
    if (sl.size() != 2 || !absl::SimpleAtoi(sl[0], &start) || !absl::SimpleAtoi(sl[1], &length)) {
      return Bad(spec, absl::StrCat("axis ", i, " is not \"start,length\" or \"-\""));
    }
    if (length == -1) length = dims[i] - start;
    if (start < 0 || length < 0 || start > dims[i] || length > dims[i] - start) {
      return Bad(spec, absl::StrCat("axis ", i, " slice ", start, ",", length,
                                    " is outside its dimension ", dims[i]));
    }
    out.start.push_back(start);
    out.length.push_back(length);
  }
  return out;
}

ShapeAndSlice FullSlice(const TensorShape& shape) {
  ShapeAndSlice s;
  s.full_shape = shape;
  s.start.assign(shape.rank(), 0);
  s.length = shape.dims();
  return s;
}

int64_t CopyOverlap(const Tensor& src, const ShapeAndSlice& src_slice, Tensor* dst,
                    const ShapeAndSlice& dst_slice) {
  const size_t rank = src_slice.start.size();
  if (rank == 0) {  // scalars: the whole of each
    if (src.dtype() == DT_STRING) {
      *dst->data<std::string>() = *src.data<std::string>();
    } else {
      std::memcpy(dst->raw_data(), src.raw_data(), DataTypeSize(src.dtype()));
    }
    return 1;
  }
  std::vector<int64_t> lo(rank), hi(rank);
  int64_t count = 1;
  for (size_t i = 0; i < rank; ++i) {
    lo[i] = std::max(src_slice.start[i], dst_slice.start[i]);
    hi[i] = std::min(src_slice.start[i] + src_slice.length[i],
                     dst_slice.start[i] + dst_slice.length[i]);
    if (hi[i] <= lo[i]) return 0;
    count *= hi[i] - lo[i];
  }
  const bool strings = src.dtype() == DT_STRING;
  const size_t elem = strings ? sizeof(std::string) : DataTypeSize(src.dtype());
  CopyAxis(static_cast<const char*>(src.raw_data()), static_cast<char*>(dst->raw_data()), elem, lo,
           hi, src_slice, dst_slice, Strides(src_slice.length), Strides(dst_slice.length), 0, 0, 0,
           strings);
  return count;
}

std::string SliceEntryName(absl::string_view tensor, const ShapeAndSlice& slice) {
  return absl::StrCat(tensor, std::string(1, '\0'), slice.ToString());
}

absl::StatusOr<std::string> SavedEntryName(const std::string& tensor, absl::string_view spec,
                                           const Tensor& value) {
  if (spec.empty()) return tensor;
  absl::StatusOr<ShapeAndSlice> slice = ParseShapeAndSlice(spec);
  if (!slice.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", tensor, "': ", slice.status().message()));
  }
  if (value.shape() != slice->SliceShape()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", tensor, "' has shape ", value.shape().DebugString(),
                     " but its slice '", spec, "' is ", slice->SliceShape().DebugString()));
  }
  return SliceEntryName(tensor, *slice);
}

bool ParseSliceEntryName(absl::string_view entry, std::string* tensor, ShapeAndSlice* slice) {
  const size_t nul = entry.find('\0');
  if (nul == absl::string_view::npos) return false;
  absl::StatusOr<ShapeAndSlice> parsed = ParseShapeAndSlice(entry.substr(nul + 1));
  if (!parsed.ok()) return false;
  *tensor = std::string(entry.substr(0, nul));
  *slice = *std::move(parsed);
  return true;
}

}  // namespace internal
}  // namespace sluice
