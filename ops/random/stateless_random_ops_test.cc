// TensorFlow's stateless random ops: the key and counter TensorFlow derives
// from a seed, and its values for them (float, double, half, bfloat16;
// uniform and normal; V1 and V2), written down from TensorFlow 2.21, equal
// bit for bit; the same inputs give the same values; moments over many
// draws; bad inputs.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/random/random_ops.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

absl::StatusOr<std::vector<Tensor>> RunOnce(const Scope& s, const std::vector<Output>& fetches) {
  if (!s.ok()) return s.status();
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(BuiltinSessionConfig(), *s.graph()));
  return session->Run(std::vector<std::pair<Output, Tensor>>{}, fetches, {});
}

std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    switch (t.dtype()) {
      case DT_FLOAT: v.push_back(t.data<float>()[i]); break;
      case DT_DOUBLE: v.push_back(t.data<double>()[i]); break;
      case DT_HALF: v.push_back(t.data<Half>()[i].ToFloat()); break;
      case DT_BFLOAT16: v.push_back(t.data<BFloat16>()[i].ToFloat()); break;
      default: ADD_FAILURE() << "dtype " << t.dtype();
    }
  }
  return v;
}

TEST(StatelessRandomTest, KeyCounterAndValuesAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::StatelessKeyCounter kc =
      ops::StatelessRandomGetKeyCounter(s, ops::Const(s, std::vector<int64_t>{7, 42}));
  ops::StatelessKeyCounter kc32 =
      ops::StatelessRandomGetKeyCounter(s, ops::Const(s, std::vector<int32_t>{-3, 5}));
  std::vector<Output> fetches = {
      kc.key, kc.counter, kc32.key, kc32.counter,
      ops::StatelessRandomUniformV2(s, {6}, kc),
      ops::StatelessRandomUniformV2(s, {3}, kc, DT_DOUBLE),
      ops::StatelessRandomNormalV2(s, {5}, kc),
      ops::StatelessRandomNormalV2(s, {3}, kc, DT_DOUBLE),
      ops::StatelessRandomUniformV2(s, {5}, kc, DT_HALF),
      ops::StatelessRandomUniformV2(s, {5}, kc, DT_BFLOAT16),
      s.Op("StatelessRandomUniform").Input({6}).Input(ops::Const(s, std::vector<int64_t>{7, 42}))
          .Attr("dtype", DT_FLOAT).Finalize1(),
      s.Op("StatelessRandomNormal").Input({3}).Input(ops::Const(s, std::vector<int32_t>{-3, 5}))
          .Attr("dtype", DT_FLOAT).Finalize1(),
  };
  absl::StatusOr<std::vector<Tensor>> out = RunOnce(s, fetches);
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& o = *out;
  EXPECT_EQ(o[0].data<uint64_t>()[0], 4705588757021300537ull);
  EXPECT_EQ(o[1].data<uint64_t>()[0], 0u);
  EXPECT_EQ(o[1].data<uint64_t>()[1], 17398396715820405659ull);
  EXPECT_EQ(o[2].data<uint64_t>()[0], 4583815729385481288ull);  // an int32 seed, sign-extended
  EXPECT_EQ(o[3].data<uint64_t>()[1], 1677688561301068929ull);
  const std::vector<std::vector<double>> tf = {
      {0.8377654552459717, 0.6778106689453125, 0.6775553226470947, 0.9684234857559204,
       0.5429154634475708, 0.1810213327407837},
      {0.7021239617426147, 0.4204429070808431, 0.34332379173677663},
      {-0.5348433256149292, -0.26072368025779724, -0.17391164600849152, 0.8650333881378174,
       1.0030699968338013},
      {0.4031051127272393, -0.7381035712053291, 0.9327754722165502},
      {0.974609375, 0.625, 0.533203125, 0.3251953125, 0.5634765625},
      {0.796875, 0.0, 0.265625, 0.6015625, 0.5078125},
      {0.8377654552459717, 0.6778106689453125, 0.6775553226470947, 0.9684234857559204,
       0.5429154634475708, 0.1810213327407837},
      {0.9187574982643127, 0.5167682766914368, -0.9993081092834473},
  };
  for (size_t i = 0; i < tf.size(); ++i) {
    const std::vector<double> got = Doubles(o[4 + i]);
    ASSERT_EQ(got.size(), tf[i].size()) << i;
    // Bit for bit, normal draws too: Box-Muller's angle in double rounded
    // once, as TensorFlow; sin, cos and log are the C library's (glibc's,
    // as in TensorFlow's wheel).
    for (size_t j = 0; j < got.size(); ++j) {
      EXPECT_EQ(got[j], tf[i][j]) << "draw " << i << " [" << j << "]";
    }
  }
}

