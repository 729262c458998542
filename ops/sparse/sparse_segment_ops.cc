// SparseSegment* op definitions, shapes and wrappers (kernels:
// sparse_segment_kernels.cc; gradients: sparse_segment_grad.cc).
#include "ops/sparse/sparse_segment_ops.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

constexpr char kIndexTypes[] = "{int32, int64} = DT_INT32";

// [rows, input(from).dims[1:]], rows from the constant input `rows_input`
// when known (-1: never known).
absl::Status RowsShape(InferenceContext* c, int from, int rows_input) {
  RETURN_IF_ERROR(c->WithRankAtLeast(from, 1));
  const TensorShape& in = c->input(from);
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  int64_t rows = -1;
  if (rows_input >= 0) {
    ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> known, c->InputAsInts(rows_input));
    if (known.has_value() && known->size() == 1) rows = (*known)[0];
  }
  std::vector<int64_t> dims = {rows};
  for (int d = 1; d < in.rank(); ++d) dims.push_back(in.dim(d));
  c->set_output(0, TensorShape(dims));
  return absl::OkStatus();
}

std::string ValueTypes(const std::string& kind) {
  return kind == "Sum" ? "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, "
                         "half, uint32, uint64}"
                       : "T: {bfloat16, half, float, double}";
}

}  // namespace

absl::Status RegisterSparseSegmentOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("SegmentSum")
          .Input("data: T")
          .Input("segment_ids: Tindices")
          .Output("output: T")
          // TensorFlow's list less its quantized types, which Sluice lacks.
          .Attr("T: {float, double, int32, uint8, int16, int8, complex64, int64, bfloat16, "
                "uint16, complex128, half, uint32, uint64}")
          .Attr("Tindices: {int32, int64}")
          .SetShapeFn([](InferenceContext* c) { return RowsShape(c, 0, -1); })));
  for (const std::string kind : {"Sum", "Mean", "SqrtN"}) {
    const std::string name = "SparseSegment" + kind;
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("data: T")
                                      .Input("indices: Tidx")
                                      .Input("segment_ids: Tsegmentids")
                                      .Output("output: T")
                                      .Attr(ValueTypes(kind))
                                      .Attr(absl::StrCat("Tidx: ", kIndexTypes))
                                      .Attr(absl::StrCat("Tsegmentids: ", kIndexTypes))
                                      .Attr("sparse_gradient: bool = false")
                                      .SetShapeFn([](InferenceContext* c) {
                                        return RowsShape(c, 0, -1);
                                      })));
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name + "WithNumSegments")
                                      .Input("data: T")
                                      .Input("indices: Tidx")
                                      .Input("segment_ids: Tsegmentids")
                                      .Input("num_segments: Tnumsegments")
                                      .Output("output: T")
                                      .Attr(ValueTypes(kind))
                                      .Attr(absl::StrCat("Tidx: ", kIndexTypes))
                                      .Attr(absl::StrCat("Tnumsegments: ", kIndexTypes))
                                      .Attr(absl::StrCat("Tsegmentids: ", kIndexTypes))
                                      .Attr("sparse_gradient: bool = false")
                                      .SetShapeFn([](InferenceContext* c) {
                                        return RowsShape(c, 0, 3);
                                      })));
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name + "Grad")
                                      .Input("grad: T")
                                      .Input("indices: Tidx")
                                      .Input("segment_ids: Tsegmentids")
                                      .Input("output_dim0: int32")
                                      .Output("output: T")
                                      .Attr("T: {bfloat16, half, float, double}")
                                      .Attr(absl::StrCat("Tidx: ", kIndexTypes))
                                      .Attr(absl::StrCat("Tsegmentids: ", kIndexTypes))
                                      .SetShapeFn([](InferenceContext* c) {
                                        return RowsShape(c, 0, 3);
                                      })));
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name + "GradV2")
                                      .Input("grad: T")
                                      .Input("indices: Tidx")
                                      .Input("segment_ids: Tsegmentids")
                                      .Input("dense_output_dim0: int32")
                                      .Output("output: T")
                                      .Output("sorted_unique_indices: Tidx")
                                      .Attr("T: {bfloat16, half, float, double}")
                                      .Attr(absl::StrCat("Tidx: ", kIndexTypes))
                                      .Attr(absl::StrCat("Tsegmentids: ", kIndexTypes))
                                      .SetShapeFn([](InferenceContext* c) {
                                        RETURN_IF_ERROR(RowsShape(c, 0, -1));
                                        c->set_output(1, TensorShape({-1}));
                                        return absl::OkStatus();
                                      })));
    RETURN_IF_ERROR(ops->SetNoGradient(name + "Grad"));
    RETURN_IF_ERROR(ops->SetNoGradient(name + "GradV2"));
  }
  return absl::OkStatus();
}

namespace ops {

Output SparseSegmentReduction(const Scope& s, const std::string& kind, Input data, Input indices,
                              Input segment_ids, std::source_location loc) {
  return s.Op("SparseSegment" + kind, loc).Input(data).Input(indices).Input(segment_ids).Finalize1();
}

Output SparseSegmentReductionWithNumSegments(const Scope& s, const std::string& kind, Input data,
                                             Input indices, Input segment_ids, Input num_segments,
                                             std::source_location loc) {
  return s.Op("SparseSegment" + kind + "WithNumSegments", loc)
      .Input(data)
      .Input(indices)
      .Input(segment_ids)
      .Input(num_segments)
      .Finalize1();
}

Output SegmentSum(const Scope& s, Input data, Input segment_ids, std::source_location loc) {
  return s.Op("SegmentSum", loc).Input(data).Input(segment_ids).Finalize1();
}

Output SparseSegmentReductionGrad(const Scope& s, const std::string& kind, Input grad,
                                  Input indices, Input segment_ids, Input output_dim0,
                                  std::source_location loc) {
  return s.Op("SparseSegment" + kind + "Grad", loc)
      .Input(grad)
      .Input(indices)
      .Input(segment_ids)
      .Input(output_dim0)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
