// Definitions, shape functions and wrappers of the fused ops (kernels:
// fused_kernels.cc). TensorFlow's _FusedMatMul OpDef is matched name for
// name (tensorflow/core/ops/math_ops.cc), with T restricted to the types
// Sluice has kernels of (float on the CPU; float, bfloat16, half on GPUs).
#include "ops/nn/fused_ops.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

// [m, n] of op(input a) op(input b), dimensions unknown where the inputs'
// are; InvalidArgument naming `op` for non-matrices or inner sizes that differ.
absl::StatusOr<TensorShape> ProductShape(InferenceContext* c, int a_index, const char* op) {
  const TensorShape& a = c->input(a_index);
  const TensorShape& b = c->input(a_index + 1);
  if ((!a.unknown_rank() && a.rank() != 2) || (!b.unknown_rank() && b.rank() != 2)) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": a and b must be matrices, got shapes ",
                                                   a.DebugString(), " and ", b.DebugString()));
  }
  ASSIGN_OR_RETURN(bool ta, c->GetAttr<bool>("transpose_a"));
  ASSIGN_OR_RETURN(bool tb, c->GetAttr<bool>("transpose_b"));
  const int64_t m = a.unknown_rank() ? -1 : a.dim(ta ? 1 : 0);
  const int64_t ka = a.unknown_rank() ? -1 : a.dim(ta ? 0 : 1);
  const int64_t kb = b.unknown_rank() ? -1 : b.dim(tb ? 1 : 0);
  const int64_t n = b.unknown_rank() ? -1 : b.dim(tb ? 0 : 1);
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": inner dimensions differ: a ",
                                                   a.DebugString(), " (transpose_a=", ta, "), b ",
                                                   b.DebugString(), " (transpose_b=", tb, ")"));
  }
  return TensorShape({m, n});
}

absl::Status FusedMatMulShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape out, ProductShape(c, 0, "_FusedMatMul"));
  ASSIGN_OR_RETURN(std::vector<std::string> fused, c->GetAttr<std::vector<std::string>>("fused_ops"));
  if (!fused.empty() && fused[0] == "BiasAdd" && c->num_inputs() > 2) {
    const TensorShape& bias = c->input(2);
    if (!bias.unknown_rank() && bias.rank() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("_FusedMatMul: the bias must be a vector, got shape ", bias.DebugString()));
    }
    if (!bias.unknown_rank() && bias.dim(0) >= 0 && out.dim(1) >= 0 && bias.dim(0) != out.dim(1)) {
      return absl::InvalidArgumentError(absl::StrCat("_FusedMatMul: the bias has ", bias.dim(0),
                                                     " elements, the product ", out.dim(1),
                                                     " columns"));
    }
    if (out.dim(1) < 0 && !bias.unknown_rank()) out.set_dim(1, bias.dim(0));
  }
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status MatMulApplyShape(InferenceContext* c) {
  if (c->input(1).rank() > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "_MatMulApplyGradientDescent: alpha must be a scalar, got shape ",
        c->input(1).DebugString()));
  }
  ASSIGN_OR_RETURN(TensorShape product, ProductShape(c, 2, "_MatMulApplyGradientDescent"));
  absl::StatusOr<TensorShape> merged = c->input(0).Merge(product);
  if (!merged.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "_MatMulApplyGradientDescent: var has shape ", c->input(0).DebugString(),
        " but the product has shape ", product.DebugString()));
  }
  c->set_output(0, *std::move(merged));
  return absl::OkStatus();
}

absl::Status MatMulBiasAddGradShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape product, ProductShape(c, 0, "_MatMulBiasAddGrad"));
  const int64_t n = product.dim(1);
  c->set_output(0, std::move(product));
  c->set_output(1, TensorShape({n}));
  return absl::OkStatus();
}

