// Restoring a tensor, or a slice of it, from a TensorFlow V2 checkpoint
// (runtime/io/tensor_bundle.h), as RestoreV2 does: the whole tensor (a
// partitioned one assembled from its slices), or the slice a
// shape_and_slices string asks for, read from only the stored slices that
// overlap it. So a table saved in N parts (by TensorFlow or Sluice)
// restores into M parts, each task reading its rows alone.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> ckpt, BundleReader::Open(prefix));
//   ASSIGN_OR_RETURN(Tensor part, internal::RestoreFromBundle(*ckpt, "emb", &wanted, DT_FLOAT));
//
// Errors (naming the tensor): NotFound when the checkpoint lacks it or its
// slices do not cover the slice wanted; InvalidArgument when it is stored
// with another dtype, or with another full shape than the slice names; the
// reader's DataLoss for corrupt bytes.
#ifndef SLUICE_OPS_IO_INTERNAL_BUNDLE_RESTORE_H_
#define SLUICE_OPS_IO_INTERNAL_BUNDLE_RESTORE_H_

#include <string>

#include "absl/status/statusor.h"
#include "ops/io/internal/tensor_slice.h"
#include "runtime/io/tensor_bundle.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// `wanted` null: the whole tensor.
absl::StatusOr<Tensor> RestoreFromBundle(const BundleReader& bundle, const std::string& name,
                                         const ShapeAndSlice* wanted, DataType dtype);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_IO_INTERNAL_BUNDLE_RESTORE_H_
