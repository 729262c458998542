// Images as TFRecord files of tf.train.Example, the layout of TensorFlow's
// MNIST tutorials (convert_to_records): one Example per image with
//
//   image_raw  bytes   the h*w*c uint8 pixels, row-major (HWC)
//   label      int64   the class
//   height, width, depth   int64
//
//   ASSIGN_OR_RETURN(Tensor images, ReadIdxFile(".../train-images-idx3-ubyte.gz"));
//   ASSIGN_OR_RETURN(Tensor labels, ReadIdxFile(".../train-labels-idx1-ubyte.gz"));
//   RETURN_IF_ERROR(WriteImageExamples(images, labels, ShardedFileNames("/data/train", 4)));
//
// Example i goes to file i % n, so shards differ by at most one example.
// Each file is written under a temporary name and renamed when complete:
// processes converting the same data at once (every worker of a cluster on
// its first run) never see a partial file. Serialization is deterministic,
// so they also write the same bytes.
#ifndef SLUICE_RUNTIME_IO_IMAGE_EXAMPLES_H_
#define SLUICE_RUNTIME_IO_IMAGE_EXAMPLES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/tensor.h"

namespace sluice {

// "<prefix>-00000-of-00004.tfrecord", ... (TensorFlow's sharded names).
std::vector<std::string> ShardedFileNames(const std::string& prefix, int num_shards);

// images: uint8 [n, h, w] or [n, h, w, c]; labels: uint8, int32 or int64
// [n]. InvalidArgument when they do not match or `paths` is empty; file
// errors name the file.
absl::Status WriteImageExamples(const Tensor& images, const Tensor& labels,
                                const std::vector<std::string>& paths);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_IO_IMAGE_EXAMPLES_H_
