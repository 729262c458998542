// CPU kernels of the summary ops: each builds a tensorflow.Summary and
// serializes it into a scalar string output.
#include <string>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/proto/summary.pb.h"
#include "ops/internal/index_tensors.h"
#include "ops/io/internal/summary_values.h"
#include "ops/io/summary_ops.h"

namespace sluice {
namespace {

// Input `i` as a scalar string ("tag must be a scalar, got shape [2]").
absl::StatusOr<const std::string*> ScalarStringInput(OpKernelContext* ctx, int i,
                                                     const char* what) {
  return internal::ScalarOf<std::string>(ctx->input(i), what);
}

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

class HistogramSummaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const std::string* tag, ScalarStringInput(ctx, 0, "tag"));
    ::tensorflow::Summary summary;
    RETURN_IF_ERROR(summary::AddHistogram(ctx->input(1), *tag, &summary));
    return SetSummaryOutput(ctx, summary);
  }
};

class ImageSummaryOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(max_images_, ctx.GetAttr<int64_t>("max_images"));
    ASSIGN_OR_RETURN(::tensorflow::TensorProto color,
                     ctx.GetAttr<::tensorflow::TensorProto>("bad_color"));
    ASSIGN_OR_RETURN(bad_color_, Tensor::FromProto(color));
    if (bad_color_.dtype() != DT_UINT8 || bad_color_.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad_color must be a uint8 vector, got ", bad_color_.DebugString()));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const std::string* tag, ScalarStringInput(ctx, 0, "tag"));
    ::tensorflow::Summary summary;
    RETURN_IF_ERROR(summary::AddImages(ctx->input(1), *tag, max_images_, bad_color_, &summary));
    return SetSummaryOutput(ctx, summary);
  }

 private:
  int64_t max_images_ = 3;
  Tensor bad_color_;
};

// AudioSummaryV2 (the rate an input) and AudioSummary (an attr).
class AudioSummaryOp : public OpKernel {
 public:
  explicit AudioSummaryOp(bool rate_is_input) : rate_is_input_(rate_is_input) {}
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(max_outputs_, ctx.GetAttr<int64_t>("max_outputs"));
    if (!rate_is_input_) {
      ASSIGN_OR_RETURN(sample_rate_, ctx.GetAttr<float>("sample_rate"));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const std::string* tag, ScalarStringInput(ctx, 0, "tag"));
    float rate = sample_rate_;
    if (rate_is_input_) {
      const Tensor& r = ctx->input(2);
      if (r.dims() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("sample_rate must be a scalar, got shape ", r.shape().DebugString()));
      }
      rate = r.scalar<float>();
    }
    ::tensorflow::Summary summary;
    RETURN_IF_ERROR(summary::AddAudio(ctx->input(1), *tag, max_outputs_, rate, &summary));
    return SetSummaryOutput(ctx, summary);
  }

 private:
  const bool rate_is_input_;
  int64_t max_outputs_ = 3;
  float sample_rate_ = 0;
};

class TensorSummaryV2Op : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const std::string* tag, ScalarStringInput(ctx, 0, "tag"));
    ASSIGN_OR_RETURN(const std::string* metadata,
                     ScalarStringInput(ctx, 2, "serialized_summary_metadata"));
    ::tensorflow::Summary summary;
    RETURN_IF_ERROR(summary::AddTensor(ctx->input(1), *tag, *metadata, &summary));
    return SetSummaryOutput(ctx, summary);
  }
};

// TF1's form: the value named by the node, no tag.
class TensorSummaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ::tensorflow::Summary summary;
    RETURN_IF_ERROR(summary::AddTensor(ctx->input(0), "", "", &summary));
    summary.mutable_value(0)->set_node_name(ctx->node().name());
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
  kernels->Register<HistogramSummaryOp>(
      KernelDef("HistogramSummary", kDeviceTypeCpu).TypeConstraint("T", kType));
}

}  // namespace

void RegisterSummaryKernels(KernelRegistry* kernels) {
  RegisterTyped<float>(kernels);
  RegisterTyped<double>(kernels);
  RegisterTyped<int32_t>(kernels);
  RegisterTyped<int64_t>(kernels);
  kernels->Register<MergeSummaryOp>(KernelDef("MergeSummary", kDeviceTypeCpu));
  kernels->Register<ImageSummaryOp>(KernelDef("ImageSummary", kDeviceTypeCpu));
  kernels->Register(KernelDef("AudioSummaryV2", kDeviceTypeCpu),
                    [] { return std::make_unique<AudioSummaryOp>(true); });
  kernels->Register(KernelDef("AudioSummary", kDeviceTypeCpu),
                    [] { return std::make_unique<AudioSummaryOp>(false); });
  kernels->Register<TensorSummaryV2Op>(KernelDef("TensorSummaryV2", kDeviceTypeCpu));
  kernels->Register<TensorSummaryOp>(KernelDef("TensorSummary", kDeviceTypeCpu));
}

}  // namespace sluice
