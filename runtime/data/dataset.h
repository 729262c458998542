// DatasetBase and IteratorBase: tf.data's two ideas. A dataset is an
// immutable description of a sequence of elements (each element a tuple of
// tensors, output_dtypes() and output_shapes() long), held in a DT_VARIANT
// scalar as TensorFlow holds it; an iterator is one pass over it, with a
// position that can be saved and restored.
//
//   class CountDataset : public DatasetBase { ...  // see dataset_test.cc
//     std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;
//   };
//   Tensor t = DatasetTensor(std::make_shared<CountDataset>(...));
//   ASSIGN_OR_RETURN(std::shared_ptr<const DatasetBase> ds, DatasetFromTensor(t));
//   ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, ds->MakeIterator(&ctx, "Iterator"));
//   std::vector<Tensor> element;  bool end = false;
//   while (true) {
//     RETURN_IF_ERROR(it->GetNext(&ctx, &element, &end));
//     if (end) break;
//   }
//
// End of data is `end_of_sequence`, not an error; the IteratorGetNext op
// turns it into OutOfRange("End of sequence") as TensorFlow does. Once an
// iterator has reported the end it keeps reporting it.
//
// Prefixes: an iterator's prefix names its place in the pipeline
// ("Iterator::Batch::Map"); its inputs' prefixes extend it, and Save/Restore
// keys are "<prefix>:<name>" (see iterator_state.h).
//
// Thread-safety: datasets are immutable and shared by every iterator made
// from them. An iterator's GetNext, Save and Restore are not called
// concurrently with each other (the iterator resource serializes them);
// iterators that run threads of their own lock what those threads touch.
// Ownership: a dataset is held by shared_ptr (tensors, iterators and the
// datasets built on it share it); an iterator owns its input iterators.
#ifndef SLUICE_RUNTIME_DATA_DATASET_H_
#define SLUICE_RUNTIME_DATA_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"
#include "runtime/data/iterator_context.h"
#include "runtime/data/iterator_state.h"
#include "runtime/tensor.h"
#include "runtime/variant.h"

namespace sluice {
namespace data {

using DataTypeVector = std::vector<DataType>;

// TensorFlow's cardinality constants.
inline constexpr int64_t kInfiniteCardinality = -1;
inline constexpr int64_t kUnknownCardinality = -2;

class IteratorBase {
 public:
  explicit IteratorBase(std::string prefix) : prefix_(std::move(prefix)) {}
  virtual ~IteratorBase() = default;
  IteratorBase(const IteratorBase&) = delete;
  IteratorBase& operator=(const IteratorBase&) = delete;

  // Makes the input iterators; called once by DatasetBase::MakeIterator.
  virtual absl::Status Initialize(IteratorContext* ctx) { return absl::OkStatus(); }

  // The next element into `out` (replacing its contents), or
  // *end_of_sequence = true and `out` empty. An error leaves the iterator
  // where a retry may continue (files being written) or fail again.
  virtual absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                               bool* end_of_sequence) = 0;

  // GetNext when its result is ready now (a prefetched element): true, with
  // GetNext's status in *status; false, changing nothing, when it would
  // wait or compute. The default never has one ready.
  virtual bool TryGetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end_of_sequence,
                          absl::Status* status) {
    return false;
  }

  // Writes the position under prefix() keys, inputs included; Restore, on an
  // iterator just made from the same dataset, continues from it: the
  // elements after a Save are the same as after a Restore.
  virtual absl::Status Save(IteratorStateWriter* writer) = 0;
  virtual absl::Status Restore(IteratorContext* ctx, const IteratorStateReader& reader) = 0;

  const std::string& prefix() const { return prefix_; }
  // "<prefix>:<name>", a key of this iterator's state.
  std::string Key(absl::string_view name) const { return absl::StrCat(prefix_, ":", name); }

 private:
  const std::string prefix_;
};

class DatasetBase : public VariantValue, public std::enable_shared_from_this<DatasetBase> {
 public:
  // `node` names the graph node that made the dataset (for errors).
  DatasetBase(std::string node, DataTypeVector dtypes, std::vector<TensorShape> shapes)
      : node_(std::move(node)), dtypes_(std::move(dtypes)), shapes_(std::move(shapes)) {}

  std::string TypeName() const override { return "Dataset"; }
  std::string DebugString() const override;

  // The short name of the kind ("Range", "Map"): a path element of its
  // iterators' prefixes.
  virtual std::string Name() const = 0;
  const std::string& node() const { return node_; }
  const DataTypeVector& output_dtypes() const { return dtypes_; }
  const std::vector<TensorShape>& output_shapes() const { return shapes_; }
  // The number of elements, kInfiniteCardinality or kUnknownCardinality.
  virtual int64_t Cardinality() const { return kUnknownCardinality; }

  // An iterator over the dataset, initialized, with prefix
  // "<parent_prefix>::<Name()>". Errors are Initialize's.
  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator(
      IteratorContext* ctx, absl::string_view parent_prefix) const;

 protected:
  virtual std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const = 0;

  // This dataset, shared: for iterators that must keep it alive.
  template <typename T>
  std::shared_ptr<const T> SharedAs() const {
    return std::static_pointer_cast<const T>(shared_from_this());
  }

 private:
  const std::string node_;
  const DataTypeVector dtypes_;
  const std::vector<TensorShape> shapes_;
};

// An iterator that keeps its dataset of type D alive.
template <typename D>
class DatasetIterator : public IteratorBase {
 public:
  DatasetIterator(std::shared_ptr<const D> dataset, std::string prefix)
      : IteratorBase(std::move(prefix)), dataset_(std::move(dataset)) {}
  const D* dataset() const { return dataset_.get(); }

 private:
  const std::shared_ptr<const D> dataset_;
};

// A DT_VARIANT scalar holding `dataset`.
Tensor DatasetTensor(std::shared_ptr<const DatasetBase> dataset);
// The dataset in a DT_VARIANT scalar; InvalidArgument naming what the
// tensor holds otherwise.
absl::StatusOr<std::shared_ptr<const DatasetBase>> DatasetFromTensor(const Tensor& t);

// Save/Restore of an optional input iterator (null once exhausted): writes
// "<key>_exhausted" for a null one, else the input's own state; Restore
// remakes the input from `dataset` when it was not exhausted.
absl::Status SaveInput(IteratorStateWriter* writer, const IteratorBase& owner,
                       absl::string_view key, IteratorBase* input);
absl::Status RestoreInput(IteratorContext* ctx, const IteratorStateReader& reader,
                          const IteratorBase& owner, absl::string_view key,
                          const DatasetBase& dataset, std::unique_ptr<IteratorBase>* input);

// One element (or one error) kept in an iterator's buffer, saved under
// "<prefix>:<key>.size", "<prefix>:<key>.0", ... ("<key>.code" and
// "<key>.message" for an error).
void SaveElement(IteratorStateWriter* writer, const IteratorBase& owner, absl::string_view key,
                 const std::vector<Tensor>& element);
absl::StatusOr<std::vector<Tensor>> RestoreElement(const IteratorStateReader& reader,
                                                   const IteratorBase& owner,
                                                   absl::string_view key);
void SaveStatus(IteratorStateWriter* writer, const IteratorBase& owner, absl::string_view key,
                const absl::Status& status);
absl::StatusOr<absl::Status> RestoreStatus(const IteratorStateReader& reader,
                                           const IteratorBase& owner, absl::string_view key);

}  // namespace data
}  // namespace sluice

#endif  // SLUICE_RUNTIME_DATA_DATASET_H_
