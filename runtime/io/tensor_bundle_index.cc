#include "runtime/io/tensor_bundle_index.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "runtime/atomic_file.h"
#include "runtime/io/table_file.h"
#include "runtime/io/tensor_bundle.h"

namespace sluice {
namespace internal {

absl::StatusOr<BundleIndex> ReadIndex(const std::string& prefix) {
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
  BundleIndex out;
  bool has_header = false;
  for (TableEntry& entry : table) {
    const std::string& key = entry.key;
    const std::string& value = entry.value;
    if (key.empty()) {
      if (!out.header.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
        return absl::DataLossError(absl::StrCat(index, ": the header record does not parse"));
      }
      has_header = true;
      continue;
    }
    ::tensorflow::BundleEntryProto record;
    if (!record.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
      return absl::DataLossError(absl::StrCat(index, ": the record of '", key, "' does not parse"));
    }
    out.records.emplace(key, std::move(record));
  }
  if (!has_header) return absl::DataLossError(absl::StrCat(index, " has no header record"));
  if (out.header.endianness() != ::tensorflow::BundleHeaderProto::LITTLE) {
    return absl::UnimplementedError(absl::StrCat(prefix, " is a big-endian checkpoint"));
  }
  if (out.header.num_shards() < 1) {
    return absl::DataLossError(absl::StrCat(index, ": ", out.header.num_shards(), " data shards"));
  }
  return out;
}

std::string DataFileName(const std::string& prefix, int shard, int num_shards) {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix, shard, num_shards);
}

absl::Status WriteIndex(const std::string& prefix, const ::tensorflow::BundleHeaderProto& header,
                        const std::map<std::string, ::tensorflow::BundleEntryProto>& entries) {
  std::vector<TableEntry> table;
  table.reserve(entries.size() + 1);
  table.push_back({"", header.SerializeAsString()});
  for (const auto& [name, e] : entries) table.push_back({name, e.SerializeAsString()});
  ASSIGN_OR_RETURN(std::string index, WriteTableFile(table));
  return WriteFileAtomically(prefix + ".index", index);
}

::tensorflow::BundleHeaderProto BundleHeader(int num_shards) {
  ::tensorflow::BundleHeaderProto header;
  header.set_num_shards(num_shards);
  header.set_endianness(::tensorflow::BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(1);  // TensorFlow's kTensorBundleVersion
  return header;
}

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
}  // namespace sluice
