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

// TensorFlow's default bad_color: opaque red.
AttrValue OpaqueRed() {
  AttrValue v;
  ::tensorflow::TensorProto* t = v.mutable_tensor();
  t->set_dtype(DT_UINT8);
  t->mutable_tensor_shape()->add_dim()->set_size(4);
  for (int c : {255, 0, 0, 255}) t->add_int_val(c);
  return v;
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
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ImageSummary")
                                    .Input("tag: string")
                                    .Input("tensor: T")
                                    .Output("summary: string")
                                    .Attr("max_images: int >= 1 = 3")
                                    .Attr("T: {uint8, float, half, float64} = float")
                                    .Attr("bad_color: tensor")
                                    .SetAttrDefault("bad_color", OpaqueRed())
                                    .SetShapeFn(ScalarOutput)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("AudioSummaryV2")
                                    .Input("tag: string")
                                    .Input("tensor: float")
                                    .Input("sample_rate: float")
                                    .Output("summary: string")
                                    .Attr("max_outputs: int >= 1 = 3")
                                    .SetShapeFn(ScalarOutput)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("AudioSummary")
                                    .Input("tag: string")
                                    .Input("tensor: float")
                                    .Output("summary: string")
                                    .Attr("sample_rate: float")
                                    .Attr("max_outputs: int >= 1 = 3")
                                    .SetShapeFn(ScalarOutput)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TensorSummaryV2")
                                    .Input("tag: string")
                                    .Input("tensor: T")
                                    .Input("serialized_summary_metadata: string")
                                    .Output("summary: string")
                                    .Attr("T: type")
                                    .SetShapeFn(ScalarOutput)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TensorSummary")
                                    .Input("tensor: T")
                                    .Output("summary: string")
                                    .Attr("T: type")
                                    .Attr("description: string = ''")
                                    .Attr("labels: list(string) = []")
                                    .Attr("display_name: string = ''")
                                    .SetShapeFn(ScalarOutput)));
  for (const char* op : {"ScalarSummary", "HistogramSummary", "MergeSummary", "ImageSummary",
                         "AudioSummaryV2", "AudioSummary", "TensorSummaryV2", "TensorSummary"}) {
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

Output ImageSummary(const Scope& scope, Input tag, Input images, int64_t max_images,
                    std::source_location loc) {
  return scope.Op("ImageSummary", loc).Input(tag).Input(images).Attr("max_images", max_images)
      .Finalize1();
}

Output AudioSummaryV2(const Scope& scope, Input tag, Input audio, Input sample_rate,
                      int64_t max_outputs, std::source_location loc) {
  return scope.Op("AudioSummaryV2", loc)
      .Input(tag)
      .Input(audio)
      .Input(sample_rate)
      .Attr("max_outputs", max_outputs)
      .Finalize1();
}

Output TensorSummaryV2(const Scope& scope, Input tag, Input tensor, Input serialized_metadata,
                       std::source_location loc) {
  return scope.Op("TensorSummaryV2", loc).Input(tag).Input(tensor).Input(serialized_metadata)
      .Finalize1();
}

Output MergeSummary(const Scope& scope, absl::Span<const Output> inputs,
                    std::source_location loc) {
  return scope.Op("MergeSummary", loc).InputList(inputs).Finalize1();
}

}  // namespace ops
}  // namespace sluice
