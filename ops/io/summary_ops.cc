// Summary op definitions, shape functions and wrappers (kernels:
// summary_kernels.cc).
#include "ops/io/summary_ops.h"

#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

constexpr char kSummaryValueTypes[] = "T: {float, double, int32, int64}";

absl::Status ScalarSummaryShape(InferenceContext* c) {
  if (!c->input(0).IsCompatibleWith(c->input(1))) {
    return absl::InvalidArgumentError(
        absl::StrCat("ScalarSummary: tags and values must have the same shape, got tags ",
                     c->input(0).DebugString(), " and values ", c->input(1).DebugString()));
  }
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

absl::Status HistogramSummaryShape(InferenceContext* c) {
  if (!c->WithRank(0, 0).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HistogramSummary: tag must be a scalar, got shape ", c->input(0).DebugString()));
  }
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

absl::Status ScalarOutput(InferenceContext* c) {
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterSummaryOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ScalarSummary")
                                    .Input("tags: string")
                                    .Input("values: T")
                                    .Output("summary: string")
                                    .Attr(kSummaryValueTypes)
                                    .SetShapeFn(ScalarSummaryShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("HistogramSummary")
                                    .Input("tag: string")
                                    .Input("values: T")
                                    .Output("summary: string")
                                    .Attr(absl::StrCat(kSummaryValueTypes, " = float"))
                                    .SetShapeFn(HistogramSummaryShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("MergeSummary")
                                    .Input("inputs: N * string")
                                    .Output("summary: string")
                                    .Attr("N: int >= 1")
                                    .SetShapeFn(ScalarOutput)));
  for (const char* op : {"ScalarSummary", "HistogramSummary", "MergeSummary"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output ScalarSummary(const Scope& scope, Input tags, Input values, std::source_location loc) {
  return scope.Op("ScalarSummary", loc).Input(tags).Input(values).Finalize1();
}

Output HistogramSummary(const Scope& scope, Input tag, Input values, std::source_location loc) {
  return scope.Op("HistogramSummary", loc).Input(tag).Input(values).Finalize1();
}

Output MergeSummary(const Scope& scope, absl::Span<const Output> inputs,
                    std::source_location loc) {
  return scope.Op("MergeSummary", loc).InputList(inputs).Finalize1();
}

}  // namespace ops
}  // namespace sluice
