#include "graph/function_testutil.h"

#include <cstdio>
#include <cstdlib>

#include "base/status_macros.h"
#include "google/protobuf/text_format.h"

namespace sluice {

absl::Status RegisterFunctionTestOps(OpRegistry* ops, bool with_frame_ops) {
  if (with_frame_ops) {
    RETURN_IF_ERROR(ops->Register(
        OpDefBuilder("_Arg").Output("output: T").Attr("T: type").Attr("index: int >= 0")
            .Attr("shape: shape = unknown").SetIsStateful()));
    RETURN_IF_ERROR(ops->Register(
        OpDefBuilder("_Retval").Input("input: T").Attr("T: type").Attr("index: int >= 0")
            .SetIsStateful()));
  }
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("Identity").Input("input: T").Output("output: T").Attr("T: type")));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("IdentityN").Input("input: T").Output("output: T").Attr("T: list(type)")));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("NoOp")));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Placeholder").Output("output: dtype")
                                    .Attr("dtype: type").Attr("shape: shape = unknown")
                                    .SetIsPlaceholder()));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Const").Output("output: dtype")
                                    .Attr("dtype: type").Attr("value: tensor")));
  for (const char* op : {"Add", "Mul"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(op).Input("x: T").Input("y: T").Output("z: T")
                                      .Attr("T: {float, double, int32, int64}")));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Split").Input("split_dim: int32")
                                    .Input("value: T").Output("output: num_split * T")
                                    .Attr("num_split: int >= 1").Attr("T: type")));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("AddN").Input("inputs: N * T").Output("sum: T")
                                    .Attr("N: int >= 1").Attr("T: type")));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("OnesLike").Input("x: T").Output("y: T").Attr("T: type")));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("PartitionedCall")
                                    .Input("args: Tin").Output("output: Tout")
                                    .Attr("Tin: list(type) >= 0").Attr("Tout: list(type) >= 0")
                                    .Attr("f: func").Attr("config: string = ''")
                                    .Attr("config_proto: string = ''")
                                    .Attr("executor_type: string = ''")
                                    .SetCallsFunction("f")));
  return absl::OkStatus();
}

namespace {

template <typename Proto>
Proto ParseOrDie(const std::string& text) {
  Proto p;
  if (!google::protobuf::TextFormat::ParseFromString(text, &p)) {
    std::fprintf(stderr, "cannot parse test proto:\n%s\n", text.c_str());
    std::abort();
  }
  return p;
}

}  // namespace

FunctionDef ParseFunctionDefOrDie(const std::string& text) {
  return ParseOrDie<FunctionDef>(text);
}
GraphDef ParseGraphDefOrDie(const std::string& text) { return ParseOrDie<GraphDef>(text); }

}  // namespace sluice
