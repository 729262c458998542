// Gradient functions of the array ops. Math ops (Sum, Add, Range, Cast) are
// built by name through OpBuilder, so this file needs no math header.
//
// Where shapes, axes or index vectors are known at build time the gradient is
// built from constants (fewer nodes, exact inferred shapes); otherwise it
// computes them in the graph (Shape, ConcatOffset, InvertPermutation, ...).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/indexed_slices.h"
#include "graph/scope.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/array/array_gradients.h"
#include "ops/internal/array_util.h"

namespace sluice {
namespace {

using ::tensorflow::TensorProto;
using Grads = std::vector<Output>;
using GradResult = absl::StatusOr<Grads>;

// ---- Helpers -------------------------------------------------------------------

using internal::InputOf;
using internal::OutputOf;

// The integer values of `o` when it comes straight from a Const.
std::optional<std::vector<int64_t>> ConstInts(const Output& o) {
  if (!o.valid() || o.node->op() != "Const") return std::nullopt;
  absl::StatusOr<TensorProto> proto = o.node->GetAttr<TensorProto>("value");
  if (!proto.ok()) return std::nullopt;
  absl::StatusOr<std::vector<int64_t>> v = TensorProtoToInts(*proto);
  if (!v.ok()) return std::nullopt;
  return *std::move(v);
}

bool FitsInt32(const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x > INT32_MAX || x < INT32_MIN) return false;
  }
  return true;
}

// A Const of `values` with `dtype` (int32 or int64) and `shape`.
Output IntConst(const Scope& s, const std::vector<int64_t>& values, DataType dtype,
                const TensorShape& shape) {
  if (dtype == DT_INT64) return ops::Const(s, Input(MakeTensorProto<int64_t>(values, shape)));
  std::vector<int32_t> v32(values.begin(), values.end());
  return ops::Const(s, Input(MakeTensorProto<int32_t>(v32, shape)));
}

Output IntVector(const Scope& s, const std::vector<int64_t>& values, DataType dtype = DT_INVALID) {
  if (dtype == DT_INVALID) dtype = FitsInt32(values) ? DT_INT32 : DT_INT64;
  return IntConst(s, values, dtype, TensorShape({static_cast<int64_t>(values.size())}));
}

Output IntScalar(const Scope& s, int64_t value, DataType dtype = DT_INT32) {
  return IntConst(s, {value}, dtype, TensorShape());
}

// x's shape as a vector of `dtype`: a Const when fully known at build time.
Output ShapeOf(const Scope& s, const Output& x, DataType dtype = DT_INT32) {
  if (x.valid() && x.shape().IsFullyDefined()) return IntVector(s, x.shape().dims(), dtype);
  return ops::Shape(s, x, {.out_type = dtype});
}

std::vector<int64_t> Iota(int64_t begin, int64_t end, int64_t step = 1) {
  std::vector<int64_t> v;
  for (int64_t i = begin; i < end; i += step) v.push_back(i);
  return v;
}

// Math ops by name (they belong to the math family).
Output Sum(const Scope& s, const Output& x, const Output& axes) {
  return s.Op("Sum").Input(x).Input(axes).Attr("keep_dims", false).Finalize1();
}

Output Add(const Scope& s, const Output& a, const Output& b) {
  const char* op =
      s.registry() != nullptr && s.registry()->Find("AddV2") != nullptr ? "AddV2" : "Add";
  return s.Op(op).Input(a).Input(b).Finalize1();
}

Output Range(const Scope& s, const Input& start, const Input& limit, const Input& delta) {
  return s.Op("Range").Input(start).Input(limit).Input(delta).Finalize1();
}

Output CastToInt32(const Scope& s, const Output& x) {
  if (x.dtype() == DT_INT32) return x;
  return s.Op("Cast").Input(x).Attr("DstT", DT_INT32).Finalize1();
}

// The sum of every element of x, as a scalar. With x's rank unknown, x is
// flattened first, so no Range of axes is needed.
Output SumAll(const Scope& s, const Output& x) {
  const int rank = x.shape().rank();
  if (rank >= 0) return Sum(s, x, IntVector(s, Iota(0, rank), DT_INT32));
  return Sum(s, ops::Reshape(s, x, {-1}), IntScalar(s, 0));
}

// `grads` unless the scope recorded an error while building them.
GradResult Done(const Scope& s, Grads grads) {
  if (!s.ok()) return s.status();
  return grads;
}

