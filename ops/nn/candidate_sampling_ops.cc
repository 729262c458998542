// The candidate samplers and ComputeAccidentalHits: op definitions, CPU
// kernels and wrappers (ops/nn/candidate_sampling_ops.h).
#include "ops/nn/candidate_sampling_ops.h"

#include <cfloat>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"
#include "ops/nn/internal/range_sampler.h"
#include "ops/random/internal/philox_stream.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// The shell of every sampler kernel: checks, draws, learned updates.
class CandidateSamplerOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(num_true_, ctx.GetAttr<int64_t>("num_true"));
    ASSIGN_OR_RETURN(num_sampled_, ctx.GetAttr<int64_t>("num_sampled"));
    ASSIGN_OR_RETURN(unique_, ctx.GetAttr<bool>("unique"));
    RETURN_IF_ERROR(generator_.Init(ctx));
    ASSIGN_OR_RETURN(sampler_, MakeSampler(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& true_classes = ctx->input(0);
    if (true_classes.dims() != 2) {
      return absl::InvalidArgumentError("true_classes must be a matrix");
    }
    if (true_classes.dim_size(1) != num_true_) {
      return absl::InvalidArgumentError(
          absl::StrCat("true_classes must have num_true columns, expected: ",
                       true_classes.dim_size(1), " was: ", num_true_));
    }
    if (unique_ && num_sampled_ > sampler_->range()) {
      return absl::InvalidArgumentError("Sampler's range is too small.");
    }
    const int64_t batch = true_classes.dim_size(0);
    absl::Span<const int64_t> truth(true_classes.data<int64_t>(), batch * num_true_);
    for (int64_t c : truth) {
      if (c < 0 || c >= sampler_->range()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "`true_candidate` out of range [0, ", sampler_->range(), "), received ", c));
      }
    }
    ASSIGN_OR_RETURN(Tensor * sampled, ctx->allocate_output(0, TensorShape({num_sampled_})));
    ASSIGN_OR_RETURN(Tensor * true_counts,
                     ctx->allocate_output(1, TensorShape({batch, num_true_})));
    ASSIGN_OR_RETURN(Tensor * sampled_counts, ctx->allocate_output(2, TensorShape({num_sampled_})));
    // TensorFlow's generous reservation (rejection may use more words than
    // drawn ids; past it words repeat, as in TensorFlow).
    PhiloxStream rng(generator_.ReserveSamples32(2048 * static_cast<uint64_t>(num_sampled_)));
    sampler_->SampleBatch(&rng, unique_, absl::MakeSpan(sampled->data<int64_t>(), num_sampled_),
                          absl::MakeSpan(sampled_counts->data<float>(), num_sampled_), truth,
                          absl::MakeSpan(true_counts->data<float>(), batch * num_true_));
    sampler_->Update(truth);
    return absl::OkStatus();
  }

 protected:
  virtual absl::StatusOr<std::unique_ptr<RangeSampler>> MakeSampler(
      const OpKernelConstruction& ctx) = 0;

  int64_t num_sampled() const { return num_sampled_; }

 private:
  int64_t num_true_ = 1, num_sampled_ = 1;
  bool unique_ = true;
  SeededPhilox generator_;
  std::unique_ptr<RangeSampler> sampler_;
};

absl::StatusOr<int64_t> RangeMax(const OpKernelConstruction& ctx, bool unigram) {
  ASSIGN_OR_RETURN(int64_t range, ctx.GetAttr<int64_t>("range_max"));
  if (range <= 0) return absl::InvalidArgumentError("range_max must be positive");
  if (unigram && range >= std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "range_max must be less than ", std::numeric_limits<int32_t>::max(),
        " for unigram samplers, got ", range));
  }
  return range;
}

template <typename Sampler>
class SimpleSamplerOp : public CandidateSamplerOp {
 protected:
  absl::StatusOr<std::unique_ptr<RangeSampler>> MakeSampler(
      const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(int64_t range,
                     RangeMax(ctx, std::is_same_v<Sampler, UnigramRangeSampler>));
    return std::make_unique<Sampler>(range);
  }
};

class AllSamplerOp : public CandidateSamplerOp {
 protected:
  absl::StatusOr<std::unique_ptr<RangeSampler>> MakeSampler(
      const OpKernelConstruction&) override {
    return std::make_unique<AllRangeSampler>(num_sampled());
  }
};

