// StringFormat (tf.strings.format, and what tf.print builds its line with),
// under TensorFlow's name, inputs and attrs: `template` split at every
// `placeholder` ("%s"; tf.strings.format passes "{}"), each piece followed
// by the next input's values as TensorFlow prints them
// (ops/strings/internal/tensor_format.h: numpy-like, the first and last
// `summarize` entries of each axis, -1 for all). A string scalar out; no
// gradient. Errors (InvalidArgument): as many inputs as placeholders, a
// non-empty placeholder.
//
//   Output line = ops::StringFormat(s, {step, loss}, {.template_ = "step {} loss {}",
//                                                     .placeholder = "{}"});
//
// Thread-safety: as Scope; the kernel is stateless.
#ifndef SLUICE_OPS_STRINGS_STRING_FORMAT_OPS_H_
#define SLUICE_OPS_STRINGS_STRING_FORMAT_OPS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterStringFormatOps(OpRegistry* ops);
void RegisterStringFormatKernels(KernelRegistry* kernels);

namespace ops {

struct StringFormatAttrs {
  std::string template_ = "%s";  // the attr "template"
  std::string placeholder = "%s";
  int64_t summarize = 3;
};
Output StringFormat(const Scope& scope, absl::Span<const Input> inputs,
                    const StringFormatAttrs& attrs = {},
                    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_STRINGS_STRING_FORMAT_OPS_H_
