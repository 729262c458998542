// Summary ops: forward values on known inputs (the output parsed back as a
// tensorflow.Summary), TensorFlow's histogram bucketing, and bad inputs.
#include "ops/io/summary_ops.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "graph/proto/summary.pb.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/audio/internal/wav.h"
#include "ops/image/internal/image_codec.h"
#include "ops/io/histogram.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

using ::tensorflow::HistogramProto;
using ::tensorflow::Summary;

Tensor Strings(const std::vector<std::string>& v, const TensorShape& shape) {
  return Tensor::FromVector<std::string>(v, shape);
}

// Runs `fetch` (a scalar string) and parses it as a Summary.
absl::StatusOr<Summary> RunSummary(const Scope& s, Output fetch,
                                   const std::vector<std::pair<Output, Tensor>>& feeds = {}) {
  if (!s.ok()) return s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  if (!sess.ok()) return sess.status();
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run(feeds, {fetch});
  if (!out.ok()) return out.status();
  const Tensor& t = (*out)[0];
  EXPECT_EQ(t.dtype(), DT_STRING);
  EXPECT_EQ(t.dims(), 0);
  Summary summary;
  if (!summary.ParseFromString(t.scalar<std::string>())) {
    return absl::DataLossError("output is not a serialized Summary");
  }
  return summary;
}

TEST(ScalarSummaryTest, OneValuePerElement) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output tags = ops::Const(s, Strings({"a", "b/c", "d", "e"}, TensorShape({2, 2})));
  Output out = ops::ScalarSummary(s, tags, ops::Const<float>(s, {1.5f, -2, 3.25f, 1e30f},
                                                             TensorShape({2, 2})));
  EXPECT_EQ(out.dtype(), DT_STRING);
  EXPECT_EQ(out.shape(), TensorShape());
  absl::StatusOr<Summary> summary = RunSummary(s, out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->value_size(), 4);
  const std::vector<std::string> want_tags = {"a", "b/c", "d", "e"};
  const std::vector<float> want_values = {1.5f, -2, 3.25f, 1e30f};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(summary->value(i).tag(), want_tags[i]);
    EXPECT_EQ(summary->value(i).value_case(), Summary::Value::kSimpleValue);
    EXPECT_EQ(summary->value(i).simple_value(), want_values[i]);
  }
}

TEST(ScalarSummaryTest, ScalarTagAndEveryValueType) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> outs = {
      ops::ScalarSummary(s, "f", 0.25f), ops::ScalarSummary(s, "d", 2.5),
      ops::ScalarSummary(s, "i", int32_t{-7}), ops::ScalarSummary(s, "l", int64_t{1} << 40)};
  const std::vector<float> want = {0.25f, 2.5f, -7.0f, 1099511627776.0f};
  for (size_t i = 0; i < outs.size(); ++i) {
    absl::StatusOr<Summary> summary = RunSummary(s, outs[i]);
    ASSERT_TRUE(summary.ok()) << summary.status();
    ASSERT_EQ(summary->value_size(), 1);
    EXPECT_EQ(summary->value(0).simple_value(), want[i]) << i;
  }
  EXPECT_EQ(outs[3].node->input_type(1), DT_INT64);
}

TEST(ScalarSummaryTest, ShapeMismatch) {
  // Known at build time.
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::ScalarSummary(s, ops::Const(s, Strings({"a", "b"}, TensorShape({2}))),
                     ops::Const<float>(s, {1, 2, 3}, TensorShape({3})));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  EXPECT_NE(s.status().message().find("same shape"), std::string::npos) << s.status();

  // Only at run time.
  Scope r = Scope::NewRootScope(BuiltinOps());
  Output tags = ops::Placeholder(r, DT_STRING);
  Output values = ops::Placeholder(r, DT_DOUBLE);
  Output out = ops::ScalarSummary(r.WithOpName("scalars"), tags, values);
  absl::StatusOr<Summary> summary =
      RunSummary(r, out, {{tags, Strings({"a", "b"}, TensorShape({2}))},
                          {values, Tensor::FromVector<double>({1, 2}, TensorShape({1, 2}))}});
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument) << summary.status();
  EXPECT_NE(summary.status().message().find("same shape"), std::string::npos);
  EXPECT_NE(summary.status().message().find("scalars"), std::string::npos) << summary.status();

  // Unsupported value type.
  Scope b = Scope::NewRootScope(BuiltinOps());
  ops::ScalarSummary(b, "flag", true);
  EXPECT_FALSE(b.ok());
}

