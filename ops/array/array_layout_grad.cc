// Gradients of ops/array/array_layout_ops.h (TensorFlow's array_grad.py): Pad's
// gradient slices the padding off; ReverseV2's reverses back; SplitV's
// concatenates the pieces' gradients (zeros for a piece that got none).
// SpaceToDepth and DepthToSpace undo each other; MatrixDiag and
// MatrixDiagPart take each other's part. ShapeN, OneHot and Where are not
// differentiable.
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/array_layout_ops.h"
#include "ops/array/array_ops.h"
#include "ops/array/array_gradients.h"
#include "ops/internal/grad_util.h"

namespace sluice {
namespace {

using internal::InputOf;
using internal::OutputOf;
using GradResult = absl::StatusOr<std::vector<Output>>;

// Pad and PadV2: slice(grad, paddings[:, 0], shape(x)).
GradResult PadGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(node.num_inputs());
  if (!g[0].valid()) return grads;
  const Output x = InputOf(node, 0);
  const Output paddings = InputOf(node, 1);
  Output before = ops::Reshape(s, ops::Slice(s, paddings, {0, 0}, {-1, 1}), {-1});
  grads[0] = ops::Slice(s, g[0], before,
                        ops::Shape(s, x, {.out_type = BaseType(paddings.dtype())}));
  RETURN_IF_ERROR(s.status());
  return grads;
}

GradResult ReverseGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(2);
  if (!g[0].valid()) return grads;
  grads[0] = s.Op(node.op()).Input(g[0]).Input(InputOf(node, 1)).Finalize1();
  RETURN_IF_ERROR(s.status());
  return grads;
}

GradResult SplitVGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(3);
  std::vector<Output> pieces;
  bool any = false;
  for (int k = 0; k < node.num_outputs(); ++k) {
    any |= g[k].valid();
    pieces.push_back(g[k].valid() ? g[k] : ops::ZerosLike(s, OutputOf(node, k)));
  }
  if (!any) return grads;
  grads[0] = ops::ConcatV2(s, absl::MakeConstSpan(pieces), InputOf(node, 2));
  RETURN_IF_ERROR(s.status());
  return grads;
}

// SpaceToDepth and DepthToSpace undo each other.
GradResult BlockGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(int64_t bs, node.GetAttr<int64_t>("block_size"));
  std::vector<Output> grads{node.op() == "SpaceToDepth" ? ops::DepthToSpace(s, g[0], bs)
                                                        : ops::SpaceToDepth(s, g[0], bs)};
  RETURN_IF_ERROR(s.status());
  return grads;
}

GradResult MatrixDiagGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads{ops::MatrixDiagPart(s, g[0])};
  RETURN_IF_ERROR(s.status());
  return grads;
}

// For square matrices: MatrixDiag of the gradient (the off-diagonal
// elements get none).
GradResult MatrixDiagPartGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const TensorShape& x = InputOf(node, 0).shape();
  if (x.unknown_rank() || x.dim(x.rank() - 1) < 0 || x.dim(x.rank() - 1) != x.dim(x.rank() - 2)) {
    return absl::UnimplementedError(absl::StrCat(
        "the gradient of ", node.DebugName(), " needs square matrices of known size, got ",
        x.DebugString()));
  }
  std::vector<Output> grads{ops::MatrixDiag(s, g[0])};
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterArrayLayoutGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("SpaceToDepth", BlockGrad));
  RETURN_IF_ERROR(ops->SetGradient("DepthToSpace", BlockGrad));
  RETURN_IF_ERROR(ops->SetGradient("MatrixDiag", MatrixDiagGrad));
  RETURN_IF_ERROR(ops->SetGradient("MatrixDiagPart", MatrixDiagPartGrad));
  RETURN_IF_ERROR(ops->SetGradient("Pad", PadGrad));
  RETURN_IF_ERROR(ops->SetGradient("PadV2", PadGrad));
  RETURN_IF_ERROR(ops->SetGradient("ReverseV2", ReverseGrad));
  RETURN_IF_ERROR(ops->SetGradient("Reverse", ReverseGrad));
  // Diag and DiagPart are each other's gradient.
  RETURN_IF_ERROR(ops->SetGradient(
      "Diag", [](const Scope& s, const Node&, absl::Span<const Output> g) -> GradResult {
        std::vector<Output> grads{s.Op("DiagPart").Input(g[0]).Finalize1()};
        RETURN_IF_ERROR(s.status());
        return grads;
      }));
  RETURN_IF_ERROR(ops->SetGradient(
      "DiagPart", [](const Scope& s, const Node&, absl::Span<const Output> g) -> GradResult {
        std::vector<Output> grads{s.Op("Diag").Input(g[0]).Finalize1()};
        RETURN_IF_ERROR(s.status());
        return grads;
      }));
  RETURN_IF_ERROR(ops->SetGradient("SplitV", SplitVGrad));
  for (const char* op : {"ShapeN", "OneHot", "Where"}) RETURN_IF_ERROR(ops->SetNoGradient(op));
  return absl::OkStatus();
}

}  // namespace sluice
