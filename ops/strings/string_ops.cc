// String op definitions, shapes and wrappers (kernels: string_kernels.cc).
#include "ops/strings/string_ops.h"

#include <vector>

#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

absl::Status SameShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterStringOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StringToHashBucketFast")
                                    .Input("input: string")
                                    .Output("output: int64")
                                    .Attr("num_buckets: int >= 1")
                                    .SetShapeFn(SameShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StringToHashBucketStrong")
                                    .Input("input: string")
                                    .Output("output: int64")
                                    .Attr("num_buckets: int >= 1")
                                    .Attr("key: list(int)")
                                    .SetShapeFn(SameShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StringToHashBucket")
                                    .Input("string_tensor: string")
                                    .Output("output: int64")
                                    .Attr("num_buckets: int >= 1")
                                    .SetShapeFn(SameShape)));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("AsString")
          .Input("input: T")
          .Output("output: string")
          .Attr("T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64, half, bfloat16, "
                "float, double, bool, complex64, complex128, string, variant}")
          .Attr("precision: int = -1")
          .Attr("scientific: bool = false")
          .Attr("shortest: bool = false")
          .Attr("width: int = -1")
          .Attr("fill: string = ''")
          .SetShapeFn(SameShape)));
  const auto split_shape = [](InferenceContext* c) {
    RETURN_IF_ERROR(c->WithRank(0, 1));
    RETURN_IF_ERROR(c->WithRank(1, 0));
    c->set_output(0, TensorShape({-1, 2}));
    c->set_output(1, TensorShape({-1}));
    c->set_output(2, TensorShape({2}));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StringSplit")
                                    .Input("input: string")
                                    .Input("delimiter: string")
                                    .Output("indices: int64")
                                    .Output("values: string")
                                    .Output("shape: int64")
                                    .Attr("skip_empty: bool = true")
                                    .SetShapeFn(split_shape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StringSplitV2")
                                    .Input("input: string")
                                    .Input("sep: string")
                                    .Output("indices: int64")
                                    .Output("values: string")
                                    .Output("shape: int64")
                                    .Attr("maxsplit: int = -1")
                                    .SetShapeFn(split_shape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RegexFullMatch")
                                    .Input("input: string")
                                    .Input("pattern: string")
                                    .Output("output: bool")
                                    .SetShapeFn(SameShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StaticRegexFullMatch")
                                    .Input("input: string")
                                    .Output("output: bool")
                                    .Attr("pattern: string")
                                    .SetShapeFn(SameShape)));
  for (const char* op :
       {"StringToHashBucketFast", "StringToHashBucketStrong", "StringToHashBucket", "AsString",
        "StringSplit", "StringSplitV2", "RegexFullMatch", "StaticRegexFullMatch"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output StringToHashBucketFast(const Scope& s, Input input, int64_t num_buckets,
                              std::source_location loc) {
  return s.Op("StringToHashBucketFast", loc)
      .Input(input)
      .Attr("num_buckets", num_buckets)
      .Finalize1();
}

Output StringToHashBucketStrong(const Scope& s, Input input, int64_t num_buckets,
                                const std::vector<int64_t>& key, std::source_location loc) {
  return s.Op("StringToHashBucketStrong", loc)
      .Input(input)
      .Attr("num_buckets", num_buckets)
      .Attr("key", key)
      .Finalize1();
}

Output StringToHashBucket(const Scope& s, Input string_tensor, int64_t num_buckets,
                          std::source_location loc) {
  return s.Op("StringToHashBucket", loc)
      .Input(string_tensor)
      .Attr("num_buckets", num_buckets)
      .Finalize1();
}

Output RegexFullMatch(const Scope& s, Input input, Input pattern, std::source_location loc) {
  return s.Op("RegexFullMatch", loc).Input(input).Input(pattern).Finalize1();
}

Output StaticRegexFullMatch(const Scope& s, Input input, const std::string& pattern,
                            std::source_location loc) {
  return s.Op("StaticRegexFullMatch", loc).Input(input).Attr("pattern", pattern).Finalize1();
}

Output AsString(const Scope& s, Input input, const AsStringAttrs& a, std::source_location loc) {
  return s.Op("AsString", loc)
      .Input(input)
      .Attr("precision", a.precision)
      .Attr("scientific", a.scientific)
      .Attr("shortest", a.shortest)
      .Attr("width", a.width)
      .Attr("fill", a.fill)
      .Finalize1();
}

StringSplitOutputs StringSplit(const Scope& s, Input input, Input delimiter, bool skip_empty,
                               std::source_location loc) {
  std::vector<Output> o = s.Op("StringSplit", loc)
                              .Input(input)
                              .Input(delimiter)
                              .Attr("skip_empty", skip_empty)
                              .FinalizeAll();
  o.resize(3);
  return {o[0], o[1], o[2]};
}

StringSplitOutputs StringSplitV2(const Scope& s, Input input, Input sep, int64_t maxsplit,
                                 std::source_location loc) {
  std::vector<Output> o =
      s.Op("StringSplitV2", loc).Input(input).Input(sep).Attr("maxsplit", maxsplit).FinalizeAll();
  o.resize(3);
  return {o[0], o[1], o[2]};
}

}  // namespace ops
}  // namespace sluice