// TensorFlow's bucket limits, built here independently of ops/io/histogram.cc.
std::vector<double> ExpectedLimits() {
  std::vector<double> pos;
  double v = 1e-12;
  while (v < 1e20) {
    pos.push_back(v);
    v *= 1.1;
  }
  pos.push_back(DBL_MAX);
  std::vector<double> limits;
  for (size_t i = pos.size(); i-- > 0;) limits.push_back(-pos[i]);
  limits.push_back(0);
  limits.insert(limits.end(), pos.begin(), pos.end());
  return limits;
}

// Checks every bucket entry of `h` against `values`: counts of the half-open
// ranges [previous limit, limit), collapsed empty runs, a DBL_MAX last limit.
void CheckBuckets(const HistogramProto& h, const std::vector<double>& values) {
  const std::vector<double> limits = ExpectedLimits();
  ASSERT_EQ(h.bucket_size(), h.bucket_limit_size());
  ASSERT_GT(h.bucket_size(), 0);
  EXPECT_EQ(h.bucket_limit(h.bucket_limit_size() - 1), DBL_MAX);
  double lower = -std::numeric_limits<double>::infinity();
  double total = 0;
  for (int i = 0; i < h.bucket_size(); ++i) {
    const double upper = h.bucket_limit(i);
    // Every limit is one of TensorFlow's.
    auto it = std::find(limits.begin(), limits.end(), upper);
    ASSERT_NE(it, limits.end()) << "bucket " << i << " limit " << upper;
    double count = 0;
    for (double v : values) count += (v >= lower && v < upper) ? 1 : 0;
    EXPECT_EQ(h.bucket(i), count) << "bucket " << i << " [" << lower << ", " << upper << ")";
    if (h.bucket(i) > 0) {
      // A non-empty entry is exactly one of TensorFlow's buckets: its range
      // starts at the previous limit.
      if (i == 0) {
        EXPECT_EQ(it, limits.begin());
      } else {
        ASSERT_NE(it, limits.begin());
        EXPECT_EQ(*(it - 1), lower) << "bucket " << i;
      }
    } else if (i > 0) {
      EXPECT_GT(h.bucket(i - 1), 0) << "two empty entries in a row at " << i;
    }
    total += h.bucket(i);
    lower = upper;
  }
  EXPECT_EQ(total, static_cast<double>(values.size()));
}

TEST(HistogramSummaryTest, ExactMomentsAndTensorFlowBuckets) {
  const std::vector<double> values = {-1.0, 0.0, 0.0, 2.5, 1e-13, 1.0, 1.0000001, 3e9, -7.25};
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output out = ops::HistogramSummary(s, "weights", ops::Const<double>(s, values, TensorShape({3, 3})));
  absl::StatusOr<Summary> summary = RunSummary(s, out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->value_size(), 1);
  EXPECT_EQ(summary->value(0).tag(), "weights");
  ASSERT_EQ(summary->value(0).value_case(), Summary::Value::kHisto);
  const HistogramProto& h = summary->value(0).histo();
  double sum = 0, sum_squares = 0;
  for (double v : values) {
    sum += v;
    sum_squares += v * v;
  }
  EXPECT_EQ(h.min(), -7.25);
  EXPECT_EQ(h.max(), 3e9);
  EXPECT_EQ(h.num(), 9);
  EXPECT_EQ(h.sum(), sum);
  EXPECT_EQ(h.sum_squares(), sum_squares);
  CheckBuckets(h, values);
  // 0 falls in [0, 1e-12); 1e-13 too.
  auto zero_bucket = std::find(h.bucket_limit().begin(), h.bucket_limit().end(), 1e-12);
  ASSERT_NE(zero_bucket, h.bucket_limit().end());
  EXPECT_EQ(h.bucket(zero_bucket - h.bucket_limit().begin()), 3);
}