class FixedUnigramSamplerOp : public CandidateSamplerOp {
 protected:
  absl::StatusOr<std::unique_ptr<RangeSampler>> MakeSampler(
      const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(int64_t range, RangeMax(ctx, false));
    ASSIGN_OR_RETURN(std::string vocab_file, ctx.GetAttr<std::string>("vocab_file"));
    ASSIGN_OR_RETURN(std::vector<float> unigrams, ctx.GetAttr<std::vector<float>>("unigrams"));
    ASSIGN_OR_RETURN(float distortion, ctx.GetAttr<float>("distortion"));
    ASSIGN_OR_RETURN(int64_t reserved, ctx.GetAttr<int64_t>("num_reserved_ids"));
    ASSIGN_OR_RETURN(int64_t shards, ctx.GetAttr<int64_t>("num_shards"));
    ASSIGN_OR_RETURN(int64_t shard, ctx.GetAttr<int64_t>("shard"));
    ASSIGN_OR_RETURN(std::unique_ptr<FixedUnigramRangeSampler> s,
                     FixedUnigramRangeSampler::Create(range, distortion, reserved, shards, shard,
                                                      unigrams, vocab_file));
    return std::unique_ptr<RangeSampler>(std::move(s));
  }
};

class ComputeAccidentalHitsOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(num_true_, ctx.GetAttr<int64_t>("num_true"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& truth = ctx->input(0);
    if (truth.dims() != 2 || truth.dim_size(1) != num_true_) {
      return absl::InvalidArgumentError("true_candidates must be a batch_size * num_true matrix");
    }
    const Tensor& sampled = ctx->input(1);
    if (sampled.dims() != 1) {
      return absl::InvalidArgumentError(
          "sampled_candidates must be a vector, which is typically an output from "
          "CandidateSampler");
    }
    absl::flat_hash_map<int64_t, int64_t> position;
    for (int64_t i = 0; i < sampled.dim_size(0); ++i) position[sampled.data<int64_t>()[i]] = i;
    std::vector<int32_t> rows;
    std::vector<int64_t> ids;
    const int64_t* t = truth.data<int64_t>();
    for (int64_t i = 0; i < truth.dim_size(0); ++i) {
      for (int64_t j = 0; j < num_true_; ++j) {
        auto hit = position.find(t[i * num_true_ + j]);
        if (hit == position.end()) continue;
        rows.push_back(static_cast<int32_t>(i));
        ids.push_back(hit->second);
      }
    }
    const int64_t n = static_cast<int64_t>(rows.size());
    ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(0, TensorShape({n})));
    ASSIGN_OR_RETURN(Tensor * out_ids, ctx->allocate_output(1, TensorShape({n})));
    ASSIGN_OR_RETURN(Tensor * weights, ctx->allocate_output(2, TensorShape({n})));
    for (int64_t k = 0; k < n; ++k) {
      indices->data<int32_t>()[k] = rows[k];
      out_ids->data<int64_t>()[k] = ids[k];
      weights->data<float>()[k] = -FLT_MAX;
    }
    return absl::OkStatus();
  }

 private:
  int64_t num_true_ = 1;
};

absl::Status SamplerShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 2));
  ASSIGN_OR_RETURN(int64_t num_true, c->GetAttr<int64_t>("num_true"));
  ASSIGN_OR_RETURN(int64_t num_sampled, c->GetAttr<int64_t>("num_sampled"));
  const TensorShape& t = c->input(0);
  const int64_t batch = t.unknown_rank() ? TensorShape::kUnknownDim : t.dim(0);
  c->set_output(0, TensorShape({num_sampled}));
  c->set_output(1, TensorShape({batch, num_true}));
  c->set_output(2, TensorShape({num_sampled}));
  return absl::OkStatus();
}

OpDefBuilder Sampler(const char* name, bool has_range) {
  OpDefBuilder b(name);
  b.Input("true_classes: int64")
      .Output("sampled_candidates: int64")
      .Output("true_expected_count: float")
      .Output("sampled_expected_count: float")
      .Attr("num_true: int >= 1")
      .Attr("num_sampled: int >= 1")
      .Attr("unique: bool");
  if (has_range) b.Attr("range_max: int >= 1");
  b.Attr("seed: int = 0").Attr("seed2: int = 0").SetIsStateful().SetShapeFn(SamplerShape);
  return b;
}

constexpr const char* kSimpleSamplers[] = {
    "UniformCandidateSampler", "LogUniformCandidateSampler", "LearnedUnigramCandidateSampler",
    "ThreadUnsafeUnigramCandidateSampler"};

ops::CandidateSample Sample(const char* op, const Scope& s, Input true_classes,
                            const ops::CandidateSamplerAttrs& a, std::source_location loc,
                            const ops::FixedUnigramAttrs* fixed = nullptr) {
  OpBuilder b = s.Op(op, loc);
  b.Input(true_classes)
      .Attr("num_true", a.num_true)
      .Attr("num_sampled", a.num_sampled)
      .Attr("unique", a.unique)
      .Attr("range_max", a.range_max)
      .Attr("seed", a.seed)
      .Attr("seed2", a.seed2);
  if (fixed != nullptr) {
    b.Attr("vocab_file", fixed->vocab_file)
        .Attr("distortion", fixed->distortion)
        .Attr("num_reserved_ids", fixed->num_reserved_ids)
        .Attr("num_shards", fixed->num_shards)
        .Attr("shard", fixed->shard)
        .SetAttr("unigrams", MakeAttr(absl::MakeConstSpan(fixed->unigrams)));
  }
  std::vector<Output> outs = b.FinalizeAll();
  if (outs.size() != 3) return ops::CandidateSample{};
  return ops::CandidateSample{outs[0], outs[1], outs[2]};
}

}  // namespace

