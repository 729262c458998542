// The string ops of text input pipelines (tf.strings.length, lower, upper,
// strip, substr, to_number, regex_replace, reduce_join, encode/decode_base64),
// under TensorFlow's names, inputs, attrs and values (its
// core/ops/string_ops.cc):
//   StringLength        bytes (unit "BYTE") or UTF-8 characters ("UTF8_CHAR":
//                       bytes that do not continue a character), int32
//   StringLower/Upper   ASCII letters mapped (encoding ""); encoding "utf-8"
//                       (ICU's full Unicode case mapping in TensorFlow) is
//                       refused: Sluice does not link ICU
//   StringStrip         leading and trailing ASCII whitespace removed
//   Substr              len bytes or characters from pos (negative: from the
//                       end; |pos| up to the length); as many as there are
//                       when len runs past the end or is negative; input,
//                       pos and len broadcast (pos and len of one shape)
//   StringToNumber      float/double as strtod reads them whole (spaces
//                       around, inf, nan, hex), int32/int64 decimal with an
//                       optional sign; uint32/uint64 are not Sluice tensor
//                       types and are refused
//   RegexReplace        the first (replace_global false) or every match of
//   StaticRegexReplace  the pattern (RE2's syntax) replaced by the rewrite
//                       (\1 .. \9 for groups); pattern a scalar input or attr
//   ReduceJoin          strings joined with `separator` along the
//                       reduction_indices axes in the order listed (the
//                       first listed varies fastest; negative from the end;
//                       none: the input as it is); keep_dims keeps them as
//                       size 1
//   EncodeBase64        web-safe base64 ('-', '_'), '=' padding when pad
//   DecodeBase64        the same alphabet, padding optional
// Outputs have the input's shape (ReduceJoin: the reduced shape; Substr:
// the broadcast shape). None has a gradient, as in TensorFlow. Errors
// (InvalidArgument, as TensorFlow's): a pos out of range (naming the string
// and its index), invalid UTF-8 under UTF8_CHAR, a string that is not a
// number (naming it), an invalid pattern or rewrite, a reduction axis out
// of range or repeated, base64 whose length is 1 modulo 4 or that holds
// other characters.
//
//   Output words = ops::StaticRegexReplace(s, ops::StringLower(s, lines), "[[:punct:]]", "");
//   Output n = ops::StringToNumber(s, fields, DT_INT64);
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_STRINGS_STRING_TRANSFORM_OPS_H_
#define SLUICE_OPS_STRINGS_STRING_TRANSFORM_OPS_H_

#include <string>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterStringTransformOps(OpRegistry* ops);
void RegisterStringTransformKernels(KernelRegistry* kernels);

namespace ops {

// unit: "BYTE" or "UTF8_CHAR".
Output StringLength(const Scope& scope, Input input, const std::string& unit = "BYTE",
                    std::source_location loc = std::source_location::current());
Output StringLower(const Scope& scope, Input input, const std::string& encoding = "",
                   std::source_location loc = std::source_location::current());
Output StringUpper(const Scope& scope, Input input, const std::string& encoding = "",
                   std::source_location loc = std::source_location::current());
Output StringStrip(const Scope& scope, Input input,
                   std::source_location loc = std::source_location::current());
Output Substr(const Scope& scope, Input input, Input pos, Input len,
              const std::string& unit = "BYTE",
              std::source_location loc = std::source_location::current());
Output StringToNumber(const Scope& scope, Input string_tensor, DataType out_type = DT_FLOAT,
                      std::source_location loc = std::source_location::current());
Output RegexReplace(const Scope& scope, Input input, Input pattern, Input rewrite,
                    bool replace_global = true,
                    std::source_location loc = std::source_location::current());
Output StaticRegexReplace(const Scope& scope, Input input, const std::string& pattern,
                          const std::string& rewrite, bool replace_global = true,
                          std::source_location loc = std::source_location::current());
Output ReduceJoin(const Scope& scope, Input inputs, Input reduction_indices,
                  bool keep_dims = false, const std::string& separator = "",
                  std::source_location loc = std::source_location::current());
Output EncodeBase64(const Scope& scope, Input input, bool pad = false,
                    std::source_location loc = std::source_location::current());
Output DecodeBase64(const Scope& scope, Input input,
                    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_STRINGS_STRING_TRANSFORM_OPS_H_
