// CTCLoss and CTCGreedyDecoder against TensorFlow 2.21's values for the
// same inputs (np.random.RandomState(0).randn(6, 3, 5)), the loss's
// gradient against finite differences, and TensorFlow's errors.
#include "ops/nn/ctc_ops.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "graph/gradients.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::GradError;
using testing_util::Placeholder;
using testing_util::TryEval;

// [max_time 6, batch 3, classes 5].
const std::vector<float> kInputs = {1.764052391052246f, 0.40015721321105957f, 0.978738009929657f, 2.2408931255340576f, 1.8675580024719238f, -0.9772778749465942f, 0.9500884413719177f, -0.15135720372200012f, -0.10321885347366333f, 0.4105985164642334f, 0.14404356479644775f, 1.4542734622955322f, 0.7610377073287964f, 0.12167501449584961f, 0.44386324286460876f, 0.3336743414402008f, 1.4940791130065918f, -0.2051582634449005f, 0.3130677044391632f, -0.8540957570075989f, -2.5529897212982178f, 0.653618574142456f, 0.8644362092018127f, -0.7421650290489197f, 2.269754648208618f, -1.4543657302856445f, 0.04575851559638977f, -0.18718385696411133f, 1.5327792167663574f, 1.4693588018417358f, 0.154947429895401f, 0.37816253304481506f, -0.8877857327461243f, -1.980796456336975f, -0.34791216254234314f, 0.15634897351264954f, 1.2302906513214111f, 1.202379822731018f, -0.38732680678367615f, -0.302302747964859f, -1.0485529899597168f, -1.420017957687378f, -1.7062702178955078f, 1.950775384902954f, -0.5096521973609924f, -0.4380742907524109f, -1.2527953386306763f, 0.7774903774261475f, -1.6138978004455566f, -0.21274028718471527f, -0.8954665660858154f, 0.38690251111984253f, -0.5108051300048828f, -1.18063223361969f, -0.02818222902715206f, 0.4283318817615509f, 0.06651721894741058f, 0.30247190594673157f, -0.6343221068382263f, -0.3627411723136902f, -0.6724604368209839f, -0.35955315828323364f, -0.8131462931632996f, -1.7262825965881348f, 0.17742614448070526f, -0.4017809331417084f, -1.630198359489441f, 0.46278226375579834f, -0.9072983860969543f, 0.05194539576768875f, 0.7290905714035034f, 0.12898291647434235f, 1.1394007205963135f, -1.234825849533081f, 0.4023416340351105f, -0.6848101019859314f, -0.8707971572875977f, -0.5788496732711792f, -0.3115525245666504f, 0.056165341287851334f, -1.1651498079299927f, 0.9008265137672424f, 0.4656624495983124f, -1.5362436771392822f, 1.4882521629333496f, 1.895889163017273f, 1.1787796020507812f, -0.1799248307943344f, -1.0707526206970215f, 1.0544517040252686f};

struct Labels {
  Output indices, values, lengths;
};

// Batch 0: 1 1 3 over 6 steps; 1: 2 0 over 4; 2: 3 over 5.
Labels Example(const Scope& s, std::vector<int32_t> lengths = {6, 4, 5}) {
  return {ops::Const(s, Tensor::FromVector<int64_t>({0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 2, 0}, TensorShape({6, 2}))),
          ops::Const(s, Tensor::FromVector<int32_t>({1, 1, 3, 2, 0, 3})),
          ops::Const(s, Tensor::FromVector<int32_t>(lengths))};
}

Output Inputs(const Scope& s) { return ops::Const(s, Tensor::FromVector<float>(kInputs, TensorShape({6, 3, 5}))); }

