// inspect_checkpoint: what a TensorFlow V2 checkpoint holds, as TensorFlow's
// inspect_checkpoint tool prints it.
//
//   bazel run //tools:inspect_checkpoint -- /path/model.ckpt-7          # names, dtypes, shapes
//   bazel run //tools:inspect_checkpoint -- /path/model.ckpt-7 --tensor=dense/kernel
//   bazel run //tools:inspect_checkpoint -- /path/model.ckpt-7 --all_tensors
//
// PREFIX is the path before ".index". Prints one line per tensor,
// "name (dtype) [d0,d1,...]", and with --tensor or --all_tensors the values
// (up to --max_values of each). A corrupt checkpoint is one error line naming
// the file or the tensor, and exit status 1.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/io/tensor_bundle.h"

ABSL_FLAG(std::string, tensor, "", "print this tensor's values");
ABSL_FLAG(bool, all_tensors, false, "print every tensor's values");
ABSL_FLAG(int, max_values, 20, "values printed per tensor");

namespace sluice {
namespace {

std::string ShapeText(const TensorShape& s) {
  return absl::StrCat("[", absl::StrJoin(s.dims(), ","), "]");
}

absl::Status Inspect(const std::string& prefix) {
  absl::StatusOr<std::unique_ptr<BundleReader>> ckpt = BundleReader::Open(prefix);
  if (!ckpt.ok()) return ckpt.status();
  const std::string only = absl::GetFlag(FLAGS_tensor);
  bool found = only.empty();
  for (const BundleReader::Entry& e : (*ckpt)->entries()) {
    if (!only.empty() && e.name != only) continue;
    found = true;
    std::printf("%s (%s) %s%s\n", e.name.c_str(), DataTypeName(e.dtype).c_str(),
                ShapeText(e.shape).c_str(), e.sliced ? " (sliced)" : "");
    if (only.empty() && !absl::GetFlag(FLAGS_all_tensors)) continue;
    absl::StatusOr<Tensor> t = (*ckpt)->Read(e.name);
    if (!t.ok()) return t.status();
    std::printf("  %s\n", t->SummarizeValue(absl::GetFlag(FLAGS_max_values)).c_str());
  }
  if (!found) {
    return absl::NotFoundError(absl::StrCat("no tensor '", only, "' in checkpoint ", prefix));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) {
    std::fprintf(stderr, "usage: inspect_checkpoint PREFIX [--tensor=NAME | --all_tensors]\n");
    return 2;
  }
  absl::Status s = sluice::Inspect(args[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "inspect_checkpoint: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
