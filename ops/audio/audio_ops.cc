// EncodeWav and DecodeWav: op definitions, CPU kernels and wrappers
// (ops/audio/audio_ops.h).
#include "ops/audio/audio_ops.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/audio/internal/wav.h"
#include "ops/internal/index_tensors.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

class EncodeWavOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& audio = ctx->input(0);
    const Tensor& rate = ctx->input(1);
    if (audio.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("audio must be 2-dimensional, got shape ", audio.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(const int32_t* rate_value, internal::ScalarOf<int32_t>(rate, "sample_rate"));
    const int32_t sample_rate = *rate_value;
    if (sample_rate <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("sample_rate must be in (0, 2^31), got ", sample_rate));
    }
    ASSIGN_OR_RETURN(std::string wav,
                     wav::EncodeS16(audio.data<float>(), static_cast<uint64_t>(sample_rate),
                                    static_cast<uint64_t>(audio.dim_size(1)),
                                    static_cast<uint64_t>(audio.dim_size(0))));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<std::string>() = std::move(wav);
    return absl::OkStatus();
  }
};

class DecodeWavOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(desired_channels_, ctx.GetAttr<int64_t>("desired_channels"));
    ASSIGN_OR_RETURN(desired_samples_, ctx.GetAttr<int64_t>("desired_samples"));
    if (desired_channels_ < -1 || desired_samples_ < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("desired_channels and desired_samples must be >= -1, got ",
                       desired_channels_, " and ", desired_samples_));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const std::string* contents,
                     internal::ScalarOf<std::string>(ctx->input(0), "contents"));
    ASSIGN_OR_RETURN(wav::Decoded in, wav::DecodeS16(*contents));
    const int64_t samples = desired_samples_ == -1 ? in.frames : desired_samples_;
    const int64_t channels = desired_channels_ == -1 ? in.channels : desired_channels_;
    ASSIGN_OR_RETURN(Tensor * audio, ctx->allocate_output(0, TensorShape({samples, channels})));
    float* out = audio->data<float>();
    for (int64_t i = 0; i < samples; ++i) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t source = std::min<int64_t>(c, in.channels - 1);
        out[i * channels + c] = i < in.frames ? in.samples[i * in.channels + source] : 0.0f;
      }
    }
    ASSIGN_OR_RETURN(Tensor * rate, ctx->allocate_output(1, TensorShape()));
    rate->scalar<int32_t>() = static_cast<int32_t>(in.sample_rate);
    return absl::OkStatus();
  }

 private:
  int64_t desired_channels_ = -1, desired_samples_ = -1;
};

}  // namespace

absl::Status RegisterAudioOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("EncodeWav")
                                    .Input("audio: float")
                                    .Input("sample_rate: int32")
                                    .Output("contents: string")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 2));
                                      RETURN_IF_ERROR(c->WithRank(1, 0));
                                      c->set_output(0, TensorShape());
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("DecodeWav")
          .Input("contents: string")
          .Output("audio: float")
          .Output("sample_rate: int32")
          .Attr("desired_channels: int = -1")
          .Attr("desired_samples: int = -1")
          .SetShapeFn([](InferenceContext* c) -> absl::Status {
            RETURN_IF_ERROR(c->WithRank(0, 0));
            ASSIGN_OR_RETURN(int64_t channels, c->GetAttr<int64_t>("desired_channels"));
            ASSIGN_OR_RETURN(int64_t samples, c->GetAttr<int64_t>("desired_samples"));
            c->set_output(0, TensorShape({samples, channels}));
            c->set_output(1, TensorShape());
            return absl::OkStatus();
          })));
  for (const char* op : {"EncodeWav", "DecodeWav"}) RETURN_IF_ERROR(ops->SetNoGradient(op));
  return absl::OkStatus();
}

void RegisterAudioKernels(KernelRegistry* k) {
  k->Register<EncodeWavOp>(KernelDef("EncodeWav", kDeviceTypeCpu));
  k->Register<DecodeWavOp>(KernelDef("DecodeWav", kDeviceTypeCpu));
}

namespace ops {

Output EncodeWav(const Scope& s, Input audio, Input sample_rate, std::source_location loc) {
  return s.Op("EncodeWav", loc).Input(audio).Input(sample_rate).Finalize1();
}

DecodeWavOutputs DecodeWav(const Scope& s, Input contents, int64_t desired_channels,
                           int64_t desired_samples, std::source_location loc) {
  std::vector<Output> outs = s.Op("DecodeWav", loc)
                                 .Input(contents)
                                 .Attr("desired_channels", desired_channels)
                                 .Attr("desired_samples", desired_samples)
                                 .FinalizeAll();
  if (outs.size() != 2) return {};
  return {outs[0], outs[1]};
}

}  // namespace ops
}  // namespace sluice
