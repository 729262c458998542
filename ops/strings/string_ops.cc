// String op definitions, shapes and wrappers (kernels: string_kernels.cc).
#include "ops/strings/string_ops.h"

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
  for (const char* op :
       {"StringToHashBucketFast", "StringToHashBucketStrong", "StringToHashBucket", "AsString"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output StringToHashBucketFast(const Scope& s, Input input, int64_t num_buckets,
                              std::source_location loc) {
  return s.Op("StringToHashBucketFast", loc).Input(input).Attr("num_buckets", num_buckets).Finalize1();
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

}  // namespace ops
}  // namespace sluice