TEST(HistogramSummaryTest, OneValueGivesThreeEntries) {
  // One value v: the empty run below it, its bucket, the empty run above.
  Histogram histogram;
  histogram.Add(1.0);
  HistogramProto h;
  histogram.EncodeToProto(&h);
  ASSERT_EQ(h.bucket_size(), 3);
  EXPECT_EQ(h.bucket(0), 0);
  EXPECT_EQ(h.bucket(1), 1);
  EXPECT_EQ(h.bucket(2), 0);
  EXPECT_LE(h.bucket_limit(0), 1.0);
  EXPECT_GT(h.bucket_limit(1), 1.0);
  EXPECT_NEAR(h.bucket_limit(1) / h.bucket_limit(0), 1.1, 1e-9);
  EXPECT_EQ(h.bucket_limit(2), DBL_MAX);
  EXPECT_EQ(Histogram::BucketLimits(), ExpectedLimits());

  // Empty: TensorFlow's sentinels and a single empty bucket.
  Histogram empty;
  empty.EncodeToProto(&h);
  EXPECT_EQ(h.num(), 0);
  EXPECT_EQ(h.min(), DBL_MAX);
  EXPECT_EQ(h.max(), -DBL_MAX);
  ASSERT_EQ(h.bucket_size(), 1);
  EXPECT_EQ(h.bucket_limit(0), DBL_MAX);
  EXPECT_EQ(h.bucket(0), 0);
}

TEST(HistogramSummaryTest, IntegerValuesAndDefaultType) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output ints = ops::HistogramSummary(s, "i", ops::Const<int32_t>(s, {1, 2, 3, 3}, TensorShape({4})));
  Output longs = ops::HistogramSummary(s, "l", ops::Const<int64_t>(s, {-5, 5}, TensorShape({2})));
  absl::StatusOr<Summary> a = RunSummary(s, ints);
  ASSERT_TRUE(a.ok()) << a.status();
  const HistogramProto& h = a->value(0).histo();
  EXPECT_EQ(h.min(), 1);
  EXPECT_EQ(h.max(), 3);
  EXPECT_EQ(h.num(), 4);
  EXPECT_EQ(h.sum(), 9);
  EXPECT_EQ(h.sum_squares(), 23);
  CheckBuckets(h, {1, 2, 3, 3});
  absl::StatusOr<Summary> b = RunSummary(s, longs);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->value(0).histo().sum(), 0);
  EXPECT_EQ(b->value(0).histo().sum_squares(), 50);
}

TEST(HistogramSummaryTest, BadInputs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s, DT_FLOAT);
  Output out = ops::HistogramSummary(s.WithOpName("hist"), "activations", x);
  for (float bad : {std::nanf(""), std::numeric_limits<float>::infinity()}) {
    absl::StatusOr<Summary> summary =
        RunSummary(s, out, {{x, Tensor::FromVector<float>({1, bad, 2})}});
    EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument) << summary.status();
    EXPECT_NE(summary.status().message().find(std::isnan(bad) ? "Nan in summary histogram for"
                                                               : "Infinity in summary histogram"),
              std::string::npos)
        << summary.status();
    EXPECT_NE(summary.status().message().find("activations"), std::string::npos);
    EXPECT_NE(summary.status().message().find("hist"), std::string::npos);
  }
  Scope t = Scope::NewRootScope(BuiltinOps());
  ops::HistogramSummary(t, ops::Const(t, Strings({"a", "b"}, TensorShape({2}))), 1.0f);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
  EXPECT_NE(t.status().message().find("scalar"), std::string::npos) << t.status();
}

TEST(MergeSummaryTest, ConcatenatesValuesInOrder) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = ops::ScalarSummary(s, ops::Const(s, Strings({"loss", "acc"}, TensorShape({2}))),
                                ops::Const<float>(s, {0.5f, 0.75f}, TensorShape({2})));
  Output b = ops::HistogramSummary(s, "w", ops::Const<float>(s, {1, 2}, TensorShape({2})));
  Output c = ops::ScalarSummary(s, "lr", 0.01f);
  Output merged = ops::MergeSummary(s, {a, b, c});
  EXPECT_EQ(merged.shape(), TensorShape());
  absl::StatusOr<Summary> summary = RunSummary(s, merged);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->value_size(), 4);
  EXPECT_EQ(summary->value(0).tag(), "loss");
  EXPECT_EQ(summary->value(1).tag(), "acc");
  EXPECT_EQ(summary->value(1).simple_value(), 0.75f);
  EXPECT_EQ(summary->value(2).tag(), "w");
  EXPECT_EQ(summary->value(2).histo().num(), 2);
  EXPECT_EQ(summary->value(3).tag(), "lr");
  EXPECT_EQ(summary->value(3).simple_value(), 0.01f);

  // Inputs may be vectors of serialized summaries; an empty string is an
  // empty Summary.
  Scope v = Scope::NewRootScope(BuiltinOps());
  Summary one;
  one.add_value()->set_tag("x");
  Output vec = ops::Const(v, Strings({one.SerializeAsString(), ""}, TensorShape({2})));
  absl::StatusOr<Summary> from_vec = RunSummary(v, ops::MergeSummary(v, {vec}));
  ASSERT_TRUE(from_vec.ok()) << from_vec.status();
  ASSERT_EQ(from_vec->value_size(), 1);
  EXPECT_EQ(from_vec->value(0).tag(), "x");
}

