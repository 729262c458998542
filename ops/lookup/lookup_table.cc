#include "ops/lookup/lookup_table.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {

LookupTable::LookupTable(Kind kind, DataType key_dtype, DataType value_dtype,
                         TensorShape value_shape, std::string name)
    : kind_(kind),
      key_dtype_(key_dtype),
      value_dtype_(value_dtype),
      value_shape_(std::move(value_shape)),
      value_elements_(value_shape_.num_elements()),
      name_(std::move(name)) {
  absl::MutexLock lock(&mu_);
  initialized_ = kind_ != Kind::kHash;
}

absl::Status LookupTable::SetReservedKeys(const Tensor& empty_key, const Tensor& deleted_key) {
  if (empty_key.NumElements() != 1 || deleted_key.NumElements() != 1) {
    return absl::InvalidArgumentError("empty_key and deleted_key must be scalars");
  }
  if (empty_key.dtype() != key_dtype_ || deleted_key.dtype() != key_dtype_) {
    return absl::InvalidArgumentError("empty_key and deleted_key must be of the key dtype");
  }
  ASSIGN_OR_RETURN(std::string empty, KeyAt(empty_key, 0));
  ASSIGN_OR_RETURN(std::string deleted, KeyAt(deleted_key, 0));
  if (empty == deleted) {
    return absl::InvalidArgumentError("Empty and deleted keys must have different values");
  }
  empty_key_ = std::move(empty);
  deleted_key_ = std::move(deleted);
  return absl::OkStatus();
}

std::string LookupTable::DebugString() const {
  return absl::StrCat("lookup table '", name_, "' (", DataTypeName(key_dtype_), " -> ",
                      DataTypeName(value_dtype_), ")");
}

absl::StatusOr<std::string> LookupTable::KeyAt(const Tensor& keys, int64_t i) const {
  if (keys.dtype() != key_dtype_) {
    return absl::InvalidArgumentError(absl::StrCat("Key must be type ", DataTypeName(key_dtype_),
                                                   " but got ", DataTypeName(keys.dtype())));
  }
  if (key_dtype_ == DT_STRING) return keys.data<std::string>()[i];
  const int64_t k = key_dtype_ == DT_INT32 ? keys.data<int32_t>()[i] : keys.data<int64_t>()[i];
  return std::string(reinterpret_cast<const char*>(&k), sizeof(k));
}

std::string LookupTable::ValueAt(const Tensor& values, int64_t i) const {
  if (value_dtype_ == DT_STRING) return values.data<std::string>()[i];
  const size_t row = static_cast<size_t>(value_elements_) * DataTypeSize(value_dtype_);
  return std::string(static_cast<const char*>(values.raw_data()) + i * row, row);
}

void LookupTable::WriteValue(const std::string& encoded, Tensor* out, int64_t i) const {
  if (value_dtype_ == DT_STRING) {
    out->data<std::string>()[i] = encoded;
    return;
  }
  std::memcpy(static_cast<char*>(out->raw_data()) + i * encoded.size(), encoded.data(),
              encoded.size());
}

absl::StatusOr<int64_t> LookupTable::CheckPairs(const Tensor& keys, const Tensor& values) const {
  if (values.dtype() != value_dtype_) {
    return absl::InvalidArgumentError(absl::StrCat("Value must be type ",
                                                   DataTypeName(value_dtype_), " but got ",
                                                   DataTypeName(values.dtype())));
  }
  if (value_dtype_ == DT_STRING && value_elements_ != 1) {
    return absl::UnimplementedError("string values of more than one element per key");
  }
  const int64_t n = keys.NumElements();
  if (values.NumElements() != n * value_elements_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expected shape ", keys.shape().DebugString(), " + ", value_shape_.DebugString(),
        " for values, got ", values.shape().DebugString()));
  }
  return n;
}

absl::Status LookupTable::InsertLocked(const Tensor& keys, const Tensor& values, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(std::string key, KeyAt(keys, i));
    if (empty_key_.has_value() && key == *empty_key_) {
      return absl::InvalidArgumentError("Using the empty_key as a table key is not allowed");
    }
    if (deleted_key_.has_value() && key == *deleted_key_) {
      return absl::InvalidArgumentError("Using the deleted_key as a table key is not allowed");
    }
    map_.insert_or_assign(std::move(key), ValueAt(values, i));
  }
  return absl::OkStatus();
}

