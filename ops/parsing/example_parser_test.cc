// ParseExamples / ParseSequenceExamples on Examples serialized by the
// protobuf library (graph/proto/example.proto): dense with and without
// defaults, variable-length dense, sparse, ragged, packed and unpacked
// lists, repeated keys, and malformed bytes.
#include "ops/parsing/example_parser.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/proto/example.pb.h"
#include "gtest/gtest.h"
#include "ops/parsing/example_wire.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string MakeExample(const std::vector<float>& image, int64_t label,
                        const std::vector<std::string>& tags) {
  tensorflow::Example ex;
  auto& f = *ex.mutable_features()->mutable_feature();
  for (float v : image) f["image"].mutable_float_list()->add_value(v);
  f["label"].mutable_int64_list()->add_value(label);
  for (const std::string& t : tags) f["tags"].mutable_bytes_list()->add_value(t);
  return ex.SerializeAsString();
}

Tensor Strings(const std::vector<std::string>& v) { return Tensor::FromVector<std::string>(v); }

template <typename T>
std::vector<T> Values(const Tensor& t) {
  auto f = t.flat<T>();
  return std::vector<T>(f.begin(), f.end());
}

ExampleParseConfig Config() {
  ExampleParseConfig c;
  c.dense.push_back({"image", DT_FLOAT, TensorShape({2}), Tensor()});
  c.dense.push_back({"label", DT_INT64, TensorShape({}), Tensor::Scalar<int64_t>(-1)});
  c.sparse.push_back({"tags", DT_STRING});
  EXPECT_TRUE(c.Finish().ok());
  return c;
}

TEST(ExampleParserTest, DenseAndSparse) {
  Tensor batch = Strings({MakeExample({1, 2}, 7, {"a", "b"}), MakeExample({3, 4}, 8, {}),
                          MakeExample({5, 6}, 9, {"c"})});
  absl::StatusOr<ExampleParseResult> r = ParseExamples(Config(), batch, Tensor());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->dense[0].shape(), TensorShape({3, 2}));
  EXPECT_THAT(Values<float>(r->dense[0]), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(Values<int64_t>(r->dense[1]), ElementsAre(7, 8, 9));
  EXPECT_EQ(r->sparse_indices[0].shape(), TensorShape({3, 2}));
  EXPECT_THAT(Values<int64_t>(r->sparse_indices[0]), ElementsAre(0, 0, 0, 1, 2, 0));
  EXPECT_THAT(Values<std::string>(r->sparse_values[0]), ElementsAre("a", "b", "c"));
  EXPECT_THAT(Values<int64_t>(r->sparse_shapes[0]), ElementsAre(3, 2));
}

TEST(ExampleParserTest, DefaultsAndRequired) {
  tensorflow::Example only_image;
  auto& f = *only_image.mutable_features()->mutable_feature();
  f["image"].mutable_float_list()->add_value(1);
  f["image"].mutable_float_list()->add_value(2);
  Tensor batch = Strings({only_image.SerializeAsString()});
  absl::StatusOr<ExampleParseResult> r = ParseExamples(Config(), batch, Tensor());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values<int64_t>(r->dense[1]), ElementsAre(-1));

  tensorflow::Example only_label;
  (*only_label.mutable_features()->mutable_feature())["label"].mutable_int64_list()->add_value(3);
  r = ParseExamples(Config(), Strings({only_label.SerializeAsString()}), Strings({"rec0"}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("Name: rec0, Feature: image (data type: float) is required"));
}

TEST(ExampleParserTest, WrongCountAndWrongType) {
  absl::StatusOr<ExampleParseResult> r =
      ParseExamples(Config(), Strings({MakeExample({1, 2, 3}, 1, {})}), Tensor());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Key: image, Index: 0."));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Values size: 3 but output shape: [2]"));

  tensorflow::Example ex;
  auto& f = *ex.mutable_features()->mutable_feature();
  f["image"].mutable_int64_list()->add_value(1);
  f["image"].mutable_int64_list()->add_value(2);
  r = ParseExamples(Config(), Strings({ex.SerializeAsString()}), Tensor());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("Data types don't match. Data type: int64 but expected type: float"));
}

TEST(ExampleParserTest, BadBytesNameTheIndex) {
  for (const std::string& bad : {std::string("\x0a\x05\x0a\x03", 4), std::string("\xff"),
                                  std::string("\x0b")}) {
    absl::StatusOr<ExampleParseResult> r =
        ParseExamples(Config(), Strings({MakeExample({1, 2}, 1, {}), bad}), Tensor());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("Index: 1.  Could not parse example input"));
  }
}

