// Definitions, shapes and wrappers of the text ops (kernels:
// string_transform_kernels.cc).
#include "ops/strings/string_transform_ops.h"

#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

absl::Status SameShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status SubstrShape(InferenceContext* c) {
  const TensorShape& pos = c->input(1);
  const TensorShape& len = c->input(2);
  if (!pos.IsCompatibleWith(len)) {
    return absl::InvalidArgumentError(absl::StrCat("pos and len must have the same shape, got ",
                                                   pos.DebugString(), " and ",
                                                   len.DebugString()));
  }
  ASSIGN_OR_RETURN(TensorShape out, BroadcastShapes(c->input(0), pos));
  c->set_output(0, out);
  return absl::OkStatus();
}

// The reduced shape when the axes are a constant and the rank is known.
absl::Status ReduceJoinShape(InferenceContext* c) {
  const TensorShape& in = c->input(0);
  RETURN_IF_ERROR(c->WithRankAtLeast(1, 0));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, c->InputAsInts(1));
  ASSIGN_OR_RETURN(bool keep_dims, c->GetAttr<bool>("keep_dims"));
  if (!axes.has_value() || in.unknown_rank()) {
    c->set_output(0, keep_dims && !in.unknown_rank() ? TensorShape::UnknownOfRank(in.rank())
                                                     : TensorShape::Unknown());
    return absl::OkStatus();
  }
  std::set<int64_t> reduced;
  for (int64_t a : *axes) {
    const int64_t axis = a < 0 ? a + in.rank() : a;
    if (axis < 0 || axis >= in.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid reduction dimension ", a,
                                                     " for input with ", in.rank(),
                                                     " dimension(s)"));
    }
    if (!reduced.insert(axis).second) {
      return absl::InvalidArgumentError(absl::StrCat("Duplicate reduction dimension ", a));
    }
  }
  TensorShape out;
  for (int i = 0; i < in.rank(); ++i) {
    if (reduced.count(i) == 0) {
      out.AddDim(in.dim(i));
    } else if (keep_dims) {
      out.AddDim(1);
    }
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterStringTransformOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StringLength")
                                    .Input("input: string")
                                    .Output("output: int32")
                                    .Attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'")
                                    .SetShapeFn(SameShape)));
  for (const char* op : {"StringLower", "StringUpper"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(op)
                                      .Input("input: string")
                                      .Output("output: string")
                                      .Attr("encoding: string = ''")
                                      .SetShapeFn(SameShape)));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StringStrip")
                                    .Input("input: string")
                                    .Output("output: string")
                                    .SetShapeFn(SameShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Substr")
                                    .Input("input: string")
                                    .Input("pos: T")
                                    .Input("len: T")
                                    .Output("output: string")
                                    .Attr("T: {int32, int64}")
                                    .Attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'")
                                    .SetShapeFn(SubstrShape)));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("StringToNumber")
          .Input("string_tensor: string")
          .Output("output: out_type")
          .Attr("out_type: {float, double, int32, int64, uint32, uint64} = DT_FLOAT")
          .SetShapeFn(SameShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RegexReplace")
                                    .Input("input: string")
                                    .Input("pattern: string")
                                    .Input("rewrite: string")
                                    .Output("output: string")
                                    .Attr("replace_global: bool = true")
                                    .SetShapeFn(SameShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StaticRegexReplace")
                                    .Input("input: string")
                                    .Output("output: string")
                                    .Attr("pattern: string")
                                    .Attr("rewrite: string")
                                    .Attr("replace_global: bool = true")
                                    .SetShapeFn(SameShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ReduceJoin")
                                    .Input("inputs: string")
                                    .Input("reduction_indices: int32")
                                    .Output("output: string")
                                    .Attr("keep_dims: bool = false")
                                    .Attr("separator: string = ''")
                                    .SetShapeFn(ReduceJoinShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("EncodeBase64")
                                    .Input("input: string")
                                    .Output("output: string")
                                    .Attr("pad: bool = false")
                                    .SetShapeFn(SameShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("DecodeBase64")
                                    .Input("input: string")
                                    .Output("output: string")
                                    .SetShapeFn(SameShape)));
  for (const char* op : {"StringLength", "StringLower", "StringUpper", "StringStrip", "Substr",
                         "StringToNumber", "RegexReplace", "StaticRegexReplace", "ReduceJoin",
                         "EncodeBase64", "DecodeBase64"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output StringLength(const Scope& s, Input input, const std::string& unit,
                    std::source_location loc) {
  return s.Op("StringLength", loc).Input(input).Attr("unit", unit).Finalize1();
}

Output StringLower(const Scope& s, Input input, const std::string& encoding,
                   std::source_location loc) {
  return s.Op("StringLower", loc).Input(input).Attr("encoding", encoding).Finalize1();
}

Output StringUpper(const Scope& s, Input input, const std::string& encoding,
                   std::source_location loc) {
  return s.Op("StringUpper", loc).Input(input).Attr("encoding", encoding).Finalize1();
}

Output StringStrip(const Scope& s, Input input, std::source_location loc) {
  return s.Op("StringStrip", loc).Input(input).Finalize1();
}

Output Substr(const Scope& s, Input input, Input pos, Input len, const std::string& unit,
              std::source_location loc) {
  return s.Op("Substr", loc).Input(input).Input(pos).Input(len).Attr("unit", unit).Finalize1();
}

Output StringToNumber(const Scope& s, Input string_tensor, DataType out_type,
                      std::source_location loc) {
  return s.Op("StringToNumber", loc).Input(string_tensor).Attr("out_type", out_type).Finalize1();
}

Output RegexReplace(const Scope& s, Input input, Input pattern, Input rewrite,
                    bool replace_global, std::source_location loc) {
  return s.Op("RegexReplace", loc)
      .Input(input)
      .Input(pattern)
      .Input(rewrite)
      .Attr("replace_global", replace_global)
      .Finalize1();
}

Output StaticRegexReplace(const Scope& s, Input input, const std::string& pattern,
                          const std::string& rewrite, bool replace_global,
                          std::source_location loc) {
  return s.Op("StaticRegexReplace", loc)
      .Input(input)
      .Attr("pattern", pattern)
      .Attr("rewrite", rewrite)
      .Attr("replace_global", replace_global)
      .Finalize1();
}

Output ReduceJoin(const Scope& s, Input inputs, Input reduction_indices, bool keep_dims,
                  const std::string& separator, std::source_location loc) {
  return s.Op("ReduceJoin", loc)
      .Input(inputs)
      .Input(reduction_indices)
      .Attr("keep_dims", keep_dims)
      .Attr("separator", separator)
      .Finalize1();
}

Output EncodeBase64(const Scope& s, Input input, bool pad, std::source_location loc) {
  return s.Op("EncodeBase64", loc).Input(input).Attr("pad", pad).Finalize1();
}

Output DecodeBase64(const Scope& s, Input input, std::source_location loc) {
  return s.Op("DecodeBase64", loc).Input(input).Finalize1();
}

}  // namespace ops
}  // namespace sluice
