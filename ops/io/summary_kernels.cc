// CPU kernels of the summary ops: each builds a tensorflow.Summary and
// serializes it into a scalar string output.
#include <cmath>
#include <string>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "graph/proto/summary.pb.h"
#include "base/status_macros.h"
#include "ops/io/histogram.h"
#include "ops/io/summary_ops.h"

namespace sluice {
namespace {

absl::Status SetSummaryOutput(OpKernelContext* ctx, const ::tensorflow::Summary& summary) {
  ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
  if (!summary.SerializeToString(&out->scalar<std::string>())) {
    return absl::InternalError(absl::StrCat(ctx->node().op(), ": cannot serialize the Summary"));
  }
  return absl::OkStatus();
}

template <typename T>
class ScalarSummaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& tags = ctx->input(0);
    const Tensor& values = ctx->input(1);
    if (tags.shape() != values.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ScalarSummary: tags and values must have the same shape, got tags ",
                       tags.shape().DebugString(), " and values ", values.shape().DebugString()));
    }
    ::tensorflow::Summary summary;
    absl::Span<const std::string> tag = tags.flat<std::string>();
    absl::Span<const T> value = values.flat<T>();
    for (size_t i = 0; i < tag.size(); ++i) {
      ::tensorflow::Summary::Value* v = summary.add_value();
      v->set_tag(tag[i]);
      v->set_simple_value(static_cast<float>(value[i]));
    }
    return SetSummaryOutput(ctx, summary);
  }
  bool IsExpensive() const override { return false; }
};

template <typename T>
class HistogramSummaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& tag = ctx->input(0);
    if (tag.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "HistogramSummary: tag must be a scalar, got shape ", tag.shape().DebugString()));
    }
    const std::string& name = tag.scalar<std::string>();
    Histogram histogram;
    absl::Span<const T> values = ctx->input(1).flat<T>();
    for (size_t i = 0; i < values.size(); ++i) {
      const double v = static_cast<double>(values[i]);
      if (!std::isfinite(v)) {
        return absl::InvalidArgumentError(absl::StrCat("HistogramSummary: non-finite value ", v,
                                                       " at index ", i, " of the values for tag '",
                                                       name, "'"));
      }
      histogram.Add(v);
    }
    ::tensorflow::Summary summary;
    ::tensorflow::Summary::Value* value = summary.add_value();
    value->set_tag(name);
    histogram.EncodeToProto(value->mutable_histo());
    return SetSummaryOutput(ctx, summary);
  }
};

class MergeSummaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ::tensorflow::Summary merged;
    std::unordered_set<std::string> tags;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      absl::Span<const std::string> serialized = ctx->input(i).flat<std::string>();
      for (size_t j = 0; j < serialized.size(); ++j) {
        ::tensorflow::Summary summary;
        if (!summary.ParseFromString(serialized[j])) {
          return absl::InvalidArgumentError(
              absl::StrCat("MergeSummary: element ", j, " of input ", i,
                           " is not a serialized Summary (", serialized[j].size(), " bytes)"));
        }
        for (::tensorflow::Summary::Value& v : *summary.mutable_value()) {
          if (!tags.insert(v.tag()).second) {
            return absl::InvalidArgumentError(absl::StrCat(
                "MergeSummary: duplicate tag '", v.tag(), "' (again in input ", i, ")"));
          }
          *merged.add_value() = std::move(v);
        }
      }
    }
    return SetSummaryOutput(ctx, merged);
  }
  bool IsExpensive() const override { return false; }
};

template <typename T>
void RegisterTyped(KernelRegistry* kernels) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  kernels->Register<ScalarSummaryOp<T>>(
      KernelDef("ScalarSummary", kDeviceTypeCpu).TypeConstraint("T", kType));
  kernels->Register<HistogramSummaryOp<T>>(
      KernelDef("HistogramSummary", kDeviceTypeCpu).TypeConstraint("T", kType));
}

}  // namespace

void RegisterSummaryKernels(KernelRegistry* kernels) {
  RegisterTyped<float>(kernels);
  RegisterTyped<double>(kernels);
  RegisterTyped<int32_t>(kernels);
  RegisterTyped<int64_t>(kernels);
  kernels->Register<MergeSummaryOp>(KernelDef("MergeSummary", kDeviceTypeCpu));
}

}  // namespace sluice
