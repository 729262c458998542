// Reads and writes TensorFlow's V1 checkpoint files: what `tf.train.Saver`
// wrote before V2 (and with write_version=V1), what TensorFlow's Save and
// SaveSlices ops still write, and what old pretrained checkpoints (TF-slim's
// "resnet_v1_50.ckpt" and the like) are. One file per shard, a table in
// LevelDB's format (runtime/io/table_file.h):
//
//   ""                                  SavedTensorSlices{meta}: every tensor's
//                                       name, full shape, dtype and the slices
//                                       of it this file holds
//   EncodeTensorNameSlice(name, slice)  SavedTensorSlices{data}: one slice's
//                                       values in the *_val field of its dtype
//
//   ASSIGN_OR_RETURN(std::vector<TensorSliceRecord> records,
//                    ParseTensorSliceFile(bytes, "model.ckpt"));
//   RETURN_IF_ERROR(WriteTensorSliceFile("/tmp/model.ckpt", records));
//
// A whole tensor is one record whose slice covers it. Dtypes: float, double,
// int32, int64, int16, int8, uint8, uint16, bool, half, complex64,
// complex128 and string, as TensorFlow's V1 writer stores them (int_val holds
// the narrow integers; half_val a half's bits); TensorFlow refuses others
// (bfloat16, uint32, uint64), and so does WriteTensorSliceFile.
//
// Errors: DataLoss naming the file for a table that does not verify, a file
// without its meta record, a meta record and data records that disagree (a
// slice without its values, values for a slice the meta does not list, a
// slice listed twice), a slice of another rank than its tensor or outside
// it, a dtype V1 cannot hold, or a count of values other than the slice's;
// FailedPrecondition for a file whose versions need a newer reader.
// Writing: InvalidArgument for a dtype V1 cannot hold, an empty name or one
// that is not UTF-8 (protocol buffers refuse it on reading), a
// value not shaped as its slice, one slice stored twice, or one name with
// two dtypes or full shapes; file errors naming the file.
// Thread-safety: pure functions.
#ifndef SLUICE_RUNTIME_IO_TENSOR_SLICE_FILE_H_
#define SLUICE_RUNTIME_IO_TENSOR_SLICE_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/tensor_shape.h"
#include "runtime/allocator.h"
#include "runtime/io/tensor_bundle.h"
#include "runtime/tensor.h"

namespace sluice {

// One stored slice of tensor `name`.
struct TensorSliceRecord {
  std::string name;
  TensorShape full_shape;
  BundleSlice slice;  // resolved: a whole dimension is 0 and its size
  Tensor value;       // shaped as the slice
};

// True when `bytes` end as a table does (LevelDB's footer magic): a V1
// checkpoint file, not Sluice's own shard format.
bool IsTableFile(absl::string_view bytes);

// Every slice the file holds, in the meta record's order (tensors, then each
// tensor's slices). Tensors are allocated from `allocator` (nullptr: the
// default CPU allocator).
absl::StatusOr<std::vector<TensorSliceRecord>> ParseTensorSliceFile(
    absl::string_view bytes, const std::string& path, Allocator* allocator = nullptr);

// The bytes of a V1 checkpoint file holding `records`, as TensorFlow's
// TensorSliceWriter lays it out (meta first, then the slices by key).
absl::StatusOr<std::string> EncodeTensorSliceFile(absl::Span<const TensorSliceRecord> records);

// EncodeTensorSliceFile written to `path` atomically (runtime/atomic_file.h).
absl::Status WriteTensorSliceFile(const std::string& path,
                                  absl::Span<const TensorSliceRecord> records);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_IO_TENSOR_SLICE_FILE_H_
