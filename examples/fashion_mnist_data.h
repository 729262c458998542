// Fashion-MNIST as TFRecord files of tf.train.Example
// (runtime/io/image_examples.h: image_raw, label, height, width, depth),
// with file names `<dir>/train-0000k-of-0000n.tfrecord` (sharded, so that each
// worker reads its own files) and `<dir>/test-00000-of-00001.tfrecord`.
//
//   ASSIGN_OR_RETURN(FashionMnistFiles files, EnsureFashionMnistRecords(
//       {.source_dir = kDebianFashionMnistDir, .out_dir = "/tmp/sluice/fashion_mnist"}));
//
// The source is Debian's dataset-fashion-mnist (IDX files, gzip'd). Files are
// written to a temporary name and renamed, so processes converting at once
// (every worker of a cluster on its first run) never read a partial file.
#ifndef SLUICE_EXAMPLES_FASHION_MNIST_DATA_H_
#define SLUICE_EXAMPLES_FASHION_MNIST_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice {

inline constexpr char kDebianFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

struct FashionMnistFiles {
  std::vector<std::string> train;  // the shards, in order
  std::vector<std::string> test;
  int64_t train_examples = 0;      // records in `train` (EnsureFashionMnistRecords counts them)
};

struct FashionMnistOptions {
  std::string source_dir = kDebianFashionMnistDir;
  std::string out_dir;
  int train_shards = 4;
};

// The files of `options` (existing or not).
FashionMnistFiles FashionMnistRecordFiles(const FashionMnistOptions& options);

// Converts the IDX files to records unless every file already exists.
// NotFound naming the source directory (and the Debian package) when it is
// missing.
absl::StatusOr<FashionMnistFiles> EnsureFashionMnistRecords(const FashionMnistOptions& options);

}  // namespace sluice

#endif  // SLUICE_EXAMPLES_FASHION_MNIST_DATA_H_