// A gradient for each output of a multi-output node: zeros where none flows.
std::vector<Output> DenseOutputGrads(const Scope& s, const Node& node,
                                     absl::Span<const Output> dy) {
  std::vector<Output> g(node.num_outputs());
  for (int k = 0; k < node.num_outputs(); ++k) {
    g[k] = k < static_cast<int>(dy.size()) && dy[k].valid() ? dy[k]
                                                            : ops::ZerosLike(s, OutputOf(node, k));
  }
  return g;
}

absl::StatusOr<internal::StridedSliceSpec> MasksOf(const Node& node) {
  internal::StridedSliceSpec m;
  ASSIGN_OR_RETURN(m.begin_mask, node.GetAttr<int64_t>("begin_mask"));
  ASSIGN_OR_RETURN(m.end_mask, node.GetAttr<int64_t>("end_mask"));
  ASSIGN_OR_RETURN(m.ellipsis_mask, node.GetAttr<int64_t>("ellipsis_mask"));
  ASSIGN_OR_RETURN(m.new_axis_mask, node.GetAttr<int64_t>("new_axis_mask"));
  ASSIGN_OR_RETURN(m.shrink_axis_mask, node.GetAttr<int64_t>("shrink_axis_mask"));
  return m;
}

ops::StridedSliceAttrs ToAttrs(const internal::StridedSliceSpec& m) {
  return {.begin_mask = m.begin_mask,
          .end_mask = m.end_mask,
          .ellipsis_mask = m.ellipsis_mask,
          .new_axis_mask = m.new_axis_mask,
          .shrink_axis_mask = m.shrink_axis_mask};
}

// ---- Gradient functions -----------------------------------------------------------

// Identity, PlaceholderWithDefault: the gradient passes through.
GradResult IdentityGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(node.num_inputs());
  grads[0] = dy[0];
  return grads;
}

// Reshape, ExpandDims, Squeeze: reshape back to the input's shape.
GradResult ReshapeGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(node.num_inputs());
  if (!dy[0].valid()) return grads;
  const Output x = InputOf(node, 0);
  grads[0] = ops::Reshape(s, dy[0], ShapeOf(s, x));
  return Done(s, std::move(grads));
}

GradResult TransposeGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(2);
  if (!dy[0].valid()) return grads;
  const Output perm = InputOf(node, 1);
  Output inverse;
  if (std::optional<std::vector<int64_t>> p = ConstInts(perm)) {
    std::vector<int64_t> inv(p->size());
    for (size_t i = 0; i < p->size(); ++i) {
      if ((*p)[i] < 0 || (*p)[i] >= static_cast<int64_t>(p->size())) {
        return absl::InvalidArgumentError(absl::StrCat("Transpose gradient: perm of ",
                                                       node.DebugName(), " is not a permutation"));
      }
      inv[(*p)[i]] = static_cast<int64_t>(i);
    }
    inverse = IntVector(s, inv, perm.dtype());
  } else {
    inverse = ops::InvertPermutation(s, perm);
  }
  grads[0] = ops::Transpose(s, dy[0], inverse);
  return Done(s, std::move(grads));
}

// ConcatV2 (axis last) and Concat (axis first): each input gets its slice.
GradResult ConcatGradImpl(const Scope& s, const Node& node, absl::Span<const Output> dy,
                          bool axis_first) {
  const int n = node.num_inputs() - 1;
  const int first = axis_first ? 1 : 0;
  const Output axis = InputOf(node, axis_first ? 0 : n);
  Grads grads(node.num_inputs());
  if (!dy[0].valid()) return grads;

  std::vector<Output> xs(n);
  bool all_known = true;
  for (int i = 0; i < n; ++i) {
    xs[i] = InputOf(node, first + i);
    all_known = all_known && xs[i].shape().IsFullyDefined();
  }
  std::optional<std::vector<int64_t>> axis_value = ConstInts(axis);
  if (all_known && axis_value.has_value() && axis_value->size() == 1) {
    const int64_t rank = xs[0].shape().rank();
    int64_t a = (*axis_value)[0];
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Concat gradient: axis out of range in ", node.DebugName()));
    }
    int64_t offset = 0;
    for (int i = 0; i < n; ++i) {
      std::vector<int64_t> begin(rank, 0);
      begin[a] = offset;
      const std::vector<int64_t>& size = xs[i].shape().dims();
      offset += size[a];
      const DataType t = FitsInt32(size) && FitsInt32(begin) ? DT_INT32 : DT_INT64;
      grads[first + i] = ops::Slice(s, dy[0], IntVector(s, begin, t), IntVector(s, size, t));
    }
    return Done(s, std::move(grads));
  }

  Output concat_dim = axis_value.has_value() && axis_value->size() == 1
                          ? IntScalar(s, (*axis_value)[0])
                          : CastToInt32(s, axis);
  std::vector<Output> shapes(n);
  for (int i = 0; i < n; ++i) shapes[i] = ShapeOf(s, xs[i]);
  std::vector<Output> offsets = ops::ConcatOffset(s, concat_dim, shapes);
  for (int i = 0; i < n; ++i) grads[first + i] = ops::Slice(s, dy[0], offsets[i], shapes[i]);
  return Done(s, std::move(grads));
}

