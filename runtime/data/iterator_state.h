// The saved position of an iterator (TensorFlow's SerializeIterator /
// DeserializeIterator): a map from keys to tensors. Each iterator writes its
// own keys under its prefix ("Iterator::Batch::Map::Range:next") and reads
// them back in Restore; an iterator in the middle of a pipeline saves its
// input's state beside its own (a shuffle buffer, a prefetched element).
//
//   IteratorStateWriter w;
//   RETURN_IF_ERROR(iterator->Save(&w));
//   std::string bytes = EncodeIteratorState(w.values());   // to a file
//   ...
//   ASSIGN_OR_RETURN(IteratorStateMap m, DecodeIteratorState(bytes));
//   IteratorStateReader r(std::move(m));
//   RETURN_IF_ERROR(fresh_iterator->Restore(&ctx, &r));
//
// In a graph the state travels as a DT_VARIANT scalar holding an
// IteratorStateValue; EncodeIteratorState gives its bytes for a file and
// IteratorStateTensor makes the variant back from them (to feed
// DeserializeIterator).
//
// Errors: NotFound naming the key when Restore asks for a key the state
// lacks (state of another pipeline); InvalidArgument for a value of the
// wrong kind and for bytes that are not an encoded state.
// Thread-compatible. Ownership: writer and reader own their tensors (which
// share buffers with the iterator's).
#ifndef SLUICE_RUNTIME_DATA_ITERATOR_STATE_H_
#define SLUICE_RUNTIME_DATA_ITERATOR_STATE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/tensor.h"
#include "runtime/variant.h"

namespace sluice {
namespace data {

// Ordered, so that an encoding is the same for the same state.
using IteratorStateMap = std::map<std::string, Tensor, std::less<>>;

class IteratorStateWriter {
 public:
  void WriteInt(absl::string_view key, int64_t value);
  void WriteString(absl::string_view key, absl::string_view value);
  // A tensor of a fixed-size dtype or DT_STRING (not a variant).
  void WriteTensor(absl::string_view key, Tensor value);

  const IteratorStateMap& values() const { return values_; }
  IteratorStateMap release() { return std::move(values_); }

 private:
  IteratorStateMap values_;
};

class IteratorStateReader {
 public:
  explicit IteratorStateReader(IteratorStateMap values) : values_(std::move(values)) {}

  bool Contains(absl::string_view key) const { return values_.find(key) != values_.end(); }
  absl::StatusOr<int64_t> ReadInt(absl::string_view key) const;
  absl::StatusOr<std::string> ReadString(absl::string_view key) const;
  absl::StatusOr<Tensor> ReadTensor(absl::string_view key) const;

 private:
  IteratorStateMap values_;
};

// Bytes of a state: "SLUICEIT1", then per key its length and bytes and its
// tensor as a serialized TensorProto (length-prefixed).
std::string EncodeIteratorState(const IteratorStateMap& values);
absl::StatusOr<IteratorStateMap> DecodeIteratorState(absl::string_view bytes);

// SerializeIterator's output: a saved state as a variant value.
class IteratorStateValue : public VariantValue {
 public:
  explicit IteratorStateValue(IteratorStateMap values) : values_(std::move(values)) {}
  std::string TypeName() const override { return "IteratorState"; }
  std::string DebugString() const override;
  const IteratorStateMap& values() const { return values_; }

 private:
  IteratorStateMap values_;
};

// A DT_VARIANT scalar holding `values`.
Tensor IteratorStateTensor(IteratorStateMap values);

// A fetched SerializeIterator output to a file (whole or not at all: a
// crash keeps the previous file), and back as a tensor to feed
// DeserializeIterator: how a restarted worker continues its shard.
//   RETURN_IF_ERROR(WriteIteratorStateFile(dir + "/input.state", fetched[0]));
//   ASSIGN_OR_RETURN(Tensor state, ReadIteratorStateFile(dir + "/input.state"));
absl::Status WriteIteratorStateFile(const std::string& path, const Tensor& state);
absl::StatusOr<Tensor> ReadIteratorStateFile(const std::string& path);
// The state in a DT_VARIANT scalar; InvalidArgument for anything else.
absl::StatusOr<const IteratorStateValue*> IteratorStateFromTensor(const Tensor& t);

}  // namespace data
}  // namespace sluice

#endif  // SLUICE_RUNTIME_DATA_ITERATOR_STATE_H_
