#include "runtime/io/tensor_bundle.h"

#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "runtime/crc32c.h"
#include "runtime/io/table_file.h"

namespace sluice {
namespace {

// The whole of `path` from `offset`, `n` bytes; DataLoss when short.
absl::StatusOr<std::string> ReadRange(const std::string& path, int64_t offset, int64_t n) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (f == nullptr) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  if (std::fseek(f.get(), 0, SEEK_END) != 0)
    return absl::DataLossError(absl::StrCat("cannot seek ", path));
  const int64_t size = std::ftell(f.get());
  if (offset < 0 || n < 0 || offset > size || n > size - offset) {
    return absl::DataLossError(absl::StrCat("bytes [", offset, ", ", offset + n, ") are outside ",
                                            path, " (", size, " bytes)"));
  }
  std::string out(static_cast<size_t>(n), '\0');
  if (std::fseek(f.get(), offset, SEEK_SET) != 0 ||
      (n > 0 && std::fread(out.data(), 1, out.size(), f.get()) != out.size())) {
    return absl::DataLossError(absl::StrCat("cannot read ", n, " bytes at ", offset, " of ", path));
  }
  return out;
}

// A varint64 at *pos of `s` (advancing it); false when malformed.
bool ReadVarint64(const std::string& s, size_t* pos, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift <= 63 && *pos < s.size(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(s[(*pos)++]);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = v;
      return true;
    }
  }
  return false;
}

uint32_t LittleEndian32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

absl::Status Corrupt(const std::string& name, const std::string& what) {
  return absl::DataLossError(absl::StrCat("checkpoint tensor '", name, "': ", what));
}

// A string tensor from its stored form: varint64 lengths, then a masked
// CRC32C of the lengths, each taken as 4 little-endian bytes, then the
// strings' bytes. The entry's checksum (`entry_crc`, masked) covers the
// lengths in that 4-byte form, the stored length checksum and the strings'
// bytes (what TensorFlow computes as it writes them).
absl::StatusOr<Tensor> StringTensor(const std::string& name, const TensorShape& shape,
                                    const std::string& bytes, uint32_t entry_crc) {
  const int64_t n = shape.num_elements();
  // Each element takes at least its length's byte: a declared shape larger
  // than the bytes is corrupt before anything is allocated for it.
  if (n > static_cast<int64_t>(bytes.size())) {
    return Corrupt(name, absl::StrCat(n, " strings in ", bytes.size(), " bytes"));
  }
  Tensor t(DT_STRING, shape);
  std::vector<uint64_t> lengths(n);
  size_t pos = 0;
  uint32_t lengths_crc = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!ReadVarint64(bytes, &pos, &lengths[i]) || lengths[i] > 0xffffffffu) {
      return Corrupt(name, "a bad string length");
    }
    const uint32_t le = static_cast<uint32_t>(lengths[i]);  // little-endian hosts only
    lengths_crc = Crc32cExtend(lengths_crc, &le, 4);
  }
  if (bytes.size() - pos < 4) return Corrupt(name, "no checksum after the string lengths");
  const char* stored = bytes.data() + pos;
  if (UnmaskCrc32c(LittleEndian32(stored)) != lengths_crc) {
    return Corrupt(name, "the string lengths' checksum differs");
  }
  uint32_t crc = Crc32cExtend(lengths_crc, stored, 4);
  pos += 4;
  crc = Crc32cExtend(crc, bytes.data() + pos, bytes.size() - pos);
  if (UnmaskCrc32c(entry_crc) != crc)
    return Corrupt(name, "its bytes' checksum differs from the index's");
  std::string* out = t.data<std::string>();
  for (int64_t i = 0; i < n; ++i) {
    if (lengths[i] > bytes.size() - pos) return Corrupt(name, "a string runs past its bytes");
    out[i].assign(bytes, pos, lengths[i]);
    pos += lengths[i];
  }
  if (pos != bytes.size()) return Corrupt(name, "bytes left after the last string");
  return t;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(const std::string& prefix) {
  const std::string index = prefix + ".index";
  std::string bytes;
  {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(index.c_str(), "rb"),
                                                      &std::fclose);
    if (f == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("no TensorFlow checkpoint at ", prefix, ": cannot open ", index));
    }
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f.get())) > 0) bytes.append(buf, n);
    if (std::ferror(f.get())) return absl::DataLossError(absl::StrCat("cannot read ", index));
  }
  ASSIGN_OR_RETURN(std::vector<TableEntry> table, ReadTableFile(bytes, index));
  ::tensorflow::BundleHeaderProto header;
  bool has_header = false;
  std::map<std::string, ::tensorflow::BundleEntryProto> records;
  std::vector<Entry> entries;
  for (TableEntry& entry : table) {
    const std::string& key = entry.key;
    const std::string& value = entry.value;
    if (key.empty()) {
      if (!header.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
        return absl::DataLossError(absl::StrCat(index, ": the header record does not parse"));
      }
      has_header = true;
      continue;
    }
    ::tensorflow::BundleEntryProto record;
    if (!record.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
      return absl::DataLossError(absl::StrCat(index, ": the record of '", key, "' does not parse"));
    }
    absl::StatusOr<TensorShape> shape = TensorShape::FromProto(record.shape());
    if (!shape.ok()) return Corrupt(key, std::string(shape.status().message()));
    entries.push_back(
        {key, static_cast<DataType>(record.dtype()), *shape, record.slices_size() > 0});
    records.emplace(key, std::move(record));
  }
  if (!has_header) return absl::DataLossError(absl::StrCat(index, " has no header record"));
  if (header.endianness() != ::tensorflow::BundleHeaderProto::LITTLE) {
    return absl::UnimplementedError(absl::StrCat(prefix, " is a big-endian checkpoint"));
  }
  if (header.num_shards() < 1) {
    return absl::DataLossError(absl::StrCat(index, ": ", header.num_shards(), " data shards"));
  }
  return std::unique_ptr<BundleReader>(
      new BundleReader(prefix, std::move(header), std::move(records), std::move(entries)));
}

