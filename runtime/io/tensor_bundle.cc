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

// An extent's length as slice keys encode it: -1 for the whole dimension.
int64_t KeyLength(const ::tensorflow::TensorSliceProto::Extent& x) {
  return x.has_length_case() == ::tensorflow::TensorSliceProto::Extent::kLength ? x.length() : -1;
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
    // Slices of partitioned tensors sit under encoded keys, which start
    // with a zero byte: they are parts of an entry, not entries.
    if (key[0] != '\0') {
      entries.push_back(
          {key, static_cast<DataType>(record.dtype()), *shape, record.slices_size() > 0});
    }
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
  if (it->second.slices_size() > 0) return ReadSliced(name, it->second);
  return ReadEntry(name, it->second);
}

absl::StatusOr<Tensor> BundleReader::ReadEntry(const std::string& name,
                                               const ::tensorflow::BundleEntryProto& e) const {
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
  if (width == 0) {
    return Corrupt(name, absl::StrCat("dtype ", DataTypeName(dtype), " is not stored"));
  }
  if (static_cast<int64_t>(bytes.size()) != shape.num_elements() * width) {
    return Corrupt(name, absl::StrCat(bytes.size(), " bytes for ", shape.DebugString(), " of ",
                                      DataTypeName(dtype)));
  }
  Tensor t(dtype, shape);
  if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

absl::StatusOr<Tensor> BundleReader::ReadSliced(const std::string& name,
                                                const ::tensorflow::BundleEntryProto& e) const {
  ASSIGN_OR_RETURN(TensorShape full, TensorShape::FromProto(e.shape()));
  const DataType dtype = static_cast<DataType>(e.dtype());
  const int width = DataTypeSize(dtype);
  if (!full.IsFullyDefined() || width == 0) {
    return absl::UnimplementedError(absl::StrCat(
        "checkpoint tensor '", name, "': slices of ", DataTypeName(dtype), " ", full.DebugString(),
        " are not assembled (numeric tensors of known shape only)"));
  }
  const int rank = full.rank();
  // Each slice once: where it goes, and its record.
  struct Part {
    std::vector<int64_t> start, length;
    const ::tensorflow::BundleEntryProto* record;
  };
  std::vector<Part> parts;
  int64_t stored = 0;
  for (const ::tensorflow::TensorSliceProto& slice : e.slices()) {
    if (slice.extent_size() != rank) return Corrupt(name, "a slice of another rank");
    Part p{std::vector<int64_t>(rank), std::vector<int64_t>(rank), nullptr};
    std::vector<int64_t> key_length(rank);
    for (int d = 0; d < rank; ++d) {
      const auto& x = slice.extent(d);
      p.start[d] = x.start();
      key_length[d] = KeyLength(x);
      p.length[d] = key_length[d] < 0 ? full.dim(d) : key_length[d];
      if (p.start[d] < 0 || p.length[d] < 0 || p.start[d] > full.dim(d) ||
          p.length[d] > full.dim(d) - p.start[d]) {
        return Corrupt(name, "a slice outside the tensor");
      }
    }
    auto it = records_.find(internal::EncodeTensorNameSlice(name, p.start, key_length));
    if (it == records_.end()) return Corrupt(name, "a slice listed but not stored");
    p.record = &it->second;
    if (p.record->size() > 0) stored += p.record->size();
    parts.push_back(std::move(p));
  }
  // The slices' stored bytes bound the tensor: nothing is allocated for a
  // declared shape they cannot fill.
  if (full.num_elements() > stored / width) {
    return Corrupt(name, absl::StrCat(full.DebugString(), " is more than its slices' ", stored,
                                      " bytes hold"));
  }
  Tensor out(dtype, full);
  int64_t covered = 0;
  for (const Part& p : parts) {
    const std::vector<int64_t>& start = p.start;
    const std::vector<int64_t>& length = p.length;
    ASSIGN_OR_RETURN(Tensor part, ReadEntry(name, *p.record));
    if (part.dtype() != dtype || part.shape() != TensorShape(length)) {
      return Corrupt(name, "a slice stored with another dtype or shape");
    }
    // Copy the slice's rows (its last dimension is contiguous in both).
    const int64_t n = part.NumElements();
    covered += n;
    if (n == 0) continue;
    const int64_t row = rank == 0 ? 1 : length[rank - 1];
    std::vector<int64_t> at(rank, 0);  // index within the slice
    const char* src = static_cast<const char*>(part.raw_data());
    char* dst = static_cast<char*>(out.raw_data());
    for (int64_t done = 0; done < n; done += row) {
      int64_t offset = 0;
      for (int d = 0; d < rank; ++d) offset = offset * full.dim(d) + start[d] + at[d];
      std::memcpy(dst + offset * width, src + done * width, row * width);
      for (int d = rank - 2; d >= 0; --d) {
        if (++at[d] < length[d]) break;
        at[d] = 0;
      }
    }
  }
  if (covered != full.num_elements()) {
    return Corrupt(name, absl::StrCat("its slices hold ", covered, " of its ", full.num_elements(),
                                      " elements"));
  }
  return out;
}

namespace internal {
namespace {

// TensorFlow's OrderedCode encodings (lib/strings/ordered_code), which order
// bytewise as their values do.
void NumIncreasing(std::string* out, uint64_t v) {
  int n = 0;
  for (uint64_t t = v; t != 0; t >>= 8) ++n;
  out->push_back(static_cast<char>(n));
  for (int i = n - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void OrderedString(std::string* out, const std::string& s) {
  for (char c : s) {
    if (c == '\0') {
      out->append("\0\xff", 2);
    } else if (c == '\xff') {
      out->append("\xff\0", 2);
    } else {
      out->push_back(c);
    }
  }
  out->append("\0\x01", 2);
}

void SignedNumIncreasing(std::string* out, int64_t v) {
  const uint64_t x = v < 0 ? ~static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (x < 64) {
    out->push_back(static_cast<char>(0x80 ^ (static_cast<uint64_t>(v) & 0xff)));
    return;
  }
  int bits = 0;
  for (uint64_t t = x; t != 0; t >>= 1) ++bits;
  const int len = (bits + 7) / 7;  // 7 bits a byte, one of them the sign
  static constexpr uint8_t kHeader[11][2] = {{0, 0},    {0x80, 0},    {0xc0, 0},   {0xe0, 0},
                                             {0xf0, 0}, {0xf8, 0},    {0xfc, 0},   {0xfe, 0},
                                             {0xff, 0}, {0xff, 0x80}, {0xff, 0xc0}};
  uint8_t buf[10];
  const uint8_t sign = v < 0 ? 0xff : 0;
  buf[0] = buf[1] = sign;
  for (int i = 0; i < 8; ++i)
    buf[2 + i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (56 - 8 * i));
  uint8_t* begin = buf + 10 - len;
  begin[0] ^= kHeader[len][0];
  begin[1] ^= kHeader[len][1];
  out->append(reinterpret_cast<const char*>(begin), len);
}

}  // namespace

std::string EncodeTensorNameSlice(const std::string& name, const std::vector<int64_t>& start,
                                  const std::vector<int64_t>& length) {
  std::string key;
  NumIncreasing(&key, 0);
  OrderedString(&key, name);
  NumIncreasing(&key, start.size());
  for (size_t d = 0; d < start.size(); ++d) {
    SignedNumIncreasing(&key, start[d]);
    SignedNumIncreasing(&key, length[d]);
  }
  return key;
}

}  // namespace internal

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
