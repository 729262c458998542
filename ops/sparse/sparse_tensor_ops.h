// Ops on SparseTensors held as (indices, values, dense_shape), under
// TensorFlow's names, inputs, attrs and errors (its core/ops/sparse_ops.cc):
//   SparseReshape(input_indices, input_shape, new_shape) -> (output_indices,
//       output_shape): the same entries in a tensor of another shape (one -1
//       dimension is inferred)
//   SparseFillEmptyRows(indices, values, dense_shape, default_value) ->
//       (output_indices, output_values, empty_row_indicator, reverse_index_map):
//       each empty row gets one entry [row, 0, ...] = default_value; entries
//       are grouped by row, in their order within it
//   SparseFillEmptyRowsGrad(reverse_index_map, grad_values) -> (d_values,
//       d_default_value)
//   SparseToDense(sparse_indices, output_shape, sparse_values, default_value)
//       with validate_indices (sorted, unique; bounds are always checked)
//   SparseTensorDenseMatMul(a_indices, a_values, a_shape, b) with adjoint_a,
//       adjoint_b: the product of a sparse matrix and a dense one
//   SparseReorder(input_indices, input_values, input_shape): entries in
//       row-major order (stable)
//   SparseTensorDenseAdd(a_indices, a_values, a_shape, b): b plus a scattered
//   SparseAdd(a..., b..., thresh) -> (sum_indices, sum_values, sum_shape):
//       the merge of two sorted sparse tensors; a pair that adds up to less
//       than thresh in magnitude is dropped (singletons are kept), and
//       SparseAddGrad splits the sum's gradient back to a and b
//   SparseConcat(indices[N], values[N], shapes[N], concat_dim): the inputs
//       side by side along concat_dim, entries in row-major order
//   SparseSlice(indices, values, shape, start, size): the entries inside the
//       box, shifted to start at 0 (its size clipped to the shape), and
//       SparseSliceGrad, the gradient back to the input's values
// Gradients (sparse_tensor_grad.cc, TensorFlow's sparse_grad.py): w.r.t.
// values and default values, and both operands of the product; none w.r.t.
// indices or shapes. Indices and shapes are int64 (SparseToDense and the
// product also take int32 indices).
//
//   auto filled = ops::SparseFillEmptyRows(s, ids.indices, ids.values, ids.shape, int64_t{0});
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_SPARSE_SPARSE_TENSOR_OPS_H_
#define SLUICE_OPS_SPARSE_SPARSE_TENSOR_OPS_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterSparseTensorOps(OpRegistry* ops);
absl::Status RegisterSparseTensorGradients(OpRegistry* ops);
void RegisterSparseTensorKernels(KernelRegistry* kernels);

namespace ops {

struct SparseReshapeOutputs {
  Output output_indices, output_shape;
};
SparseReshapeOutputs SparseReshape(const Scope& scope, Input input_indices, Input input_shape,
                                   Input new_shape,
                                   std::source_location loc = std::source_location::current());

struct SparseFillEmptyRowsOutputs {
  Output output_indices, output_values, empty_row_indicator, reverse_index_map;
};
SparseFillEmptyRowsOutputs SparseFillEmptyRows(
    const Scope& scope, Input indices, Input values, Input dense_shape, Input default_value,
    std::source_location loc = std::source_location::current());

Output SparseToDense(const Scope& scope, Input sparse_indices, Input output_shape,
                     Input sparse_values, Input default_value, bool validate_indices = true,
                     std::source_location loc = std::source_location::current());

struct SparseMatMulAttrs {
  bool adjoint_a = false;
  bool adjoint_b = false;
};
Output SparseTensorDenseMatMul(const Scope& scope, Input a_indices, Input a_values, Input a_shape,
                               Input b, const SparseMatMulAttrs& attrs = {},
                               std::source_location loc = std::source_location::current());

struct SparseReorderOutputs {
  Output output_indices, output_values;
};
SparseReorderOutputs SparseReorder(const Scope& scope, Input input_indices, Input input_values,
                                   Input input_shape,
                                   std::source_location loc = std::source_location::current());

Output SparseTensorDenseAdd(const Scope& scope, Input a_indices, Input a_values, Input a_shape,
                            Input b, std::source_location loc = std::source_location::current());

struct SparseTensorOutputs {
  Output indices, values, shape;
};
SparseTensorOutputs SparseAdd(const Scope& scope, Input a_indices, Input a_values, Input a_shape,
                              Input b_indices, Input b_values, Input b_shape, Input thresh,
                              std::source_location loc = std::source_location::current());
SparseTensorOutputs SparseConcat(const Scope& scope, absl::Span<const Output> indices,
                                 absl::Span<const Output> values, absl::Span<const Output> shapes,
                                 int64_t concat_dim,
                                 std::source_location loc = std::source_location::current());
SparseTensorOutputs SparseSlice(const Scope& scope, Input indices, Input values, Input shape,
                                Input start, Input size,
                                std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_SPARSE_SPARSE_TENSOR_OPS_H_
