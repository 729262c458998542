// A TensorFlow tensor bundle's index and data file names, which the reader
// and the writer (runtime/io/tensor_bundle.h) share: PREFIX.index is a
// LevelDB-format table (runtime/io/table_file.h) holding a
// BundleHeaderProto under the empty key and a BundleEntryProto under each
// tensor's name or slice key (EncodeTensorNameSlice, defined beside these);
// the values are in PREFIX.data-<shard>-of-<shards>.
//
//   ASSIGN_OR_RETURN(internal::BundleIndex index, internal::ReadIndex(prefix));
//   RETURN_IF_ERROR(internal::WriteIndex(prefix, internal::BundleHeader(1), entries));
//
// Plain functions: thread-compatible.
#ifndef SLUICE_RUNTIME_IO_TENSOR_BUNDLE_INDEX_H_
#define SLUICE_RUNTIME_IO_TENSOR_BUNDLE_INDEX_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/proto/tensor_bundle.pb.h"

namespace sluice {
namespace internal {

struct BundleIndex {
  ::tensorflow::BundleHeaderProto header;
  std::map<std::string, ::tensorflow::BundleEntryProto> records;  // by key, "" excluded
};

// PREFIX.index parsed: its header and every record, each checked to parse.
// NotFound without the file; DataLoss when it is malformed; Unimplemented
// for a big-endian bundle.
absl::StatusOr<BundleIndex> ReadIndex(const std::string& prefix);

// Writes PREFIX.index (atomically: whole or not at all).
absl::Status WriteIndex(const std::string& prefix, const ::tensorflow::BundleHeaderProto& header,
                        const std::map<std::string, ::tensorflow::BundleEntryProto>& entries);

// The header of a little-endian bundle of `num_shards` data files, as
// TensorFlow's version of the format writes it.
::tensorflow::BundleHeaderProto BundleHeader(int num_shards);

// PREFIX.data-SSSSS-of-NNNNN.
std::string DataFileName(const std::string& prefix, int shard, int num_shards);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_RUNTIME_IO_TENSOR_BUNDLE_INDEX_H_
