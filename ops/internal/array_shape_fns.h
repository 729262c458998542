// Shape functions of the array ops, one per op (or per group of ops with the
// same rule); RegisterArrayOps attaches them to the op definitions.
//
//   OpDefBuilder("Reshape")...SetShapeFn(internal::ReshapeShape);
//
// Each reads the node's attrs and its constant index inputs (shapes, perms,
// axes, begin/size, multiples) so that output shapes are known, and shape
// mismatches reported as InvalidArgument naming the shapes, at build time.
// Thread-safety: pure functions of the InferenceContext. Internal to ops/.
#ifndef SLUICE_OPS_INTERNAL_ARRAY_SHAPE_FNS_H_
#define SLUICE_OPS_INTERNAL_ARRAY_SHAPE_FNS_H_

#include "absl/status/status.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace internal {

// Output 0 is input 0's shape (Identity, StopGradient, ZerosLike, ...).
absl::Status UnchangedShape(InferenceContext* c);
// Output 0 is a scalar (Size, Rank).
absl::Status ScalarShape(InferenceContext* c);

// Constants and feeds.
absl::Status ConstShape(InferenceContext* c);
absl::Status PlaceholderShape(InferenceContext* c);
absl::Status PlaceholderWithDefaultShape(InferenceContext* c);

// Creating and shapes.
absl::Status FillShape(InferenceContext* c);
absl::Status ReshapeShape(InferenceContext* c);
absl::Status TransposeShape(InferenceContext* c);
absl::Status InvertPermutationShape(InferenceContext* c);
absl::Status ExpandDimsShape(InferenceContext* c);
absl::Status SqueezeShape(InferenceContext* c);
absl::Status ShapeShape(InferenceContext* c);

// Joining and splitting.
absl::Status ConcatV2Shape(InferenceContext* c);
absl::Status ConcatShape(InferenceContext* c);
absl::Status ConcatOffsetShape(InferenceContext* c);
absl::Status SplitShape(InferenceContext* c);
absl::Status PackShape(InferenceContext* c);
absl::Status UnpackShape(InferenceContext* c);
absl::Status TileShape(InferenceContext* c);

// Indexing.
absl::Status SliceShape(InferenceContext* c);
absl::Status StridedSliceShape(InferenceContext* c);
absl::Status StridedSliceGradShape(InferenceContext* c);
absl::Status GatherV2Shape(InferenceContext* c);
absl::Status GatherShape(InferenceContext* c);
// UnsortedSegmentSum's, and the other unsorted segment reductions' (errors
// name the node's op).
absl::Status UnsortedSegmentSumShape(InferenceContext* c);
absl::Status BroadcastGradientArgsShape(InferenceContext* c);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_INTERNAL_ARRAY_SHAPE_FNS_H_
