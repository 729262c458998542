// Array ops: constants and placeholders, shape manipulation (Reshape,
// Transpose, ExpandDims, Squeeze), joining and splitting (ConcatV2, Split,
// Pack, Unpack, Tile), indexing (Slice, StridedSlice, GatherV2), shape
// queries (Shape, Size, Rank) and the helpers gradients need
// (BroadcastGradientArgs, UnsortedSegmentSum, ConcatOffset,
// InvertPermutation, StridedSliceGrad). Op and attr names are TensorFlow's.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {-1, 784}});
//   Output w = ops::Const(s, {1.f, 2.f, 3.f, 4.f}, TensorShape({2, 2}));
//   Output img = ops::Reshape(s, x, {-1, 28, 28, 1});           // [?,28,28,1]
//   Output t = ops::Transpose(s, w, {1, 0});
//   Output c = ops::ConcatV2(s, {w, t}, 0);                      // [4,2]
//   std::vector<Output> halves = ops::Split(s, 0, c, 2);
//   Output row = ops::StridedSlice(s, c, {1}, {2}, {1}, {.shrink_axis_mask = 1});
//
// Every wrapper takes the scope first and records the first building error
// in it (with the caller's source line); wrappers given an invalid Output
// return an invalid Output. Shape functions use constant inputs (shapes,
// perms, axes, begin/size, multiples) so that shapes are known, and shape
// mismatches reported, at build time.
//
// Kernels (CPU) move bytes and work for every fixed-size dtype (float,
// double, half, bfloat16, int8..int64, uint8, uint16, bool); index inputs
// accept int32 and int64. Identity, Reshape, ExpandDims, Squeeze and
// PlaceholderWithDefault share their input's buffer; Const outputs the
// same buffer every step.
//
// Thread-safety: registration functions are called once at start-up;
// wrappers follow Scope's rules (build a graph from one thread).
#ifndef SLUICE_OPS_ARRAY_ARRAY_OPS_H_
#define SLUICE_OPS_ARRAY_ARRAY_OPS_H_

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include "base/source_location.h"
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/proto/tensor.pb.h"
#include "graph/scope.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"
#include "runtime/kernel_registry.h"
#include "runtime/tensor.h"

