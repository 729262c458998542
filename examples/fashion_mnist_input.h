// The main job's input pipeline: batches of Fashion-MNIST images read from
// TFRecord files of tf.train.Example through tf.data, in a local session of
// the worker's own process, as a TensorFlow 1.x worker reads its split:
//
//   TFRecordDataset(files) -> Shuffle(buffer, seed) -> Repeat -> Batch(b)
//     -> Map(ParseExample, DecodeRaw, scale to [0, 1]; parallel) -> Prefetch
//
//   ASSIGN_OR_RETURN(std::unique_ptr<ImageInput> in, ImageInput::Create({
//       .files = my_shards, .batch = 64, .shuffle = true, .seed = 7}));
//   ASSIGN_OR_RETURN(ImageBatch b, in->Next());   // images float [64, 28, 28, 1]
//
// Reading, parsing and batching run on the pipeline's own threads (Map's
// parallel calls, Prefetch's buffer); Next only takes a ready batch, and
// counts the time it waits for one (wait_seconds()).
//
// Thread-compatible: one caller at a time.
#ifndef SLUICE_EXAMPLES_FASHION_MNIST_INPUT_H_
#define SLUICE_EXAMPLES_FASHION_MNIST_INPUT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "examples/batch_session.h"
#include "sluice.h"

namespace sluice {

struct ImageInputOptions {
  std::vector<std::string> files;
  int64_t height = 28, width = 28, channels = 1;
  int64_t batch = 64;
  bool shuffle = false;
  int64_t shuffle_buffer = 10000;
  int64_t seed = 1;
  bool repeat = false;         // cycle through the files forever (reshuffled each epoch)
  int64_t parallel_calls = 2;  // Map's parallelism
  int64_t prefetch = 4;        // batches kept ready
  int cpu_threads = 0;         // of the pipeline's session; 0: the machine's
};

struct ImageBatch {
  Tensor images;  // float [n, height, width, channels], in [0, 1]
  Tensor labels;  // int64 [n]
};

class ImageInput {
 public:
  static absl::StatusOr<std::unique_ptr<ImageInput>> Create(const ImageInputOptions& options);

  // The next batch; OutOfRange after the last one (without repeat: the last
  // batch may be short).
  absl::StatusOr<ImageBatch> Next();

  // Every batch left, for a test set: its images and labels in batches.
  absl::StatusOr<std::vector<ImageBatch>> ReadAll();

  double wait_seconds() const { return batches_->wait_seconds(); }

 private:
  explicit ImageInput(std::unique_ptr<BatchSession> batches) : batches_(std::move(batches)) {}

  std::unique_ptr<BatchSession> batches_;
};

}  // namespace sluice

#endif  // SLUICE_EXAMPLES_FASHION_MNIST_INPUT_H_
