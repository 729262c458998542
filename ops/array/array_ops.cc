// Array op definitions (RegisterArrayOps) and graph-building wrappers. Shape
// functions: ops/internal/array_shape_fns.cc; kernels: array_kernels.cc and
// slice_kernels.cc.
#include "ops/array/array_ops.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/attr_value.h"
#include "graph/op_def.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"
#include "ops/internal/array_shape_fns.h"

namespace sluice {
namespace {

using ::tensorflow::TensorProto;

// ---- Registration ------------------------------------------------------------

constexpr char kIndexTypes[] = "{int32, int64}";

std::string IndexAttr(absl::string_view name, bool with_default = true) {
  return absl::StrCat(name, ": ", kIndexTypes, with_default ? " = DT_INT32" : "");
}

AttrValue EmptyIntList() {
  AttrValue v;
  v.mutable_list();
  return v;
}

}  // namespace

OpDefBuilder& AddStridedSliceMaskAttrs(OpDefBuilder& b) {
  return b.Attr("begin_mask: int = 0")
      .Attr("end_mask: int = 0")
      .Attr("ellipsis_mask: int = 0")
      .Attr("new_axis_mask: int = 0")
      .Attr("shrink_axis_mask: int = 0");
}

absl::Status RegisterArrayOps(OpRegistry* ops) {
  // Constants and feeds.
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Const")
                                    .Output("output: dtype")
                                    .Attr("value: tensor")
                                    .Attr("dtype: type")
                                    .SetShapeFn(internal::ConstShape)));
  RETURN_IF_ERROR(ops->Register(
                           OpDefBuilder("Placeholder")
                               .Output("output: dtype")
                               .Attr("dtype: type")
                               .Attr("shape: shape")
                               .SetIsPlaceholder()
                               .SetAttrDefault("shape", MakeAttr(TensorShape::Unknown()))
                               .SetShapeFn(internal::PlaceholderShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("PlaceholderWithDefault")
                                    .Input("input: dtype")
                                    .Output("output: dtype")
                                    .Attr("dtype: type")
                                    .Attr("shape: shape")
                                    .SetIsPlaceholder()
                                    .SetShapeFn(internal::PlaceholderWithDefaultShape)));

  // Identity-like.
  for (const char* name : {"Identity", "StopGradient"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("input: T")
                                      .Output("output: T")
                                      .Attr("T: type")
                                      .SetShapeFn(internal::UnchangedShape)));
  }
  RETURN_IF_ERROR(ops->Register(
                           OpDefBuilder("PreventGradient")
                               .Input("input: T")
                               .Output("output: T")
                               .Attr("T: type")
                               .Attr("message: string")
                               .SetAttrDefault("message", MakeAttr(""))
                               .SetShapeFn(internal::UnchangedShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("NoOp")));

  // Creating.
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Fill")
                                    .Input("dims: index_type")
                                    .Input("value: T")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("index_type"))
                                    .SetShapeFn(internal::FillShape)));
  for (const char* name : {"ZerosLike", "OnesLike"}) {
    RETURN_IF_ERROR(
        ops->Register(OpDefBuilder(name).Input("x: T").Output("y: T").Attr("T: type").SetShapeFn(
                          internal::UnchangedShape)));
  }

  // Shapes.
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Reshape")
                                    .Input("tensor: T")
                                    .Input("shape: Tshape")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("Tshape"))
                                    .SetShapeFn(internal::ReshapeShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Transpose")
                                    .Input("x: T")
                                    .Input("perm: Tperm")
                                    .Output("y: T")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("Tperm"))
                                    .SetShapeFn(internal::TransposeShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("InvertPermutation")
                                    .Input("x: T")
                                    .Output("y: T")
                                    .Attr(IndexAttr("T"))
                                    .SetShapeFn(internal::InvertPermutationShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ExpandDims")
                                    .Input("input: T")
                                    .Input("dim: Tdim")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("Tdim"))
                                    .SetShapeFn(internal::ExpandDimsShape)));
  RETURN_IF_ERROR(ops->Register(
                           OpDefBuilder("Squeeze")
                               .Input("input: T")
                               .Output("output: T")
                               .Attr("T: type")
                               .Attr("squeeze_dims: list(int)")
                               .SetAttrDefault("squeeze_dims", EmptyIntList())
                               .SetShapeFn(internal::SqueezeShape)));
  for (const char* name : {"Shape", "Size"}) {
    RETURN_IF_ERROR(ops->Register(
        OpDefBuilder(name)
                 .Input("input: T")
                 .Output("output: out_type")
                 .Attr("T: type")
                 .Attr(IndexAttr("out_type"))
                 .SetShapeFn(std::string_view(name) == "Shape" ? ShapeFn(internal::ShapeShape)
                                                               : ShapeFn(internal::ScalarShape))));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Rank")
                                    .Input("input: T")
                                    .Output("output: int32")
                                    .Attr("T: type")
                                    .SetShapeFn(internal::ScalarShape)));

  // Joining and splitting.
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ConcatV2")
                                    .Input("values: N * T")
                                    .Input("axis: Tidx")
                                    .Output("output: T")
                                    .Attr("N: int >= 2")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("Tidx"))
                                    .SetShapeFn(internal::ConcatV2Shape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Concat")
                                    .Input("concat_dim: int32")
                                    .Input("values: N * T")
                                    .Output("output: T")
                                    .Attr("N: int >= 2")
                                    .Attr("T: type")
                                    .SetShapeFn(internal::ConcatShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ConcatOffset")
                                    .Input("concat_dim: int32")
                                    .Input("shape: N * shape_type")
                                    .Output("offset: N * shape_type")
                                    .Attr("N: int >= 2")
                                    .Attr(IndexAttr("shape_type"))
                                    .SetShapeFn(internal::ConcatOffsetShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Split")
                                    .Input("split_dim: int32")
                                    .Input("value: T")
                                    .Output("output: num_split * T")
                                    .Attr("num_split: int >= 1")
                                    .Attr("T: type")
                                    .SetShapeFn(internal::SplitShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Pack")
                                    .Input("values: N * T")
                                    .Output("output: T")
                                    .Attr("N: int >= 1")
                                    .Attr("T: type")
                                    .Attr("axis: int = 0")
                                    .SetShapeFn(internal::PackShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Unpack")
                                    .Input("value: T")
                                    .Output("output: num * T")
                                    .Attr("num: int >= 0")
                                    .Attr("T: type")
                                    .Attr("axis: int = 0")
                                    .SetShapeFn(internal::UnpackShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Tile")
                                    .Input("input: T")
                                    .Input("multiples: Tmultiples")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("Tmultiples"))
                                    .SetShapeFn(internal::TileShape)));

  // Indexing.
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Slice")
                                    .Input("input: T")
                                    .Input("begin: Index")
                                    .Input("size: Index")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr(IndexAttr("Index", /*with_default=*/false))
                                    .SetShapeFn(internal::SliceShape)));
  auto add_masks = AddStridedSliceMaskAttrs;
  {
    OpDefBuilder b("StridedSlice");
    b.Input("input: T")
        .Input("begin: Index")
        .Input("end: Index")
        .Input("strides: Index")
        .Output("output: T")
        .Attr("T: type")
        .Attr(IndexAttr("Index", /*with_default=*/false))
        .SetShapeFn(internal::StridedSliceShape);
    RETURN_IF_ERROR(ops->Register(add_masks(b)));
  }
  {
    OpDefBuilder b("StridedSliceGrad");
    b.Input("shape: Index")
        .Input("begin: Index")
        .Input("end: Index")
        .Input("strides: Index")
        .Input("dy: T")
        .Output("output: T")
        .Attr("T: type")
        .Attr(IndexAttr("Index", /*with_default=*/false))
        .SetShapeFn(internal::StridedSliceGradShape);
    RETURN_IF_ERROR(ops->Register(add_masks(b)));
  }
  {
    // input with a strided slice replaced by value (broadcast to the slice).
    OpDefBuilder b("TensorStridedSliceUpdate");
    b.Input("input: T")
        .Input("begin: Index")
        .Input("end: Index")
        .Input("strides: Index")
        .Input("value: T")
        .Output("output: T")
        .Attr("T: type")
        .Attr(IndexAttr("Index", /*with_default=*/false))
        .SetShapeFn([](InferenceContext* c) {
          c->set_output(0, c->input(0));
          return absl::OkStatus();
        });
    RETURN_IF_ERROR(ops->Register(add_masks(b)));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("GatherV2")
                                    .Input("params: Tparams")
                                    .Input("indices: Tindices")
                                    .Input("axis: Taxis")
                                    .Output("output: Tparams")
                                    .Attr("batch_dims: int = 0")
                                    .Attr("Tparams: type")
                                    .Attr(IndexAttr("Tindices", /*with_default=*/false))
                                    .Attr(IndexAttr("Taxis", /*with_default=*/false))
                                    .SetShapeFn(internal::GatherV2Shape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Gather")
                                    .Input("params: Tparams")
                                    .Input("indices: Tindices")
                                    .Output("output: Tparams")
                                    .Attr("validate_indices: bool = true")
                                    .Attr("Tparams: type")
                                    .Attr(IndexAttr("Tindices", /*with_default=*/false))
                                    .SetShapeFn(internal::GatherShape)));
  RETURN_IF_ERROR(
      ops->Register(OpDefBuilder("UnsortedSegmentSum")
                        .Input("data: T")
                        .Input("segment_ids: Tindices")
                        .Input("num_segments: Tnumsegments")
                        .Output("output: T")
                        .Attr("T: {float, double, int32, int64, uint8, int16, int8, uint16, "
                              "half, bfloat16}")
                        .Attr(IndexAttr("Tindices", /*with_default=*/false))
                        .Attr(IndexAttr("Tnumsegments"))
                        .SetShapeFn(internal::UnsortedSegmentSumShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("BroadcastGradientArgs")
                                    .Input("s0: T")
                                    .Input("s1: T")
                                    .Output("r0: T")
                                    .Output("r1: T")
                                    .Attr(IndexAttr("T"))
                                    .SetShapeFn(internal::BroadcastGradientArgsShape)));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("BroadcastArgs")
          .Input("s0: T")
          .Input("s1: T")
          .Output("r0: T")
          .Attr("T: {int32, int64} = int32")
          .SetShapeFn([](InferenceContext* c) -> absl::Status {
            RETURN_IF_ERROR(c->WithRank(0, 1));
            RETURN_IF_ERROR(c->WithRank(1, 1));
            const TensorShape& a = c->input(0);
            const TensorShape& b = c->input(1);
            const bool known = !a.unknown_rank() && !b.unknown_rank() && a.dim(0) >= 0 &&
                               b.dim(0) >= 0;
            c->set_output(0, TensorShape({known ? std::max(a.dim(0), b.dim(0)) : -1}));
            return absl::OkStatus();
          })));
  return absl::OkStatus();
}