GradResult ConcatV2Grad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  return ConcatGradImpl(s, node, dy, /*axis_first=*/false);
}

GradResult ConcatGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  return ConcatGradImpl(s, node, dy, /*axis_first=*/true);
}

// Split(split_dim, value): concatenate the pieces' gradients.
GradResult SplitGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  std::vector<Output> pieces = DenseOutputGrads(s, node, dy);
  Grads grads(2);
  grads[1] = pieces.size() == 1 ? pieces[0] : ops::ConcatV2(s, pieces, InputOf(node, 0));
  return Done(s, std::move(grads));
}

// Slice(input, begin, size): dy placed at `begin` in zeros of input's shape.
GradResult SliceGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(3);
  if (!dy[0].valid()) return grads;
  const Output x = InputOf(node, 0);
  const Output begin = InputOf(node, 1);
  const Output size = InputOf(node, 2);
  const DataType index_type = begin.dtype();
  std::optional<std::vector<int64_t>> b = ConstInts(begin);
  std::optional<std::vector<int64_t>> n = ConstInts(size);
  if (x.shape().IsFullyDefined() && b && n && b->size() == n->size() &&
      static_cast<int>(b->size()) == x.shape().rank()) {
    std::vector<int64_t> end(b->size());
    for (size_t i = 0; i < end.size(); ++i) {
      end[i] = (*n)[i] == -1 ? x.shape().dim(i) : (*b)[i] + (*n)[i];
    }
    std::vector<int64_t> ones(b->size(), 1);
    grads[0] = ops::StridedSliceGrad(s, IntVector(s, x.shape().dims(), index_type),
                                     IntVector(s, *b, index_type), IntVector(s, end, index_type),
                                     IntVector(s, ones, index_type), dy[0]);
    return Done(s, std::move(grads));
  }
  // end = begin + the slice's actual extent (dy's shape), strides all 1.
  const Output end = Add(s, begin, ops::Shape(s, dy[0], {.out_type = index_type}));
  grads[0] = ops::StridedSliceGrad(s, ShapeOf(s, x, index_type), begin, end,
                                   ops::OnesLike(s, begin), dy[0]);
  return Done(s, std::move(grads));
}

GradResult PackGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(node.num_inputs());
  if (!dy[0].valid()) return grads;
  ASSIGN_OR_RETURN(int64_t axis, node.GetAttr<int64_t>("axis"));
  grads = ops::Unpack(s, dy[0], node.num_inputs(), {.axis = axis});
  return Done(s, std::move(grads));
}

GradResult UnpackGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  ASSIGN_OR_RETURN(int64_t axis, node.GetAttr<int64_t>("axis"));
  std::vector<Output> pieces = DenseOutputGrads(s, node, dy);
  return Done(s, {ops::Pack(s, pieces, {.axis = axis})});
}

// Tile(input, multiples): view dy as [m0, d0, m1, d1, ...] and sum the m's.
GradResult TileGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(2);
  if (!dy[0].valid()) return grads;
  const Output x = InputOf(node, 0);
  const Output multiples = InputOf(node, 1);
  std::optional<std::vector<int64_t>> m = ConstInts(multiples);
  Output split_shape, axes;
  if (x.shape().IsFullyDefined() && m && static_cast<int>(m->size()) == x.shape().rank()) {
    std::vector<int64_t> split;
    for (size_t i = 0; i < m->size(); ++i) {
      split.push_back((*m)[i]);
      split.push_back(x.shape().dim(i));
    }
    split_shape = IntVector(s, split);
    axes = IntVector(s, Iota(0, 2 * static_cast<int64_t>(m->size()), 2), DT_INT32);
  } else {
    const Output shape_x = ShapeOf(s, x, multiples.dtype());
    split_shape = ops::Reshape(s, ops::Pack(s, {multiples, shape_x}, {.axis = 1}), {-1});
    int64_t rank = x.shape().rank();
    if (rank < 0 && m) rank = static_cast<int64_t>(m->size());
    if (rank < 0 && multiples.shape().rank() == 1) rank = multiples.shape().dim(0);
    axes = rank >= 0 ? IntVector(s, Iota(0, 2 * rank, 2), DT_INT32)
                     : Range(s, 0, ops::Size(s, split_shape), 2);
  }
  grads[0] = Sum(s, ops::Reshape(s, dy[0], split_shape), axes);
  return Done(s, std::move(grads));
}

