#include "ops/random/random_shuffle_ops.h"

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/random/random_kernels.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

class RandomShuffleOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(int64_t seed, ctx.GetAttr<int64_t>("seed"));
    ASSIGN_OR_RETURN(int64_t seed2, ctx.GetAttr<int64_t>("seed2"));
    const std::array<uint32_t, 4> words = RandomSeedWords(seed, seed2);
    std::seed_seq seq(words.begin(), words.end());
    absl::MutexLock lock(&mu_);
    engine_.seed(seq);
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (in.dims() == 0 || in.dim_size(0) <= 1) {
      ctx->set_output(0, in);
      return absl::OkStatus();
    }
    const int64_t n = in.dim_size(0);
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    {
      absl::MutexLock lock(&mu_);
      for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
        std::uniform_int_distribution<int64_t> pick(0, i);
        std::swap(order[i], order[pick(engine_)]);
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const int64_t row = in.NumElements() / n;
    if (HoldsStrings(in.dtype())) {
      const std::string* src = in.data<std::string>();
      std::string* dst = out->data<std::string>();
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t k = 0; k < row; ++k) dst[i * row + k] = src[order[i] * row + k];
      }
      return absl::OkStatus();
    }
    if (HoldsVariants(in.dtype())) {
      return absl::UnimplementedError("RandomShuffle of variant tensors");
    }
    const size_t bytes = static_cast<size_t>(row) * DataTypeSize(in.dtype());
    const char* src = static_cast<const char*>(in.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * bytes, src + order[i] * bytes, bytes);
    return absl::OkStatus();
  }

 private:
  absl::Mutex mu_;
  std::mt19937_64 engine_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::Status RegisterRandomShuffleOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RandomShuffle")
                                    .Input("value: T")
                                    .Output("output: T")
                                    .Attr("seed: int = 0")
                                    .Attr("seed2: int = 0")
                                    .Attr("T: type")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, c->input(0));
                                      return absl::OkStatus();
                                    })));
  return ops->SetNoGradient("RandomShuffle");
}

void RegisterRandomShuffleKernels(KernelRegistry* k) {
  k->Register<RandomShuffleOp>(KernelDef("RandomShuffle", kDeviceTypeCpu));
}

namespace ops {

Output RandomShuffle(const Scope& s, Input value, const RandomShuffleAttrs& a,
                     std::source_location loc) {
  return s.Op("RandomShuffle", loc)
      .Input(value)
      .Attr("seed", a.seed)
      .Attr("seed2", a.seed2)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
