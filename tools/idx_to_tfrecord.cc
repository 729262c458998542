// Converts an IDX dataset (MNIST, Fashion-MNIST: images and labels, plain
// or gzip'd) to sharded TFRecord files of tf.train.Example
// (runtime/io/image_examples.h: image_raw, label, height, width, depth).
//
//   bazel run //tools:idx_to_tfrecord -- \
//       --images=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \
//       --labels=/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz \
//       --out=/tmp/fmnist/train --shards=4
//   # writes /tmp/fmnist/train-00000-of-00004.tfrecord ... -00003-of-00004.tfrecord
//
// Prints one line per file written; exits 1 with one "idx_to_tfrecord:
// error: ..." line on a bad flag or file.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/io/idx_file.h"
#include "runtime/io/image_examples.h"

ABSL_FLAG(std::string, images, "", "IDX file of uint8 images [n, h, w] (or [n, h, w, c])");
ABSL_FLAG(std::string, labels, "", "IDX file of the labels [n]");
ABSL_FLAG(std::string, out, "", "output prefix: files are <out>-0000k-of-0000n.tfrecord");
ABSL_FLAG(int, shards, 1, "number of output files (example i goes to file i % shards)");

namespace sluice {
namespace {

// Relative paths are the user's, not bazel run's runfiles directory.
std::string UserPath(const std::string& path) {
  const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path[0] == '/' || wd == nullptr) return path;
  return (std::filesystem::path(wd) / path).string();
}

absl::Status Main() {
  const std::string images_path = UserPath(absl::GetFlag(FLAGS_images));
  const std::string labels_path = UserPath(absl::GetFlag(FLAGS_labels));
  const std::string out = UserPath(absl::GetFlag(FLAGS_out));
  const int shards = absl::GetFlag(FLAGS_shards);
  if (images_path.empty() || labels_path.empty() || out.empty()) {
    return absl::InvalidArgumentError("--images, --labels and --out are required");
  }
  if (shards < 1 || shards > 99999) {
    return absl::InvalidArgumentError(absl::StrCat("--shards must be in [1, 99999], not ", shards));
  }
  ASSIGN_OR_RETURN(Tensor images, ReadIdxFile(images_path));
  ASSIGN_OR_RETURN(Tensor labels, ReadIdxFile(labels_path));
  const std::filesystem::path parent = std::filesystem::path(out).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  const std::vector<std::string> files = ShardedFileNames(out, shards);
  RETURN_IF_ERROR(WriteImageExamples(images, labels, files));
  for (size_t k = 0; k < files.size(); ++k) {
    const int64_t n = images.dim_size(0) / shards + (static_cast<int64_t>(k) < images.dim_size(0) % shards);
    std::printf("wrote %s (%lld examples)\n", files[k].c_str(), static_cast<long long>(n));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = sluice::Main();
  if (!s.ok()) {
    std::fprintf(stderr, "idx_to_tfrecord: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
