// Definition, wrapper and CPU kernel of HistogramFixedWidth.
#include "ops/math/histogram_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

absl::Status HistogramShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(1, 1));
  RETURN_IF_ERROR(c->WithRank(2, 0));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> nbins, c->InputAsInts(2));
  const bool known = nbins.has_value() && nbins->size() == 1;
  if (known && (*nbins)[0] <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("nbins should be a positive number, but got '", (*nbins)[0], "'"));
  }
  c->set_output(0, TensorShape({known ? (*nbins)[0] : TensorShape::kUnknownDim}));
  return absl::OkStatus();
}

template <typename T, typename Out>
class HistogramFixedWidthOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& values = ctx->input(0);
    const Tensor& range = ctx->input(1);
    const Tensor& nbins_t = ctx->input(2);
    if (nbins_t.NumElements() != 1) {
      return absl::InvalidArgumentError("nbins should be a scalar.");
    }
    const int32_t nbins = nbins_t.flat<int32_t>()[0];
    if (nbins <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("nbins should be a positive number, but got '", nbins, "'"));
    }
    if (range.dims() != 1 || range.NumElements() != 2) {
      return absl::InvalidArgumentError("value_range should be a vector of 2 elements.");
    }
    const T lo = range.flat<T>()[0];
    const T hi = range.flat<T>()[1];
    if (!(lo < hi)) {
      return absl::InvalidArgumentError(
          absl::StrCat("value_range should satisfy value_range[0] < "
                       "value_range[1], but got '[",
                       lo, ", ", hi, "]'"));
    }
    absl::Span<const T> v = values.flat<T>();
    if constexpr (std::is_floating_point_v<T>) {
      for (T x : v) {
        if (std::isnan(x))
          return absl::InvalidArgumentError("Histogram values must not contain NaN");
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({nbins})));
    absl::Span<Out> counts = out->flat<Out>();
    std::fill(counts.begin(), counts.end(), Out(0));
    const double step = static_cast<double>(hi - lo) / static_cast<double>(nbins);
    const double last = static_cast<double>(nbins - 1);
    for (T x : v) {
      const T above = std::max(x, lo) - lo;
      const double bin = std::min(static_cast<double>(above) / step, last);
      ++counts[static_cast<int32_t>(bin)];
    }
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterFor(KernelRegistry* k) {
  auto def = [](DataType out) {
    return KernelDef("HistogramFixedWidth", kDeviceTypeCpu)
        .TypeConstraint("T", DataTypeToEnum<T>::value)
        .TypeConstraint("dtype", out);
  };
  k->Register<HistogramFixedWidthOp<T, int32_t>>(def(DT_INT32));
  k->Register<HistogramFixedWidthOp<T, int64_t>>(def(DT_INT64));
}

}  // namespace

absl::Status RegisterHistogramOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("HistogramFixedWidth")
                                    .Input("values: T")
                                    .Input("value_range: T")
                                    .Input("nbins: int32")
                                    .Output("out: dtype")
                                    .Attr("T: {int32, int64, float, double}")
                                    .Attr("dtype: {int32, int64} = DT_INT32")
                                    .SetShapeFn(HistogramShape)));
  return ops->SetNoGradient("HistogramFixedWidth");
}

void RegisterHistogramKernels(KernelRegistry* k) {
  RegisterFor<float>(k);
  RegisterFor<double>(k);
  RegisterFor<int32_t>(k);
  RegisterFor<int64_t>(k);
}

namespace ops {

Output HistogramFixedWidth(const Scope& s, Input values, Input value_range, Input nbins,
                           DataType dtype, std::source_location loc) {
  return s.Op("HistogramFixedWidth", loc)
      .Input(values)
      .Input(value_range)
      .Input(nbins)
      .Attr("dtype", dtype)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