TEST(MergeSummaryTest, DuplicateTagAndGarbage) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = ops::ScalarSummary(s, "loss", 1.0f);
  Output b = ops::ScalarSummary(s, "acc", 1.0f);
  Output c = ops::HistogramSummary(s, "loss", 2.0f);
  Output merged = ops::MergeSummary(s.WithOpName("merge"), {a, b, c});
  absl::StatusOr<Summary> summary = RunSummary(s, merged);
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument) << summary.status();
  EXPECT_NE(summary.status().message().find("duplicate tag 'loss'"), std::string::npos)
      << summary.status();
  EXPECT_NE(summary.status().message().find("merge"), std::string::npos) << summary.status();

  Scope g = Scope::NewRootScope(BuiltinOps());
  Output junk = ops::Const(g, Strings({std::string("\xff\xff\xff", 3)}, TensorShape()));
  absl::StatusOr<Summary> bad = RunSummary(g, ops::MergeSummary(g, {junk}));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_NE(bad.status().message().find("not a serialized Summary"), std::string::npos);
}

// The PNG of one image value, decoded.
std::vector<uint8_t> Pixels(const Summary::Value& v) {
  absl::StatusOr<image_codec::DecodedImage> d =
      image_codec::DecodePng(v.image().encoded_image_string(), 0, 8);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? d->pixels : std::vector<uint8_t>{};
}

TEST(ImageSummaryTest, RescalesFloatImagesAndPaintsNonFinitePixels) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  // Image 0 has negatives: x * 127 / 2 + 128. Image 1 is non-negative:
  // x * 255 / 1. Its NaN pixel takes the default bad color's first channel.
  Tensor images = Tensor::FromVector<float>({-2.0f, 0.0f, 1.0f, 2.0f, 0.0f, 0.5f, std::nanf(""), 1.0f},
                                            TensorShape({2, 2, 2, 1}));
  absl::StatusOr<Summary> summary =
      RunSummary(s, ops::ImageSummary(s, "input", ops::Const(s, images), 3));
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->value_size(), 2);
  EXPECT_EQ(summary->value(0).tag(), "input/image/0");
  EXPECT_EQ(summary->value(1).tag(), "input/image/1");
  EXPECT_EQ(summary->value(0).image().height(), 2);
  EXPECT_EQ(summary->value(0).image().width(), 2);
  EXPECT_EQ(summary->value(0).image().colorspace(), 1);
  EXPECT_EQ(Pixels(summary->value(0)), (std::vector<uint8_t>{1, 128, 191, 255}));
  EXPECT_EQ(Pixels(summary->value(1)), (std::vector<uint8_t>{0, 127, 255, 255}));
}

TEST(ImageSummaryTest, Uint8ImagesAsTheyAreAndOneTagForOneImage) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Tensor rgb = Tensor::FromVector<uint8_t>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
                                           TensorShape({2, 1, 2, 3}));
  absl::StatusOr<Summary> summary =
      RunSummary(s, ops::ImageSummary(s, "rgb", ops::Const(s, rgb), 1));
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->value_size(), 1);
  EXPECT_EQ(summary->value(0).tag(), "rgb/image");
  EXPECT_EQ(Pixels(summary->value(0)), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));

  Scope t = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(t, DT_FLOAT);
  Output bad = ops::ImageSummary(t, "x", x);
  absl::StatusOr<Summary> r = RunSummary(t, bad, {{x, Tensor::FromVector<float>({1, 2})}});
  EXPECT_NE(r.status().message().find("4-D with last dim 1, 3, or 4"), std::string::npos)
      << r.status();
  r = RunSummary(t, bad, {{x, Tensor::FromVector<float>({1, 2}, TensorShape({1, 1, 1, 2}))}});
  EXPECT_NE(r.status().message().find("not [1,1,1,2]"), std::string::npos) << r.status();
}

