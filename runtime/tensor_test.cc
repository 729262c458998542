#include "runtime/tensor.h"

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(TensorTest, AllocatesAlignedAndCounts) {
  CpuAllocator alloc("test");
  {
    absl::StatusOr<Tensor> t = Tensor::Allocate(&alloc, DT_FLOAT, TensorShape({3, 5}));
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw_data()) % kTensorAlignment, 0u);
    EXPECT_EQ(t->TotalBytes(), 60u);
    EXPECT_EQ(alloc.GetStats().bytes_in_use, 60);
    Tensor copy = *t;  // shares
    EXPECT_TRUE(copy.SharesBufferWith(*t));
    EXPECT_FALSE(t->RefCountIsOne());
  }
  AllocatorStats s = alloc.GetStats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.peak_bytes_in_use, 60);
  EXPECT_EQ(s.num_allocs, 1);
}

TEST(TensorTest, BuffersKeepASharedAllocatorAlive) {
  auto alloc = std::make_shared<CpuAllocator>("shared");
  std::weak_ptr<CpuAllocator> watch = alloc;
  absl::StatusOr<Tensor> t = Tensor::Allocate(alloc.get(), DT_FLOAT, TensorShape({8}));
  ASSERT_TRUE(t.ok());
  alloc.reset();  // as when the session that made a fetched tensor goes away
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(watch.lock()->GetStats().bytes_in_use, 32);
  *t = Tensor();
  EXPECT_TRUE(watch.expired());
}

// Buffers allocated on one thread and freed on another, by threads that
// then end (each thread keeps one freed buffer block for its next tensor):
// every tensor keeps its own data.
TEST(TensorTest, BuffersMoveBetweenThreadsThatEnd) {
  std::vector<Tensor> made;
  for (int round = 0; round < 4; ++round) {
    std::vector<Tensor> batch;
    std::thread maker([&] {
      for (int i = 0; i < 8; ++i) batch.push_back(Tensor::Scalar<float>(round * 10.0f + i));
    });
    maker.join();
    std::thread freer([moved = std::move(batch)]() mutable {
      moved.resize(4);  // frees half of them here
      Tensor again = Tensor::Scalar<float>(-1.0f);  // may take a freed block
      EXPECT_EQ(again.scalar<float>(), -1.0f);
      for (Tensor& t : moved) EXPECT_GE(t.scalar<float>(), 0.0f);
    });
    freer.join();
    made.push_back(Tensor::Scalar<float>(static_cast<float>(round)));
  }
  for (int round = 0; round < 4; ++round) EXPECT_EQ(made[round].scalar<float>(), round);
}

TEST(TensorTest, LimitGivesResourceExhausted) {
  CpuAllocator alloc("small", 100);
  absl::StatusOr<Tensor> ok = Tensor::Allocate(&alloc, DT_FLOAT, TensorShape({20}));
  ASSERT_TRUE(ok.ok());
  absl::StatusOr<Tensor> bad = Tensor::Allocate(&alloc, DT_FLOAT, TensorShape({10}));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(bad.status().message().find("small"), std::string::npos);
  EXPECT_FALSE(Tensor::Allocate(&alloc, DT_FLOAT, TensorShape({-1})).ok());
  EXPECT_FALSE(Tensor::Allocate(&alloc, DT_INVALID, TensorShape({1})).ok());  // no element size
}

TEST(TensorTest, ReshapeSharesAndChecksCount) {
  Tensor t = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  absl::StatusOr<Tensor> r = t.Reshaped(TensorShape({3, 2}));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->SharesBufferWith(t));
  EXPECT_EQ(r->flat<float>()[5], 6);
  EXPECT_FALSE(t.Reshaped(TensorShape({4})).ok());
  Tensor d = t.DeepCopy();
  EXPECT_FALSE(d.SharesBufferWith(t));
  EXPECT_EQ(d.flat<float>()[2], 3);
}

