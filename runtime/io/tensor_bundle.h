// Reads and writes TensorFlow's V2 checkpoints ("tensor bundles"): the files
// `tf.train.Saver` and `tf.train.Checkpoint` write under a prefix,
//
//   PREFIX.index                    a table of records in LevelDB's table
//                                   format: "" -> BundleHeaderProto, each
//                                   tensor name -> BundleEntryProto
//   PREFIX.data-00000-of-00001 ...  the tensors' bytes, one file per shard
//
//   ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> ckpt, BundleReader::Open("/tmp/model.ckpt-7"));
//   for (const BundleReader::Entry& e : ckpt->entries()) ...   // names, dtypes, shapes
//   ASSIGN_OR_RETURN(Tensor w, ckpt->Read("dense/kernel"));
//
// The index is TensorFlow's table format, LevelDB's byte for byte; it is
// read by runtime/io/table_file.h (which says why not by Debian's LevelDB),
// every block's checksum verified. A tensor's bytes are checked against the
// entry's size and its masked CRC32C before a tensor is made. Numeric
// tensors are stored little-endian as in memory; a string tensor is the
// elements' lengths as varint64s, a masked CRC32C of those lengths (each
// taken as 4 little-endian bytes), then the elements' bytes (strings of
// 4 GiB or more are refused).
//
// Errors: NotFound for a missing index or data file or tensor name;
// DataLoss naming the file or the tensor for a corrupt table, a bad header,
// an entry whose bytes lie outside its data file, a size that does not fit
// its dtype and shape, a checksum that does not match, or slices that do
// not cover their tensor; Unimplemented for a big-endian bundle and for a
// sliced (partitioned) string tensor. A sliced numeric tensor (a
// partitioned variable TensorFlow saved) is read whole, its slices copied
// into place.
// Thread-safety: Read may be called concurrently (each call opens its data
// file). Ownership: the reader owns the parsed index.
#ifndef SLUICE_RUNTIME_IO_TENSOR_BUNDLE_H_
#define SLUICE_RUNTIME_IO_TENSOR_BUNDLE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/proto/tensor_bundle.pb.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"
#include "runtime/tensor.h"

namespace sluice {

namespace internal {
// The index key of one slice of tensor `name` (TensorFlow's
// checkpoint::EncodeTensorNameSlice, in its OrderedCode encoding): per
// dimension the slice's start and length.
std::string EncodeTensorNameSlice(const std::string& name, const std::vector<int64_t>& start,
                                  const std::vector<int64_t>& length);
}  // namespace internal

class BundleReader {
 public:
  struct Entry {
    std::string name;
    DataType dtype = DT_INVALID;
    TensorShape shape;
    bool sliced = false;  // stored as slices (a partitioned variable); Read assembles them
  };

  static absl::StatusOr<std::unique_ptr<BundleReader>> Open(const std::string& prefix);

  // Every tensor, in the index's (bytewise) order of names.
  const std::vector<Entry>& entries() const { return entries_; }
  int num_shards() const { return header_.num_shards(); }

  absl::StatusOr<Tensor> Read(const std::string& name) const;

 private:
  BundleReader(std::string prefix, ::tensorflow::BundleHeaderProto header,
               std::map<std::string, ::tensorflow::BundleEntryProto> records,
               std::vector<Entry> entries)
      : prefix_(std::move(prefix)),
        header_(std::move(header)),
        records_(std::move(records)),
        entries_(std::move(entries)) {}

  std::string DataFile(int shard) const;
  absl::StatusOr<Tensor> ReadEntry(const std::string& name,
                                   const ::tensorflow::BundleEntryProto& e) const;
  // A partitioned tensor: its slices, each stored under
  // internal::EncodeTensorNameSlice, copied into place.
  absl::StatusOr<Tensor> ReadSliced(const std::string& name,
                                    const ::tensorflow::BundleEntryProto& e) const;

  const std::string prefix_;
  const ::tensorflow::BundleHeaderProto header_;
  const std::map<std::string, ::tensorflow::BundleEntryProto> records_;
  const std::vector<Entry> entries_;
};

// Writes a V2 checkpoint TensorFlow reads (tf.train.load_checkpoint,
// Saver.restore): one data file, PREFIX.data-00000-of-00001, and
// PREFIX.index, each written under a temporary name and renamed into place
// by Finish (the index last, so a reader never sees an index without its
// data).
//
//   BundleWriter w("/tmp/model.ckpt-100");
//   RETURN_IF_ERROR(w.Add("dense/kernel", kernel));
//   RETURN_IF_ERROR(w.Finish());
//
// Errors: InvalidArgument for a name added twice, an empty name or a dtype
// with no fixed size other than string; file errors naming the file.
class BundleWriter {
 public:
  explicit BundleWriter(std::string prefix) : prefix_(std::move(prefix)) {}
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  absl::Status Add(const std::string& name, const Tensor& tensor);
  absl::Status Finish();

 private:
  const std::string prefix_;
  std::string data_;  // the data file's bytes so far
  std::map<std::string, ::tensorflow::BundleEntryProto> entries_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_IO_TENSOR_BUNDLE_H_
