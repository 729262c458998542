// Gradients of the sparse tensor ops (TensorFlow's sparse_grad.py):
//   SparseFillEmptyRows   values and default_value through
//                         SparseFillEmptyRowsGrad of reverse_index_map
//   SparseToDense         values: the gradient at their indices (GatherNd);
//                         default_value: the rest of the gradient's sum
//   SparseTensorDenseMatMul  a_values: per entry, grad row . b row (with the
//                         adjoints); b: the sparse matrix's adjoint times grad
//   SparseReorder         values: the gradient put back in input order
//   SparseTensorDenseAdd  a_values: the gradient at their indices; b: itself
//   SparseAdd, SparseSlice  values through SparseAddGrad / SparseSliceGrad
// None w.r.t. indices and shapes.
#include <vector>

#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/array/index_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"
#include "ops/sparse/sparse_tensor_ops.h"

namespace sluice {
namespace {

using internal::InputOf;

// Sum of every element of x, as a scalar.
Output SumAll(const Scope& s, Output x) {
  return ops::Sum(s, ops::Reshape(s, x, ops::Const(s, std::vector<int32_t>{-1})),
                  ops::Const(s, 0));
}

// Column `c` of a [n, 2] index matrix.
Output Column(const Scope& s, Output m, int c) {
  return ops::GatherV2(s, m, ops::Const(s, c), ops::Const(s, 1));
}

absl::StatusOr<std::vector<Output>> FillEmptyRowsGrad(const Scope& s, const Node& node,
                                                      absl::Span<const Output> g) {
  std::vector<Output> d = s.Op("SparseFillEmptyRowsGrad")
                              .Input(Output(const_cast<Node*>(&node), 3))
                              .Input(g[1])
                              .FinalizeAll();
  RETURN_IF_ERROR(s.status());
  d.resize(2);
  return std::vector<Output>{Output(), d[0], Output(), d[1]};
}

absl::StatusOr<std::vector<Output>> ToDenseGrad(const Scope& s, const Node& node,
                                                absl::Span<const Output> g) {
  const Output values = ops::GatherNd(s, g[0], InputOf(node, 0));
  const Output rest = ops::Sub(s, SumAll(s, g[0]), SumAll(s, values));
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{Output(), Output(), values, rest};
}

absl::StatusOr<std::vector<Output>> MatMulGrad(const Scope& s, const Node& node,
                                               absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(bool adj_a, node.GetAttr<bool>("adjoint_a"));
  ASSIGN_OR_RETURN(bool adj_b, node.GetAttr<bool>("adjoint_b"));
  const Output indices = InputOf(node, 0);
  const Output values = InputOf(node, 1);
  const Output shape = InputOf(node, 2);
  const Output b = InputOf(node, 3);
  const Output perm = ops::Const(s, std::vector<int32_t>{1, 0});
  Output b_grad = ops::SparseTensorDenseMatMul(s, indices, values, shape, g[0],
                                               {.adjoint_a = !adj_a, .adjoint_b = false});
  if (adj_b) b_grad = ops::Transpose(s, b_grad, perm);
  const Output rows = Column(s, indices, 0), cols = Column(s, indices, 1);
  const Output parts_a = ops::GatherV2(s, g[0], adj_a ? cols : rows, ops::Const(s, 0));
  const Output parts_b =
      ops::GatherV2(s, adj_b ? ops::Transpose(s, b, perm) : b, adj_a ? rows : cols, ops::Const(s, 0));
  const Output a_grad = ops::Sum(s, ops::Mul(s, parts_a, parts_b), ops::Const(s, 1));
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{Output(), a_grad, Output(), b_grad};
}

absl::StatusOr<std::vector<Output>> ReorderGrad(const Scope& s, const Node& node,
                                                absl::Span<const Output> g) {
  const Output indices = InputOf(node, 0);
  const Output n = ops::GatherV2(s, ops::Shape(s, indices), ops::Const(s, 0), ops::Const(s, 0));
  const Output entries = ops::Range(s, ops::Const(s, 0), n, ops::Const(s, 1));
  const ops::SparseReorderOutputs ordered = ops::SparseReorder(s, indices, entries, InputOf(node, 2));
  const Output back = ops::GatherV2(s, g[1], ops::InvertPermutation(s, ordered.output_values),
                                    ops::Const(s, 0));
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{Output(), back, Output()};
}

absl::StatusOr<std::vector<Output>> DenseAddGrad(const Scope& s, const Node& node,
                                                 absl::Span<const Output> g) {
  const Output values = ops::GatherNd(s, g[0], InputOf(node, 0));
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{Output(), values, Output(), g[0]};
}

absl::StatusOr<std::vector<Output>> AddGrad(const Scope& s, const Node& node,
                                            absl::Span<const Output> g) {
  std::vector<Output> d = s.Op("SparseAddGrad")
                              .Input(g[1])
                              .Input(InputOf(node, 0))
                              .Input(InputOf(node, 3))
                              .Input(Output(const_cast<Node*>(&node), 0))
                              .FinalizeAll();
  RETURN_IF_ERROR(s.status());
  d.resize(2);
  return std::vector<Output>{Output(), d[0], Output(), Output(), d[1], Output(), Output()};
}

absl::StatusOr<std::vector<Output>> SliceGrad(const Scope& s, const Node& node,
                                              absl::Span<const Output> g) {
  const Output d = s.Op("SparseSliceGrad")
                       .Input(g[1])
                       .Input(InputOf(node, 0))
                       .Input(InputOf(node, 3))
                       .Input(Output(const_cast<Node*>(&node), 0))
                       .Finalize1();
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{Output(), d, Output(), Output(), Output()};
}

}  // namespace

absl::Status RegisterSparseTensorGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("SparseTensorDenseAdd", DenseAddGrad));
  RETURN_IF_ERROR(ops->SetGradient("SparseAdd", AddGrad));
  RETURN_IF_ERROR(ops->SetGradient("SparseSlice", SliceGrad));
  RETURN_IF_ERROR(ops->SetGradient("SparseFillEmptyRows", FillEmptyRowsGrad));
  RETURN_IF_ERROR(ops->SetGradient("SparseToDense", ToDenseGrad));
  RETURN_IF_ERROR(ops->SetGradient("SparseTensorDenseMatMul", MatMulGrad));
  RETURN_IF_ERROR(ops->SetGradient("SparseReorder", ReorderGrad));
  return absl::OkStatus();
}

}  // namespace sluice
