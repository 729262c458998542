// TensorFlow's shape_and_slices strings, as SaveV2 / RestoreV2 take them:
// the full shape, then one "start,length" (or "-": all of it) per axis,
// axes separated by ':'.
//
//   "10 4 0,5:-"   rows 0..4 of a [10, 4] variable (a partitioned part)
//
//   ASSIGN_OR_RETURN(ShapeAndSlice s, ParseShapeAndSlice("10 4 5,5:-"));
//   s.SliceShape();                           // [5, 4]
//   int64_t copied = CopyOverlap(stored, stored_slice, &wanted, wanted_slice);
//
// A checkpoint holds a partitioned variable as slices of one full tensor;
// restoring into other parts (N saved, M restored) copies, for each wanted
// slice, the overlap of every stored slice (CopyOverlap). Internal to ops/io.
#ifndef SLUICE_OPS_IO_INTERNAL_TENSOR_SLICE_H_
#define SLUICE_OPS_IO_INTERNAL_TENSOR_SLICE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/tensor_shape.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

struct ShapeAndSlice {
  TensorShape full_shape;
  std::vector<int64_t> start;   // per axis
  std::vector<int64_t> length;  // per axis, resolved ("-": the whole axis)

  TensorShape SliceShape() const { return TensorShape(length); }
  bool IsFull() const;
  // The slice part in TF's form: "0,5:0,4" (whole axes as "-").
  std::string SliceString() const;
  // The whole string: "10 4 0,5:-".
  std::string ToString() const;
};

// InvalidArgument naming `spec` for anything malformed: no slice part, a
// slice of another rank, negative or out-of-range starts and lengths.
absl::StatusOr<ShapeAndSlice> ParseShapeAndSlice(absl::string_view spec);

// The whole of `shape` as a slice.
ShapeAndSlice FullSlice(const TensorShape& shape);

// Copies the elements `src` (holding `src_slice` of the full tensor) shares
// with `dst` (holding `dst_slice` of the same full shape) into `dst`; the
// number of elements copied. Both tensors of one dtype.
int64_t CopyOverlap(const Tensor& src, const ShapeAndSlice& src_slice, Tensor* dst,
                    const ShapeAndSlice& dst_slice);

// The name a slice is stored under in a Sluice checkpoint file: the
// tensor's name, a NUL (which no tensor name holds), and the whole spec.
std::string SliceEntryName(absl::string_view tensor, const ShapeAndSlice& slice);
// The entry a saved tensor goes under: `tensor` itself for an empty spec,
// else SliceEntryName after checking that `value` has the slice's shape
// (InvalidArgument naming the tensor and spec).
absl::StatusOr<std::string> SavedEntryName(const std::string& tensor, absl::string_view spec,
                                           const Tensor& value);

// For an entry name made by SliceEntryName: true, with the tensor name and
// the slice it holds.
bool ParseSliceEntryName(absl::string_view entry, std::string* tensor, ShapeAndSlice* slice);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_IO_INTERNAL_TENSOR_SLICE_H_
