// The candidate samplers against TensorFlow 2.21's draws and expected
// counts for the same seeds (log-uniform unique and not, uniform, learned
// unigram over two runs, fixed unigram from a list and from a sharded
// vocabulary file, all), ComputeAccidentalHits, the log-uniform
// frequencies over many draws, and the errors.
#include "ops/nn/candidate_sampling_ops.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"
#include "runtime/atomic_file.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::ExpectTensor;
using testing_util::TryEval;

Tensor Classes(std::vector<int64_t> v, int64_t cols) {
  const int64_t rows = static_cast<int64_t>(v.size()) / cols;
  return Tensor::FromVector<int64_t>(v, TensorShape({rows, cols}));
}

// Runs the three outputs `runs` times in one session; the last run's.
std::vector<Tensor> RunSampler(const Scope& s, const ops::CandidateSample& c, int runs = 1) {
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(BuiltinSessionConfig(), *s.graph());
  EXPECT_TRUE(session.ok()) << session.status();
  std::vector<Tensor> out;
  for (int i = 0; i < runs && session.ok(); ++i) {
    absl::StatusOr<std::vector<Tensor>> r = (*session)->Run(
        {}, {c.sampled_candidates.name(), c.true_expected_count.name(),
             c.sampled_expected_count.name()},
        {});
    EXPECT_TRUE(r.ok()) << r.status();
    if (r.ok()) out = *r;
  }
  return out;
}

TEST(CandidateSamplingTest, LogUniformAndUniformAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output t = ops::Const(s, Classes({3, 7, 0, 1}, 2));
  std::vector<Tensor> lu = RunSampler(s, ops::LogUniformCandidateSampler(
                                      s, t, {.num_true = 2, .num_sampled = 6, .unique = true,
                                             .range_max = 20, .seed = 1, .seed2 = 2}));
  ExpectTensor<int64_t>(lu[0], TensorShape({6}), {1, 2, 17, 11, 4, 5});
  ExpectTensor<float>(lu[1], TensorShape({2, 2}), {0.45607644f, 0.27067852f, 0.87340343f, 0.6812596f});
  ExpectTensor<float>(lu[2], TensorShape({6}),
                      {0.6812596f, 0.54799885f, 0.13354704f, 0.19195704f, 0.38983476f, 0.3401029f});
  std::vector<Tensor> lun = RunSampler(s, ops::LogUniformCandidateSampler(
                                       s, t, {.num_true = 2, .num_sampled = 5, .unique = false,
                                              .range_max = 1000, .seed = 3, .seed2 = 4}));
  ExpectTensor<int64_t>(lun[0], TensorShape({5}), {13, 56, 7, 392, 0});
  ExpectTensor<float>(lun[2], TensorShape({5}),
                      {0.04993148f, 0.012586742f, 0.08524187f, 0.0018391863f, 0.5016441f});
  std::vector<Tensor> un = RunSampler(s, ops::UniformCandidateSampler(
                                      s, t, {.num_true = 2, .num_sampled = 4, .unique = true,
                                             .range_max = 10, .seed = 5, .seed2 = 6}));
  ExpectTensor<int64_t>(un[0], TensorShape({4}), {5, 9, 3, 1});
  ExpectTensor<float>(un[2], TensorShape({4}), {0.5217031f, 0.5217031f, 0.5217031f, 0.5217031f});
}

TEST(CandidateSamplingTest, LearnedUnigramCountsTheTrueClasses) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::CandidateSample c = ops::LearnedUnigramCandidateSampler(
      s, ops::Const(s, Classes({3, 7, 0, 1}, 2)),
      {.num_true = 2, .num_sampled = 4, .unique = false, .range_max = 10, .seed = 7, .seed2 = 8});
  std::vector<Tensor> first = RunSampler(s, c, 1);
  ExpectTensor<int64_t>(first[0], TensorShape({4}), {6, 8, 7, 2});
  ExpectTensor<float>(first[2], TensorShape({4}), {0.4f, 0.4f, 0.4f, 0.4f});
  // The second run: ids 0, 1, 3 and 7 now weigh 2 of 14.
  std::vector<Tensor> second = RunSampler(s, c, 2);
  ExpectTensor<int64_t>(second[0], TensorShape({4}), {3, 4, 9, 5});
  ExpectTensor<float>(second[1], TensorShape({2, 2}), {0.5714286f, 0.5714286f, 0.5714286f, 0.5714286f});
  ExpectTensor<float>(second[2], TensorShape({4}), {0.5714286f, 0.2857143f, 0.2857143f, 0.2857143f});
}

