#include "ops/io/internal/bundle_restore.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {
namespace internal {
namespace {

bool Overlaps(const BundleSlice& a, const ShapeAndSlice& b) {
  for (size_t d = 0; d < a.start.size(); ++d) {
    if (a.start[d] >= b.start[d] + b.length[d] || b.start[d] >= a.start[d] + a.length[d]) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<Tensor> RestoreFromBundle(const BundleReader& bundle, const std::string& name,
                                         const ShapeAndSlice* wanted, DataType dtype) {
  const BundleReader::Entry* entry = bundle.Find(name);
  if (entry == nullptr) {
    return absl::NotFoundError(absl::StrCat("the checkpoint holds no tensor '", name, "'"));
  }
  if (entry->dtype != dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", name, "' is ", DataTypeName(entry->dtype),
                     " in the checkpoint, the graph expects ", DataTypeName(dtype)));
  }
  if (wanted == nullptr && !entry->sliced) return bundle.Read(name);
  // A partitioned tensor restored whole is its full slice (strings too).
  const ShapeAndSlice full = FullSlice(entry->shape);
  if (wanted == nullptr) wanted = &full;
  if (entry->shape != wanted->full_shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", name, "' has shape ", entry->shape.DebugString(),
        " in the checkpoint; the slice asked for is of ", wanted->full_shape.DebugString()));
  }
  ASSIGN_OR_RETURN(std::vector<BundleSlice> stored, bundle.Slices(name));
  Tensor out(dtype, wanted->SliceShape());
  int64_t copied = 0;
  for (const BundleSlice& s : stored) {
    if (!Overlaps(s, *wanted)) continue;
    ASSIGN_OR_RETURN(Tensor part, bundle.ReadSlice(name, s));
    copied += CopyOverlap(part, ShapeAndSlice{entry->shape, s.start, s.length}, &out, *wanted);
  }
  if (copied < out.NumElements()) {
    return absl::NotFoundError(absl::StrCat("the slices held of tensor '", name, "' cover ", copied,
                                            " of the ", out.NumElements(), " elements of '",
                                            wanted->ToString(), "'"));
  }
  return out;
}

}  // namespace internal
}  // namespace sluice