TEST(CtcOpsTest, LossAndGradientAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Labels l = Example(s);
  ops::CTCLossOutputs out = ops::CTCLoss(s, Inputs(s), l.indices, l.values, l.lengths);
  ExpectTensor<float>(Eval(s, {}, out.loss), TensorShape({3}),
                      {6.58756160736084f, 4.069038391113281f, 4.9536614418029785f}, 2e-5);
  Tensor g = Eval(s, {}, out.gradient);
  ASSERT_EQ(g.shape(), TensorShape({6, 3, 5}));
  // Batch element 1 (4 steps; the last two are zero).
  const std::vector<float> want = {0.0603925883769989f, 0.4149809777736664f, -0.28129374980926514f, 0.14473801851272583f, -0.3388175666332245f,
                                   0.002485665725544095f, 0.13233773410320282f, -0.17535853385925293f, 0.03277197480201721f, 0.007763564586639404f,
                                   -0.2908661365509033f, 0.3665044903755188f, -0.14917713403701782f, 0.0727037712931633f, 0.0008352920413017273f,
                                   -0.597497820854187f, 0.3915848135948181f, 0.15957188606262207f, 0.081668421626091f, -0.03532707691192627f,
                                   0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int t = 0; t < 6; ++t) {
    for (int c = 0; c < 5; ++c) {
      EXPECT_NEAR(g.flat<float>()[(t * 3 + 1) * 5 + c], want[t * 5 + c], 2e-6) << t << "," << c;
    }
  }
  // The other attrs: collapsed repeats (batch 0's 1 1 3 becomes 1 3) and unmerged repeats.
  ExpectTensor<float>(
      Eval(s, {}, ops::CTCLoss(s, Inputs(s), l.indices, l.values, l.lengths, {.preprocess_collapse_repeated = true}).loss),
      TensorShape({3}), {5.499527931213379f, 4.069038391113281f, 4.9536614418029785f}, 2e-5);
  ExpectTensor<float>(
      Eval(s, {}, ops::CTCLoss(s, Inputs(s), l.indices, l.values, l.lengths, {.ctc_merge_repeated = false}).loss),
      TensorShape({3}), {6.174816131591797f, 4.453360557556152f, 6.489351272583008f}, 2e-5);
}

TEST(CtcOpsTest, GradientThroughTheGraph) {
  // tf.GradientTape over tf.compat.v1.nn.ctc_loss in double, weighted 1, 2, 3:
  // batch element 2's rows (to float precision: TensorFlow's kernel takes
  // each posterior through expf, even in double).
  Scope s = Scope::NewRootScope(BuiltinOps());
  Labels l = Example(s);
  Output x = ops::Cast(s, Inputs(s), DT_DOUBLE);
  Output loss = ops::CTCLoss(s, x, l.indices, l.values, l.lengths).loss;
  Output weighted = ops::Sum(s, ops::Mul(s, loss, ops::Const(s, Tensor::FromVector<double>({1, 2, 3}))),
                             ops::Const(s, 0));
  absl::StatusOr<std::vector<Output>> grads = AddGradients(s, {weighted}, {x});
  ASSERT_TRUE(grads.ok()) << grads.status();
  Tensor g = Eval(s, {}, (*grads)[0]);
  const std::vector<double> want = {0.33753869797083136, 1.2512646788295843, 0.625576926855563, -0.5084377718784746, -1.705942531777504,
                                    0.06319442734063088, 0.2832529651470689, 0.22439277936133695, -0.6656396676017919, 0.09479958515972242,
                                    0.1250316285437385, 0.08623721093635543, 0.0647704516113916, -0.3265163325975221, 0.05047695209906912,
                                    0.8883505285296698, 0.6186574590858592, 0.7832926873413921, -1.0853200066840551, -1.2049807576798333,
                                    0.7657729324016425, 0.42021985473399825, 1.1542382044394324, -0.1279814301598062, -2.2122497625809427,
                                    0, 0, 0, 0, 0};
  for (int t = 0; t < 6; ++t) {
    for (int c = 0; c < 5; ++c) EXPECT_NEAR(g.flat<double>()[(t * 3 + 2) * 5 + c], want[t * 5 + c], 1e-6);
  }
  // And against finite differences of the loss.
  Scope s2 = Scope::NewRootScope(BuiltinOps());
  Labels l2 = Example(s2);
  Output xp = Placeholder(s2, DT_DOUBLE);
  std::vector<double> xd(kInputs.begin(), kInputs.end());
  EXPECT_LT(GradError(s2, {{xp, Tensor::FromVector<double>(xd, TensorShape({6, 3, 5}))}},
                      ops::CTCLoss(s2, xp, l2.indices, l2.values, l2.lengths).loss),
            1e-6);
}

