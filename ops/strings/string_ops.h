// The string ops feature columns hash and print with, under TensorFlow's
// names, inputs, attrs and values (its core/ops/string_ops.cc):
//   StringToHashBucketFast    Fingerprint64(s) % num_buckets (FarmHash's, from
//                             Debian's libfarmhash: the same ids as TF's)
//   StringToHashBucketStrong  SipHash-2-4 keyed by `key` (two uint64s) %
//                             num_buckets (HighwayHash's, as TF's)
//   StringToHashBucket        TF's legacy Hash64 (MurmurHash64A, seed
//                             0xDECAFCAFFE) % num_buckets
//   AsString                  numbers and bools as strings, printf-style
//                             (precision, scientific, shortest, width, fill)
//   StringSplit               each string of a vector split at any of the
//                             delimiter's characters (""): into characters),
//                             empty tokens skipped unless skip_empty is false
//   StringSplitV2             split at the whole separator (Python's
//                             str.split: "" splits at runs of whitespace),
//                             at most maxsplit times (-1: no limit)
//   RegexFullMatch            whether each string matches `pattern` (a string
//                             input) whole, in RE2's syntax
//   StaticRegexFullMatch      the same, the pattern an attr (a TF1 Saver
//                             graph's check for "^s3://.*")
// The splits give a SparseTensor (indices [n, 2], values, shape [rows, the
// longest row]).
// All give int64 (or string) tensors of their input's shape; none has a
// gradient (as in TensorFlow). Errors: InvalidArgument for num_buckets < 1, a
// key that is not two ints, and AsString's attrs where TensorFlow refuses
// them (precision or notation for integers, scientific with shortest, a
// fill other than ' ', '+', '-', '0' or '#').
//
//   Output ids = ops::StringToHashBucketFast(s, words, 1 << 20);   // int64
//   Output text = ops::AsString(s, x, {.precision = 2});
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_STRINGS_STRING_OPS_H_
#define SLUICE_OPS_STRINGS_STRING_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterStringOps(OpRegistry* ops);
void RegisterStringKernels(KernelRegistry* kernels);

// TensorFlow's legacy string hash (core/lib/hash/hash.h Hash64): the hash
// StringToHashBucket buckets by.
uint64_t LegacyHash64(absl::string_view s);

namespace ops {

Output StringToHashBucketFast(const Scope& scope, Input input, int64_t num_buckets,
                              std::source_location loc = std::source_location::current());
Output StringToHashBucketStrong(const Scope& scope, Input input, int64_t num_buckets,
                                const std::vector<int64_t>& key,
                                std::source_location loc = std::source_location::current());
Output StringToHashBucket(const Scope& scope, Input string_tensor, int64_t num_buckets,
                          std::source_location loc = std::source_location::current());

struct AsStringAttrs {
  int64_t precision = -1;
  bool scientific = false;
  bool shortest = false;
  int64_t width = -1;
  std::string fill;
};
Output AsString(const Scope& scope, Input input, const AsStringAttrs& attrs = {},
                std::source_location loc = std::source_location::current());
Output RegexFullMatch(const Scope& scope, Input input, Input pattern,
                      std::source_location loc = std::source_location::current());
Output StaticRegexFullMatch(const Scope& scope, Input input, const std::string& pattern,
                            std::source_location loc = std::source_location::current());

struct StringSplitOutputs {
  Output indices, values, shape;
};
StringSplitOutputs StringSplit(const Scope& scope, Input input, Input delimiter,
                               bool skip_empty = true,
                               std::source_location loc = std::source_location::current());
StringSplitOutputs StringSplitV2(const Scope& scope, Input input, Input sep, int64_t maxsplit = -1,
                                 std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_STRINGS_STRING_OPS_H_
