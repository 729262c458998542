// Printing from inside a graph (tf.print, tf.compat.v1.Print), under
// TensorFlow's names, inputs and attrs:
//   PrintV2  a string scalar (tf.print formats it with StringFormat) and
//            `end` ("\n") written to output_stream: "stderr" (default),
//            "stdout", "log(info)" / "log(warning)" / "log(error)" (stderr,
//            the line tagged with its level), or "file://PATH" (appended;
//            created 0600 under the process's graph file policy, a regular
//            file only); stateful, no outputs
//   Print    passes `input` through, and writes `message` and each of
//            `data` as "[v1 v2 v3...]" (the first `summarize` values) to
//            stderr, on the first `first_n` runs only (-1: every run)
//   Timestamp  () -> ts: float64 scalar, seconds since the epoch to the
//            microsecond (tf.timestamp, what step-time logging reads)
// Each line goes out in one write, so lines of concurrent steps do not mix.
// No gradients (Print's input passes its gradient through, as Identity's).
// Errors (InvalidArgument): a non-scalar PrintV2 input, an unknown
// output_stream (TensorFlow's text); file errors as the system says.
//
//   Node* p = ops::PrintV2(s, ops::StringFormat(s, {step, loss},
//                                               {.template_ = "{} {}", .placeholder = "{}"}));
//
// Thread-safety: as Scope; Print counts its runs under a mutex.
#ifndef SLUICE_OPS_IO_PRINT_OPS_H_
#define SLUICE_OPS_IO_PRINT_OPS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterPrintOps(OpRegistry* ops);
void RegisterPrintKernels(KernelRegistry* kernels);

namespace ops {

Output Timestamp(const Scope& scope, std::source_location loc = std::source_location::current());

struct PrintV2Attrs {
  std::string output_stream = "stderr";
  std::string end = "\n";
};
// The PrintV2 node (run it as a target), nullptr on error.
Node* PrintV2(const Scope& scope, Input input, const PrintV2Attrs& attrs = {},
              std::source_location loc = std::source_location::current());

struct PrintAttrs {
  std::string message;
  int64_t first_n = -1;
  int64_t summarize = 3;
};
Output Print(const Scope& scope, Input input, absl::Span<const Input> data,
             const PrintAttrs& attrs = {},
             std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IO_PRINT_OPS_H_