// The pass builds _FusedMatMul after gradients exist; a gradient through one
// (a TensorFlow graph file's) is not defined, in TensorFlow either.
absl::StatusOr<std::vector<Output>> FusedMatMulGrad(const Scope&, const Node& node,
                                                    absl::Span<const Output>) {
  return absl::UnimplementedError(absl::StrCat(
      node.DebugName(), ": _FusedMatMul has no gradient; build gradients on the unfused graph"));
}

}  // namespace

absl::Status RegisterFusedOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("_FusedMatMul")
                                    .Input("a: T")
                                    .Input("b: T")
                                    .Input("args: num_args * T")
                                    .Output("product: T")
                                    .Attr("transpose_a: bool = false")
                                    .Attr("transpose_b: bool = false")
                                    .Attr("T: {half, bfloat16, float}")
                                    .Attr("num_args: int >= 0")
                                    .Attr("fused_ops: list(string) = []")
                                    .Attr("epsilon: float = 0.0001")
                                    .Attr("leakyrelu_alpha: float = 0.2")
                                    .SetAllowedInGraphFiles()
                                    .SetShapeFn(FusedMatMulShape)));
  RETURN_IF_ERROR(ops->SetGradient("_FusedMatMul", FusedMatMulGrad));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("_MatMulApplyGradientDescent")
                                    .Input("var: Ref(T)")
                                    .Input("alpha: T")
                                    .Input("a: T")
                                    .Input("b: T")
                                    .Output("out: Ref(T)")
                                    .Attr("T: {float}")
                                    .Attr("use_locking: bool = false")
                                    .Attr("transpose_a: bool = false")
                                    .Attr("transpose_b: bool = false")
                                    .SetAllowedInGraphFiles()
                                    .SetShapeFn(MatMulApplyShape)));
  RETURN_IF_ERROR(ops->SetNoGradient("_MatMulApplyGradientDescent"));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("_MatMulBiasAddGrad")
                                    .Input("a: T")
                                    .Input("b: T")
                                    .Output("product: T")
                                    .Output("bias_grad: T")
                                    .Attr("T: {half, bfloat16, float}")
                                    .Attr("transpose_a: bool = false")
                                    .Attr("transpose_b: bool = false")
                                    .SetAllowedInGraphFiles()
                                    .SetShapeFn(MatMulBiasAddGradShape)));
  return ops->SetNoGradient("_MatMulBiasAddGrad");
}

namespace ops {

Output FusedMatMul(const Scope& scope, Input a, Input b, absl::Span<const Output> args,
                   const FusedMatMulAttrs& attrs, std::source_location loc) {
  return scope.Op("_FusedMatMul", loc)
      .Input(a)
      .Input(b)
      .InputList(args)
      .Attr("transpose_a", attrs.transpose_a)
      .Attr("transpose_b", attrs.transpose_b)
      .Attr("fused_ops", attrs.fused_ops)
      .Finalize1();
}

Output MatMulApplyGradientDescent(const Scope& scope, Input var, Input alpha, Input a, Input b,
                                  const MatMulApplyGradientDescentAttrs& attrs,
                                  std::source_location loc) {
  return scope.Op("_MatMulApplyGradientDescent", loc)
      .Input(var)
      .Input(alpha)
      .Input(a)
      .Input(b)
      .Attr("use_locking", attrs.use_locking)
      .Attr("transpose_a", attrs.transpose_a)
      .Attr("transpose_b", attrs.transpose_b)
      .Finalize1();
}

std::vector<Output> MatMulBiasAddGrad(const Scope& scope, Input a, Input b,
                                      const MatMulBiasAddGradAttrs& attrs,
                                      std::source_location loc) {
  return scope.Op("_MatMulBiasAddGrad", loc)
      .Input(a)
      .Input(b)
      .Attr("transpose_a", attrs.transpose_a)
      .Attr("transpose_b", attrs.transpose_b)
      .FinalizeAll();
}

}  // namespace ops
}  // namespace sluice
