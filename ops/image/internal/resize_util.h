// What the image resize kernels and op definitions share (image_kernels.cc,
// resize_kernels.cc, image_ops.cc, resize_ops.cc): the real dtypes an image
// may have, the checks of the images and the size input, TensorFlow's
// resize scale, and the resized shape function.
//
//   RETURN_IF_ERROR(internal::CheckImages4D(images, "input"));
//   ASSIGN_OR_RETURN(auto hw, internal::ResizeSizeInput(ctx->input(1), "size"));
//   const float scale = internal::ResizeScale(in_h, hw.first, align_corners);
//
// Errors: InvalidArgument naming the input. Internal to ops/image.
#ifndef SLUICE_OPS_IMAGE_INTERNAL_RESIZE_UTIL_H_
#define SLUICE_OPS_IMAGE_INTERNAL_RESIZE_UTIL_H_

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// TensorFlow's real image dtypes, for OpDef attrs.
inline constexpr char kImageRealTypes[] =
    "{int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double}";

// Calls fn(T{}) with the C++ type of a real dtype the CPU kernels take.
template <typename Fn>
absl::Status WithRealType(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_UINT8: return fn(uint8_t{});
    case DT_INT8: return fn(int8_t{});
    case DT_UINT16: return fn(uint16_t{});
    case DT_INT16: return fn(int16_t{});
    case DT_INT32: return fn(int32_t{});
    case DT_INT64: return fn(int64_t{});
    case DT_FLOAT: return fn(float{});
    case DT_DOUBLE: return fn(double{});
    default:
      return absl::UnimplementedError(
          absl::StrCat("no CPU kernel for images of type ", DataTypeName(dtype)));
  }
}

absl::Status CheckImages4D(const Tensor& t, const char* what);

// A size input: a 1-D int32 tensor of two positive values (height, width).
absl::StatusOr<std::pair<int64_t, int64_t>> ResizeSizeInput(const Tensor& size, const char* what);

// in / out, or (in - 1) / (out - 1) under align_corners (TensorFlow's
// CalculateResizeScale).
float ResizeScale(int64_t in, int64_t out, bool align_corners);

// InvalidArgument for both align_corners and half_pixel_centers.
absl::Status CheckResizeAttrs(bool align_corners, bool half_pixel_centers);

// Shape function: [b, h, w, c] with b from input `batch_from`, c from
// `images`, h and w from the constant 2-vector input `size` when known.
absl::Status ResizedShape(InferenceContext* c, int images, int size, int batch_from);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_INTERNAL_RESIZE_UTIL_H_
