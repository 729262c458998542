// A C++ builder for tf.data input pipelines: each call adds the node
// TensorFlow's Python API adds (same op, inputs and attrs), so a graph built
// here and one TensorFlow wrote run the same.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   data::Dataset ds = data::TFRecordDataset(s, {"train-0.tfrecord", "train-1.tfrecord"})
//                          .Map(parse_fn, {{DT_FLOAT, DT_INT64}, {{784}, {}}},
//                               {.num_parallel_calls = -1})
//                          .Shuffle(10000, /*seed=*/7)
//                          .Batch(64, /*drop_remainder=*/true)
//                          .Prefetch(2);
//   data::Iterator it = ds.MakeInitializableIterator();
//   std::vector<Output> next = it.GetNext();     // [64,784] float, [64] int64
//   // session: run it.initializer() once, then fetch `next` each step;
//   // OutOfRange ("End of sequence") ends the data.
//
// Functions (Map's `fn`, Filter's `predicate`, ...) are names in the graph's
// function library with their attrs (a NameAttrList); the builder cannot
// read their signatures, so Map / FlatMap / Interleave take the element
// spec they produce.
//
// Seeds follow TensorFlow without a graph-level seed: Shuffle(n, seed)
// writes seed = 87654321 (TF's default graph seed), seed2 = seed; no seed
// writes (0, 0): fresh seeds each time the dataset is made.
//
// Errors: recorded in the scope (Scope::status()), as every wrapper's.
// Thread-compatible, as Scope. Ownership: a Dataset is a value (a scope and
// a node's output); copies name the same node.
#ifndef SLUICE_OPS_DATA_DATASET_BUILDER_H_
#define SLUICE_OPS_DATA_DATASET_BUILDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "graph/proto/attr_value.pb.h"
#include "graph/scope.h"

namespace sluice {
namespace data {

// What each element of a dataset holds.
struct ElementSpec {
  std::vector<DataType> dtypes;
  std::vector<TensorShape> shapes;  // empty: unknown shapes
};

struct MapOptions {
  // 0: MapDataset (one call at a time, on the consumer's thread); n > 0 or
  // -1 (AUTOTUNE): ParallelMapDatasetV2 with n calls at once.
  int64_t num_parallel_calls = 0;
  bool deterministic = true;
  bool preserve_cardinality = true;  // TF 2's default
};

struct InterleaveOptions {
  int64_t cycle_length = -1;  // -1: AUTOTUNE
  int64_t block_length = 1;
  // 0: InterleaveDataset; otherwise ParallelInterleaveDatasetV4.
  int64_t num_parallel_calls = 0;
  bool deterministic = true;
};

class Iterator;

class Dataset {
 public:
  Dataset(Scope scope, Output handle, ElementSpec spec)
      : scope_(std::move(scope)), handle_(handle), spec_(std::move(spec)) {}

  // The DT_VARIANT dataset tensor.
  const Output& handle() const { return handle_; }
  const ElementSpec& spec() const { return spec_; }
  const Scope& scope() const { return scope_; }
  // Another scope for the nodes this dataset's next calls add (a name, a device).
  Dataset WithScope(Scope scope) const { return Dataset(std::move(scope), handle_, spec_); }

  Dataset Map(const ::tensorflow::NameAttrList& fn, ElementSpec out,
              const MapOptions& options = {}, absl::Span<const Output> captured = {}) const;
  Dataset Filter(const ::tensorflow::NameAttrList& predicate,
                 absl::Span<const Output> captured = {}) const;
  Dataset FlatMap(const ::tensorflow::NameAttrList& fn, ElementSpec out,
                  absl::Span<const Output> captured = {}) const;
  Dataset Interleave(const ::tensorflow::NameAttrList& fn, ElementSpec out,
                     const InterleaveOptions& options = {},
                     absl::Span<const Output> captured = {}) const;