// ---- Wrappers ------------------------------------------------------------------

namespace ops {
namespace {

std::string Where(const SourceLocation& loc) {
  return absl::StrCat(loc.file_name(), ":", loc.line());
}

// Pads a multi-output wrapper's result so callers may index it.
std::vector<Output> PadOutputs(std::vector<Output> outputs, int64_t n) {
  if (static_cast<int64_t>(outputs.size()) < n) outputs.resize(n);
  return outputs;
}

int64_t NumElementsOf(const ::tensorflow::TensorShapeProto& shape) {
  int64_t n = 1;
  for (const auto& d : shape.dim()) n *= d.size();
  return n;
}

std::vector<Input> ToInputs(absl::Span<const Output> outputs) {
  return std::vector<Input>(outputs.begin(), outputs.end());
}

}  // namespace

Output Const(const Scope& scope, const Input& value, SourceLocation loc) {
  if (!value.is_literal()) {
    if (value.output().valid()) {
      scope.UpdateStatus(absl::InvalidArgumentError(
          absl::StrCat("Const at ", Where(loc), ": needs a literal value, not the tensor ",
                       value.output().name())));
    }
    return Output();
  }
  const TensorProto& proto = value.literal();
  return scope.Op("Const", loc).Attr("value", proto).Attr("dtype", proto.dtype()).Finalize1();
}

Output Const(const Scope& scope, const Input& value, const TensorShape& shape, SourceLocation loc) {
  if (!value.is_literal()) return Const(scope, value, loc);
  const int64_t n = shape.num_elements();
  TensorProto proto = value.literal();
  const int64_t k = NumElementsOf(proto.tensor_shape());
  if (n < 0 || (k != n && k != 1)) {
    scope.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
        "Const at ", Where(loc), ": ", k, " value(s) do not fit shape ", shape.DebugString())));
    return Output();
  }
  if (k != n && !proto.tensor_content().empty()) {
    // One value in tensor_content: repeat it (the *_val fields repeat their
    // last value by themselves).
    const std::string one = proto.tensor_content();
    std::string content;
    content.reserve(one.size() * n);
    for (int64_t i = 0; i < n; ++i) content += one;
    proto.set_tensor_content(std::move(content));
  }
  shape.ToProto(proto.mutable_tensor_shape());
  return Const(scope, Input(std::move(proto)), loc);
}