// Integer values as int64 words, unsigned ones reinterpreted.
std::vector<int64_t> Ints(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    switch (t.dtype()) {
      case DT_INT32: v.push_back(t.data<int32_t>()[i]); break;
      case DT_INT64: v.push_back(t.data<int64_t>()[i]); break;
      case ::tensorflow::DT_UINT32: v.push_back(t.data<uint32_t>()[i]); break;
      case ::tensorflow::DT_UINT64: v.push_back(static_cast<int64_t>(t.data<uint64_t>()[i])); break;
      default: ADD_FAILURE() << "dtype " << t.dtype();
    }
  }
  return v;
}

// Truncated normal groups start 256 Philox calls apart, so a float draw's
// first four values are the plain normal draw's and the next four are not;
// integer draws are the words modulo the range. Values from TensorFlow 2.21
// for the seed {7, 42} (and {-3, 5} for V1).
TEST(StatelessRandomTest, TruncatedNormalAndIntegerValuesAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::StatelessKeyCounter kc =
      ops::StatelessRandomGetKeyCounter(s, ops::Const(s, std::vector<int64_t>{7, 42}));
  std::vector<Output> floats = {
      ops::StatelessTruncatedNormalV2(s, {9}, kc),
      ops::StatelessTruncatedNormalV2(s, {5}, kc, DT_DOUBLE),
      ops::StatelessTruncatedNormalV2(s, {6}, kc, DT_HALF),
      s.Op("StatelessTruncatedNormal").Input({5}).Input(ops::Const(s, std::vector<int32_t>{-3, 5}))
          .Attr("dtype", DT_FLOAT).Finalize1(),
  };
  std::vector<Output> ints = {
      ops::StatelessRandomUniformIntV2(s, {7}, kc, int32_t{-5}, int32_t{10}),
      ops::StatelessRandomUniformIntV2(s, {3}, kc, -(int64_t{1} << 40), (int64_t{1} << 40) + 3),
      ops::StatelessRandomUniformIntV2(s, {5}, kc, std::numeric_limits<int32_t>::min(),
                                       std::numeric_limits<int32_t>::max()),
      ops::StatelessRandomUniformFullIntV2(s, {5}, kc, ::tensorflow::DT_UINT32),
      ops::StatelessRandomUniformFullIntV2(s, {3}, kc, DT_INT64),
      ops::StatelessRandomUniformFullIntV2(s, {3}, kc),
      s.Op("StatelessRandomUniformInt").Input({6}).Input(ops::Const(s, std::vector<int64_t>{7, 42}))
          .Input(int64_t{0}).Input(int64_t{100}).Finalize1(),
      s.Op("StatelessRandomUniformFullInt").Input({5})
          .Input(ops::Const(s, std::vector<int64_t>{7, 42})).Attr("dtype", DT_INT32).Finalize1(),
  };
  std::vector<Output> fetches = floats;
  fetches.insert(fetches.end(), ints.begin(), ints.end());
  absl::StatusOr<std::vector<Tensor>> out = RunOnce(s, fetches);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<std::vector<double>> tf_floats = {
      {-0.5348433256149292, -0.26072368025779724, -0.17391164600849152, 0.8650333881378174,
       0.9722559452056885, -1.0171524286270142, 1.646079182624817, -0.2730831503868103,
       -0.2843625545501709},
      {0.4031051127272393, -0.7381035712053291, 0.3123924297904713, 1.2972889857422107,
       -0.016998865543943593},
      {-0.53466796875, -0.2607421875, -0.1739501953125, 0.865234375, 0.97216796875,
       -1.017578125},
      {0.9187574982643127, 0.5167682766914368, -0.9993081092834473, 0.1668820083141327,
       1.430498480796814},
  };
  for (size_t i = 0; i < tf_floats.size(); ++i) {
    EXPECT_EQ(Doubles((*out)[i]), tf_floats[i]) << "float draw " << i;
  }
  const std::vector<std::vector<int64_t>> tf_ints = {
      {5, 1, -2, 2, -5, 2, 1},
      {-546292729405, 333930790964, 780075768706},
      {1324039142, -707345792, 1079425570, -679742131, 541425217},
      {3471522790, 1440137856, 3226909218, 1467741517, 2688908865},
      {6185344996723080166, 6303901817723337250, 1627817849395707457},
      {6185344996723080166, 6303901817723337250, 1627817849395707457},
      {66, 50, 57, 16, 0, 99},
      {-823444506, 1440137856, -1068058078, 1467741517, -1606058431},
  };
  for (size_t i = 0; i < tf_ints.size(); ++i) {
    EXPECT_EQ(Ints((*out)[floats.size() + i]), tf_ints[i]) << "integer draw " << i;
  }
  EXPECT_EQ((*out)[floats.size() + 5].dtype(), ::tensorflow::DT_UINT64);  // the full-range default
}