GradResult StridedSliceGradFn(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(4);
  if (!dy[0].valid()) return grads;
  ASSIGN_OR_RETURN(internal::StridedSliceSpec masks, MasksOf(node));
  const Output x = InputOf(node, 0);
  const Output begin = InputOf(node, 1);
  grads[0] = ops::StridedSliceGrad(s, ShapeOf(s, x, begin.dtype()), begin, InputOf(node, 2),
                                   InputOf(node, 3), dy[0], ToAttrs(masks));
  return Done(s, std::move(grads));
}

// StridedSliceGrad is linear in dy: its gradient slices the incoming one.
GradResult StridedSliceGradGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(5);
  if (!dy[0].valid()) return grads;
  ASSIGN_OR_RETURN(internal::StridedSliceSpec masks, MasksOf(node));
  grads[4] = ops::StridedSlice(s, dy[0], InputOf(node, 1), InputOf(node, 2), InputOf(node, 3),
                               ToAttrs(masks));
  return Done(s, std::move(grads));
}

// TensorStridedSliceUpdate: the input's gradient is dy with the slice zeroed;
// the value's is dy's slice, summed over the dimensions the value was
// broadcast along (TensorFlow's gradient).
GradResult TensorStridedSliceUpdateGrad(const Scope& s, const Node& node,
                                        absl::Span<const Output> dy) {
  Grads grads(5);
  if (!dy[0].valid()) return grads;
  ASSIGN_OR_RETURN(internal::StridedSliceSpec masks, MasksOf(node));
  const Output begin = InputOf(node, 1), end = InputOf(node, 2), strides = InputOf(node, 3);
  const Output value = InputOf(node, 4);
  grads[0] = ops::TensorStridedSliceUpdate(s, dy[0], begin, end, strides,
                                           ops::ZerosLike(s, value), ToAttrs(masks));
  const Output slice = ops::StridedSlice(s, dy[0], begin, end, strides, ToAttrs(masks));
  const Output value_shape = ops::Shape(s, value);
  const Output axes = ops::BroadcastGradientArgs(s, value_shape, ops::Shape(s, slice)).r0;
  grads[4] = ops::Reshape(s, Sum(s, slice, axes), value_shape);
  return Done(s, std::move(grads));
}

// Entries [begin, end) of the shape vector `shape` (end -1: to the end).
Output ShapeSlice(const Scope& s, const Output& shape, int64_t begin, int64_t end) {
  if (end < 0) {
    return ops::StridedSlice(s, shape, IntVector(s, {begin}), IntVector(s, {0}), IntVector(s, {1}),
                             {.end_mask = 1});
  }
  return ops::StridedSlice(s, shape, IntVector(s, {begin}), IntVector(s, {end}), IntVector(s, {1}));
}

Output ShapeEntry(const Scope& s, const Output& shape, int64_t i) {
  return ops::StridedSlice(s, shape, IntVector(s, {i}), IntVector(s, {i + 1}), IntVector(s, {1}),
                           {.shrink_axis_mask = 1});
}

