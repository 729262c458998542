// inspect_checkpoint: what a TensorFlow checkpoint holds, as TensorFlow's
// inspect_checkpoint tool prints it: a V2 checkpoint (PREFIX.index and its
// data files) or V1 files (one file at PREFIX, or the files a glob PREFIX
// matches: "model.ckpt-?????-of-00002").
//
//   bazel run //tools:inspect_checkpoint -- /path/model.ckpt-7          # names, dtypes, shapes
//   bazel run //tools:inspect_checkpoint -- /path/model.ckpt-7 --tensor=dense/kernel
//   bazel run //tools:inspect_checkpoint -- /path/model.ckpt-7 --all_tensors
//
// Prints one line per tensor, "name (dtype) [d0,d1,...]" ("(sliced)" after a
// partitioned one), and with --tensor or --all_tensors the values (up to
// --max_values of each; a V1 tensor stored in slices, each slice's, after
// the slice's place). A corrupt checkpoint is one error line naming the
// file or the tensor, and exit status 1.
#include <glob.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include <filesystem>
#include <map>

#include "base/status_macros.h"
#include "runtime/atomic_file.h"
#include "runtime/io/tensor_bundle.h"
#include "runtime/io/tensor_slice_file.h"

ABSL_FLAG(std::string, tensor, "", "print this tensor's values");
ABSL_FLAG(bool, all_tensors, false, "print every tensor's values");
ABSL_FLAG(int, max_values, 20, "values printed per tensor");

namespace sluice {
namespace {

std::string ShapeText(const TensorShape& s) {
  return absl::StrCat("[", absl::StrJoin(s.dims(), ","), "]");
}

// "[0:3,:]": where a slice lies in its tensor (":" for a whole dimension).
std::string SliceText(const TensorSliceRecord& r) {
  std::vector<std::string> dims;
  for (size_t d = 0; d < r.slice.start.size(); ++d) {
    const int64_t start = r.slice.start[d], end = start + r.slice.length[d];
    dims.push_back(start == 0 && end == r.full_shape.dim(static_cast<int>(d))
                       ? ":"
                       : absl::StrCat(start, ":", end));
  }
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// The V1 files at `pattern`: the file itself, or what it matches as a glob.
std::vector<std::string> V1Files(const std::string& pattern) {
  if (std::filesystem::is_regular_file(pattern)) return {pattern};
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return out;
}

absl::Status InspectV1(const std::vector<std::string>& files, const std::string& only) {
  // Every file's slices, by tensor name (bytewise, as V2's index orders them).
  std::map<std::string, std::vector<TensorSliceRecord>> tensors;
  for (const std::string& file : files) {
    ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(file));
    ASSIGN_OR_RETURN(std::vector<TensorSliceRecord> records, ParseTensorSliceFile(bytes, file));
    for (TensorSliceRecord& r : records) tensors[r.name].push_back(std::move(r));
  }
  const bool values = !only.empty() || absl::GetFlag(FLAGS_all_tensors);
  bool found = only.empty();
  for (const auto& [name, slices] : tensors) {
    if (!only.empty() && name != only) continue;
    found = true;
    const TensorSliceRecord& first = slices[0];
    const bool sliced = slices.size() > 1 || first.value.shape() != first.full_shape;
    std::printf("%s (%s) %s%s\n", name.c_str(), DataTypeName(first.value.dtype()).c_str(),
                ShapeText(first.full_shape).c_str(), sliced ? " (sliced)" : "");
    if (!values) continue;
    for (const TensorSliceRecord& r : slices) {
      std::printf("  %s%s\n", sliced ? absl::StrCat(SliceText(r), " ").c_str() : "",
                  r.value.SummarizeValue(absl::GetFlag(FLAGS_max_values)).c_str());
    }
  }
  if (!found) {
    return absl::NotFoundError(absl::StrCat("no tensor '", only, "' in checkpoint ", files[0]));
  }
  return absl::OkStatus();
}

absl::Status Inspect(const std::string& prefix) {
  if (!std::filesystem::exists(prefix + ".index")) {
    const std::vector<std::string> files = V1Files(prefix);
    if (!files.empty()) return InspectV1(files, absl::GetFlag(FLAGS_tensor));
  }
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
    std::fprintf(stderr,
                 "usage: inspect_checkpoint PREFIX|V1_FILE_PATTERN "
                 "[--tensor=NAME | --all_tensors]\n");
    return 2;
  }
  absl::Status s = sluice::Inspect(args[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "inspect_checkpoint: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
