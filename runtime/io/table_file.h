// LevelDB's table format ("SSTable"), which TensorFlow's checkpoint index
// uses, read from its bytes in memory (every key and value, in order) and
// written.
//
//   ASSIGN_OR_RETURN(std::vector<TableEntry> entries, ReadTableFile(bytes, "model.ckpt.index"));
//
// The layout: data blocks, a metaindex block, an index block (one entry per
// data block: a separator key and the block's handle), then a 48-byte footer
// (the metaindex and index handles as varint64 pairs, padded to 40 bytes,
// then the magic 0xdb4775248b80fb57 little-endian). Each block is followed
// by a type byte (0: stored as is; 1: Snappy-compressed, as TensorFlow
// before about 2.0 wrote its indexes, read with Debian's libsnappy) and a
// masked CRC32C of the block and that byte. A block is prefix-compressed entries (varint32 shared, non-shared
// and value lengths, then the key's tail and the value) and an array of
// restart offsets with its count.
//
// Why not Debian's LevelDB (it reads these files): it allocates a block's
// buffer from the size in the file before checking it, so a damaged or
// hostile index of a few bytes asks for exabytes (found by
// fuzz/tensor_bundle_fuzzer). Here every offset and length is checked
// against the bytes at hand first, and every block's checksum is verified.
//
// Errors: DataLoss naming `name` and what is wrong (a block of unknown type,
// or Snappy data that does not uncompress or claims more than 64x its size).
// Written tables are uncompressed, as TensorFlow writes them now.
// Thread-safety: a pure function.
#ifndef SLUICE_RUNTIME_IO_TABLE_FILE_H_
#define SLUICE_RUNTIME_IO_TABLE_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {

struct TableEntry {
  std::string key, value;
};

absl::StatusOr<std::vector<TableEntry>> ReadTableFile(absl::string_view bytes,
                                                      const std::string& name);

// The bytes of a table holding `entries`, whose keys must be distinct and in
// bytewise order (InvalidArgument otherwise): data blocks of about 4 KiB
// with a restart every 16 entries, uncompressed, an empty metaindex block,
// the index block and the footer, each block with its type byte and masked
// CRC32C (what TensorFlow's table builder writes with its default options).
absl::StatusOr<std::string> WriteTableFile(const std::vector<TableEntry>& entries);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_IO_TABLE_FILE_H_