// GatherV2(params, indices, axis) and Gather(params, indices): the rows of
// dy are summed back into the rows of params they came from.
GradResult GatherGradImpl(const Scope& s, const Node& node, absl::Span<const Output> dy,
                          bool has_axis) {
  Grads grads(node.num_inputs());
  if (!dy[0].valid()) return grads;
  const Output params = InputOf(node, 0);
  const Output indices = InputOf(node, 1);
  int64_t axis = 0;
  if (has_axis) {
    ASSIGN_OR_RETURN(int64_t batch_dims, node.GetAttr<int64_t>("batch_dims"));
    std::optional<std::vector<int64_t>> a = ConstInts(InputOf(node, 2));
    if (batch_dims != 0 || !a || a->size() != 1) {
      return absl::UnimplementedError(absl::StrCat(
          "GatherV2 gradient needs a constant axis and batch_dims = 0 (", node.DebugName(), ")"));
    }
    axis = (*a)[0];
  }
  const TensorShape& ps = params.shape();
  const int prank = ps.rank();
  if (axis < 0) {
    if (prank < 0) {
      return absl::UnimplementedError(
          absl::StrCat("GatherV2 gradient with a negative axis needs params of known rank (",
                       node.DebugName(), ")"));
    }
    axis += prank;
  }
  const int qrank = indices.shape().rank();
  if (axis > 0 && (prank < 0 || qrank < 0)) {
    return absl::UnimplementedError(absl::StrCat("GatherV2 gradient along axis ", axis,
                                                 " needs params and indices of known rank (",
                                                 node.DebugName(), ")"));
  }

  // values: dy with the gathered dimensions first and flattened;
  // values_shape = [-1] + params.shape[:axis] + params.shape[axis+1:].
  Output values_shape, num_segments;
  if (ps.IsFullyDefined()) {
    std::vector<int64_t> v = {-1};
    v.insert(v.end(), ps.dims().begin(), ps.dims().begin() + axis);
    v.insert(v.end(), ps.dims().begin() + axis + 1, ps.dims().end());
    values_shape = IntVector(s, v);
    num_segments = IntScalar(s, ps.dim(axis), FitsInt32({ps.dim(axis)}) ? DT_INT32 : DT_INT64);
  } else {
    const Output shape = ops::Shape(s, params);
    std::vector<Output> parts = {IntVector(s, {-1}, DT_INT32)};
    if (axis > 0) parts.push_back(ShapeSlice(s, shape, 0, axis));
    parts.push_back(ShapeSlice(s, shape, axis + 1, -1));
    values_shape = ops::ConcatV2(s, parts, 0);
    num_segments = ShapeEntry(s, shape, axis);
  }
  Output moved = dy[0];
  if (axis > 0) {
    std::vector<int64_t> perm = Iota(axis, axis + qrank);
    for (int64_t i = 0; i < axis; ++i) perm.push_back(i);
    for (int64_t i = axis + qrank; i < prank - 1 + qrank; ++i) perm.push_back(i);
    moved = ops::Transpose(s, dy[0], IntVector(s, perm, DT_INT32));
  }
  const Output values = ops::Reshape(s, moved, values_shape);
  const Output ids = ops::Reshape(s, indices, {-1});
  Output dx = ops::UnsortedSegmentSum(s, values, ids, num_segments);
  if (axis > 0) {
    std::vector<int64_t> perm = Iota(1, axis + 1);
    perm.push_back(0);
    for (int64_t i = axis + 1; i < prank; ++i) perm.push_back(i);
    dx = ops::Transpose(s, dx, IntVector(s, perm, DT_INT32));
  }
  grads[0] = dx;
  return Done(s, std::move(grads));
}

// Gather and GatherV2 along axis 0 (batch_dims 0), for AddGradientsWithSlices:
// the table's gradient as IndexedSlices of the gathered rows, as TensorFlow
// gives it, so only those rows are computed, sent and applied. Along another
// axis: the dense gradient above.
absl::StatusOr<std::vector<Gradient>> GatherSparseGrad(const Scope& s, const Node& node,
                                                       absl::Span<const Gradient> dy) {
  std::vector<Gradient> dx(node.num_inputs());
  if (!dy[0].valid()) return dx;
  const Output grad = DenseOf(s, dy[0]);
  const bool v2 = node.op() == "GatherV2";
  bool axis0 = true;
  if (v2) {
    ASSIGN_OR_RETURN(int64_t batch_dims, node.GetAttr<int64_t>("batch_dims"));
    std::optional<std::vector<int64_t>> a = ConstInts(InputOf(node, 2));
    axis0 = batch_dims == 0 && a && a->size() == 1 && (*a)[0] == 0;
  }
  if (!axis0) {
    ASSIGN_OR_RETURN(Grads dense, GatherGradImpl(s, node, {grad}, v2));
    dx.assign(dense.begin(), dense.end());
    return dx;
  }
  const Output params = InputOf(node, 0);
  const TensorShape& ps = params.shape();
  IndexedSlices slices;
  // Computed beside the params (a constant when their shape is known): a
  // table on a parameter server never travels to learn its shape.
  slices.dense_shape = ShapeOf(s.ColocateWith(params), params, DT_INT64);
  // values: [-1] + params.shape[1:]
  Output values_shape;
  if (ps.IsFullyDefined() && ps.rank() >= 1) {
    std::vector<int64_t> v = {-1};
    v.insert(v.end(), ps.dims().begin() + 1, ps.dims().end());
    values_shape = IntVector(s, v, DT_INT64);
  } else {
    values_shape = ops::ConcatV2(
        s, {Input(IntVector(s, {-1}, DT_INT64)), Input(ShapeSlice(s, slices.dense_shape, 1, -1))},
        0);
  }
  slices.values = ops::Reshape(s, grad, values_shape);
  // Beside the params too: the gather's indices are there already, so a
  // table's gradient sends only its rows to the parameter server.
  slices.indices = ops::Reshape(s.ColocateWith(params), InputOf(node, 1), {-1});
  dx[0] = slices;
  RETURN_IF_ERROR(s.status());
  return dx;
}

