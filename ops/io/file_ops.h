// Whole files as string tensors (tf.io.read_file, write_file,
// matching_files: how image pipelines read their inputs), under
// TensorFlow's names, inputs and attrs:
//   ReadFile       filename scalar -> the file's bytes, a string scalar
//   WriteFile      filename and contents scalars; creates missing
//                  directories; the file appears whole (written beside it
//                  and renamed, mode 0600); stateful
//   MatchingFiles  a pattern scalar or vector -> every matching path,
//                  sorted, a vector (none: empty): glob syntax per path
//                  component ('*', '?', '[a-z]', '\' escapes; '*' matches
//                  a leading dot, as TensorFlow's fnmatch does)
// Only regular files are read (not /dev/zero, not a FIFO), to the size
// they had when opened. WriteFile obeys the process's graph file policy
// (ops/io/file_write_policy.h: a cluster task writes only under its write
// roots). Reads, like the dataset readers', are not fenced: a job's
// members hold its certificates. No gradients. Errors: a non-scalar
// filename or contents, a pattern of rank above 1 (InvalidArgument);
// NotFound / PermissionDenied as the system says, naming the path;
// FailedPrecondition for a path that is not a regular file.
//
//   Output paths = ops::MatchingFiles(s, ops::Const(s, std::string("/data/train/*.jpg")));
//   Output bytes = ops::ReadFile(s, path);
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_IO_FILE_OPS_H_
#define SLUICE_OPS_IO_FILE_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterFileOps(OpRegistry* ops);
void RegisterFileKernels(KernelRegistry* kernels);

namespace ops {

Output ReadFile(const Scope& scope, Input filename,
                std::source_location loc = std::source_location::current());
// The WriteFile node (no outputs: run it as a target), nullptr on error.
Node* WriteFile(const Scope& scope, Input filename, Input contents,
                std::source_location loc = std::source_location::current());
Output MatchingFiles(const Scope& scope, Input pattern,
                     std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IO_FILE_OPS_H_