Output Const(const Scope& scope, const Tensor& value, SourceLocation loc) {
  TensorProto proto;
  value.ToProto(&proto);
  return Const(scope, Input(std::move(proto)), loc);
}

Output Placeholder(const Scope& scope, DataType dtype, const PlaceholderAttrs& attrs,
                   SourceLocation loc) {
  return scope.Op("Placeholder", loc).Attr("dtype", dtype).Attr("shape", attrs.shape).Finalize1();
}

Output PlaceholderWithDefault(const Scope& scope, const Input& input, const TensorShape& shape,
                              SourceLocation loc) {
  return scope.Op("PlaceholderWithDefault", loc).Input(input).Attr("shape", shape).Finalize1();
}

Output Identity(const Scope& scope, const Input& input, SourceLocation loc) {
  return scope.Op("Identity", loc).Input(input).Finalize1();
}

Output StopGradient(const Scope& scope, const Input& input, SourceLocation loc) {
  return scope.Op("StopGradient", loc).Input(input).Finalize1();
}

Output PreventGradient(const Scope& scope, const Input& input, const PreventGradientAttrs& attrs,
                       SourceLocation loc) {
  return scope.Op("PreventGradient", loc).Input(input).Attr("message", attrs.message).Finalize1();
}

Node* NoOp(const Scope& scope, SourceLocation loc) { return scope.Op("NoOp", loc).Finalize(); }

