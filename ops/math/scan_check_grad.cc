// Gradients of the scans (ops/math/scan_ops.h) and checks (ops/math/check_ops.h), as
// TensorFlow's math_grad.py and array_grad.py give them:
//   Cumsum:  cumsum(g) taken the other way along the axis;
//   Cumprod: cumsum(cumprod(x) * g) the other way, divided by x (so, as
//            TensorFlow's, it needs x without zeros);
//   CheckNumerics: the gradient, checked for NaN and Inf itself.
// Assert has no outputs and no gradient.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/math/check_ops.h"
#include "ops/math/math_gradients.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"
#include "ops/math/scan_ops.h"

namespace sluice {
namespace {

using internal::InputOf;
using internal::OutputOf;
using GradResult = absl::StatusOr<std::vector<Output>>;

absl::StatusOr<ops::ScanAttrs> ReadScanAttrs(const Node& node) {
  ops::ScanAttrs a;
  ASSIGN_OR_RETURN(a.exclusive, node.GetAttr<bool>("exclusive"));
  ASSIGN_OR_RETURN(a.reverse, node.GetAttr<bool>("reverse"));
  return a;
}

GradResult CumsumGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(ops::ScanAttrs a, ReadScanAttrs(node));
  a.reverse = !a.reverse;
  std::vector<Output> grads{ops::Cumsum(s, g[0], InputOf(node, 1), a), Output()};
  RETURN_IF_ERROR(s.status());
  return grads;
}

GradResult CumprodGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(ops::ScanAttrs a, ReadScanAttrs(node));
  const Output x = InputOf(node, 0);
  const Output axis = InputOf(node, 1);
  ops::ScanAttrs back = a;
  back.reverse = !a.reverse;
  Output summed = ops::Cumsum(s, ops::Mul(s, OutputOf(node), g[0]), axis, back);
  std::vector<Output> grads{ops::RealDiv(s, summed, x), Output()};
  RETURN_IF_ERROR(s.status());
  return grads;
}

GradResult CheckNumericsGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(std::string message, node.GetAttr<std::string>("message"));
  std::vector<Output> grads{
      s.Op(node.op())
          .Input(g[0])
          .Attr("message", absl::StrCat(
                               "Not a number (NaN) or infinity (Inf) values detected in gradient. ",
                               message))
          .Finalize1()};
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterScanAndCheckGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("Cumsum", CumsumGrad));
  RETURN_IF_ERROR(ops->SetGradient("Cumprod", CumprodGrad));
  RETURN_IF_ERROR(ops->SetGradient("CheckNumerics", CheckNumericsGrad));
  RETURN_IF_ERROR(ops->SetGradient("CheckNumericsV2", CheckNumericsGrad));
  RETURN_IF_ERROR(ops->SetNoGradient("Assert"));
  return absl::OkStatus();
}

}  // namespace sluice
