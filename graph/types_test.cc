#include "graph/types.h"

#include "gtest/gtest.h"
#include "graph/tensor_shape.h"

namespace sluice {
namespace {

TEST(DataTypeTest, NamesRoundTrip) {
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_BOOL, DT_UINT8, DT_INT8,
                     DT_HALF, DT_BFLOAT16}) {
    absl::StatusOr<DataType> back = DataTypeFromString(DataTypeName(t));
    ASSERT_TRUE(back.ok()) << DataTypeName(t);
    EXPECT_EQ(*back, t);
  }
  EXPECT_EQ(*DataTypeFromString("DT_FLOAT"), DT_FLOAT);
  EXPECT_EQ(*DataTypeFromString("float32"), DT_FLOAT);
  EXPECT_EQ(*DataTypeFromString("float16"), DT_HALF);
  EXPECT_EQ(*DataTypeFromString("float_ref"), DT_FLOAT_REF);
  EXPECT_FALSE(DataTypeFromString("flot").ok());
}

TEST(DataTypeTest, SizesAndRefs) {
  EXPECT_EQ(DataTypeSize(DT_FLOAT), 4);
  EXPECT_EQ(DataTypeSize(DT_INT64), 8);
  EXPECT_EQ(DataTypeSize(DT_BOOL), 1);
  EXPECT_EQ(DataTypeSize(DT_BFLOAT16), 2);
  EXPECT_EQ(DataTypeSize(DT_STRING), 0);
  EXPECT_TRUE(IsRefType(DT_FLOAT_REF));
  EXPECT_EQ(BaseType(DT_FLOAT_REF), DT_FLOAT);
  EXPECT_EQ(MakeRefType(DT_FLOAT), DT_FLOAT_REF);
  EXPECT_EQ(DataTypeName(DT_FLOAT_REF), "float_ref");
}

TEST(DataTypeTest, HalfAndBFloat16Conversions) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 0.333251953125f, 6.103515625e-05f}) {
    EXPECT_EQ(Half::FromFloat(f).ToFloat(), f) << f;
  }
  EXPECT_EQ(Half::FromFloat(1.0f).bits, 0x3c00);
  EXPECT_TRUE(std::isinf(Half::FromFloat(1e6f).ToFloat()));
  EXPECT_EQ(BFloat16::FromFloat(1.0f).bits, 0x3f80);
  EXPECT_EQ(BFloat16::FromFloat(3.0f).ToFloat(), 3.0f);
  EXPECT_NEAR(BFloat16::FromFloat(3.14159f).ToFloat(), 3.14159f, 0.02f);
}

TEST(TensorShapeTest, KnownAndUnknown) {
  TensorShape s({2, -1, 3});
  EXPECT_EQ(s.rank(), 3);
  EXPECT_FALSE(s.IsFullyDefined());
  EXPECT_EQ(s.num_elements(), -1);
  EXPECT_EQ(s.DebugString(), "[2,?,3]");
  EXPECT_EQ(TensorShape::Unknown().rank(), -1);
  EXPECT_EQ(TensorShape::Unknown().DebugString(), "<unknown>");
  EXPECT_EQ(TensorShape().DebugString(), "[]");
  EXPECT_EQ(TensorShape({4, 5}).num_elements(), 20);
}

TEST(TensorShapeTest, MergeAndCompatibility) {
  TensorShape a({2, -1}), b({-1, 7});
  EXPECT_TRUE(a.IsCompatibleWith(b));
  EXPECT_EQ(*a.Merge(b), TensorShape({2, 7}));
  EXPECT_FALSE(TensorShape({2, 3}).IsCompatibleWith(TensorShape({2, 4})));
  EXPECT_FALSE(TensorShape({2, 3}).IsCompatibleWith(TensorShape({2, 3, 1})));
  absl::StatusOr<TensorShape> bad = TensorShape({2, 3}).Merge(TensorShape({3, 3}));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("[2,3]"), std::string::npos);
  EXPECT_EQ(*TensorShape::Unknown().Merge(a), a);
}

TEST(TensorShapeTest, OverflowAndRankLimits) {
  tensorflow::TensorShapeProto huge;
  huge.add_dim()->set_size(int64_t{1} << 62);
  huge.add_dim()->set_size(4);
  absl::StatusOr<TensorShape> s = TensorShape::FromProto(huge);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("more than"), std::string::npos);
  EXPECT_EQ(TensorShape({int64_t{1} << 62, 4}).num_elements(), -1);
  tensorflow::TensorShapeProto deep;
  for (int i = 0; i < 300; ++i) deep.add_dim()->set_size(1);
  EXPECT_FALSE(TensorShape::FromProto(deep).ok());
  EXPECT_EQ(TensorShape::UnknownOfRank(int64_t{1} << 40).rank(), -1);
  EXPECT_EQ(TensorShape::UnknownOfRank(3).rank(), 3);
}

TEST(TensorShapeTest, ProtoRoundTrip) {
  for (const TensorShape& s : {TensorShape({2, -1, 3}), TensorShape(), TensorShape::Unknown()}) {
    tensorflow::TensorShapeProto p;
    s.ToProto(&p);
    EXPECT_EQ(*TensorShape::FromProto(p), s);
  }
  tensorflow::TensorShapeProto bad;
  bad.add_dim()->set_size(-7);
  EXPECT_FALSE(TensorShape::FromProto(bad).ok());
}

}  // namespace
}  // namespace sluice