// Identity passes a sparse gradient through as it is.
absl::StatusOr<std::vector<Gradient>> IdentitySparseGrad(const Scope&, const Node& node,
                                                         absl::Span<const Gradient> dy) {
  std::vector<Gradient> dx(node.num_inputs());
  dx[0] = dy[0];
  return dx;
}

GradResult GatherV2Grad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  return GatherGradImpl(s, node, dy, /*has_axis=*/true);
}

GradResult GatherGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  return GatherGradImpl(s, node, dy, /*has_axis=*/false);
}

// Each data row receives its segment's gradient. Negative segment ids (rows
// the forward op dropped) make the Gather fail at run time.
GradResult UnsortedSegmentSumGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(3);
  if (!dy[0].valid()) return grads;
  grads[0] = ops::GatherV2(s, dy[0], InputOf(node, 1), 0);
  return Done(s, std::move(grads));
}

// Fill(dims, value): value's gradient is the sum of dy.
GradResult FillGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(2);
  if (!dy[0].valid()) return grads;
  grads[1] = SumAll(s, dy[0]);
  return Done(s, std::move(grads));
}

GradResult PreventGradientGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  absl::StatusOr<std::string> message = node.GetAttr<std::string>("message");
  return absl::InvalidArgumentError(absl::StrCat("Gradient explicitly disabled at ",
                                                 node.DebugName(),
                                                 ". Reason: ", message.ok() ? *message : ""));
}

}  // namespace

absl::Status RegisterArrayGradients(OpRegistry* ops) {
  const std::pair<const char*, GradFn> grads[] = {
      {"Identity", IdentityGrad},
      {"PlaceholderWithDefault", IdentityGrad},
      {"PreventGradient", PreventGradientGrad},
      {"Reshape", ReshapeGrad},
      {"ExpandDims", ReshapeGrad},
      {"Squeeze", ReshapeGrad},
      {"Transpose", TransposeGrad},
      {"ConcatV2", ConcatV2Grad},
      {"Concat", ConcatGrad},
      {"Split", SplitGrad},
      {"Slice", SliceGrad},
      {"Pack", PackGrad},
      {"Unpack", UnpackGrad},
      {"Tile", TileGrad},
      {"StridedSlice", StridedSliceGradFn},
      {"StridedSliceGrad", StridedSliceGradGrad},
      {"TensorStridedSliceUpdate", TensorStridedSliceUpdateGrad},
      {"GatherV2", GatherV2Grad},
      {"Gather", GatherGrad},
      {"UnsortedSegmentSum", UnsortedSegmentSumGrad},
      {"Fill", FillGrad},
  };
  for (const auto& [op, fn] : grads) RETURN_IF_ERROR(ops->SetGradient(op, fn));
  RETURN_IF_ERROR(ops->SetSparseGradient("Gather", GatherSparseGrad));
  RETURN_IF_ERROR(ops->SetSparseGradient("GatherV2", GatherSparseGrad));
  RETURN_IF_ERROR(ops->SetSparseGradient("Identity", IdentitySparseGrad));
  for (const char* op :
       {"Const", "Placeholder", "StopGradient", "NoOp", "ZerosLike", "OnesLike", "Shape", "Size",
        "Rank", "InvertPermutation", "ConcatOffset", "BroadcastGradientArgs",
        "BroadcastArgs"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

}  // namespace sluice
