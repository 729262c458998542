#include "runtime/io/table_file.h"

#include <snappy.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/crc32c.h"

namespace sluice {
namespace {

constexpr uint64_t kMagic = 0xdb4775248b80fb57ull;
constexpr uint8_t kPlainBlock = 0;
constexpr uint8_t kSnappyBlock = 1;
constexpr size_t kFooterSize = 48;
constexpr size_t kTrailerSize = 5;  // type byte + masked CRC32C

// Reads a varint (at most `max_bytes` long) from the front of *in.
bool GetVarint(absl::string_view* in, int max_bytes, uint64_t* value) {
  uint64_t v = 0;
  for (int i = 0; i < max_bytes && i < static_cast<int>(in->size()); ++i) {
    const uint8_t b = static_cast<uint8_t>((*in)[i]);
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      in->remove_prefix(i + 1);
      *value = v;
      return true;
    }
  }
  return false;
}

uint32_t Fixed32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

struct Handle {
  uint64_t offset = 0, size = 0;
};

class Reader {
 public:
  Reader(absl::string_view file, const std::string& name) : file_(file), name_(name) {}

  absl::Status Corrupt(const std::string& what) const {
    return absl::DataLossError(absl::StrCat(name_, " is not a valid table: ", what));
  }

  absl::StatusOr<Handle> GetHandle(absl::string_view* in) const {
    Handle h;
    if (!GetVarint(in, 10, &h.offset) || !GetVarint(in, 10, &h.size)) {
      return Corrupt("a bad block handle");
    }
    return h;
  }

  // The block `h` points at, its trailer checked.
  absl::StatusOr<absl::string_view> Block(const Handle& h) const {
    if (h.offset > file_.size() || h.size > file_.size() - h.offset ||
        file_.size() - h.offset - h.size < kTrailerSize) {
      return Corrupt(absl::StrCat("a block at ", h.offset, " of ", h.size,
                                  " bytes lies outside the file's ", file_.size()));
    }
    const char* p = file_.data() + h.offset;
    const uint8_t type = static_cast<uint8_t>(p[h.size]);
    const uint32_t crc = Crc32cExtend(Crc32c(p, h.size), p + h.size, 1);
    if (UnmaskCrc32c(Fixed32(p + h.size + 1)) != crc) {
      return Corrupt(absl::StrCat("the block at ", h.offset, " fails its checksum"));
    }
    if (type == kSnappyBlock) return Uncompress(p, h);
    if (type != kPlainBlock) {
      return Corrupt(absl::StrCat("the block at ", h.offset, " has unknown type ", type));
    }
    return absl::string_view(p, h.size);
  }

  // A Snappy-compressed block (TensorFlow before about 2.0 wrote its
  // indexes so), its stated length bounded before anything is allocated.
  absl::StatusOr<absl::string_view> Uncompress(const char* p, const Handle& h) const {
    size_t n = 0;
    if (!snappy::GetUncompressedLength(p, h.size, &n)) {
      return Corrupt(absl::StrCat("the block at ", h.offset, " is not valid Snappy"));
    }
    // Snappy expands a byte to at most a few dozen; anything beyond is damage.
    if (n > 64 * h.size + 1024) {
      return Corrupt(
          absl::StrCat("the block at ", h.offset, " claims ", n, " bytes from ", h.size));
    }
    std::string& out = uncompressed_.emplace_back(n, '\0');
    if (!snappy::RawUncompress(p, h.size, out.data())) {
      return Corrupt(absl::StrCat("the block at ", h.offset, " does not uncompress"));
    }
    return absl::string_view(out);
  }

