// LookupTable: the state behind TensorFlow's table ops (lookup_ops.h), a
// map from keys (int32, int64 or string) to values (numbers, bools or
// strings; with a shape per key for dense tables), kept in a ResourceMgr.
//
//   LookupTable t(LookupTable::Kind::kMutable, DT_STRING, DT_INT64, TensorShape({}), "words");
//   RETURN_IF_ERROR(t.Insert(keys, values));
//   RETURN_IF_ERROR(t.Find(query, default_value, &out));  // out: query's shape + value_shape
//
// Kinds, as TensorFlow's:
//   kHash        HashTableV2: filled once by an initializer; Find before
//                that is FailedPrecondition "Table not initialized."; a later
//                initialization is a no-op (the first one holds)
//   kMutable     MutableHashTableV2: Insert / Import / Export at any time
//   kDense       MutableDenseHashTableV2: the same with a value shape and two
//                reserved keys (empty_key, deleted_key) that may not be
//                stored or looked up
// Why not TensorFlow's open-addressing layout for kDense: its Export lists
// buckets in the order of its own hash; this one exports the stored keys
// (Import takes either).
//
// Thread-safe: every method locks the table.
#ifndef SLUICE_OPS_LOOKUP_LOOKUP_TABLE_H_
#define SLUICE_OPS_LOOKUP_LOOKUP_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "runtime/resource_mgr.h"
#include "runtime/tensor.h"

namespace sluice {

class LookupTable : public ResourceBase {
 public:
  enum class Kind { kHash, kMutable, kDense };

  LookupTable(Kind kind, DataType key_dtype, DataType value_dtype, TensorShape value_shape,
              std::string name);
  // kDense: the reserved keys (scalars of the key dtype).
  absl::Status SetReservedKeys(const Tensor& empty_key, const Tensor& deleted_key);

  std::string DebugString() const override;
  DataType key_dtype() const { return key_dtype_; }
  DataType value_dtype() const { return value_dtype_; }
  const TensorShape& value_shape() const { return value_shape_; }

  // out: allocated by the caller as keys' shape + value_shape, value dtype.
  // A missing key gets `default_value` (a scalar, or one value's shape).
  absl::Status Find(const Tensor& keys, const Tensor& default_value, Tensor* out);
  absl::Status Insert(const Tensor& keys, const Tensor& values);
  // Replaces the contents.
  absl::Status Import(const Tensor& keys, const Tensor& values);
  // kHash: the initializer's contents, once (later calls change nothing).
  absl::Status Initialize(const Tensor& keys, const Tensor& values);
  // Every (key, value), in no particular order.
  absl::StatusOr<std::pair<Tensor, Tensor>> Export();
  int64_t Size();

 private:
  // keys and values checked against the table's dtypes and shapes; the
  // number of keys.
  absl::StatusOr<int64_t> CheckPairs(const Tensor& keys, const Tensor& values) const;
  absl::StatusOr<std::string> KeyAt(const Tensor& keys, int64_t i) const;
  std::string ValueAt(const Tensor& values, int64_t i) const;
  void WriteValue(const std::string& encoded, Tensor* out, int64_t i) const;
  absl::Status InsertLocked(const Tensor& keys, const Tensor& values, int64_t n)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Kind kind_;
  const DataType key_dtype_;
  const DataType value_dtype_;
  const TensorShape value_shape_;
  const int64_t value_elements_;
  const std::string name_;
  std::optional<std::string> empty_key_, deleted_key_;  // kDense, encoded

  absl::Mutex mu_;
  bool initialized_ ABSL_GUARDED_BY(mu_) = false;
  // Keys and values encoded as bytes (a number's bytes, widened to 64 bits
  // for int32 keys; a string as itself).
  absl::flat_hash_map<std::string, std::string> map_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_OPS_LOOKUP_LOOKUP_TABLE_H_