// Many groups, each rejecting on its own: every value within two, the
// moments of N(0, 1) truncated at two (sd 0.8796), and TensorFlow's values
// at element 100000 (group 25000, 6.4 million Philox calls on).
TEST(StatelessRandomTest, TruncatedNormalOverManyGroups) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::StatelessKeyCounter kc =
      ops::StatelessRandomGetKeyCounter(s, ops::Const(s, std::vector<int64_t>{7, 42}));
  absl::StatusOr<std::vector<Tensor>> out =
      RunOnce(s, {ops::StatelessTruncatedNormalV2(s, {200000}, kc)});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> v = Doubles((*out)[0]);
  double sum = 0, sq = 0;
  for (double x : v) {
    ASSERT_LT(std::fabs(x), 2.0);
    sum += x;
    sq += x * x;
  }
  EXPECT_NEAR(sum / v.size(), 0.0, 0.01);
  EXPECT_NEAR(std::sqrt(sq / v.size() - (sum / v.size()) * (sum / v.size())), 0.8796, 0.01);
  const std::vector<double> tail(v.begin() + 100000, v.begin() + 100004);
  EXPECT_EQ(tail, (std::vector<double>{-0.7147493362426758, 0.6039979457855225,
                                       -1.0179311037063599, 1.4082763195037842}));
}

TEST(StatelessRandomTest, SameInputsSameValuesAndSoundMoments) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::StatelessKeyCounter a =
      ops::StatelessRandomGetKeyCounter(s, ops::Const(s, std::vector<int64_t>{1, 2}));
  ops::StatelessKeyCounter b =
      ops::StatelessRandomGetKeyCounter(s, ops::Const(s, std::vector<int64_t>{1, 3}));
  Output u = ops::StatelessRandomUniformV2(s, {100, 100}, a);
  Output n = ops::StatelessRandomNormalV2(s, {100, 100}, a);
  Output again = ops::StatelessRandomUniformV2(s, {100, 100}, a);
  Output other = ops::StatelessRandomUniformV2(s, {100, 100}, b);
  absl::StatusOr<std::vector<Tensor>> out = RunOnce(s, {u, n, again, other});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> uv = Doubles((*out)[0]), nv = Doubles((*out)[1]);
  EXPECT_EQ(uv, Doubles((*out)[2]));
  EXPECT_NE(uv, Doubles((*out)[3]));
  double sum = 0, nsum = 0, nsq = 0;
  for (double x : uv) {
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    sum += x;
  }
  for (double x : nv) {
    nsum += x;
    nsq += x * x;
  }
  EXPECT_NEAR(sum / uv.size(), 0.5, 0.01);
  EXPECT_NEAR(nsum / nv.size(), 0.0, 0.03);
  EXPECT_NEAR(std::sqrt(nsq / nv.size()), 1.0, 0.03);
}