Output Fill(const Scope& scope, const Input& dims, const Input& value, SourceLocation loc) {
  return scope.Op("Fill", loc).Input(dims).Input(value).Finalize1();
}

Output ZerosLike(const Scope& scope, const Input& x, SourceLocation loc) {
  return scope.Op("ZerosLike", loc).Input(x).Finalize1();
}

Output OnesLike(const Scope& scope, const Input& x, SourceLocation loc) {
  return scope.Op("OnesLike", loc).Input(x).Finalize1();
}

Output Reshape(const Scope& scope, const Input& tensor, const Input& shape, SourceLocation loc) {
  return scope.Op("Reshape", loc).Input(tensor).Input(shape).Finalize1();
}

Output Transpose(const Scope& scope, const Input& x, const Input& perm, SourceLocation loc) {
  return scope.Op("Transpose", loc).Input(x).Input(perm).Finalize1();
}

Output InvertPermutation(const Scope& scope, const Input& x, SourceLocation loc) {
  return scope.Op("InvertPermutation", loc).Input(x).Finalize1();
}

Output ExpandDims(const Scope& scope, const Input& input, const Input& dim, SourceLocation loc) {
  return scope.Op("ExpandDims", loc).Input(input).Input(dim).Finalize1();
}

Output Squeeze(const Scope& scope, const Input& input, const SqueezeAttrs& attrs,
               SourceLocation loc) {
  return scope.Op("Squeeze", loc).Input(input).Attr("squeeze_dims", attrs.squeeze_dims).Finalize1();
}

Output Shape(const Scope& scope, const Input& input, const ShapeAttrs& attrs, SourceLocation loc) {
  return scope.Op("Shape", loc).Input(input).Attr("out_type", attrs.out_type).Finalize1();
}

Output Size(const Scope& scope, const Input& input, const ShapeAttrs& attrs, SourceLocation loc) {
  return scope.Op("Size", loc).Input(input).Attr("out_type", attrs.out_type).Finalize1();
}

Output Rank(const Scope& scope, const Input& input, SourceLocation loc) {
  return scope.Op("Rank", loc).Input(input).Finalize1();
}

Output ConcatV2(const Scope& scope, std::initializer_list<Input> values, const Input& axis,
                SourceLocation loc) {
  return ConcatV2(scope, absl::Span<const Input>(values.begin(), values.size()), axis, loc);
}

Output ConcatV2(const Scope& scope, absl::Span<const Input> values, const Input& axis,
                SourceLocation loc) {
  return scope.Op("ConcatV2", loc).InputList(values).Input(axis).Finalize1();
}

Output ConcatV2(const Scope& scope, absl::Span<const Output> values, const Input& axis,
                SourceLocation loc) {
  std::vector<Input> inputs = ToInputs(values);
  return ConcatV2(scope, absl::Span<const Input>(inputs), axis, loc);
}

std::vector<Output> ConcatOffset(const Scope& scope, const Input& concat_dim,
                                 absl::Span<const Output> shapes, SourceLocation loc) {
  return PadOutputs(scope.Op("ConcatOffset", loc).Input(concat_dim).InputList(shapes).FinalizeAll(),
                    static_cast<int64_t>(shapes.size()));
}

std::vector<Output> Split(const Scope& scope, const Input& axis, const Input& value,
                          int64_t num_split, SourceLocation loc) {
  return PadOutputs(
      scope.Op("Split", loc).Input(axis).Input(value).Attr("num_split", num_split).FinalizeAll(),
      num_split);
}