std::string BundleReader::DataFile(int shard) const {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix_, shard, header_.num_shards());
}

absl::StatusOr<Tensor> BundleReader::Read(const std::string& name) const {
  auto it = records_.find(name);
  if (it == records_.end()) {
    return absl::NotFoundError(absl::StrCat("no tensor '", name, "' in checkpoint ", prefix_));
  }
  const ::tensorflow::BundleEntryProto& e = it->second;
  if (e.slices_size() > 0) {
    return absl::UnimplementedError(
        absl::StrCat("checkpoint tensor '", name, "' is stored in ", e.slices_size(),
                     " slices; reading a "
                     "partitioned tensor from a TensorFlow checkpoint is not built yet"));
  }
  if (e.shard_id() < 0 || e.shard_id() >= header_.num_shards()) {
    return Corrupt(name, absl::StrCat("shard ", e.shard_id(), " of ", header_.num_shards()));
  }
  ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(e.shape()));
  if (!shape.IsFullyDefined()) return Corrupt(name, "a shape with unknown dimensions");
  const DataType dtype = static_cast<DataType>(e.dtype());
  ASSIGN_OR_RETURN(std::string bytes, ReadRange(DataFile(e.shard_id()), e.offset(), e.size()));
  if (dtype == DT_STRING) return StringTensor(name, shape, bytes, e.crc32c());
  if (UnmaskCrc32c(e.crc32c()) != Crc32c(bytes.data(), bytes.size())) {
    return Corrupt(name, "its bytes' checksum differs from the index's");
  }
  const int width = DataTypeSize(dtype);
  if (width == 0)
    return Corrupt(name, absl::StrCat("dtype ", DataTypeName(dtype), " is not stored"));
  if (static_cast<int64_t>(bytes.size()) != shape.num_elements() * width) {
    return Corrupt(name, absl::StrCat(bytes.size(), " bytes for ", shape.DebugString(), " of ",
                                      DataTypeName(dtype)));
  }
  Tensor t(dtype, shape);
  if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