TEST(ExampleParserTest, VariableLengthDenseIsPadded) {
  ExampleParseConfig c;
  c.dense.push_back({"image", DT_FLOAT, TensorShape({-1}), Tensor::Scalar<float>(-9)});
  ASSERT_TRUE(c.Finish().ok());
  absl::StatusOr<ExampleParseResult> r =
      ParseExamples(c, Strings({MakeExample({1, 2, 3}, 0, {}), MakeExample({4}, 0, {})}),
                    Tensor());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->dense[0].shape(), TensorShape({2, 3}));
  EXPECT_THAT(Values<float>(r->dense[0]), ElementsAre(1, 2, 3, 4, -9, -9));
}

TEST(ExampleParserTest, RaggedAndScalarBatch) {
  ExampleParseConfig c;
  c.ragged.push_back({"tags", DT_STRING, DT_INT32});
  ASSERT_TRUE(c.Finish().ok());
  absl::StatusOr<ExampleParseResult> r = ParseExamples(
      c, Strings({MakeExample({}, 0, {"x", "y"}), MakeExample({}, 0, {}), MakeExample({}, 0, {"z"})}),
      Tensor());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values<std::string>(r->ragged_values[0]), ElementsAre("x", "y", "z"));
  EXPECT_THAT(Values<int32_t>(r->ragged_splits[0]), ElementsAre(0, 2, 2, 3));

  // A scalar: no batch dimension in dense outputs, sparse indices [N, 1].
  ExampleParseConfig single = Config();
  r = ParseExamples(single, Tensor::Scalar<std::string>(MakeExample({1, 2}, 5, {"q"})), Tensor());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->dense[0].shape(), TensorShape({2}));
  EXPECT_EQ(r->dense[1].shape(), TensorShape({}));
  EXPECT_EQ(r->sparse_indices[0].shape(), TensorShape({1, 1}));
  EXPECT_THAT(Values<int64_t>(r->sparse_shapes[0]), ElementsAre(1));
}

// Unpacked float/int64 encodings, a key given twice (the last wins), and an
// Example whose features field is split in two (messages merge).
TEST(ExampleParserTest, WireVariants) {
  std::string unpacked;
  // Features{feature{key:"label" value: Feature{int64_list{value: 4 (unpacked)}}}}
  std::string int_list = std::string("\x08\x04", 2);         // Int64List: field 1 varint 4
  std::string feature = "\x1a" + std::string(1, static_cast<char>(int_list.size())) + int_list;
  std::string entry = std::string("\x0a\x05", 2) + "label" + "\x12" +
                      std::string(1, static_cast<char>(feature.size())) + feature;
  std::string features = "\x0a" + std::string(1, static_cast<char>(entry.size())) + entry;
  std::string ex1 = "\x0a" + std::string(1, static_cast<char>(features.size())) + features;
  // image as unpacked floats 1.0, 2.0 (fixed32, wire type 5)
  std::string floats = std::string("\x0d\x00\x00\x80\x3f\x0d\x00\x00\x00\x40", 10);
  std::string ffeature = "\x12" + std::string(1, static_cast<char>(floats.size())) + floats;
  std::string fentry = std::string("\x0a\x05", 2) + "image" + "\x12" +
                       std::string(1, static_cast<char>(ffeature.size())) + ffeature;
  std::string ffeatures = "\x0a" + std::string(1, static_cast<char>(fentry.size())) + fentry;
  std::string ex2 = "\x0a" + std::string(1, static_cast<char>(ffeatures.size())) + ffeatures;
  // Label 99 first, then the unpacked 4: the later entry wins.
  std::string serialized = MakeExample({}, 99, {}).substr(0) ;
  tensorflow::Example first;
  (*first.mutable_features()->mutable_feature())["label"].mutable_int64_list()->add_value(99);
  serialized = first.SerializeAsString() + ex1 + ex2;
  absl::StatusOr<ExampleParseResult> r = ParseExamples(Config(), Strings({serialized}), Tensor());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values<float>(r->dense[0]), ElementsAre(1, 2));
  EXPECT_THAT(Values<int64_t>(r->dense[1]), ElementsAre(4));
}

