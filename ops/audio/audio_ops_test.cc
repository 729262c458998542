// EncodeWav and DecodeWav through a session: a round trip, channels and
// samples as asked (repeated, dropped, zero-padded, cut), the shapes the
// shape function knows, and bad inputs with their messages.
#include "ops/audio/audio_ops.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::TryEval;

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}

Tensor Audio() {
  return Tensor::FromVector<float>({0.5f, -0.25f, 0.125f, 1.0f, -1.0f, 0.0f}, TensorShape({3, 2}));
}

TEST(AudioOpsTest, RoundTripsThroughWav) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output wav = ops::EncodeWav(s, ops::Const(s, Audio()), ops::Const(s, 22050));
  ops::DecodeWavOutputs d = ops::DecodeWav(s, wav);
  Tensor audio = Eval(s, {}, d.audio);
  EXPECT_EQ(audio.shape(), TensorShape({3, 2}));
  // 1.0 clamps to 32767 / 32768.
  EXPECT_THAT(Values(audio), ElementsAre(0.5f, -0.25f, 0.125f, 32767.0f / 32768, -1.0f, 0.0f));
  EXPECT_EQ(Eval(s, {}, d.sample_rate).scalar<int32_t>(), 22050);
  EXPECT_EQ(Eval(s, {}, wav).scalar<std::string>().size(), 44u + 12u);
}

TEST(AudioOpsTest, GivesTheChannelsAndSamplesAskedFor) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output wav = ops::EncodeWav(s, ops::Const(s, Audio()), ops::Const(s, 8000));
  // Three channels from two: the last repeats; five samples from three: zeros.
  ops::DecodeWavOutputs wide = ops::DecodeWav(s, wav, 3, 5);
  EXPECT_EQ(wide.audio.shape(), TensorShape({5, 3}));
  EXPECT_THAT(Values(Eval(s, {}, wide.audio)),
              ElementsAre(0.5f, -0.25f, -0.25f, 0.125f, 32767.0f / 32768, 32767.0f / 32768, -1.0f,
                          0.0f, 0.0f, 0, 0, 0, 0, 0, 0));
  ops::DecodeWavOutputs narrow = ops::DecodeWav(s, wav, 1, 2);
  EXPECT_THAT(Values(Eval(s, {}, narrow.audio)), ElementsAre(0.5f, 0.125f));
  EXPECT_EQ(ops::DecodeWav(s, wav).audio.shape(), TensorShape({-1, -1}));
}

TEST(AudioOpsTest, BadInputsSayWhatIsWrong) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output flat = ops::Const(s, Tensor::FromVector<float>({0.5f, 0.25f}));
  ops::EncodeWav(s, flat, ops::Const(s, 8000));
  EXPECT_THAT(s.status().message(), HasSubstr("rank"));

  Scope r = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(r, DT_FLOAT);
  Output rate = ops::Placeholder(r, DT_INT32);
  Output wav = ops::EncodeWav(r, x, rate);
  absl::StatusOr<Tensor> t =
      TryEval(r, {{x, Tensor::FromVector<float>({1.0f})}, {rate, Tensor::Scalar<int32_t>(8000)}}, wav);
  EXPECT_THAT(t.status().message(), HasSubstr("audio must be 2-dimensional"));
  t = TryEval(r, {{x, Audio()}, {rate, Tensor::Scalar<int32_t>(0)}}, wav);
  EXPECT_THAT(t.status().message(), HasSubstr("sample_rate must be in (0, 2^31), got 0"));

  Output bytes = ops::Placeholder(r, DT_STRING);
  t = TryEval(r, {{bytes, Tensor::Scalar(std::string("RIFF\4\0\0\0WAVX", 12))}}, ops::DecodeWav(r, bytes).audio);
  EXPECT_THAT(t.status().message(), HasSubstr("expected WAVE, found WAVX"));
  t = TryEval(r, {{bytes, Tensor::Scalar(std::string())}}, ops::DecodeWav(r, bytes, -2).audio);
  EXPECT_THAT(t.status().message(), HasSubstr("must be >= -1, got -2"));
}

}  // namespace
}  // namespace sluice
