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
// not cover their tensor; Unimplemented for a big-endian bundle and for
// assembling a sliced (partitioned) string tensor whole (its slices read
// one by one). A sliced numeric tensor (a partitioned variable TensorFlow
// saved) is read whole, its slices copied into place, or slice by slice.
// Thread-safety: Read, Slices and ReadSlice may be called concurrently (each
// read opens its data file). Ownership: the reader owns the parsed index.
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
#include "runtime/atomic_file.h"
#include "runtime/tensor.h"

namespace sluice {

namespace internal {
// The index key of one slice of tensor `name` (TensorFlow's
// checkpoint::EncodeTensorNameSlice, in its OrderedCode encoding): per
// dimension the slice's start and length (-1: the whole dimension).
std::string EncodeTensorNameSlice(const std::string& name, const std::vector<int64_t>& start,
                                  const std::vector<int64_t>& length);
}  // namespace internal

// Where some of a tensor's values lie in the full tensor: per dimension a
// start and a length (both resolved: a whole dimension is 0 and its size).
struct BundleSlice {
  std::vector<int64_t> start;
  std::vector<int64_t> length;
};

namespace internal {
// A stored slice's extents resolved against `full` (a whole dimension,
// stored without a length, is 0 and its size); `key_length`, when given,
// gets the lengths its key encodes (-1 for a whole dimension). DataLoss
// naming tensor `name` for a slice of another rank or outside `full`.
absl::StatusOr<BundleSlice> ResolveSliceProto(const std::string& name, const TensorShape& full,
                                              const ::tensorflow::TensorSliceProto& proto,
                                              std::vector<int64_t>* key_length = nullptr);
// `slice` of `full` as TensorFlow stores it: a whole dimension without start
// or length, and -1 in `key_length`. InvalidArgument naming tensor `name`
// for a slice of another rank or outside `full`, or a `full` not fully
// defined.
absl::Status SliceToProto(const std::string& name, const TensorShape& full,
                          const BundleSlice& slice, ::tensorflow::TensorSliceProto* proto,
                          std::vector<int64_t>* key_length);
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
  // The entry of `name`, or nullptr.
  const Entry* Find(const std::string& name) const;
  int num_shards() const { return header_.num_shards(); }

  // The whole tensor (a sliced one assembled from its slices).
  absl::StatusOr<Tensor> Read(const std::string& name) const;
  // What is stored of `name`: one slice covering it for a whole tensor, or
  // each stored slice of a partitioned one (checked to lie inside it), so a
  // caller wanting part of a tensor reads only the slices that overlap it.
  absl::StatusOr<std::vector<BundleSlice>> Slices(const std::string& name) const;
  // The values of one of Slices(name), shaped as the slice.
  absl::StatusOr<Tensor> ReadSlice(const std::string& name, const BundleSlice& slice) const;

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
// Saver.restore): one data file, PREFIX.data-00000-of-00001, streamed as
// tensors are added, and PREFIX.index; each written atomically
// (runtime/atomic_file.h: fsync, rename), the data file before the index, so
// a reader never sees an index without its data.
//
//   BundleWriter w("/tmp/model.ckpt-100");
//   RETURN_IF_ERROR(w.Add("dense/kernel", kernel));
//   RETURN_IF_ERROR(w.AddSlice("emb", TensorShape({10, 4}), {{0, 0}, {5, 4}}, part0));
//   RETURN_IF_ERROR(w.Finish());
//
// A slice is stored as TensorFlow's BundleWriter::AddSlice stores it: the
// values under internal::EncodeTensorNameSlice, and the full tensor's entry
// (dtype, full shape, no bytes) listing its slices.
//
// Errors: InvalidArgument for a name added twice, an empty name, a dtype
// with no fixed size other than string, a slice outside its full shape or of
// another shape than its tensor, or slices of one name with other dtypes or
// full shapes; file errors naming the file. After an error the writer
// writes nothing more (its temporary file is removed).
class BundleWriter {
 public:
  explicit BundleWriter(std::string prefix);
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  absl::Status Add(const std::string& name, const Tensor& tensor);
  absl::Status AddSlice(const std::string& name, const TensorShape& full_shape,
                        const BundleSlice& slice, const Tensor& tensor);
  absl::Status Finish();

 private:
  absl::Status Append(const std::string& name, const Tensor& tensor);

  const std::string prefix_;
  std::unique_ptr<AtomicFileWriter> data_;  // opened by the first Add
  absl::Status status_;                     // the first error
  std::map<std::string, ::tensorflow::BundleEntryProto> entries_;
};

// TensorFlow's MergeBundles (the MergeV2Checkpoints op): the checkpoints at
// `prefixes` (each PREFIX.index with its data files; shards of one save)
// become one at `dest`. Their data files are renamed to
// DEST.data-<k>-of-<n>, numbered in the order given; the slices of a
// partitioned tensor saved by several shards are listed together; then
// DEST.index is written atomically and the source indexes are deleted.
// Errors: NotFound for a missing source, DataLoss for a corrupt one,
// InvalidArgument for a tensor (or slice) two sources hold, or a partitioned
// tensor's full shape or dtype differing between them.
absl::Status MergeBundles(const std::vector<std::string>& prefixes, const std::string& dest);

// The file names of the checkpoint at `prefix` (its index and data files)
// that exist; for deleting one.
std::vector<std::string> BundleFiles(const std::string& prefix);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_IO_TENSOR_BUNDLE_H_