absl::Status RegisterCandidateSamplingOps(OpRegistry* ops) {
  for (const char* name : kSimpleSamplers) {
    RETURN_IF_ERROR(ops->Register(Sampler(name, true)));
  }
  RETURN_IF_ERROR(ops->Register(Sampler("AllCandidateSampler", false)));
  RETURN_IF_ERROR(ops->Register(Sampler("FixedUnigramCandidateSampler", true)
                                    .Attr("vocab_file: string = ''")
                                    .Attr("distortion: float = 1.0")
                                    .Attr("num_reserved_ids: int = 0")
                                    .Attr("num_shards: int >= 1 = 1")
                                    .Attr("shard: int >= 0 = 0")
                                    .Attr("unigrams: list(float)")
                                    .SetAttrDefault("unigrams", MakeAttr(absl::Span<const float>()))));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ComputeAccidentalHits")
                                    .Input("true_classes: int64")
                                    .Input("sampled_candidates: int64")
                                    .Output("indices: int32")
                                    .Output("ids: int64")
                                    .Output("weights: float")
                                    .Attr("num_true: int")
                                    .Attr("seed: int = 0")
                                    .Attr("seed2: int = 0")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 2));
                                      RETURN_IF_ERROR(c->WithRank(1, 1));
                                      for (int i = 0; i < 3; ++i) c->set_output(i, TensorShape({-1}));
                                      return absl::OkStatus();
                                    })));
  for (const char* op : kSimpleSamplers) RETURN_IF_ERROR(ops->SetNoGradient(op));
  for (const char* op : {"AllCandidateSampler", "FixedUnigramCandidateSampler",
                         "ComputeAccidentalHits"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

void RegisterCandidateSamplingKernels(KernelRegistry* k) {
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  k->Register<SimpleSamplerOp<UniformRangeSampler>>(cpu("UniformCandidateSampler"));
  k->Register<SimpleSamplerOp<LogUniformRangeSampler>>(cpu("LogUniformCandidateSampler"));
  // Both unigram ops on the locked sampler: the lock costs nothing
  // measurable and the thread-unsafe one's draws are the same.
  k->Register<SimpleSamplerOp<UnigramRangeSampler>>(cpu("LearnedUnigramCandidateSampler"));
  k->Register<SimpleSamplerOp<UnigramRangeSampler>>(cpu("ThreadUnsafeUnigramCandidateSampler"));
  k->Register<AllSamplerOp>(cpu("AllCandidateSampler"));
  k->Register<FixedUnigramSamplerOp>(cpu("FixedUnigramCandidateSampler"));
  k->Register<ComputeAccidentalHitsOp>(cpu("ComputeAccidentalHits"));
}

namespace ops {

CandidateSample UniformCandidateSampler(const Scope& s, Input true_classes,
                                        const CandidateSamplerAttrs& a, std::source_location loc) {
  return Sample("UniformCandidateSampler", s, true_classes, a, loc);
}

CandidateSample LogUniformCandidateSampler(const Scope& s, Input true_classes,
                                           const CandidateSamplerAttrs& a,
                                           std::source_location loc) {
  return Sample("LogUniformCandidateSampler", s, true_classes, a, loc);
}

CandidateSample LearnedUnigramCandidateSampler(const Scope& s, Input true_classes,
                                               const CandidateSamplerAttrs& a,
                                               std::source_location loc) {
  return Sample("LearnedUnigramCandidateSampler", s, true_classes, a, loc);
}

CandidateSample FixedUnigramCandidateSampler(const Scope& s, Input true_classes,
                                             const CandidateSamplerAttrs& a,
                                             const FixedUnigramAttrs& fixed,
                                             std::source_location loc) {
  return Sample("FixedUnigramCandidateSampler", s, true_classes, a, loc, &fixed);
}

AccidentalHits ComputeAccidentalHits(const Scope& s, Input true_classes, Input sampled_candidates,
                                     int64_t num_true, std::source_location loc) {
  std::vector<Output> outs = s.Op("ComputeAccidentalHits", loc)
                                 .Input(true_classes)
                                 .Input(sampled_candidates)
                                 .Attr("num_true", num_true)
                                 .FinalizeAll();
  if (outs.size() != 3) return AccidentalHits{};
  return AccidentalHits{outs[0], outs[1], outs[2]};
}

}  // namespace ops
}  // namespace sluice
