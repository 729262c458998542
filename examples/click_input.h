// The wide & deep example's input pipeline: batches of click-log examples
// (examples/click_logs.h) read from TFRecord files through tf.data, each
// categorical feature crossed with its name and hashed into one id space,
// as TensorFlow 1.x's categorical_column_with_hash_bucket does over a
// shared table:
//
//   TFRecordDataset(files) -> [Shuffle(buffer, seed) -> Repeat] -> Batch(b)
//     -> Map(ParseExample; per feature k: StringToHashBucketFast("Ck:" + value,
//            buckets); Pack) -> Prefetch
//
//   ASSIGN_OR_RETURN(std::unique_ptr<ClickInput> in, ClickInput::Create({
//       .files = my_shards, .buckets = 1 << 22, .batch = 256, .shuffle = true}));
//   ASSIGN_OR_RETURN(ClickBatch b, in->Next());   // ids int64 [256, 26], labels float [256]
//
// The ids are FarmHash Fingerprint64 values modulo `buckets`: those TF
// computes for the same strings. Parsing and hashing run on the pipeline's
// own threads; Next only takes a ready batch and counts its wait.
//
// With `preload`, Create reads every whole batch of the files once (parsed
// and hashed) and Next then serves them from memory, in a new order each
// pass when `shuffle` (repeat implied): the step alone is timed, as a peer that
// holds its ids in memory times it (bench/torch_wide_deep.py).
//
// Thread-compatible: one caller at a time.
#ifndef SLUICE_EXAMPLES_CLICK_INPUT_H_
#define SLUICE_EXAMPLES_CLICK_INPUT_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "examples/batch_session.h"
#include "sluice.h"

namespace sluice {

struct ClickInputOptions {
  std::vector<std::string> files;
  int features = 26;
  int64_t buckets = int64_t{1} << 22;  // ids in [0, buckets)
  int64_t batch = 256;
  bool shuffle = false;
  int64_t shuffle_buffer = 20000;
  int64_t seed = 1;
  bool repeat = false;  // cycle through the files forever (reshuffled each epoch)
  int64_t parallel_calls = 2;
  int64_t prefetch = 4;
  int cpu_threads = 1;   // of the pipeline's session
  bool preload = false;  // read every batch before the first Next (see above)
};

struct ClickBatch {
  Tensor ids;     // int64 [n, features]
  Tensor labels;  // float [n], 0 or 1
};

class ClickInput {
 public:
  static absl::StatusOr<std::unique_ptr<ClickInput>> Create(const ClickInputOptions& options);

  // The next batch; OutOfRange after the last one (without repeat, the last
  // batch may be short).
  absl::StatusOr<ClickBatch> Next();
  // Every batch left (a test set).
  absl::StatusOr<std::vector<ClickBatch>> ReadAll();

  double wait_seconds() const { return batches_ == nullptr ? 0.0 : batches_->wait_seconds(); }

 private:
  ClickInput(std::unique_ptr<BatchSession> batches, int64_t seed)
      : batches_(std::move(batches)), rng_(static_cast<uint64_t>(seed)) {}

  std::unique_ptr<BatchSession> batches_;  // null once preloaded
  // Preloaded: the batches, the order of this pass, and where it is.
  std::vector<ClickBatch> held_;
  std::vector<size_t> order_;
  size_t next_ = 0;
  bool reshuffle_ = false;
  std::mt19937_64 rng_;
};

}  // namespace sluice

#endif  // SLUICE_EXAMPLES_CLICK_INPUT_H_
