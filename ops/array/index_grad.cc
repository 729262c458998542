// Gradients of ops/array/index_ops.h, after TensorFlow's data_flow_grad.py,
// array_grad.py and nn_grad.py: DynamicStitch (and ParallelDynamicStitch)
// gathers the gradient at each input's indices; DynamicPartition stitches
// the partitions' gradients back by partitioning the element positions;
// GatherNd's gradient is a ScatterNd of it, ScatterNd's a GatherNd; TopKV2
// scatters the values' gradient into the chosen input positions. Unique's
// y gradient gathers dy at idx, so every occurrence of a value gets that
// value's gradient, as DynamicStitch's does for repeated indices
// (TensorFlow registers none for Unique). Bucketize, ListDiff, InTopKV2 and every index output are
// not differentiable.
#include <vector>

#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/array/array_gradients.h"
#include "ops/array/index_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

using internal::InputOf;
using internal::OutputOf;
using GradResult = absl::StatusOr<std::vector<Output>>;

GradResult Done(const Scope& s, std::vector<Output> grads) {
  RETURN_IF_ERROR(s.status());
  return grads;
}

// x[i] receives dy[idx[i]].
GradResult UniqueGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(1);
  if (!g[0].valid()) return grads;
  grads[0] = ops::GatherV2(s, g[0], OutputOf(node, 1), 0);
  return Done(s, std::move(grads));
}

GradResult StitchGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const int n = node.num_inputs() / 2;
  std::vector<Output> grads(node.num_inputs());
  if (!g[0].valid()) return grads;
  for (int m = 0; m < n; ++m) grads[n + m] = ops::GatherV2(s, g[0], InputOf(node, m), 0);
  return Done(s, std::move(grads));
}

GradResult PartitionGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output data = InputOf(node, 0);
  const Output partitions = InputOf(node, 1);
  const int num = node.num_outputs();
  std::vector<Output> grads(2);
  std::vector<Output> pieces(num);
  bool any = false;
  for (int k = 0; k < num; ++k) {
    any |= g[k].valid();
    pieces[k] = g[k].valid() ? g[k] : ops::ZerosLike(s, OutputOf(node, k));
  }
  if (!any) return grads;
  // Where each element of `partitions` went.
  const Output shape = ops::Shape(s, partitions);
  const Output positions =
      ops::Reshape(s, ops::Range(s, 0, ops::Prod(s, shape, 0), 1), shape);
  std::vector<Output> moved = ops::DynamicPartition(s, positions, partitions, num);
  grads[0] = ops::Reshape(s, ops::ParallelDynamicStitch(s, moved, pieces), ops::Shape(s, data));
  return Done(s, std::move(grads));
}

GradResult GatherNdGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(2);
  if (!g[0].valid()) return grads;
  const Output indices = InputOf(node, 1);
  grads[0] = ops::ScatterNd(s, indices, g[0],
                            ops::Shape(s, InputOf(node, 0), {.out_type = indices.dtype()}));
  return Done(s, std::move(grads));
}

GradResult ScatterNdGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(3);
  if (!g[0].valid()) return grads;
  grads[1] = ops::GatherNd(s, g[0], InputOf(node, 0));
  return Done(s, std::move(grads));
}

// The values' gradient lands on the input positions the indices name: the
// indices, made flat offsets into the flattened input, address a ScatterNd.
GradResult TopKGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(2);
  if (!g[0].valid()) return grads;
  const Output x = InputOf(node, 0);
  const Output in_shape = ops::Shape(s, x);
  const Output cols = ops::GatherV2(s, in_shape, ops::Sub(s, ops::Size(s, in_shape), 1), 0);
  // Indices and k as int32 whatever types the node has (Tk, index_type).
  auto int32 = [&s](Output x) { return BaseType(x.dtype()) == DT_INT32 ? x : ops::Cast(s, x, DT_INT32); };
  const Output ind_2d = ops::Reshape(s, int32(OutputOf(node, 1)),
                                     ops::Pack(s, {ops::Const(s, -1), int32(InputOf(node, 1))}));
  const Output rows = ops::GatherV2(s, ops::Shape(s, ind_2d), 0, 0);
  const Output row_starts =
      ops::ExpandDims(s, ops::Range(s, 0, ops::Mul(s, rows, cols), ops::Maximum(s, cols, 1)), -1);
  const Output flat = ops::Reshape(s, ops::Add(s, ind_2d, row_starts), {-1});
  const Output scattered =
      ops::ScatterNd(s, ops::ExpandDims(s, flat, -1), ops::Reshape(s, g[0], {-1}),
                     ops::Reshape(s, ops::Prod(s, in_shape, 0), {1}));
  grads[0] = ops::Reshape(s, scattered, in_shape);
  return Done(s, std::move(grads));
}