TEST(CtcOpsTest, GreedyDecoderIsTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output lengths = ops::Const(s, Tensor::FromVector<int32_t>({6, 4, 5}));
  ops::CTCGreedyDecoderOutputs d = ops::CTCGreedyDecoder(s, Inputs(s), lengths, /*merge_repeated=*/true);
  ExpectTensor<int64_t>(Eval(s, {}, d.decoded_indices), TensorShape({9, 2}),
                        {0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 2, 0, 2, 1, 2, 2, 2, 3});
  ExpectTensor<int64_t>(Eval(s, {}, d.decoded_values), TensorShape({9}), {3, 1, 2, 1, 1, 1, 3, 0, 2});
  ExpectTensor<int64_t>(Eval(s, {}, d.decoded_shape), TensorShape({2}), {3, 4});
  ExpectTensor<float>(Eval(s, {}, d.log_probability), TensorShape({3, 1}),
                      {-5.124216556549072f, -4.8370361328125f, -6.505560874938965f}, 1e-5);
  d = ops::CTCGreedyDecoder(s, Inputs(s), lengths);
  ExpectTensor<int64_t>(Eval(s, {}, d.decoded_values), TensorShape({12}), {3, 1, 1, 2, 1, 1, 1, 1, 3, 3, 0, 2});
  ExpectTensor<int64_t>(Eval(s, {}, d.decoded_shape), TensorShape({2}), {3, 5});
  d = ops::CTCGreedyDecoder(s, Inputs(s), lengths, false, /*blank_index=*/0);
  ExpectTensor<int64_t>(Eval(s, {}, d.decoded_values), TensorShape({14}), {3, 1, 1, 2, 4, 4, 1, 4, 1, 1, 1, 3, 3, 2});
  ExpectTensor<int64_t>(Eval(s, {}, d.decoded_shape), TensorShape({2}), {3, 6});
}

TEST(CtcOpsTest, ShortSequencesAndErrors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  // Too few steps for batch 1's two labels.
  Labels l = Example(s, {6, 1, 0});
  absl::StatusOr<Tensor> r = TryEval(s, {}, ops::CTCLoss(s, Inputs(s), l.indices, l.values, l.lengths).loss);
  EXPECT_THAT(r.status().message(),
              HasSubstr("Not enough time for target transition sequence (required: 2, available: 1)"));
  // ... ignored: loss and gradient 0 there (and for the empty sequence).
  ops::CTCLossOutputs ignored = ops::CTCLoss(s, Inputs(s), l.indices, l.values, l.lengths,
                                             {.ignore_longer_outputs_than_inputs = true});
  ExpectTensor<float>(Eval(s, {}, ignored.loss), TensorShape({3}), {6.58756160736084f, 0, 0}, 2e-5);
  Tensor g = Eval(s, {}, ignored.gradient);
  for (int t = 0; t < 6; ++t) {
    for (int c = 0; c < 10; ++c) EXPECT_EQ(g.flat<float>()[t * 15 + 5 + c], 0);
  }
  // No labels for batch element 1.
  Output idx = ops::Const(s, Tensor::FromVector<int64_t>({0, 0, 2, 0}, TensorShape({2, 2})));
  r = TryEval(s, {}, ops::CTCLoss(s, Inputs(s), idx, ops::Const(s, Tensor::FromVector<int32_t>({1, 2})),
                                  Example(s).lengths).loss);
  EXPECT_THAT(r.status().message(), HasSubstr("Labels length is zero in batch 1"));
  // A label after the blank.
  r = TryEval(s, {}, ops::CTCLoss(s, Inputs(s), Example(s).indices,
                                  ops::Const(s, Tensor::FromVector<int32_t>({4, 1, 3, 2, 0, 3})),
                                  Example(s).lengths).loss);
  EXPECT_THAT(r.status().message(), HasSubstr("Saw a non-null label"));
  r = TryEval(s, {}, ops::CTCLoss(s, Inputs(s), Example(s).indices, Example(s).values,
                                  ops::Const(s, Tensor::FromVector<int32_t>({6, 4}))).loss);
  EXPECT_THAT(r.status().message(), HasSubstr("len(sequence_length) != batch_size"));
  r = TryEval(s, {}, ops::CTCLoss(s, Inputs(s), Example(s).indices, Example(s).values,
                                  ops::Const(s, Tensor::FromVector<int32_t>({6, 4, 7}))).loss);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("sequence_length(2) <= 6"));
  r = TryEval(s, {}, ops::CTCGreedyDecoder(s, Inputs(s), Example(s).lengths, false, 5).decoded_shape);
  EXPECT_THAT(r.status().message(), HasSubstr("blank_index expected to be between -5 and 4"));
}