TEST(CandidateSamplingTest, FixedUnigramFromAListAndFromAShardedFile) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Tensor> fx = RunSampler(
      s, ops::FixedUnigramCandidateSampler(
             s, ops::Const(s, Classes({3, 7, 0, 1}, 2)),
             {.num_true = 2, .num_sampled = 5, .unique = true, .range_max = 10, .seed = 9,
              .seed2 = 10},
             {.distortion = 0.75f, .unigrams = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}));
  ExpectTensor<int64_t>(fx[0], TensorShape({5}), {2, 8, 3, 7, 6});
  ExpectTensor<float>(fx[1], TensorShape({2, 2}), {0.40583515f, 0.68253064f, 0.14348438f, 0.24131103f});
  ExpectTensor<float>(fx[2], TensorShape({5}),
                      {0.3270737f, 0.7455667f, 0.40583515f, 0.68253064f, 0.6174875f});
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string vocab = std::string(tmp != nullptr ? tmp : "/tmp") + "/vocab.csv";
  ASSERT_TRUE(WriteFileAtomically(vocab, "a,5\nb,1\nc,0.5\nd,3\ne,2\nf,4\n").ok());
  std::vector<Tensor> fv = RunSampler(
      s, ops::FixedUnigramCandidateSampler(
             s, ops::Const(s, Classes({1, 2}, 1)),
             {.num_true = 1, .num_sampled = 3, .unique = false, .range_max = 4, .seed = 11,
              .seed2 = 12},
             {.vocab_file = vocab, .num_reserved_ids = 2, .num_shards = 2, .shard = 0}));
  ExpectTensor<int64_t>(fv[0], TensorShape({3}), {3, 2, 3});
  ExpectTensor<float>(fv[1], TensorShape({2, 1}), {0.375f, 1.125f});
  ExpectTensor<float>(fv[2], TensorShape({3}), {1.5f, 1.125f, 1.5f});
}

TEST(CandidateSamplingTest, AllAndAccidentalHits) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> all = s.Op("AllCandidateSampler")
                                .Input(ops::Const(s, Classes({3, 0, 0, 1}, 2)))
                                .Attr("num_true", int64_t{2})
                                .Attr("num_sampled", int64_t{5})
                                .Attr("unique", true)
                                .FinalizeAll();
  ASSERT_EQ(all.size(), 3u);
  std::vector<Tensor> a = RunSampler(s, {all[0], all[1], all[2]});
  ExpectTensor<int64_t>(a[0], TensorShape({5}), {0, 1, 2, 3, 4});
  ExpectTensor<float>(a[1], TensorShape({2, 2}), {1, 1, 1, 1});
  ops::AccidentalHits hits = ops::ComputeAccidentalHits(
      s, ops::Const(s, Classes({3, 7, 0, 1}, 2)),
      ops::Const(s, std::vector<int64_t>{1, 7, 9, 3}), 2);
  ExpectTensor<int32_t>(testing_util::Eval(s, {}, hits.indices), TensorShape({3}), {0, 0, 1});
  ExpectTensor<int64_t>(testing_util::Eval(s, {}, hits.ids), TensorShape({3}), {3, 1, 0});
  ExpectTensor<float>(testing_util::Eval(s, {}, hits.weights), TensorShape({3}),
                      {-FLT_MAX, -FLT_MAX, -FLT_MAX});
}

TEST(CandidateSamplingTest, LogUniformFrequenciesFollowZipf) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::CandidateSample c = ops::LogUniformCandidateSampler(
      s, ops::Const(s, Classes({0}, 1)),
      {.num_true = 1, .num_sampled = 20000, .unique = false, .range_max = 100, .seed = 5});
  std::vector<Tensor> out = RunSampler(s, c);
  std::vector<int> counts(100, 0);
  for (int64_t id : out[0].flat<int64_t>()) ++counts[id];
  for (int k : {0, 1, 5, 50}) {
    const double p = std::log((k + 2.0) / (k + 1.0)) / std::log(101.0);
    EXPECT_NEAR(counts[k] / 20000.0, p, 4 * std::sqrt(p / 20000.0) + 1e-3) << k;
  }
}

TEST(CandidateSamplingTest, BadInputsAndAttrs) {
  auto message = [](const Tensor& classes, const ops::CandidateSamplerAttrs& a) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output t = testing_util::Placeholder(s, DT_INT64);
    ops::CandidateSample c = ops::LogUniformCandidateSampler(s, t, a);
    return std::string(TryEval(s, {{t, classes}}, c.sampled_candidates).status().message());
  };
  const ops::CandidateSamplerAttrs a = {.num_true = 2, .num_sampled = 3, .range_max = 10};
  EXPECT_THAT(message(Tensor::FromVector<int64_t>({1, 2}), a), HasSubstr("must be a matrix"));
  EXPECT_THAT(message(Classes({1, 2, 3}, 3), a), HasSubstr("must have num_true columns"));
  EXPECT_THAT(message(Classes({1, 10}, 2), a), HasSubstr("out of range [0, 10), received 10"));
  EXPECT_THAT(message(Classes({1, 2}, 2), {.num_true = 2, .num_sampled = 11, .range_max = 10}),
              HasSubstr("Sampler's range is too small"));
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::CandidateSample both = ops::FixedUnigramCandidateSampler(
      s, ops::Const(s, Classes({1}, 1)), {.num_sampled = 1, .range_max = 2},
      {.vocab_file = "/nonexistent", .unigrams = {1, 2}});
  EXPECT_THAT(std::string(TryEval(s, {}, both.sampled_candidates).status().message()),
              HasSubstr("Must only provide one of vocab_file and unigrams"));
  Scope s2 = Scope::NewRootScope(BuiltinOps());
  ops::CandidateSample short_list = ops::FixedUnigramCandidateSampler(
      s2, ops::Const(s2, Classes({1}, 1)), {.num_sampled = 1, .range_max = 3}, {.unigrams = {1, 2}});
  EXPECT_THAT(std::string(TryEval(s2, {}, short_list.sampled_candidates).status().message()),
              HasSubstr("range is 3 must be equal to weights size  2"));
}

}  // namespace
}  // namespace sluice
