// DecodeRaw / DecodeCSV definitions, shape functions and wrappers (kernels:
// decode_kernels.cc).
#include "ops/parsing/decode_ops.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

absl::Status DecodeRawShape(InferenceContext* c) {
  TensorShape in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
  } else {
    in.AddDim(-1);
    c->set_output(0, in);
  }
  return absl::OkStatus();
}

absl::Status DecodeCsvShape(InferenceContext* c) {
  for (int i = 1; i < c->num_inputs(); ++i) {
    const TensorShape& d = c->input(i);
    if (d.rank() > 1 || (d.rank() == 1 && d.dim(0) > 1)) {
      return absl::InvalidArgumentError(
          "Shape of a default must be a length-0 or length-1 vector, or a scalar.");
    }
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(0));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterDecodeOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("DecodeRaw")
          .Input("bytes: string")
          .Output("output: out_type")
          .Attr("out_type: {half, float, double, int32, uint16, uint8, int16, int8, int64, bool}")
          .Attr("little_endian: bool = true")
          .SetShapeFn(DecodeRawShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("DecodeCSV")
                                    .Input("records: string")
                                    .Input("record_defaults: OUT_TYPE")
                                    .Output("output: OUT_TYPE")
                                    .Attr("OUT_TYPE: list({float, double, int32, int64, string})")
                                    .Attr("field_delim: string = ','")
                                    .Attr("use_quote_delim: bool = true")
                                    .Attr("na_value: string = ''")
                                    .Attr("select_cols: list(int) = []")
                                    .SetShapeFn(DecodeCsvShape)));
  RETURN_IF_ERROR(ops->SetNoGradient("DecodeRaw"));
  RETURN_IF_ERROR(ops->SetNoGradient("DecodeCSV"));
  return absl::OkStatus();
}

namespace ops {

Output DecodeRaw(const Scope& s, Input bytes, DataType out_type, const DecodeRawAttrs& a,
                 std::source_location loc) {
  return s.Op("DecodeRaw", loc)
      .Input(bytes)
      .Attr("out_type", out_type)
      .Attr("little_endian", a.little_endian)
      .Finalize1();
}

std::vector<Output> DecodeCSV(const Scope& s, Input records,
                              const std::vector<Output>& record_defaults, const DecodeCSVAttrs& a,
                              std::source_location loc) {
  return s.Op("DecodeCSV", loc)
      .Input(records)
      .InputList(record_defaults)
      .Attr("field_delim", a.field_delim)
      .Attr("use_quote_delim", a.use_quote_delim)
      .Attr("na_value", a.na_value)
      .Attr("select_cols", a.select_cols)
      .FinalizeAll();
}

}  // namespace ops
}  // namespace sluice