TEST(CtcOpsTest, BeamSearchIsTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output lengths = ops::Const(s, Tensor::FromVector<int32_t>({6, 4, 5}));
  auto values = [&](const ops::CTCBeamSearchDecoderOutputs& d, int p) { return Eval(s, {}, d.decoded_values[p]); };
  ops::CTCBeamSearchDecoderOutputs d = ops::CTCBeamSearchDecoder(s, Inputs(s), lengths, 4, 3);
  ASSERT_EQ(d.decoded_values.size(), 3u);
  ExpectTensor<int64_t>(Eval(s, {}, d.decoded_indices[0]), TensorShape({7, 2}),
                        {0, 0, 0, 1, 0, 2, 1, 0, 2, 0, 2, 1, 2, 2});
  ExpectTensor<int64_t>(values(d, 0), TensorShape({7}), {3, 1, 2, 1, 1, 3, 2});
  ExpectTensor<int64_t>(values(d, 1), TensorShape({9}), {3, 1, 2, 1, 1, 2, 1, 3, 0});
  ExpectTensor<int64_t>(values(d, 2), TensorShape({8}), {3, 1, 0, 1, 1, 3, 0, 2});
  ExpectTensor<int64_t>(Eval(s, {}, d.decoded_shape[1]), TensorShape({2}), {3, 4});
  ExpectTensor<float>(Eval(s, {}, d.log_probability), TensorShape({3, 3}),
                      {-3.9786155223846436f, -4.230266571044922f, -4.48388147354126f, -2.5622406005859375f,
                       -2.6138405799865723f, -2.7097020149230957f, -2.505872964859009f, -2.735386610031128f,
                       -3.2512595653533936f},
                      1e-6);
  // Repeats kept apart.
  d = ops::CTCBeamSearchDecoder(s, Inputs(s), lengths, 2, 2, /*merge_repeated=*/false);
  ExpectTensor<int64_t>(values(d, 0), TensorShape({8}), {3, 1, 2, 1, 2, 1, 3, 2});
  ExpectTensor<int64_t>(values(d, 1), TensorShape({6}), {1, 2, 1, 1, 3, 0});
  ExpectTensor<float>(Eval(s, {}, d.log_probability), TensorShape({3, 2}),
                      {-4.482844352722168f, -4.856179237365723f, -2.6138405799865723f, -2.7097020149230957f,
                       -3.0220017433166504f, -3.154433250427246f},
                      1e-6);
  // Equal scores come out in TensorFlow's order.
  Output zeros = ops::Const(s, Tensor::FromVector<float>(std::vector<float>(8, 0), TensorShape({2, 1, 4})));
  d = ops::CTCBeamSearchDecoder(s, zeros, ops::Const(s, Tensor::FromVector<int32_t>({2})), 3, 3);
  ExpectTensor<int64_t>(values(d, 0), TensorShape({1}), {0});
  ExpectTensor<int64_t>(values(d, 1), TensorShape({1}), {1});
  ExpectTensor<int64_t>(values(d, 2), TensorShape({0}), {});
  ExpectTensor<int64_t>(Eval(s, {}, d.decoded_shape[2]), TensorShape({2}), {1, 0});
  ExpectTensor<float>(Eval(s, {}, d.log_probability), TensorShape({1, 3}),
                      {-1.6739764213562012f, -1.6739764213562012f, -2.7725887298583984f}, 1e-6);
  // Double, and an empty sequence (log probability 0).
  d = ops::CTCBeamSearchDecoder(s, ops::Cast(s, Inputs(s), DT_DOUBLE),
                                ops::Const(s, Tensor::FromVector<int32_t>({6, 0, 3})), 3, 1);
  ExpectTensor<int64_t>(values(d, 0), TensorShape({5}), {3, 1, 2, 1, 3});
  ExpectTensor<double>(Eval(s, {}, d.log_probability), TensorShape({3, 1}),
                       {-4.4828442291693404, 0.0, -1.0790864927024844}, 1e-12);
}

TEST(CtcOpsTest, DecoderErrors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<Tensor> r =
      TryEval(s, {}, ops::CTCBeamSearchDecoder(s, Inputs(s), Example(s).lengths, 2, 3).log_probability);
  EXPECT_THAT(r.status().message(), HasSubstr("requested more paths than the beam width."));
  r = TryEval(s, {}, ops::CTCBeamSearchDecoder(s, Inputs(s), ops::Const(s, Tensor::FromVector<int32_t>({6, 4, 7})),
                                               2, 1).log_probability);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("sequence_length(2) <= 6"));
  r = TryEval(s, {}, ops::CTCGreedyDecoder(s, Inputs(s), ops::Const(s, Tensor::FromVector<int32_t>({6, 4}))).log_probability);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("len(sequence_length) != batch_size"));
  // Negative lengths decode nothing, as TensorFlow.
  ExpectTensor<float>(Eval(s, {}, ops::CTCGreedyDecoder(s, Inputs(s), ops::Const(s, Tensor::FromVector<int32_t>({6, -2, 3})))
                                      .log_probability),
                      TensorShape({3, 1}), {-5.124216556549072f, 0, -4.937828063964844f}, 1e-5);
}

}  // namespace
}  // namespace sluice