TEST(TensorTest, ProtoRoundTripAndFillRules) {
  Tensor t = Tensor::FromVector<int64_t>({7, -8, 9});
  tensorflow::TensorProto p;
  t.ToProto(&p);
  absl::StatusOr<Tensor> back = Tensor::FromProto(p);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->flat<int64_t>()[1], -8);

  tensorflow::TensorProto splat;  // one float_val fills a [2,3] tensor
  splat.set_dtype(DT_FLOAT);
  splat.mutable_tensor_shape()->add_dim()->set_size(2);
  splat.mutable_tensor_shape()->add_dim()->set_size(3);
  splat.add_float_val(1.5f);
  back = Tensor::FromProto(splat);
  ASSERT_TRUE(back.ok());
  for (float v : back->flat<float>()) EXPECT_EQ(v, 1.5f);

  tensorflow::TensorProto empty = splat;  // no values: zeros
  empty.clear_float_val();
  back = Tensor::FromProto(empty);
  for (float v : back->flat<float>()) EXPECT_EQ(v, 0.0f);

  tensorflow::TensorProto bad = splat;
  bad.set_tensor_content("abc");
  EXPECT_EQ(Tensor::FromProto(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorTest, DebugString) {
  Tensor t = Tensor::FromVector<int32_t>({1, 2, 3});
  EXPECT_EQ(t.DebugString(), "int32 [3] [1 2 3]");
  EXPECT_EQ(Tensor::Scalar<float>(2.5f).SummarizeValue(), "2.5");
  EXPECT_EQ(Tensor::FromVector<bool>({true, false}).SummarizeValue(), "[True False]");
}

// ---- DT_STRING ---------------------------------------------------------------

TEST(TensorStringTest, ElementsStartEmptyAndAreFreedWithTheBuffer) {
  CpuAllocator alloc("strings");
  {
    absl::StatusOr<Tensor> t = Tensor::Allocate(&alloc, DT_STRING, TensorShape({2, 3}));
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->dtype(), DT_STRING);
    EXPECT_EQ(t->TotalBytes(), 6 * sizeof(std::string));
    for (const std::string& s : t->flat<std::string>()) EXPECT_TRUE(s.empty());
    // Long enough to live on the heap: a leak or double free shows under ASan.
    t->flat<std::string>()[4] = std::string(1000, 'x');
    Tensor shared = *t;
    *t = Tensor();
    EXPECT_EQ(shared.flat<std::string>()[4].size(), 1000u);
  }
  EXPECT_EQ(alloc.GetStats().bytes_in_use, 0);
  EXPECT_EQ(DataTypeToEnum<std::string>::value, DT_STRING);
}

TEST(TensorStringTest, ScalarFromVectorReshapeAndDeepCopy) {
  Tensor s = Tensor::Scalar<std::string>("hello");
  EXPECT_EQ(s.dims(), 0);
  EXPECT_EQ(s.scalar<std::string>(), "hello");

  Tensor v = Tensor::FromVector<std::string>({"a", "bc", "", "def"}, TensorShape({2, 2}));
  absl::StatusOr<Tensor> r = v.Reshaped(TensorShape({4}));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->SharesBufferWith(v));
  EXPECT_EQ(r->flat<std::string>()[3], "def");

  Tensor d = v.DeepCopy();
  EXPECT_FALSE(d.SharesBufferWith(v));
  d.flat<std::string>()[0] = "changed";
  EXPECT_EQ(v.flat<std::string>()[0], "a");
  EXPECT_EQ(d.flat<std::string>()[1], "bc");
}

TEST(TensorStringTest, ProtoRoundTripAndFillRules) {
  Tensor v = Tensor::FromVector<std::string>({"x", std::string("n\0ul", 4), "zz"});
  tensorflow::TensorProto p;
  v.ToProto(&p);
  EXPECT_EQ(p.dtype(), DT_STRING);
  EXPECT_TRUE(p.tensor_content().empty());
  ASSERT_EQ(p.string_val_size(), 3);
  absl::StatusOr<Tensor> back = Tensor::FromProto(p);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->shape(), TensorShape({3}));
  EXPECT_EQ(back->flat<std::string>()[1], std::string("n\0ul", 4));

  tensorflow::TensorProto fill;  // fewer values than elements repeat the last
  fill.set_dtype(DT_STRING);
  fill.mutable_tensor_shape()->add_dim()->set_size(4);
  fill.add_string_val("p");
  fill.add_string_val("q");
  back = Tensor::FromProto(fill);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->flat<std::string>()[0], "p");
  EXPECT_EQ(back->flat<std::string>()[1], "q");
  EXPECT_EQ(back->flat<std::string>()[3], "q");
  fill.clear_string_val();  // none: empty strings
  back = Tensor::FromProto(fill);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->flat<std::string>()[2], "");

  // TensorFlow's tensor_content encoding: varint32 lengths, then the bytes.
  tensorflow::TensorProto content;
  content.set_dtype(DT_STRING);
  content.mutable_tensor_shape()->add_dim()->set_size(2);
  std::string long_one(200, 'L');
  content.set_tensor_content(std::string("\x02\xc8\x01", 3) + "ab" + long_one);
  back = Tensor::FromProto(content);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->flat<std::string>()[0], "ab");
  EXPECT_EQ(back->flat<std::string>()[1], long_one);
  content.set_tensor_content(std::string("\x02\x05", 2) + "ab");  // truncated
  EXPECT_EQ(Tensor::FromProto(content).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorStringTest, DebugStringQuotesAndEscapes) {
  Tensor v = Tensor::FromVector<std::string>({"a", "b\n"});
  EXPECT_EQ(v.DebugString(), "string [2] [\"a\" \"b\\n\"]");
  EXPECT_EQ(Tensor::Scalar<std::string>("hi").SummarizeValue(), "\"hi\"");
}

