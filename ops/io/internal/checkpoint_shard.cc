#include "ops/io/internal/checkpoint_shard.h"

#include <bit>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/io/internal/tensor_slice.h"
#include "runtime/atomic_file.h"
#include "runtime/crc32c.h"
#include "runtime/io/tensor_slice_file.h"

namespace sluice {
namespace internal {
namespace {

static_assert(std::endian::native == std::endian::little,
              "checkpoint shards store raw little-endian tensor data");

constexpr size_t kHeaderSize = 8 + 4;
constexpr size_t kFooterSize = 8 + 4 + 8;

template <typename T>
void Put(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out->append(b, sizeof(T));
}

bool Storable(DataType t) { return t == DT_STRING || DataTypeSize(t) > 0; }

// A crc-accumulating sink over the atomic writer.
class ShardSink {
 public:
  explicit ShardSink(AtomicFileWriter* w) : w_(w) {}
  absl::Status Append(absl::string_view data) {
    crc_ = Crc32cExtend(crc_, data.data(), data.size());
    return w_->Append(data);
  }
  uint32_t crc() const { return crc_; }

 private:
  AtomicFileWriter* w_;
  uint32_t crc_ = 0;
};

absl::Status WriteEntry(const ShardEntry& e, ShardSink* sink) {
  const Tensor& t = e.tensor;
  std::string head;
  Put<uint32_t>(&head, static_cast<uint32_t>(e.name.size()));
  head += e.name;
  Put<int32_t>(&head, static_cast<int32_t>(t.dtype()));
  Put<uint32_t>(&head, static_cast<uint32_t>(t.dims()));
  for (int i = 0; i < t.dims(); ++i) Put<int64_t>(&head, t.dim_size(i));
  std::string strings;  // the encoded data of a string tensor
  absl::string_view data;
  if (t.dtype() == DT_STRING) {
    for (const std::string& s : t.flat<std::string>()) {
      Put<uint64_t>(&strings, s.size());
      strings += s;
    }
    data = strings;
  } else {
    data = absl::string_view(static_cast<const char*>(t.raw_data()), t.TotalBytes());
  }
  Put<uint64_t>(&head, data.size());
  uint32_t crc = Crc32cExtend(Crc32c(head.data(), head.size()), data.data(), data.size());
  RETURN_IF_ERROR(sink->Append(head));
  RETURN_IF_ERROR(sink->Append(data));
  std::string tail;
  Put<uint32_t>(&tail, MaskCrc32c(crc));
  return sink->Append(tail);
}

// Bounds-checked reads over the file's bytes.
class Cursor {
 public:
  explicit Cursor(absl::string_view bytes) : bytes_(bytes) {}
  size_t pos() const { return pos_; }
  size_t left() const { return bytes_.size() - pos_; }
  template <typename T>
  bool Get(T* v) {
    if (left() < sizeof(T)) return false;
    std::memcpy(v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Take(uint64_t n, absl::string_view* out) {
    if (left() < n) return false;
    *out = bytes_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return true;
  }

 private:
  absl::string_view bytes_;
  size_t pos_ = 0;
};

absl::Status DecodeData(absl::string_view data, Tensor* t) {
  if (t->dtype() != DT_STRING) {
    if (data.size() != t->TotalBytes()) {
      return absl::DataLossError(
          absl::StrCat("holds ", data.size(), " data bytes; its ", DataTypeName(t->dtype()),
                       " shape ", t->shape().DebugString(), " needs ", t->TotalBytes()));
    }
    if (!data.empty()) std::memcpy(t->raw_data(), data.data(), data.size());
    return absl::OkStatus();
  }
  Cursor c(data);
  for (std::string& s : t->flat<std::string>()) {
    uint64_t n;
    absl::string_view bytes;
    if (!c.Get(&n) || !c.Take(n, &bytes)) {
      return absl::DataLossError("has truncated string data");
    }
    s.assign(bytes.data(), bytes.size());
  }
  if (c.left() != 0) return absl::DataLossError("has bytes past its strings");
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteCheckpointShard(const std::string& path, absl::Span<const ShardEntry> entries) {
  absl::flat_hash_set<absl::string_view> seen;
  for (const ShardEntry& e : entries) {
    if (!seen.insert(e.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint shard '", path, "': tensor name '", e.name, "' appears twice"));
    }
    if (!e.tensor.IsInitialized() || !Storable(e.tensor.dtype())) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint shard '", path, "': tensor '", e.name, "' of type ",
                       DataTypeName(e.tensor.dtype()), " cannot be saved"));
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> writer, AtomicFileWriter::Create(path));
  ShardSink sink(writer.get());
  std::string header(kShardMagic, 8);
  Put<uint32_t>(&header, kShardVersion);
  RETURN_IF_ERROR(sink.Append(header));
  for (const ShardEntry& e : entries) RETURN_IF_ERROR(WriteEntry(e, &sink));
  std::string count;
  Put<uint64_t>(&count, entries.size());
  RETURN_IF_ERROR(sink.Append(count));
  std::string footer;
  Put<uint32_t>(&footer, MaskCrc32c(sink.crc()));
  footer.append(kShardEndMagic, 8);
  RETURN_IF_ERROR(writer->Append(footer));
  return writer->Commit();
}

absl::StatusOr<CheckpointShard> CheckpointShard::Read(const std::string& path,
                                                      Allocator* allocator) {
  if (allocator == nullptr) allocator = DefaultCpuAllocator();
  absl::StatusOr<std::string> file = ReadFileToString(path);
  if (!file.ok()) {
    if (absl::IsNotFound(file.status())) {
      return absl::NotFoundError(absl::StrCat("checkpoint shard '", path, "' does not exist"));
    }
    return file.status();
  }
  return Parse(*file, path, allocator);
}

absl::StatusOr<CheckpointShard> CheckpointShard::Parse(absl::string_view bytes,
                                                       const std::string& path,
                                                       Allocator* allocator) {
  if (allocator == nullptr) allocator = DefaultCpuAllocator();
  if (IsTableFile(bytes)) return ParseTensorSlices(bytes, path, allocator);
  auto loss = [&path](absl::string_view what) {
    return absl::DataLossError(absl::StrCat("checkpoint shard '", path, "' ", what));
  };
  if (bytes.size() < kHeaderSize + kFooterSize) {
    return loss(absl::StrCat("is truncated: ", bytes.size(), " bytes"));
  }
  if (bytes.substr(0, 8) != absl::string_view(kShardMagic, 8)) {
    return loss("is not a Sluice checkpoint shard (bad magic)");
  }
  if (bytes.substr(bytes.size() - 8) != absl::string_view(kShardEndMagic, 8)) {
    return loss("is truncated (no footer)");
  }
  Cursor footer(bytes.substr(bytes.size() - kFooterSize));
  uint64_t count = 0;
  uint32_t stored_file_crc = 0;
  footer.Get(&count);
  footer.Get(&stored_file_crc);

  CheckpointShard shard;
  shard.path_ = path;
  const size_t entries_end = bytes.size() - kFooterSize;
  Cursor c(bytes.substr(0, entries_end));
  uint32_t version = 0;
  absl::string_view skip;
  c.Take(8, &skip);
  c.Get(&version);
  if (version != kShardVersion) {
    return loss(absl::StrCat("has format version ", version, "; this build reads ", kShardVersion));
  }
  for (uint64_t k = 0; k < count; ++k) {
    const size_t start = c.pos();
    uint32_t name_len = 0;
    absl::string_view name;
    if (!c.Get(&name_len) || !c.Take(name_len, &name)) {
      return loss(absl::StrCat("is truncated or corrupt in entry ", k, " of ", count));
    }
    auto bad = [&](absl::string_view what) {
      return loss(absl::StrCat("entry ", k, " (tensor '", name, "') ", what));
    };
    int32_t dtype_raw = 0;
    uint32_t rank = 0;
    if (!c.Get(&dtype_raw) || !c.Get(&rank)) return bad("is truncated");
    if (rank > 64) return bad(absl::StrCat("has rank ", rank));
    std::vector<int64_t> dims(rank);
    for (int64_t& d : dims) {
      if (!c.Get(&d)) return bad("is truncated");
      if (d < 0) return bad("has a negative dimension");
    }
    uint64_t data_len = 0;
    absl::string_view data;
    uint32_t stored_crc = 0;
    if (!c.Get(&data_len) || !c.Take(data_len, &data) || !c.Get(&stored_crc)) {
      return bad("is truncated");
    }
    const absl::string_view record = bytes.substr(start, c.pos() - 4 - start);
    if (UnmaskCrc32c(stored_crc) != Crc32c(record.data(), record.size())) {
      return bad("is corrupt (checksum mismatch)");
    }
    const auto dtype = static_cast<DataType>(dtype_raw);
    if (!::tensorflow::DataType_IsValid(dtype_raw) || !Storable(dtype)) {
      return bad(absl::StrCat("has unsupported dtype ", dtype_raw));
    }
    TensorShape shape{absl::MakeConstSpan(dims)};
    if (shape.num_elements() < 0) return bad("has too many elements");
    if (dtype == DT_STRING && static_cast<uint64_t>(shape.num_elements()) > data_len / 8) {
      return bad("has truncated string data");
    }
    if (dtype != DT_STRING &&
        static_cast<uint64_t>(shape.num_elements()) * DataTypeSize(dtype) != data_len) {
      return bad(absl::StrCat("holds ", data_len, " data bytes; its ", DataTypeName(dtype),
                              " shape ", shape.DebugString(), " needs ",
                              shape.num_elements() * DataTypeSize(dtype)));
    }
    ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(allocator, dtype, shape));
    absl::Status s = DecodeData(data, &t);
    if (!s.ok()) return bad(s.message());
    std::string key(name);
    if (!shard.tensors_.emplace(key, std::move(t)).second) return bad("repeats a tensor name");
    shard.names_.push_back(std::move(key));
  }
  if (c.left() != 0) {
    return loss(
        absl::StrCat("is corrupt: ", c.left(), " unexpected bytes after ", count, " entries"));
  }
  const uint32_t file_crc = Crc32c(bytes.data(), bytes.size() - kFooterSize + 8);
  if (UnmaskCrc32c(stored_file_crc) != file_crc) {
    return loss("is corrupt (file checksum mismatch)");
  }
  return shard;
}

absl::StatusOr<CheckpointShard> CheckpointShard::ParseTensorSlices(absl::string_view bytes,
                                                                   const std::string& path,
                                                                   Allocator* allocator) {
  ASSIGN_OR_RETURN(std::vector<TensorSliceRecord> records,
                   ParseTensorSliceFile(bytes, path, allocator));
  CheckpointShard shard;
  shard.path_ = path;
  for (TensorSliceRecord& r : records) {
    const ShapeAndSlice slice{r.full_shape, r.slice.start, r.slice.length};
    std::string key = slice.IsFull() ? r.name : SliceEntryName(r.name, slice);
    if (!shard.tensors_.emplace(key, std::move(r.value)).second) {
      return absl::DataLossError(
          absl::StrCat("V1 checkpoint file '", path, "' holds tensor '", r.name, "' twice"));
    }
    shard.names_.push_back(std::move(key));
  }
  return shard;
}

absl::StatusOr<Tensor> CheckpointShard::Get(absl::string_view name, DataType dtype) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    return absl::NotFoundError(
        absl::StrCat("tensor '", name, "' not found in checkpoint shard '", path_, "'"));
  }
  if (it->second.dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", name, "' in checkpoint shard '", path_, "' has type ",
        DataTypeName(it->second.dtype()), ", not the requested ", DataTypeName(dtype)));
  }
  return it->second;
}

const Tensor* CheckpointShard::Find(absl::string_view name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

}  // namespace internal
}  // namespace sluice