namespace sluice {

// Registers the array op definitions (with shape functions). AlreadyExists
// when one of them is already in `ops`.
absl::Status RegisterArrayOps(OpRegistry* ops);
// Adds StridedSlice's five mask attrs (begin_mask ... shrink_axis_mask, all
// defaulting to 0) to an op definition: the strided slice ops' shared attrs.
OpDefBuilder& AddStridedSliceMaskAttrs(OpDefBuilder& b);
// Registers the CPU kernels of the array ops.
void RegisterArrayKernels(KernelRegistry* kernels);

// A TensorProto holding `values` (row-major) with `shape`; the values are
// written to tensor_content (strings to string_val). `values.size()` must
// equal the number of elements of `shape`, or be 1 (the value then fills
// the shape).
template <typename T>
::tensorflow::TensorProto MakeTensorProto(const std::vector<T>& values, const TensorShape& shape) {
  ::tensorflow::TensorProto proto;
  proto.set_dtype(DataTypeToEnum<T>::value);
  shape.ToProto(proto.mutable_tensor_shape());
  const int64_t n = shape.num_elements();
  const size_t count = (values.size() == 1 && n > 1) ? static_cast<size_t>(n) : values.size();
  if constexpr (std::is_same_v<T, std::string>) {  // objects, not bytes
    for (size_t i = 0; i < count; ++i) proto.add_string_val(values[values.size() == 1 ? 0 : i]);
  } else {
    std::string bytes(count * sizeof(T), '\0');
    for (size_t i = 0; i < count; ++i) {
      const T v = values[values.size() == 1 ? 0 : i];
      std::memcpy(&bytes[i * sizeof(T)], &v, sizeof(T));
    }
    proto.set_tensor_content(std::move(bytes));
  }
  return proto;
}

namespace ops {

using SourceLocation = std::source_location;

// ---- Constants and placeholders ------------------------------------------

// A Const holding a literal: `ops::Const(s, 2.0f)`, `ops::Const(s, {1, 2, 3})`
// or `ops::Const(s, Input(tensor_proto))`. Scalars are rank 0, lists rank 1.
Output Const(const Scope& scope, const Input& value,
             SourceLocation loc = SourceLocation::current());
// A literal given a shape: `ops::Const(s, {1.f, 2.f, 3.f, 4.f}, TensorShape({2, 2}))`.
// A single value fills the shape; otherwise the counts must match.
Output Const(const Scope& scope, const Input& value, const TensorShape& shape,
             SourceLocation loc = SourceLocation::current());
// A Const holding a runtime tensor's values.
Output Const(const Scope& scope, const Tensor& value,
             SourceLocation loc = SourceLocation::current());
// Typed: `ops::Const<double>(s, {1, 2, 3, 4}, {2, 2})`.
template <typename T>
Output Const(const Scope& scope, const std::vector<T>& values, const TensorShape& shape,
             SourceLocation loc = SourceLocation::current()) {
  return Const(scope, Input(MakeTensorProto<T>(values, shape)), loc);
}
// A vector: `ops::Const(s, std::vector<float>{1, 2, 3})` has shape [3]. (No
// source-location parameter: `Const<T>(s, {..}, {})` must stay unambiguous.)
template <typename T>
Output Const(const Scope& scope, const std::vector<T>& values) {
  return Const(scope, values, TensorShape({static_cast<int64_t>(values.size())}));
}

struct PlaceholderAttrs {
  TensorShape shape = TensorShape::Unknown();
};
// A tensor that must be fed: running it unfed is InvalidArgument.
Output Placeholder(const Scope& scope, DataType dtype, const PlaceholderAttrs& attrs = {},
                   SourceLocation loc = SourceLocation::current());
// `input` unless the tensor is fed; `shape` may be less specific than input's.
Output PlaceholderWithDefault(const Scope& scope, const Input& input, const TensorShape& shape,
                              SourceLocation loc = SourceLocation::current());

// ---- Identity-like ------------------------------------------------------

Output Identity(const Scope& scope, const Input& input,
                SourceLocation loc = SourceLocation::current());
// Identity that blocks gradients (they stop here, as if it were a constant).
Output StopGradient(const Scope& scope, const Input& input,
                    SourceLocation loc = SourceLocation::current());
struct PreventGradientAttrs {
  std::string message;
};
// Identity whose gradient is an error (explaining `message`).
Output PreventGradient(const Scope& scope, const Input& input,
                       const PreventGradientAttrs& attrs = {},
                       SourceLocation loc = SourceLocation::current());
// Does nothing; for control dependencies. nullptr on error.
Node* NoOp(const Scope& scope, SourceLocation loc = SourceLocation::current());

// ---- Creating ------------------------------------------------------------

// A tensor of shape `dims` (an int vector) filled with the scalar `value`.
Output Fill(const Scope& scope, const Input& dims, const Input& value,
            SourceLocation loc = SourceLocation::current());
Output ZerosLike(const Scope& scope, const Input& x,
                 SourceLocation loc = SourceLocation::current());
Output OnesLike(const Scope& scope, const Input& x, SourceLocation loc = SourceLocation::current());

// ---- Shapes --------------------------------------------------------------

// `shape` may hold one -1, inferred from the number of elements.
Output Reshape(const Scope& scope, const Input& tensor, const Input& shape,
               SourceLocation loc = SourceLocation::current());
// y.dim(i) == x.dim(perm[i]).
Output Transpose(const Scope& scope, const Input& x, const Input& perm,
                 SourceLocation loc = SourceLocation::current());
// The inverse of a permutation vector (int32 or int64).
Output InvertPermutation(const Scope& scope, const Input& x,
                         SourceLocation loc = SourceLocation::current());
// Inserts a dimension of 1 at `dim` (in [-rank-1, rank]).
Output ExpandDims(const Scope& scope, const Input& input, const Input& dim,
                  SourceLocation loc = SourceLocation::current());
struct SqueezeAttrs {
  std::vector<int64_t> squeeze_dims;  // empty: every dimension of size 1
};
Output Squeeze(const Scope& scope, const Input& input, const SqueezeAttrs& attrs = {},
               SourceLocation loc = SourceLocation::current());

struct ShapeAttrs {
  DataType out_type = DT_INT32;
};
Output Shape(const Scope& scope, const Input& input, const ShapeAttrs& attrs = {},
             SourceLocation loc = SourceLocation::current());
Output Size(const Scope& scope, const Input& input, const ShapeAttrs& attrs = {},
            SourceLocation loc = SourceLocation::current());
Output Rank(const Scope& scope, const Input& input, SourceLocation loc = SourceLocation::current());

// ---- Joining and splitting ---------------------------------------------

// Concatenates along `axis` (negative counts from the end).
//   ops::ConcatV2(s, {a, b}, 0);   ops::ConcatV2(s, outputs_vector, -1);
Output ConcatV2(const Scope& scope, std::initializer_list<Input> values, const Input& axis,
                SourceLocation loc = SourceLocation::current());
Output ConcatV2(const Scope& scope, absl::Span<const Input> values, const Input& axis,
                SourceLocation loc = SourceLocation::current());
Output ConcatV2(const Scope& scope, absl::Span<const Output> values, const Input& axis,
                SourceLocation loc = SourceLocation::current());
// For each shape in `shapes`, its offset in a concatenation along
// `concat_dim` (ConcatV2's gradient).
std::vector<Output> ConcatOffset(const Scope& scope, const Input& concat_dim,
                                 absl::Span<const Output> shapes,
                                 SourceLocation loc = SourceLocation::current());

// `num_split` equal pieces along `axis`; always returns num_split Outputs
// (invalid ones on error).
std::vector<Output> Split(const Scope& scope, const Input& axis, const Input& value,
                          int64_t num_split, SourceLocation loc = SourceLocation::current());

struct PackAttrs {
  int64_t axis = 0;
};
// Stacks tensors of one shape along a new dimension `axis`.
Output Pack(const Scope& scope, std::initializer_list<Input> values, const PackAttrs& attrs = {},
            SourceLocation loc = SourceLocation::current());
Output Pack(const Scope& scope, absl::Span<const Input> values, const PackAttrs& attrs = {},
            SourceLocation loc = SourceLocation::current());
Output Pack(const Scope& scope, absl::Span<const Output> values, const PackAttrs& attrs = {},
            SourceLocation loc = SourceLocation::current());
// Unstacks `num` tensors along `axis`; always returns num Outputs.
std::vector<Output> Unpack(const Scope& scope, const Input& value, int64_t num,
                           const PackAttrs& attrs = {},
                           SourceLocation loc = SourceLocation::current());

// Repeats `input` multiples[i] times along dimension i.
Output Tile(const Scope& scope, const Input& input, const Input& multiples,
            SourceLocation loc = SourceLocation::current());

// ---- Indexing --------------------------------------------------------------

// input[begin[i] : begin[i] + size[i]] per dimension; size -1 means "to the end".
Output Slice(const Scope& scope, const Input& input, const Input& begin, const Input& size,
             SourceLocation loc = SourceLocation::current());

// NumPy-style slicing with TensorFlow's five masks (bit i refers to entry i
// of begin/end/strides).
struct StridedSliceAttrs {
  int64_t begin_mask = 0;
  int64_t end_mask = 0;
  int64_t ellipsis_mask = 0;
  int64_t new_axis_mask = 0;
  int64_t shrink_axis_mask = 0;
};
// The five mask attrs on the builder of a strided slice op (StridedSlice,
// its gradient, TensorStridedSliceUpdate, the slice assignments).
OpBuilder& SetStridedSliceMasks(OpBuilder& b, const StridedSliceAttrs& attrs);
Output StridedSlice(const Scope& scope, const Input& input, const Input& begin, const Input& end,
                    const Input& strides, const StridedSliceAttrs& attrs = {},
                    SourceLocation loc = SourceLocation::current());
// A tensor of shape `shape`, zero except where StridedSlice with the same
// arguments would read: there it holds `dy`.
Output StridedSliceGrad(const Scope& scope, const Input& shape, const Input& begin,
                        const Input& end, const Input& strides, const Input& dy,
                        const StridedSliceAttrs& attrs = {},
                        SourceLocation loc = SourceLocation::current());
// `input` with the strided slice (as StridedSlice takes it) replaced by
// `value`, broadcast to the slice's shape (tf.tensor_strided_slice_update,
// what `x[1:3].assign(...)` of a tensor lowers to); TensorFlow's gradient.
Output TensorStridedSliceUpdate(const Scope& scope, const Input& input, const Input& begin,
                                const Input& end, const Input& strides, const Input& value,
                                const StridedSliceAttrs& attrs = {},
                                SourceLocation loc = SourceLocation::current());

struct GatherV2Attrs {
  int64_t batch_dims = 0;  // only 0 is supported
};
// Rows of `params` along `axis` picked by `indices`:
// output shape = params.shape[:axis] + indices.shape + params.shape[axis+1:].
Output GatherV2(const Scope& scope, const Input& params, const Input& indices, const Input& axis,
                const GatherV2Attrs& attrs = {}, SourceLocation loc = SourceLocation::current());

// output[k] = sum of data[i...] over the i with segment_ids[i...] == k;
// negative ids are dropped.
Output UnsortedSegmentSum(const Scope& scope, const Input& data, const Input& segment_ids,
                          const Input& num_segments,
                          SourceLocation loc = SourceLocation::current());

// The shape a broadcasting binary op gives inputs of shapes s0 and s1
// (tf.broadcast_dynamic_shape); InvalidArgument "Incompatible shapes: [2,3]
// vs. [4]" when they do not broadcast.
Output BroadcastArgs(const Scope& scope, const Input& s0, const Input& s1,
                     SourceLocation loc = SourceLocation::current());

// For a broadcasting binary op on shapes s0 and s1: the axes along which
// each input's gradient must be summed.
struct BroadcastGradientArgsOutputs {
  Output r0;
  Output r1;
};
BroadcastGradientArgsOutputs BroadcastGradientArgs(const Scope& scope, const Input& s0,
                                                   const Input& s1,
                                                   SourceLocation loc = SourceLocation::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_ARRAY_OPS_H_