// TensorFlow's: the tensor's gradient where no update replaced it (or all
// of it, for Add and Sub); the updates' gradient gathered at the indices.
GradResult TensorScatterUpdateGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(3);
  if (!g[0].valid()) return grads;
  const Output indices = InputOf(node, 1);
  grads[0] = ops::TensorScatterUpdate(s, g[0], indices, ops::ZerosLike(s, InputOf(node, 2)));
  grads[2] = ops::GatherNd(s, g[0], indices);
  RETURN_IF_ERROR(s.status());
  return grads;
}

// Add passes the gradient to the updates as it is, Sub negated.
GradResult TensorScatterAddOrSubGrad(const Scope& s, const Node& node,
                                     absl::Span<const Output> g) {
  std::vector<Output> grads(3);
  if (!g[0].valid()) return grads;
  grads[0] = g[0];
  const Output gathered = ops::GatherNd(s, g[0], InputOf(node, 1));
  grads[2] = node.op() == "TensorScatterSub" ? ops::Neg(s, gathered) : gathered;
  RETURN_IF_ERROR(s.status());
  return grads;
}

// TensorFlow's: the gradient goes to whichever of the tensor's element and
// its updates equal the result, split evenly between ties.
GradResult TensorScatterMinOrMaxGrad(const Scope& s, const Node& node,
                                     absl::Span<const Output> g) {
  std::vector<Output> grads(3);
  if (!g[0].valid()) return grads;
  const Output x = InputOf(node, 0);
  const Output indices = InputOf(node, 1);
  const Output y = InputOf(node, 2);
  const Output out = OutputOf(node, 0);
  const DataType t = g[0].dtype();
  const Output x_hit = ops::Cast(s, ops::Equal(s, x, out), t);
  const Output y_hit = ops::Cast(s, ops::Equal(s, y, ops::GatherNd(s, out, indices)), t);
  const Output shape = ops::Shape(s, x, {.out_type = indices.dtype()});
  const Output hits = ops::Add(s, x_hit, ops::ScatterNd(s, indices, y_hit, shape));
  grads[0] = ops::Div(s, ops::Mul(s, g[0], x_hit), hits);
  grads[2] = ops::Mul(s, ops::GatherNd(s, ops::Div(s, g[0], hits), indices), y_hit);
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterIndexGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("Unique", UniqueGrad));
  RETURN_IF_ERROR(ops->SetGradient("DynamicStitch", StitchGrad));
  RETURN_IF_ERROR(ops->SetGradient("ParallelDynamicStitch", StitchGrad));
  RETURN_IF_ERROR(ops->SetGradient("DynamicPartition", PartitionGrad));
  RETURN_IF_ERROR(ops->SetGradient("GatherNd", GatherNdGrad));
  RETURN_IF_ERROR(ops->SetGradient("ScatterNd", ScatterNdGrad));
  RETURN_IF_ERROR(ops->SetGradient("TopKV2", TopKGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorScatterUpdate", TensorScatterUpdateGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorScatterAdd", TensorScatterAddOrSubGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorScatterSub", TensorScatterAddOrSubGrad));
  RETURN_IF_ERROR(ops->SetGradient("ScatterNdNonAliasingAdd", TensorScatterAddOrSubGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorScatterMax", TensorScatterMinOrMaxGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorScatterMin", TensorScatterMinOrMaxGrad));
  for (const char* op : {"Bucketize", "ListDiff", "InTopKV2"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

}  // namespace sluice
