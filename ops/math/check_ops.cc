#include "ops/math/check_ops.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "ops/internal/array_shape_fns.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

template <typename T>
std::string Element(const Tensor& t, int64_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return t.data<bool>()[i] ? "1" : "0";
  } else {
    return absl::StrCat(t.data<T>()[i]);
  }
}

// The first `summarize` elements of t, space-separated ("..." after them
// when there are more), as TensorFlow's SummarizeValue prints them.
std::string Summarize(const Tensor& t, int64_t summarize) {
  const int64_t n = t.NumElements();
  const int64_t shown = summarize < 0 ? n : std::min(n, summarize);
  std::vector<std::string> parts;
  for (int64_t i = 0; i < shown; ++i) {
    switch (t.dtype()) {
      case DT_FLOAT: parts.push_back(Element<float>(t, i)); break;
      case DT_DOUBLE: parts.push_back(Element<double>(t, i)); break;
      case DT_INT32: parts.push_back(Element<int32_t>(t, i)); break;
      case DT_INT64: parts.push_back(Element<int64_t>(t, i)); break;
      case DT_BOOL: parts.push_back(Element<bool>(t, i)); break;
      case DT_STRING: parts.push_back(t.data<std::string>()[i]); break;
      default: parts.push_back(absl::StrCat("<", DataTypeName(t.dtype()), ">")); break;
    }
  }
  std::string s = absl::StrJoin(parts, " ");
  if (shown < n) absl::StrAppend(&s, "...");
  return s;
}

class AssertOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(summarize_, ctx.GetAttr<int64_t>("summarize"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    if (cond.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Assert: the condition must be a scalar, got shape ", cond.shape().DebugString()));
    }
    if (cond.scalar<bool>()) return absl::OkStatus();
    std::vector<std::string> data;
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      data.push_back(absl::StrCat("[", Summarize(ctx->input(i), summarize_), "]"));
    }
    return absl::InvalidArgumentError(absl::StrCat("assertion failed: ", absl::StrJoin(data, " ")));
  }
  bool IsExpensive() const override { return false; }
  // Its one effect, failing the step, is decided on the host by its
  // condition, which a recorded step's decisions include
  // (runtime/step_decisions.h): a recording is replayed only for runs whose
  // condition comes out as when it was recorded.
  bool ReplaysRight() const override { return true; }

 private:
  int64_t summarize_ = 3;
};

// CheckNumerics, and CheckNumericsV2 (v2), which tells +Inf from -Inf.
template <typename T>
class CheckNumericsOp : public OpKernel {
 public:
  explicit CheckNumericsOp(bool v2 = false) : v2_(v2) {}
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(message_, ctx.GetAttr<std::string>("message"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    bool nan = false, pos_inf = false, neg_inf = false;
    for (T v : x.flat<T>()) {
      nan |= std::isnan(v);
      pos_inf |= std::isinf(v) && v > 0;
      neg_inf |= std::isinf(v) && v < 0;
    }
    if (nan || pos_inf || neg_inf) {
      std::string what;
      if (!v2_) {
        what = nan && (pos_inf || neg_inf) ? "Inf and NaN" : (nan ? "NaN" : "Inf");
      } else {
        what = neg_inf && pos_inf ? "-Inf and +Inf" : (neg_inf ? "-Inf" : (pos_inf ? "+Inf" : ""));
        if (nan) what = what.empty() ? "NaN" : absl::StrCat(what, " and NaN");
      }
      return absl::InvalidArgumentError(absl::StrCat(message_, " : Tensor had ", what, " values"));
    }
    ctx->set_output(0, x);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  const bool v2_;
  std::string message_;
};

}  // namespace

absl::Status RegisterCheckOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Assert")
                                    .Input("condition: bool")
                                    .Input("data: T")
                                    .Attr("T: list(type)")
                                    .Attr("summarize: int = 3")
                                    .SetIsStateful()));
  for (const char* op : {"CheckNumerics", "CheckNumericsV2"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(op)
                                      .Input("tensor: T")
                                      .Output("output: T")
                                      .Attr("T: {bfloat16, half, float, double}")
                                      .Attr("message: string")
                                      .SetIsStateful()
                                      .SetShapeFn(internal::UnchangedShape)));
  }
  return absl::OkStatus();
}

void RegisterCheckKernels(KernelRegistry* kernels) {
  kernels->Register<AssertOp>(KernelDef("Assert", kDeviceTypeCpu));
  kernels->Register<CheckNumericsOp<float>>(
      KernelDef("CheckNumerics", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  kernels->Register<CheckNumericsOp<double>>(
      KernelDef("CheckNumerics", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
  kernels->Register(KernelDef("CheckNumericsV2", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
                    [] { return std::make_unique<CheckNumericsOp<float>>(true); });
  kernels->Register(KernelDef("CheckNumericsV2", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE),
                    [] { return std::make_unique<CheckNumericsOp<double>>(true); });
}

namespace ops {

Node* Assert(const Scope& scope, Input condition, absl::Span<const Input> data, int64_t summarize,
             std::source_location loc) {
  return scope.Op("Assert", loc)
      .Input(condition)
      .InputList(data)
      .Attr("summarize", summarize)
      .Finalize();
}

Output CheckNumerics(const Scope& scope, Input tensor, const std::string& message,
                     std::source_location loc) {
  return scope.Op("CheckNumerics", loc).Input(tensor).Attr("message", message).Finalize1();
}

}  // namespace ops
}  // namespace sluice