namespace {

absl::Status WriteWhole(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tempstate";
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(tmp.c_str(), "wb"), &std::fclose);
  if (f == nullptr) return absl::PermissionDeniedError(absl::StrCat("cannot create ", tmp));
  if ((!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size()) ||
      std::fflush(f.get()) != 0) {
    return absl::DataLossError(absl::StrCat("cannot write ", tmp));
  }
  f.reset();
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::DataLossError(absl::StrCat("cannot rename ", tmp, " to ", path));
  }
  return absl::OkStatus();
}

void AppendVarint64(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

}  // namespace

absl::Status BundleWriter::Add(const std::string& name, const Tensor& t) {
  if (name.empty()) return absl::InvalidArgumentError("a checkpoint tensor needs a name");
  if (entries_.count(name) > 0) {
    return absl::InvalidArgumentError(absl::StrCat("checkpoint tensor '", name, "' added twice"));
  }
  ::tensorflow::BundleEntryProto e;
  e.set_dtype(static_cast<::tensorflow::DataType>(t.dtype()));
  t.shape().ToProto(e.mutable_shape());
  e.set_shard_id(0);
  e.set_offset(static_cast<int64_t>(data_.size()));
  uint32_t crc = 0;
  if (t.dtype() == DT_STRING) {
    const std::string* s = t.data<std::string>();
    const int64_t n = t.NumElements();
    uint32_t lengths_crc = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (s[i].size() > 0xffffffffu) {
        return absl::InvalidArgumentError(
            absl::StrCat("checkpoint tensor '", name, "': a string of 4 GiB or more"));
      }
      AppendVarint64(&data_, s[i].size());
      const uint32_t le = static_cast<uint32_t>(s[i].size());
      lengths_crc = Crc32cExtend(lengths_crc, &le, 4);
    }
    const uint32_t masked = MaskCrc32c(lengths_crc);
    data_.append(reinterpret_cast<const char*>(&masked), 4);
    crc = Crc32cExtend(lengths_crc, &masked, 4);
    for (int64_t i = 0; i < n; ++i) {
      data_.append(s[i]);
      crc = Crc32cExtend(crc, s[i].data(), s[i].size());
    }
  } else {
    if (DataTypeSize(t.dtype()) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("checkpoint tensor '", name, "': dtype ",
                                                     DataTypeName(t.dtype()), " is not stored"));
    }
    const char* p = static_cast<const char*>(t.raw_data());
    const size_t bytes = static_cast<size_t>(t.NumElements()) * DataTypeSize(t.dtype());
    data_.append(p, bytes);
    crc = Crc32c(p, bytes);
  }
  e.set_size(static_cast<int64_t>(data_.size()) - e.offset());
  e.set_crc32c(MaskCrc32c(crc));
  entries_.emplace(name, std::move(e));
  return absl::OkStatus();
}

absl::Status BundleWriter::Finish() {
  RETURN_IF_ERROR(WriteWhole(prefix_ + ".data-00000-of-00001", data_));
  ::tensorflow::BundleHeaderProto header;
  header.set_num_shards(1);
  header.set_endianness(::tensorflow::BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(1);  // TensorFlow's kTensorBundleVersion
  std::vector<TableEntry> table;
  table.push_back({"", header.SerializeAsString()});
  for (const auto& [name, e] : entries_) table.push_back({name, e.SerializeAsString()});
  ASSIGN_OR_RETURN(std::string index, WriteTableFile(table));
  return WriteWhole(prefix_ + ".index", index);
}

}  // namespace sluice
