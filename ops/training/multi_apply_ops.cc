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
// gradients. Output i (ref forms): variable i's shape, merged with its
// slots' and its gradient's. The resource forms check only the scalars: a
// handle's shape is not its variable's (the kernel checks those).
absl::Status MultiApplyShape(InferenceContext* c, int lists, int scalars, bool resource) {
  ASSIGN_OR_RETURN(int64_t n, c->GetAttr<int64_t>("N"));
  for (int k = 0; k < scalars; ++k) {
    const int i = lists * static_cast<int>(n) + k;
    if (c->input(i).rank() > 0) {
      return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": input ", i,
                                                     " must be a scalar, got shape ",
                                                     c->input(i).DebugString()));
    }
  }
  if (resource) return absl::OkStatus();
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

// One multi op: its variable lists, scalars and extra attrs; registered in
// the ref form (_MultiApplyX: Ref inputs, Ref outputs) or the resource form
// (_MultiResourceApplyX: handles, no outputs, stateful as ResourceApplyX).
struct MultiDef {
  const char* name;  // after "_Multi" / "_MultiResource"
  std::vector<const char*> vars;
  std::vector<const char*> scalars;
  std::vector<const char*> attrs;
};

absl::Status RegisterMulti(OpRegistry* ops, const MultiDef& d, bool resource) {
  const std::string op = absl::StrCat(resource ? "_MultiResource" : "_Multi", d.name);
  OpDefBuilder b(op);
  for (const char* var : d.vars) {
    b.Input(absl::StrCat(var, resource ? ": N * resource" : ": Ref(N * T)"));
  }
  for (const char* scalar : d.scalars) b.Input(absl::StrCat(scalar, ": T"));
  b.Input(absl::StrCat(d.vars.size() == 1 ? "delta" : "grad", ": N * T"));
  if (!resource) b.Output("out: Ref(N * T)");
  b.Attr("N: int >= 1").Attr("T: {float, double}").Attr("use_locking: bool = false");
  for (const char* attr : d.attrs) b.Attr(attr);
  if (resource) b.SetIsStateful();
  const int lists = static_cast<int>(d.vars.size());
  const int scalars = static_cast<int>(d.scalars.size());
  b.SetAllowedInGraphFiles()  // partition graphs show it
      .SetShapeFn([lists, scalars, resource](InferenceContext* c) {
        return MultiApplyShape(c, lists, scalars, resource);
      });
  RETURN_IF_ERROR(ops->Register(b));
  return ops->SetNoGradient(op);
}

}  // namespace

absl::Status RegisterMultiApplyOps(OpRegistry* ops) {
  const MultiDef defs[] = {
      {"ApplyGradientDescent", {"var"}, {"alpha"}, {}},
      {"ApplyAdam",
       {"var", "m", "v"},
       {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"},
       {"use_nesterov: bool = false"}},
  };
  for (const MultiDef& d : defs) {
    for (bool resource : {false, true}) RETURN_IF_ERROR(RegisterMulti(ops, d, resource));
  }
  return absl::OkStatus();
}

}  // namespace sluice