// A shape whose byte count wraps around (2^59 + 1 strings of 32 bytes is
// 32 bytes modulo 2^64) is refused before anything is allocated or
// constructed; so is one past kMaxTensorBytes.
TEST(TensorTest, ByteCountsThatOverflowAreRefused) {
  CpuAllocator alloc("test");
  for (DataType dtype : {DT_STRING, DT_FLOAT, DT_DOUBLE}) {
    for (const TensorShape& shape :
         {TensorShape({(int64_t{1} << 59) + 1}), TensorShape({int64_t{1} << 30, int64_t{1} << 29}),
          TensorShape({int64_t{1} << 45, 3})}) {
      absl::StatusOr<Tensor> t = Tensor::Allocate(&alloc, dtype, shape);
      ASSERT_FALSE(t.ok()) << DataTypeName(dtype) << " " << shape.DebugString();
      EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted) << t.status();
      EXPECT_NE(std::string(t.status().message()).find("exceed the largest tensor"),
                std::string::npos)
          << t.status();
    }
  }
  EXPECT_EQ(alloc.GetStats().bytes_in_use, 0);
}



struct Counted : VariantValue {
  explicit Counted(int* live) : live(live) { ++*live; }
  ~Counted() override { --*live; }
  std::string TypeName() const override { return "Counted"; }
  int* live;
};

struct Other : VariantValue {
  std::string TypeName() const override { return "Other"; }
};

TEST(TensorVariantTest, ElementsAreSharedObjectsFreedWithTheLastHolder) {
  int live = 0;
  {
    Tensor t(::tensorflow::DT_VARIANT, TensorShape({2}));
    EXPECT_TRUE(t.flat<Variant>()[0].empty());
    t.flat<Variant>()[0] = Variant(std::make_shared<Counted>(&live));
    t.flat<Variant>()[1] = t.flat<Variant>()[0];
    EXPECT_EQ(live, 1);
    ASSERT_NE(t.flat<Variant>()[1].get<Counted>(), nullptr);
    EXPECT_EQ(t.flat<Variant>()[1].get<Other>(), nullptr);
    EXPECT_EQ(t.TotalBytes(), 2 * sizeof(Variant));
    Tensor copy = t.DeepCopy();
    t = Tensor();
    EXPECT_EQ(live, 1);  // the copy shares the value
    EXPECT_EQ(copy.flat<Variant>()[0].TypeName(), "Counted");
    EXPECT_NE(copy.DebugString().find("Counted"), std::string::npos);
  }
  EXPECT_EQ(live, 0);
}

// Only a sole holder may change its value in place.
TEST(TensorVariantTest, OnlyASoleHolderMayChangeItsValue) {
  int live = 0;
  Variant v(std::make_shared<Counted>(&live));
  EXPECT_NE(v.mutable_if_sole<Counted>(), nullptr);
  EXPECT_EQ(v.mutable_if_sole<Other>(), nullptr);
  {
    Variant other = v;
    EXPECT_EQ(v.mutable_if_sole<Counted>(), nullptr);
    EXPECT_EQ(other.mutable_if_sole<Counted>(), nullptr);
  }
  EXPECT_NE(v.mutable_if_sole<Counted>(), nullptr);
  EXPECT_EQ(Variant().mutable_if_sole<Counted>(), nullptr);
}

TEST(TensorVariantTest, NeverReadFromAProto) {
  Tensor t(::tensorflow::DT_VARIANT, TensorShape({}));
  ::tensorflow::TensorProto proto;
  t.ToProto(&proto);
  EXPECT_EQ(proto.tensor_content(), "");
  absl::StatusOr<Tensor> back = Tensor::FromProto(proto);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace sluice