Output Pack(const Scope& scope, std::initializer_list<Input> values, const PackAttrs& attrs,
            SourceLocation loc) {
  return Pack(scope, absl::Span<const Input>(values.begin(), values.size()), attrs, loc);
}

Output Pack(const Scope& scope, absl::Span<const Input> values, const PackAttrs& attrs,
            SourceLocation loc) {
  return scope.Op("Pack", loc).InputList(values).Attr("axis", attrs.axis).Finalize1();
}

Output Pack(const Scope& scope, absl::Span<const Output> values, const PackAttrs& attrs,
            SourceLocation loc) {
  std::vector<Input> inputs = ToInputs(values);
  return Pack(scope, absl::Span<const Input>(inputs), attrs, loc);
}

std::vector<Output> Unpack(const Scope& scope, const Input& value, int64_t num,
                           const PackAttrs& attrs, SourceLocation loc) {
  return PadOutputs(
      scope.Op("Unpack", loc).Input(value).Attr("num", num).Attr("axis", attrs.axis).FinalizeAll(),
      num);
}

Output Tile(const Scope& scope, const Input& input, const Input& multiples, SourceLocation loc) {
  return scope.Op("Tile", loc).Input(input).Input(multiples).Finalize1();
}

Output Slice(const Scope& scope, const Input& input, const Input& begin, const Input& size,
             SourceLocation loc) {
  return scope.Op("Slice", loc).Input(input).Input(begin).Input(size).Finalize1();
}

OpBuilder& SetStridedSliceMasks(OpBuilder& b, const StridedSliceAttrs& a) {
  return b.Attr("begin_mask", a.begin_mask)
      .Attr("end_mask", a.end_mask)
      .Attr("ellipsis_mask", a.ellipsis_mask)
      .Attr("new_axis_mask", a.new_axis_mask)
      .Attr("shrink_axis_mask", a.shrink_axis_mask);
}

Output StridedSlice(const Scope& scope, const Input& input, const Input& begin, const Input& end,
                    const Input& strides, const StridedSliceAttrs& attrs, SourceLocation loc) {
  OpBuilder b = scope.Op("StridedSlice", loc);
  b.Input(input).Input(begin).Input(end).Input(strides);
  return SetStridedSliceMasks(b, attrs).Finalize1();
}

Output StridedSliceGrad(const Scope& scope, const Input& shape, const Input& begin,
                        const Input& end, const Input& strides, const Input& dy,
                        const StridedSliceAttrs& attrs, SourceLocation loc) {
  OpBuilder b = scope.Op("StridedSliceGrad", loc);
  b.Input(shape).Input(begin).Input(end).Input(strides).Input(dy);
  return SetStridedSliceMasks(b, attrs).Finalize1();
}

Output TensorStridedSliceUpdate(const Scope& scope, const Input& input, const Input& begin,
                                const Input& end, const Input& strides, const Input& value,
                                const StridedSliceAttrs& attrs, SourceLocation loc) {
  OpBuilder b = scope.Op("TensorStridedSliceUpdate", loc);
  b.Input(input).Input(begin).Input(end).Input(strides).Input(value);
  return SetStridedSliceMasks(b, attrs).Finalize1();
}

Output GatherV2(const Scope& scope, const Input& params, const Input& indices, const Input& axis,
                const GatherV2Attrs& attrs, SourceLocation loc) {
  return scope.Op("GatherV2", loc)
      .Input(params)
      .Input(indices)
      .Input(axis)
      .Attr("batch_dims", attrs.batch_dims)
      .Finalize1();
}

Output UnsortedSegmentSum(const Scope& scope, const Input& data, const Input& segment_ids,
                          const Input& num_segments, SourceLocation loc) {
  return scope.Op("UnsortedSegmentSum", loc)
      .Input(data)
      .Input(segment_ids)
      .Input(num_segments)
      .Finalize1();
}

Output BroadcastArgs(const Scope& scope, const Input& s0, const Input& s1, SourceLocation loc) {
  return scope.Op("BroadcastArgs", loc).Input(s0).Input(s1).Finalize1();
}

BroadcastGradientArgsOutputs BroadcastGradientArgs(const Scope& scope, const Input& s0,
                                                   const Input& s1, SourceLocation loc) {
  std::vector<Output> outs =
      PadOutputs(scope.Op("BroadcastGradientArgs", loc).Input(s0).Input(s1).FinalizeAll(), 2);
  return {outs[0], outs[1]};
}

}  // namespace ops
}  // namespace sluice
