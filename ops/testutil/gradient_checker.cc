#include "ops/testutil/gradient_checker.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "graph/gradients.h"
#include "base/status_macros.h"
#include "ops/builtins.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

// Element i of a float or double tensor, as double.
double Get(const Tensor& t, int64_t i) {
  return t.dtype() == DT_DOUBLE ? t.data<double>()[i] : t.data<float>()[i];
}
void Set(Tensor& t, int64_t i, double v) {
  if (t.dtype() == DT_DOUBLE) {
    t.data<double>()[i] = v;
  } else {
    t.data<float>()[i] = static_cast<float>(v);
  }
}

absl::Status CheckFloating(const Tensor& t, absl::string_view what) {
  if (t.dtype() != DT_DOUBLE && t.dtype() != DT_FLOAT) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be float or double, is ",
                                                   DataTypeName(t.dtype())));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Tensor> EvalWithFeeds(const Scope& scope, absl::Span<const Output> xs,
                                     absl::Span<const Tensor> x_values, const Output& fetch) {
  RETURN_IF_ERROR(scope.status());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                   NewSession(BuiltinSessionConfig(), *scope.graph()));
  std::vector<std::pair<Output, Tensor>> feeds;
  for (size_t i = 0; i < xs.size(); ++i) feeds.emplace_back(xs[i], x_values[i]);
  ASSIGN_OR_RETURN(std::vector<Tensor> out, session->Run(feeds, {fetch}));
  return out[0];
}

absl::StatusOr<double> MaxGradientError(const Scope& scope, absl::Span<const Output> xs,
                                        absl::Span<const Tensor> x_values, const Output& y,
                                        double delta) {
  if (xs.size() != x_values.size()) {
    return absl::InvalidArgumentError("one value per x is needed");
  }
  RETURN_IF_ERROR(scope.status());
  // dy placeholder seeds one backward pass per element of y.
  Output dy = scope.Op("Placeholder").Attr("dtype", BaseType(y.dtype())).Finalize1();
  ASSIGN_OR_RETURN(std::vector<Output> dxs, AddGradients(scope, {y}, xs, {dy}));
  RETURN_IF_ERROR(scope.status());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                   NewSession(BuiltinSessionConfig(), *scope.graph()));
  std::vector<std::pair<Output, Tensor>> feeds;
  for (size_t i = 0; i < xs.size(); ++i) {
    RETURN_IF_ERROR(CheckFloating(x_values[i], "x"));
    feeds.emplace_back(xs[i], x_values[i].DeepCopy());
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> y0, session->Run(feeds, {y}));
  RETURN_IF_ERROR(CheckFloating(y0[0], "y"));
  const int64_t ny = y0[0].NumElements();
  // Symbolic Jacobian, row by row: J[j][x-element] = d y_j / d x.
  std::vector<std::vector<Tensor>> sym(ny);
  std::vector<Output> fetch_dx;
  for (const Output& dx : dxs) {
    if (dx.valid()) fetch_dx.push_back(dx);
  }
  for (int64_t j = 0; j < ny; ++j) {
    Tensor seed(y0[0].dtype(), y0[0].shape());
    std::memset(seed.raw_data(), 0, seed.TotalBytes());
    Set(seed, j, 1.0);
    auto f = feeds;
    f.emplace_back(dy, seed);
    ASSIGN_OR_RETURN(sym[j], session->Run(f, fetch_dx));
  }
  double max_err = 0;
  size_t k = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const bool has_grad = dxs[i].valid();
    Tensor x = feeds[i].second;
    for (int64_t e = 0; e < x.NumElements(); ++e) {
      const double orig = Get(x, e);
      Tensor plus = x.DeepCopy(), minus = x.DeepCopy();
      Set(plus, e, orig + delta);
      Set(minus, e, orig - delta);
      auto fp = feeds, fm = feeds;
      fp[i].second = plus;
      fm[i].second = minus;
      ASSIGN_OR_RETURN(std::vector<Tensor> yp, session->Run(fp, {y}));
      ASSIGN_OR_RETURN(std::vector<Tensor> ym, session->Run(fm, {y}));
      for (int64_t j = 0; j < ny; ++j) {
        double numeric = (Get(yp[0], j) - Get(ym[0], j)) / (2 * delta);
        double symbolic = has_grad ? Get(sym[j][k], e) : 0.0;
        max_err = std::max(max_err, std::fabs(numeric - symbolic));
      }
    }
    if (has_grad) ++k;
  }
  return max_err;
}

}  // namespace sluice