// Serialized of rank 2 (ParseExampleV2 takes any rank): dense outputs keep
// the batch shape, sparse indices carry both batch coordinates.
TEST(ExampleParserTest, BatchOfRankTwo) {
  Tensor batch(DT_STRING, TensorShape({2, 2}));
  batch.flat<std::string>()[0] = MakeExample({1, 2}, 1, {"a"});
  batch.flat<std::string>()[1] = MakeExample({3, 4}, 2, {});
  batch.flat<std::string>()[2] = MakeExample({5, 6}, 3, {});
  batch.flat<std::string>()[3] = MakeExample({7, 8}, 4, {"b", "c"});
  absl::StatusOr<ExampleParseResult> r = ParseExamples(Config(), batch, Tensor());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->dense[0].shape(), TensorShape({2, 2, 2}));
  EXPECT_EQ(r->dense[1].shape(), TensorShape({2, 2}));
  EXPECT_THAT(Values<int64_t>(r->dense[1]), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(r->sparse_indices[0].shape(), TensorShape({3, 3}));
  EXPECT_THAT(Values<int64_t>(r->sparse_indices[0]), ElementsAre(0, 0, 0, 1, 1, 0, 1, 1, 1));
  EXPECT_THAT(Values<int64_t>(r->sparse_shapes[0]), ElementsAre(2, 2, 2));
}

TEST(ExampleParserTest, SequenceExamples) {
  tensorflow::SequenceExample se;
  (*se.mutable_context()->mutable_feature())["id"].mutable_int64_list()->add_value(42);
  auto& lists = *se.mutable_feature_lists()->mutable_feature_list();
  for (int t = 0; t < 3; ++t) {
    auto* f = lists["frames"].add_feature()->mutable_float_list();
    f->add_value(t);
    f->add_value(10 * t);
    auto* w = lists["words"].add_feature()->mutable_bytes_list();
    for (int k = 0; k < t; ++k) w->add_value(absl::StrCat("w", t, k));
  }
  tensorflow::SequenceExample short_se;
  (*short_se.mutable_context()->mutable_feature())["id"].mutable_int64_list()->add_value(7);
  auto* f = (*short_se.mutable_feature_lists()->mutable_feature_list())["frames"]
                .add_feature()
                ->mutable_float_list();
  f->add_value(5);
  f->add_value(6);

  ExampleParseConfig context;
  context.dense.push_back({"id", DT_INT64, TensorShape({}), Tensor()});
  ASSERT_TRUE(context.Finish().ok());
  FeatureListConfig lists_config;
  lists_config.dense.push_back({"frames", DT_FLOAT, TensorShape({2}), Tensor()});
  lists_config.sparse.push_back({"words", DT_STRING});
  absl::StatusOr<SequenceExampleParseResult> r = ParseSequenceExamples(
      context, lists_config, Strings({se.SerializeAsString(), short_se.SerializeAsString()}),
      Tensor());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values<int64_t>(r->context.dense[0]), ElementsAre(42, 7));
  EXPECT_EQ(r->list_dense[0].shape(), TensorShape({2, 3, 2}));
  EXPECT_THAT(Values<float>(r->list_dense[0]), ElementsAre(0, 0, 1, 10, 2, 20, 5, 6, 0, 0, 0, 0));
  EXPECT_THAT(Values<int64_t>(r->list_dense_lengths[0]), ElementsAre(3, 1));
  EXPECT_THAT(Values<std::string>(r->list_sparse_values[0]), ElementsAre("w10", "w20", "w21"));
  EXPECT_THAT(Values<int64_t>(r->list_sparse_indices[0]),
              ElementsAre(0, 1, 0, 0, 2, 0, 0, 2, 1));
  EXPECT_THAT(Values<int64_t>(r->list_sparse_shapes[0]), ElementsAre(2, 3, 2));

  // A required dense list that is missing.
  lists_config.dense[0].key = "absent";
  r = ParseSequenceExamples(context, lists_config, Strings({se.SerializeAsString()}), Tensor());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Feature list 'absent' is required"));
  lists_config.missing_assumed_empty = {"absent"};
  r = ParseSequenceExamples(context, lists_config, Strings({se.SerializeAsString()}), Tensor());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->list_dense[0].shape(), TensorShape({1, 0, 2}));
}

TEST(ExampleParserTest, ConfigErrors) {
  ExampleParseConfig c;
  c.dense.push_back({"a", DT_FLOAT, TensorShape({2}), Tensor::FromVector<float>({1, 2, 3})});
  EXPECT_THAT(c.Finish().message(), HasSubstr("default_value has shape [3]"));
  c.dense[0].default_value = Tensor();
  c.sparse.push_back({"a", DT_FLOAT});
  EXPECT_THAT(c.Finish().message(), HasSubstr("listed twice"));
  c.sparse[0] = {"b", DT_INT32};
  EXPECT_THAT(c.Finish().message(), HasSubstr("not one of float, int64, string"));
}

}  // namespace
}  // namespace sluice