  // Every entry of a block, keys rebuilt from their shared prefixes.
  absl::Status Entries(absl::string_view block, std::vector<TableEntry>* out,
                       int64_t* budget) const {
    if (block.size() < 4) return Corrupt("a block too short for its restart count");
    const uint32_t restarts = Fixed32(block.data() + block.size() - 4);
    if (restarts > (block.size() - 4) / 4) return Corrupt("a block with too many restarts");
    absl::string_view in = block.substr(0, block.size() - 4 - 4 * size_t{restarts});
    std::string key;
    while (!in.empty()) {
      uint64_t shared, non_shared, value_size;
      if (!GetVarint(&in, 5, &shared) || !GetVarint(&in, 5, &non_shared) ||
          !GetVarint(&in, 5, &value_size) || shared > key.size() || non_shared > in.size() ||
          value_size > in.size() - non_shared) {
        return Corrupt("a bad entry in a block");
      }
      // Shared prefixes let a small block rebuild huge keys: bound the total.
      *budget -= static_cast<int64_t>(shared + non_shared + value_size);
      if (*budget < 0) return Corrupt("entries that expand far beyond the file's size");
      key.resize(shared);
      key.append(in.data(), non_shared);
      in.remove_prefix(non_shared);
      out->push_back({key, std::string(in.substr(0, value_size))});
      in.remove_prefix(value_size);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<TableEntry>> Read() const {
    if (file_.size() < kFooterSize) {
      return Corrupt(absl::StrCat(file_.size(), " bytes, fewer than a footer's"));
    }
    const char* footer = file_.data() + file_.size() - kFooterSize;
    uint64_t magic;
    std::memcpy(&magic, footer + 40, 8);
    if (magic != kMagic) return Corrupt("no table magic number at its end");
    absl::string_view handles(footer, 40);
    ASSIGN_OR_RETURN(Handle metaindex, GetHandle(&handles));
    (void)metaindex;  // TensorFlow's indexes have no filter or meta blocks to read
    ASSIGN_OR_RETURN(Handle index, GetHandle(&handles));
    ASSIGN_OR_RETURN(absl::string_view index_block, Block(index));
    int64_t budget = 64 * static_cast<int64_t>(file_.size()) + (int64_t{1} << 20);
    std::vector<TableEntry> blocks;
    RETURN_IF_ERROR(Entries(index_block, &blocks, &budget));
    std::vector<TableEntry> out;
    for (const TableEntry& b : blocks) {
      absl::string_view v = b.value;
      ASSIGN_OR_RETURN(Handle h, GetHandle(&v));
      ASSIGN_OR_RETURN(absl::string_view data, Block(h));
      RETURN_IF_ERROR(Entries(data, &out, &budget));
    }
    return out;
  }

 private:
  absl::string_view file_;
  const std::string& name_;
  mutable std::deque<std::string> uncompressed_;  // the blocks Block() uncompressed
};

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutFixed32(std::string* out, uint32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }

// Builds one block: prefix-compressed entries, a restart every 16.
class BlockBuilder {
 public:
  void Add(absl::string_view key, absl::string_view value) {
    size_t shared = 0;
    if (count_ % 16 == 0) {
      restarts_.push_back(static_cast<uint32_t>(buf_.size()));
    } else {
      while (shared < last_.size() && shared < key.size() && last_[shared] == key[shared]) {
        ++shared;
      }
    }
    PutVarint(&buf_, shared);
    PutVarint(&buf_, key.size() - shared);
    PutVarint(&buf_, value.size());
    buf_.append(key.data() + shared, key.size() - shared);
    buf_.append(value.data(), value.size());
    last_.assign(key.data(), key.size());
    ++count_;
  }
  bool empty() const { return count_ == 0; }
  size_t size() const { return buf_.size(); }
  const std::string& last_key() const { return last_; }
  // The block's bytes; the builder starts over.
  std::string Finish() {
    if (restarts_.empty()) restarts_.push_back(0);
    for (uint32_t r : restarts_) PutFixed32(&buf_, r);
    PutFixed32(&buf_, static_cast<uint32_t>(restarts_.size()));
    std::string out = std::move(buf_);
    *this = BlockBuilder();
    return out;
  }

 private:
  std::string buf_, last_;
  std::vector<uint32_t> restarts_;
  int count_ = 0;
};

// Appends `block` with its trailer; its handle.
std::string AppendBlock(std::string* file, const std::string& block) {
  std::string handle;
  PutVarint(&handle, file->size());
  PutVarint(&handle, block.size());
  file->append(block);
  const char type = 0;
  file->push_back(type);
  PutFixed32(file, MaskCrc32c(Crc32cExtend(Crc32c(block.data(), block.size()), &type, 1)));
  return handle;
}

}  // namespace

absl::StatusOr<std::string> WriteTableFile(const std::vector<TableEntry>& entries) {
  std::string file;
  BlockBuilder data, index;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0 && !(entries[i - 1].key < entries[i].key)) {
      return absl::InvalidArgumentError(absl::StrCat("table keys out of order or repeated: '",
                                                     entries[i - 1].key, "' then '", entries[i].key,
                                                     "'"));
    }
    data.Add(entries[i].key, entries[i].value);
    if (data.size() >= 4096) {
      const std::string last = data.last_key();
      index.Add(last, AppendBlock(&file, data.Finish()));
    }
  }
  if (!data.empty()) {
    const std::string last = data.last_key();
    index.Add(last, AppendBlock(&file, data.Finish()));
  }
  const std::string metaindex = AppendBlock(&file, BlockBuilder().Finish());
  const std::string index_handle = AppendBlock(&file, index.Finish());
  std::string footer = metaindex + index_handle;
  footer.resize(40, '\0');
  const uint64_t magic = kMagic;
  footer.append(reinterpret_cast<const char*>(&magic), 8);
  file.append(footer);
  return file;
}

absl::StatusOr<std::vector<TableEntry>> ReadTableFile(absl::string_view bytes,
                                                      const std::string& name) {
  return Reader(bytes, name).Read();
}

}  // namespace sluice