TEST(AudioSummaryTest, ClipsAsWavFilesAtTheGivenRate) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Tensor clips = Tensor::FromVector<float>({0.5f, -0.5f, 0.25f, 0.0f, 1.0f, -1.0f},
                                           TensorShape({3, 2}));
  absl::StatusOr<Summary> summary = RunSummary(
      s, ops::AudioSummaryV2(s, "speech", ops::Const(s, clips), ops::Const(s, 16000.4f), 2));
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->value_size(), 2);
  EXPECT_EQ(summary->value(1).tag(), "speech/audio/1");
  const Summary::Audio& a = summary->value(0).audio();
  EXPECT_EQ(a.sample_rate(), 16000.4f);
  EXPECT_EQ(a.num_channels(), 1);
  EXPECT_EQ(a.length_frames(), 2);
  EXPECT_EQ(a.content_type(), "audio/wav");
  absl::StatusOr<std::string> wav = wav::EncodeS16(clips.data<float>(), 16000, 1, 2);
  ASSERT_TRUE(wav.ok());
  EXPECT_EQ(a.encoded_audio_string(), *wav);

  // TF1's AudioSummary takes the rate as an attr.
  Scope v1 = Scope::NewRootScope(BuiltinOps());
  Output old = v1.Op("AudioSummary", std::source_location::current())
                   .Input(ops::Const(v1, std::string("speech")))
                   .Input(ops::Const(v1, clips))
                   .Attr("sample_rate", 8000.0f)
                   .Attr("max_outputs", int64_t{1})
                   .Finalize1();
  absl::StatusOr<Summary> one = RunSummary(v1, old);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->value_size(), 1);
  EXPECT_EQ(one->value(0).tag(), "speech/audio");
  EXPECT_EQ(one->value(0).audio().sample_rate(), 8000.0f);

  Scope t = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<Summary> r = RunSummary(
      t, ops::AudioSummaryV2(t, "x", ops::Const(t, clips), ops::Const(t, 0.0f)));
  EXPECT_NE(r.status().message().find("sample_rate must be > 0"), std::string::npos) << r.status();
}

TEST(TensorSummaryTest, TensorsWithPluginMetadataAndTheTf1NodeName) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ::tensorflow::SummaryMetadata meta;
  meta.mutable_plugin_data()->set_plugin_name("text");
  absl::StatusOr<Summary> summary = RunSummary(
      s, ops::TensorSummaryV2(s, "notes", ops::Const(s, Strings({"a", "bc"}, TensorShape({2}))),
                              ops::Const(s, meta.SerializeAsString())));
  ASSERT_TRUE(summary.ok()) << summary.status();
  const Summary::Value& v = summary->value(0);
  EXPECT_EQ(v.tag(), "notes");
  EXPECT_EQ(v.metadata().plugin_data().plugin_name(), "text");
  EXPECT_EQ(v.tensor().dtype(), DT_STRING);
  ASSERT_EQ(v.tensor().string_val_size(), 2);
  EXPECT_EQ(v.tensor().string_val(1), "bc");

  Scope t = Scope::NewRootScope(BuiltinOps());
  Output old = t.WithOpName("weights_summary")
                   .Op("TensorSummary", std::source_location::current())
                   .Input(ops::Const(t, {1.5f, 2.5f}))
                   .Finalize1();
  summary = RunSummary(t, old);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->value(0).node_name(), "weights_summary");
  EXPECT_EQ(summary->value(0).tensor().tensor_content().size(), 8u);
}

TEST(SummaryOpsTest, Registered) {
  for (const char* op : {"ScalarSummary", "HistogramSummary", "MergeSummary", "ImageSummary",
                         "AudioSummary", "AudioSummaryV2", "TensorSummary", "TensorSummaryV2"}) {
    const OpDef* def = BuiltinOps()->Find(op);
    ASSERT_NE(def, nullptr) << op;
    EXPECT_TRUE(def->no_gradient) << op;
    EXPECT_TRUE(BuiltinKernels()->HasKernelsFor(op, kDeviceTypeCpu)) << op;
  }
}

}  // namespace
}  // namespace sluice
