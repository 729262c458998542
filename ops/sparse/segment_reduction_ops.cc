// Definitions, shapes and wrappers of the segment reductions (kernels:
// segment_reduction_kernels.cc; gradients: segment_reduction_grad.cc).
#include "ops/sparse/segment_reduction_ops.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/internal/array_shape_fns.h"

namespace sluice {
namespace {

// TensorFlow's lists less the quantized types, which Sluice lacks.
constexpr char kRealTypes[] =
    "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
    "uint64}";
constexpr char kNumberTypes[] =
    "T: {float, double, int32, uint8, int16, int8, complex64, int64, bfloat16, uint16, "
    "complex128, half, uint32, uint64}";

// Sorted: [unknown rows] + data's dims after the first.
absl::Status SortedShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  RETURN_IF_ERROR(c->WithRank(1, 1));
  const TensorShape& data = c->input(0);
  if (data.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<int64_t> dims = {-1};
  for (int d = 1; d < data.rank(); ++d) dims.push_back(data.dim(d));
  c->set_output(0, TensorShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterSegmentReductionOps(OpRegistry* ops) {
  for (const char* kind : {"Max", "Min", "Mean", "Prod"}) {
    const bool real = std::string(kind) == "Max" || std::string(kind) == "Min";
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(absl::StrCat("Segment", kind))
                                      .Input("data: T")
                                      .Input("segment_ids: Tindices")
                                      .Output("output: T")
                                      .Attr(real ? kRealTypes : kNumberTypes)
                                      .Attr("Tindices: {int32, int64}")
                                      .SetShapeFn(SortedShape)));
    if (std::string(kind) == "Mean") continue;
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(absl::StrCat("UnsortedSegment", kind))
                                      .Input("data: T")
                                      .Input("segment_ids: Tindices")
                                      .Input("num_segments: Tnumsegments")
                                      .Output("output: T")
                                      .Attr(real ? kRealTypes : kNumberTypes)
                                      .Attr("Tindices: {int32, int64}")
                                      .Attr("Tnumsegments: {int32, int64} = DT_INT32")
                                      .SetShapeFn(internal::UnsortedSegmentSumShape)));
  }
  return absl::OkStatus();
}

namespace ops {
namespace {

Output Sorted(const char* op, const Scope& s, Input data, Input ids, std::source_location loc) {
  return s.Op(op, loc).Input(data).Input(ids).Finalize1();
}

Output Unsorted(const char* op, const Scope& s, Input data, Input ids, Input num,
                std::source_location loc) {
  return s.Op(op, loc).Input(data).Input(ids).Input(num).Finalize1();
}

}  // namespace

Output SegmentMax(const Scope& s, Input data, Input ids, std::source_location loc) {
  return Sorted("SegmentMax", s, data, ids, loc);
}
Output SegmentMin(const Scope& s, Input data, Input ids, std::source_location loc) {
  return Sorted("SegmentMin", s, data, ids, loc);
}
Output SegmentMean(const Scope& s, Input data, Input ids, std::source_location loc) {
  return Sorted("SegmentMean", s, data, ids, loc);
}
Output SegmentProd(const Scope& s, Input data, Input ids, std::source_location loc) {
  return Sorted("SegmentProd", s, data, ids, loc);
}
Output UnsortedSegmentMax(const Scope& s, Input data, Input ids, Input num,
                          std::source_location loc) {
  return Unsorted("UnsortedSegmentMax", s, data, ids, num, loc);
}
Output UnsortedSegmentMin(const Scope& s, Input data, Input ids, Input num,
                          std::source_location loc) {
  return Unsorted("UnsortedSegmentMin", s, data, ids, num, loc);
}
Output UnsortedSegmentProd(const Scope& s, Input data, Input ids, Input num,
                           std::source_location loc) {
  return Unsorted("UnsortedSegmentProd", s, data, ids, num, loc);
}

}  // namespace ops
}  // namespace sluice
