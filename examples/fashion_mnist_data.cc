#include "examples/fashion_mnist_data.h"

#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/io/idx_file.h"
#include "runtime/io/image_examples.h"
#include "runtime/io/record_reader.h"

namespace sluice {
namespace {

absl::Status ConvertSplit(const std::string& source_dir, const std::string& prefix,
                          const std::vector<std::string>& paths) {
  const std::string images_path = absl::StrCat(source_dir, "/", prefix, "-images-idx3-ubyte.gz");
  const std::string labels_path = absl::StrCat(source_dir, "/", prefix, "-labels-idx1-ubyte.gz");
  if (!std::filesystem::exists(images_path) || !std::filesystem::exists(labels_path)) {
    return absl::NotFoundError(absl::StrCat(
        "no Fashion-MNIST in ", source_dir, " (", images_path,
        "): install Debian's dataset-fashion-mnist (setup.sh does) or pass its directory"));
  }
  ASSIGN_OR_RETURN(Tensor images, ReadIdxFile(images_path));
  ASSIGN_OR_RETURN(Tensor labels, ReadIdxFile(labels_path));
  return WriteImageExamples(images, labels, paths);
}

// The number of records in `paths` (their framing and CRCs are checked).
absl::StatusOr<int64_t> CountRecords(const std::vector<std::string>& paths) {
  int64_t n = 0;
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader, RecordReader::Open(path));
    while (true) {
      absl::StatusOr<std::string> record = reader->ReadRecord();
      if (absl::IsOutOfRange(record.status())) break;
      RETURN_IF_ERROR(record.status());
      ++n;
    }
  }
  return n;
}

}  // namespace

FashionMnistFiles FashionMnistRecordFiles(const FashionMnistOptions& options) {
  FashionMnistFiles files;
  files.train = ShardedFileNames(options.out_dir + "/train", options.train_shards);
  files.test = ShardedFileNames(options.out_dir + "/test", 1);
  return files;
}

absl::StatusOr<FashionMnistFiles> EnsureFashionMnistRecords(const FashionMnistOptions& options) {
  if (options.train_shards < 1) {
    return absl::InvalidArgumentError("train_shards must be at least 1");
  }
  FashionMnistFiles files = FashionMnistRecordFiles(options);
  auto all_exist = [](const std::vector<std::string>& paths) {
    for (const std::string& p : paths) {
      if (!std::filesystem::exists(p)) return false;
    }
    return true;
  };
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot create ", options.out_dir, ": ", ec.message()));
  }
  if (!all_exist(files.train)) RETURN_IF_ERROR(ConvertSplit(options.source_dir, "train", files.train));
  if (!all_exist(files.test)) RETURN_IF_ERROR(ConvertSplit(options.source_dir, "t10k", files.test));
  ASSIGN_OR_RETURN(files.train_examples, CountRecords(files.train));
  return files;
}

}  // namespace sluice