absl::Status LookupTable::Find(const Tensor& keys, const Tensor& default_value, Tensor* out) {
  const bool broadcast = default_value.NumElements() == 1;
  if (default_value.dtype() != value_dtype_ ||
      (!broadcast && default_value.NumElements() != value_elements_)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "default_value must be a ", DataTypeName(value_dtype_), " scalar or of shape ",
        value_shape_.DebugString(), ", got ", default_value.shape().DebugString()));
  }
  std::string fill;
  if (broadcast && value_elements_ != 1 && value_dtype_ != DT_STRING) {
    const std::string one = std::string(static_cast<const char*>(default_value.raw_data()),
                                        DataTypeSize(value_dtype_));
    for (int64_t k = 0; k < value_elements_; ++k) fill += one;
  } else {
    fill = ValueAt(default_value, 0);
  }
  absl::MutexLock lock(&mu_);
  if (!initialized_) return absl::FailedPreconditionError("Table not initialized.");
  for (int64_t i = 0; i < keys.NumElements(); ++i) {
    ASSIGN_OR_RETURN(std::string key, KeyAt(keys, i));
    if (empty_key_.has_value() && (key == *empty_key_ || key == *deleted_key_)) {
      return absl::InvalidArgumentError(
          "Using the empty_key or deleted_key as a table key is not allowed");
    }
    auto it = map_.find(key);
    WriteValue(it == map_.end() ? fill : it->second, out, i);
  }
  return absl::OkStatus();
}

absl::Status LookupTable::Insert(const Tensor& keys, const Tensor& values) {
  if (kind_ == Kind::kHash) {
    return absl::FailedPreconditionError(
        absl::StrCat(DebugString(), " is immutable: fill it with an initializer"));
  }
  ASSIGN_OR_RETURN(int64_t n, CheckPairs(keys, values));
  absl::MutexLock lock(&mu_);
  return InsertLocked(keys, values, n);
}

absl::Status LookupTable::Import(const Tensor& keys, const Tensor& values) {
  ASSIGN_OR_RETURN(int64_t n, CheckPairs(keys, values));
  absl::MutexLock lock(&mu_);
  map_.clear();
  // A dense table's own export holds empty buckets under the empty key.
  if (empty_key_.has_value()) {
    absl::flat_hash_map<std::string, std::string> kept;
    for (int64_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(std::string key, KeyAt(keys, i));
      if (key == *empty_key_ || key == *deleted_key_) continue;
      kept.insert_or_assign(std::move(key), ValueAt(values, i));
    }
    map_ = std::move(kept);
  } else {
    RETURN_IF_ERROR(InsertLocked(keys, values, n));
  }
  initialized_ = true;
  return absl::OkStatus();
}

absl::Status LookupTable::Initialize(const Tensor& keys, const Tensor& values) {
  ASSIGN_OR_RETURN(int64_t n, CheckPairs(keys, values));
  absl::MutexLock lock(&mu_);
  if (kind_ == Kind::kHash && initialized_) return absl::OkStatus();  // the first one holds
  RETURN_IF_ERROR(InsertLocked(keys, values, n));
  initialized_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::pair<Tensor, Tensor>> LookupTable::Export() {
  absl::MutexLock lock(&mu_);
  const int64_t n = static_cast<int64_t>(map_.size());
  Tensor keys(key_dtype_, TensorShape({n}));
  std::vector<int64_t> dims = {n};
  for (int d = 0; d < value_shape_.rank(); ++d) dims.push_back(value_shape_.dim(d));
  Tensor values(value_dtype_, TensorShape(dims));
  int64_t i = 0;
  for (const auto& [key, value] : map_) {
    if (key_dtype_ == DT_STRING) {
      keys.data<std::string>()[i] = key;
    } else {
      int64_t k;
      std::memcpy(&k, key.data(), sizeof(k));
      if (key_dtype_ == DT_INT32) {
        keys.data<int32_t>()[i] = static_cast<int32_t>(k);
      } else {
        keys.data<int64_t>()[i] = k;
      }
    }
    WriteValue(value, &values, i);
    ++i;
  }
  return std::make_pair(std::move(keys), std::move(values));
}

int64_t LookupTable::Size() {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(map_.size());
}

}  // namespace sluice
