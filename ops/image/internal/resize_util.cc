#include "ops/image/internal/resize_util.h"

#include <optional>
#include <vector>

#include "base/status_macros.h"

namespace sluice {
namespace internal {

absl::Status CheckImages4D(const Tensor& t, const char* what) {
  if (t.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be 4-dimensional, got shape ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::pair<int64_t, int64_t>> ResizeSizeInput(const Tensor& size, const char* what) {
  if (size.dims() != 1 || size.NumElements() != 2 || size.dtype() != DT_INT32) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a 1-D int32 Tensor of 2 elements: new_height, new_width, got ",
                     size.DebugString(0)));
  }
  const int64_t h = size.data<int32_t>()[0], w = size.data<int32_t>()[1];
  if (h <= 0 || w <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be positive, got [", h, ", ", w, "]"));
  }
  return std::make_pair(h, w);
}

float ResizeScale(int64_t in, int64_t out, bool align_corners) {
  return (align_corners && out > 1) ? (in - 1) / static_cast<float>(out - 1)
                                    : in / static_cast<float>(out);
}

absl::Status CheckResizeAttrs(bool align_corners, bool half_pixel_centers) {
  if (align_corners && half_pixel_centers) {
    return absl::InvalidArgumentError(
        "If half_pixel_centers is True, align_corners must be False.");
  }
  return absl::OkStatus();
}

absl::Status ResizedShape(InferenceContext* c, int images, int size, int batch_from) {
  RETURN_IF_ERROR(c->WithRank(images, 4));
  RETURN_IF_ERROR(c->WithRank(size, 1));
  const TensorShape& in = c->input(images);
  int64_t h = -1, w = -1;
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> hw, c->InputAsInts(size));
  if (hw.has_value()) {
    if (hw->size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("size must have 2 elements, got ", hw->size()));
    }
    h = (*hw)[0];
    w = (*hw)[1];
  }
  const TensorShape& b = c->input(batch_from);
  const int64_t batch = b.rank() >= 1 ? b.dim(0) : -1;
  const int64_t depth = in.rank() == 4 ? in.dim(3) : -1;
  c->set_output(0, TensorShape({batch, h, w, depth}));
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace sluice