  Dataset Batch(int64_t batch_size, bool drop_remainder = false) const;
  // padded_shapes: per component, -1 dims pad to the batch's largest;
  // padding_values: per component, a scalar (empty: zeros / empty strings).
  Dataset PaddedBatch(int64_t batch_size, const std::vector<std::vector<int64_t>>& padded_shapes,
                      absl::Span<const Output> padding_values = {},
                      bool drop_remainder = false) const;
  Dataset Shuffle(int64_t buffer_size, std::optional<int64_t> seed = std::nullopt,
                  bool reshuffle_each_iteration = true) const;
  Dataset ShuffleAndRepeat(int64_t buffer_size, int64_t count = -1,
                           std::optional<int64_t> seed = std::nullopt) const;
  Dataset Repeat(int64_t count = -1) const;
  Dataset Take(int64_t count) const;
  Dataset Skip(int64_t count) const;
  Dataset Shard(int64_t num_shards, int64_t index) const;
  Dataset Prefetch(int64_t buffer_size = -1) const;
  Dataset Cache(const std::string& filename = "") const;
  Dataset Concatenate(const Dataset& other) const;

  // IteratorV2 (shared_name "" : private to the node) and MakeIterator.
  Iterator MakeInitializableIterator(const std::string& shared_name = "") const;

 private:
  Dataset Unary(const char* op, std::vector<Input> inputs, ElementSpec out) const;

  Scope scope_;
  Output handle_;
  ElementSpec spec_;
};

class Iterator {
 public:
  Iterator(Scope scope, Output handle, Node* initializer, ElementSpec spec)
      : scope_(std::move(scope)), handle_(handle), initializer_(initializer), spec_(std::move(spec)) {}

  const Output& handle() const { return handle_; }
  // MakeIterator: run it to start (or restart) the pass over the dataset;
  // nullptr for a OneShotIterator.
  Node* initializer() const { return initializer_; }
  // IteratorGetNext: one output per component.
  std::vector<Output> GetNext() const;
  Output ToStringHandle() const;
  // SerializeIterator: the position as a variant (see runtime/data/iterator_state.h).
  Output Serialize() const;
  // DeserializeIterator: continue from `state` (run the initializer first).
  Node* Deserialize(Input state) const;

 private:
  Scope scope_;
  Output handle_;
  Node* initializer_;
  ElementSpec spec_;
};

// Sources. File readers default to TensorFlow's 256 KiB read buffer (the
// value its Python API writes into the graph).
inline constexpr int64_t kDefaultReaderBufferSize = 256 * 1024;
Dataset Range(const Scope& scope, int64_t start, int64_t stop, int64_t step = 1);
// One element: `components` as they are (TensorDataset).
Dataset Tensors(const Scope& scope, absl::Span<const Output> components);
// One element per row of `components` (TensorSliceDataset).
Dataset TensorSlices(const Scope& scope, absl::Span<const Output> components);
// Files: a string scalar or vector. compression: "", "ZLIB", "GZIP".
Dataset TFRecordDataset(const Scope& scope, Input filenames, const std::string& compression = "",
                        int64_t buffer_size = kDefaultReaderBufferSize);
Dataset TextLineDataset(const Scope& scope, Input filenames, const std::string& compression = "",
                        int64_t buffer_size = kDefaultReaderBufferSize);
Dataset FixedLengthRecordDataset(const Scope& scope, Input filenames, int64_t record_bytes,
                                 int64_t header_bytes = 0, int64_t footer_bytes = 0,
                                 int64_t buffer_size = kDefaultReaderBufferSize);
Dataset Zip(const Scope& scope, absl::Span<const Dataset> datasets);

// OneShotIterator, as TF 1's make_one_shot_iterator() writes it: its first
// run calls `dataset_factory` (a library function of no arguments returning
// the dataset, the pipeline's nodes inside it) and starts the pass; no
// initializer to run (initializer() is nullptr).
Iterator OneShotIterator(const Scope& scope, const ::tensorflow::NameAttrList& dataset_factory,
                         ElementSpec spec, const std::string& shared_name = "");

}  // namespace data
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_DATASET_BUILDER_H_
