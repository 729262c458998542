// DecodeRaw and DecodeCSV, with TensorFlow's names, inputs and attrs (its
// core/ops/parsing_ops.cc); CPU kernels in decode_kernels.cc; no gradients.
//
//   Output pixels = ops::DecodeRaw(s, bytes, DT_UINT8);        // [..., len]
//   std::vector<Output> cols = ops::DecodeCSV(s, lines,
//       {ops::Const(s, 0.0f), empty_int64, ops::Const(s, std::string("x"))},
//       {.field_delim = ",", .use_quote_delim = true, .na_value = "NA"});
//
// DecodeRaw reinterprets each string as a vector of out_type (all strings of
// one length, a multiple of the type's size; output shape = input shape +
// [length / size]); little_endian = false swaps the bytes of each value.
// DecodeCSV splits each record (RFC 4180: with use_quote_delim a field may be
// quoted, "" inside quotes is one quote) into one output per column, each of
// the records' shape; an empty field or one equal to na_value takes the
// column's default (a one-element tensor; an empty one makes the column
// required); select_cols (ascending, unique) picks the columns kept.
// Errors are InvalidArgument naming the record and field ("Field 1 in
// record 0 is not a valid int32: 1x", "Expect 3 fields but have 2 in record
// 0", "Field 0 is required but missing in record 1!", "Input to DecodeRaw
// has length 5 that is not a multiple of 4, the size of float").
// Thread-safety: as Scope; kernels are stateless. Ownership: nodes belong to
// the scope's graph.
#ifndef SLUICE_OPS_PARSING_DECODE_OPS_H_
#define SLUICE_OPS_PARSING_DECODE_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterDecodeOps(OpRegistry* ops);
void RegisterDecodeKernels(KernelRegistry* kernels);

namespace ops {

struct DecodeRawAttrs {
  bool little_endian = true;
};
Output DecodeRaw(const Scope& scope, Input bytes, DataType out_type,
                 const DecodeRawAttrs& attrs = {},
                 std::source_location loc = std::source_location::current());

struct DecodeCSVAttrs {
  std::string field_delim = ",";
  bool use_quote_delim = true;
  std::string na_value;
  std::vector<int64_t> select_cols;
};
std::vector<Output> DecodeCSV(const Scope& scope, Input records,
                              const std::vector<Output>& record_defaults,
                              const DecodeCSVAttrs& attrs = {},
                              std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_PARSING_DECODE_OPS_H_