TEST(StatelessRandomTest, BadInputsAreClearErrors) {
  auto error = [](const std::function<Output(const Scope&)>& build) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output y = build(s);
    return RunOnce(s, {y}).status();
  };
  const std::vector<int64_t> seed = {1, 2};
  absl::Status s = error([&](const Scope& s) {
    return ops::StatelessRandomGetKeyCounter(s, ops::Const(s, std::vector<int64_t>{1, 2, 3})).key;
  });
  EXPECT_TRUE(absl::StrContains(s.message(), "seed must have shape [2]")) << s;
  for (int32_t alg : {2, 7}) {
    s = error([&](const Scope& s) {
      ops::StatelessKeyCounter kc = ops::StatelessRandomGetKeyCounter(s, ops::Const(s, seed));
      return s.Op("StatelessRandomUniformV2").Input({4}).Input(kc.key).Input(kc.counter)
          .Input(alg).Attr("dtype", DT_FLOAT).Finalize1();
    });
    EXPECT_EQ(s.code(), alg == 2 ? absl::StatusCode::kUnimplemented
                                 : absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), alg == 2 ? "ThreeFry" : "unknown algorithm 7")) << s;
  }
  s = error([&](const Scope& s) {
    ops::StatelessKeyCounter kc = ops::StatelessRandomGetKeyCounter(s, ops::Const(s, seed));
    return ops::StatelessRandomUniformV2(s, ops::Placeholder(s, DT_INT32), kc);
  });
  EXPECT_FALSE(s.ok());  // unfed shape
  // Integer bounds, in TensorFlow's words; an empty draw checks none.
  s = error([&](const Scope& s) {
    ops::StatelessKeyCounter kc = ops::StatelessRandomGetKeyCounter(s, ops::Const(s, seed));
    return ops::StatelessRandomUniformIntV2(s, {3}, kc, int32_t{5}, int32_t{5});
  });
  EXPECT_TRUE(absl::StrContains(s.message(), "Need minval < maxval, got 5 >= 5")) << s;
  s = error([&](const Scope& s) {
    ops::StatelessKeyCounter kc = ops::StatelessRandomGetKeyCounter(s, ops::Const(s, seed));
    return ops::StatelessRandomUniformIntV2(s, {0}, kc, int32_t{5}, int32_t{5});
  });
  EXPECT_TRUE(s.ok()) << s;
  s = error([&](const Scope& s) {
    return s.Op("StatelessRandomUniformInt").Input({3}).Input(ops::Const(s, seed))
        .Input(ops::Placeholder(s, DT_INT64)).Input(int64_t{9}).Finalize1();
  });
  EXPECT_FALSE(s.ok());  // unfed minval
  s = error([&](const Scope& s) {
    return s.Op("StatelessRandomUniformInt").Input({3}).Input(ops::Const(s, seed))
        .Input(ops::Const(s, std::vector<int64_t>{1})).Input(int64_t{9}).Finalize1();
  });
  EXPECT_TRUE(absl::StrContains(s.message(), "minval must be a scalar")) << s;
  s = error([&](const Scope& s) {
    Tensor seed32(::tensorflow::DT_UINT32, TensorShape({2}));
    seed32.data<uint32_t>()[0] = 1;
    seed32.data<uint32_t>()[1] = 2;
    return s.Op("StatelessRandomUniformFullInt").Input({3}).Input(ops::Const(s, seed32))
        .Attr("dtype", DT_INT32).Finalize1();
  });
  EXPECT_TRUE(absl::StrContains(s.message(), "Invalid seed type: uint32")) << s;
  s = error([&](const Scope& s) {
    return s.Op("StatelessTruncatedNormal").Input({3})
        .Input(ops::Const(s, std::vector<int64_t>{1, 2, 3})).Attr("dtype", DT_FLOAT).Finalize1();
  });
  EXPECT_TRUE(absl::StrContains(s.message(), "seed must have shape [2]")) << s;
  Scope bad = Scope::NewRootScope(BuiltinOps());
  ops::StatelessKeyCounter kc = ops::StatelessRandomGetKeyCounter(bad, ops::Const(bad, seed));
  ops::StatelessRandomUniformV2(bad, {2, -1}, kc);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "negative dimension")) << bad.status();
}

}  // namespace
}  // namespace sluice
