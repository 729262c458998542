#include "ops/training/multi_apply_ops.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/op_def.h"
#include "graph/shape_inference.h"
#include "ops/training/multi_apply_kernels.h"

namespace sluice {
namespace {

// Inputs: `lists` lists of N variables, then `scalars` scalars, then N
// gradients. Output i: variable i's shape, merged with its slots' and its
// gradient's.
absl::Status MultiApplyShape(InferenceContext* c, int lists, int scalars) {
  ASSIGN_OR_RETURN(int64_t n, c->GetAttr<int64_t>("N"));
  for (int k = 0; k < scalars; ++k) {
    const int i = lists * static_cast<int>(n) + k;
    if (c->input(i).rank() > 0) {
      return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": input ", i,
                                                     " must be a scalar, got shape ",
                                                     c->input(i).DebugString()));
    }
  }
  const int grads = lists * static_cast<int>(n) + scalars;
  for (int v = 0; v < n; ++v) {
    TensorShape merged = c->input(v);
    std::vector<int> same;
    for (int k = 1; k < lists; ++k) same.push_back(k * static_cast<int>(n) + v);
    same.push_back(grads + v);
    for (int i : same) {
      absl::StatusOr<TensorShape> m = merged.Merge(c->input(i));
      if (!m.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": var ", v, " has shape ",
                                                       c->input(v).DebugString(), " but input ", i,
                                                       " has shape ", c->input(i).DebugString()));
      }
      merged = *std::move(m);
    }
    c->set_output(v, std::move(merged));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterMultiApplyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(
      ops->Register(OpDefBuilder("_MultiApplyGradientDescent")
                        .Input("var: Ref(N * T)")
                        .Input("alpha: T")
                        .Input("delta: N * T")
                        .Output("out: Ref(N * T)")
                        .Attr("N: int >= 1")
                        .Attr("T: {float, double}")
                        .Attr("use_locking: bool = false")
                        .SetAllowedInGraphFiles()  // partition graphs show it
                        .SetShapeFn([](InferenceContext* c) { return MultiApplyShape(c, 1, 1); })));
  RETURN_IF_ERROR(ops->SetNoGradient("_MultiApplyGradientDescent"));
  RETURN_IF_ERROR(
      ops->Register(OpDefBuilder("_MultiApplyAdam")
                        .Input("var: Ref(N * T)")
                        .Input("m: Ref(N * T)")
                        .Input("v: Ref(N * T)")
                        .Input("beta1_power: T")
                        .Input("beta2_power: T")
                        .Input("lr: T")
                        .Input("beta1: T")
                        .Input("beta2: T")
                        .Input("epsilon: T")
                        .Input("grad: N * T")
                        .Output("out: Ref(N * T)")
                        .Attr("N: int >= 1")
                        .Attr("T: {float, double}")
                        .Attr("use_locking: bool = false")
                        .Attr("use_nesterov: bool = false")
                        .SetAllowedInGraphFiles()
                        .SetShapeFn([](InferenceContext* c) { return MultiApplyShape(c, 3, 6); })));
  return ops->SetNoGradient("_MultiApplyAdam");
}

}  // namespace sluice
