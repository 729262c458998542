// Window arithmetic of the 2-D window ops (Conv2D and its backprops,
// MaxPool, MaxPoolGrad), shared by their shape functions and CPU kernels:
// padding modes, the output size of a strided, dilated window, the checked
// window attrs of a node, and the full geometry of one op over NHWC data.
//
//   ASSIGN_OR_RETURN(internal::WindowAttrs attrs, internal::ReadConvAttrs(node.attrs()));
//   ASSIGN_OR_RETURN(internal::Conv2DGeometry g,
//                    internal::ComputeConv2DGeometry(attrs, input_shape, 3, 3, 64));
//   // g.out_rows, g.out_cols, g.pad_top, g.pad_left, ...
//
// Errors: InvalidArgument for bad attrs or sizes, Unimplemented for
// unsupported layouts and paddings. Thread-safety: pure functions. Internal
// to ops/.
#ifndef SLUICE_OPS_NN_INTERNAL_WINDOW_GEOMETRY_H_
#define SLUICE_OPS_NN_INTERNAL_WINDOW_GEOMETRY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"
#include "graph/tensor_shape.h"

namespace sluice {
namespace internal {

enum class Padding { kSame, kValid, kExplicit };
absl::StatusOr<Padding> ParsePadding(absl::string_view padding);

struct WindowDim {
  int64_t output = -1;     // -1 when the input or window size is unknown
  int64_t pad_before = 0;  // rows/columns of padding before the first element
};
// Output size of one spatial dimension of a strided, dilated window. `input`
// or `window` of -1 gives output -1. InvalidArgument when the (padded) input is
// smaller than the dilated window, or stride/dilation < 1.
absl::StatusOr<WindowDim> ComputeWindowDim(int64_t input, int64_t window, int64_t stride,
                                           int64_t dilation, Padding padding,
                                           int64_t explicit_before = 0, int64_t explicit_after = 0);

// Attrs of the Conv2D family and of MaxPool read from a node, checked.
struct WindowAttrs {
  std::vector<int64_t> strides;            // 4 values, NHWC/NCHW order per data_format
  std::vector<int64_t> dilations;          // 4 values (all 1 for pooling)
  std::vector<int64_t> ksize;              // pooling only: 4 values
  std::vector<int64_t> explicit_paddings;  // 8 values or empty
  Padding padding = Padding::kValid;
  bool nchw = false;
  int h_index() const { return nchw ? 2 : 1; }
  int w_index() const { return nchw ? 3 : 2; }
  int c_index() const { return nchw ? 1 : 3; }
};
absl::StatusOr<WindowAttrs> ReadConvAttrs(const AttrMap& attrs);
absl::StatusOr<WindowAttrs> ReadPoolAttrs(const AttrMap& attrs);
// The same with ksize and strides given, not read (MaxPoolV2's inputs).
absl::StatusOr<WindowAttrs> ReadPoolAttrs(const AttrMap& attrs, std::vector<int64_t> ksize,
                                          std::vector<int64_t> strides);

// The full geometry of one 2-D window op over NHWC data.
struct Conv2DGeometry {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t filter_rows = 0, filter_cols = 0, out_depth = 0;
  int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
  int64_t out_rows = 0, out_cols = 0, pad_top = 0, pad_left = 0;
};
// input_shape NHWC; filter dims (rows, cols, out_depth). Errors as above.
absl::StatusOr<Conv2DGeometry> ComputeConv2DGeometry(const WindowAttrs& attrs,
                                                     const TensorShape& input_shape,
                                                     int64_t filter_rows, int64_t filter_cols,
                                                     int64_t out_depth);

// The shape function of a window op's backprop that is given its output's
// shape as `rank` int sizes in input `input` (Conv2DBackpropInput,
// DepthwiseConv2dNativeBackpropFilter, Conv3DBackpropInputV2, ...): those
// sizes when constant, else unknown dims of that rank. InvalidArgument
// naming the op for a wrong count or a negative size.
absl::Status ShapeFromSizesInput(InferenceContext* c, int input, int rank);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_NN_INTERNAL_WINDOW_GEOMETRY_H_
