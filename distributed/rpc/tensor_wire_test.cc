#include "distributed/rpc/tensor_wire.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

Tensor RoundTrip(const Tensor& t) {
  rpc::TensorWire wire;
  absl::Status s = TensorToWire(t, &wire);
  EXPECT_TRUE(s.ok()) << s;
  absl::StatusOr<Tensor> back = TensorFromWire(wire);
  EXPECT_TRUE(back.ok()) << back.status();
  return back.ok() ? *back : Tensor();
}

TEST(TensorWireTest, FloatRoundTripKeepsBytesAndShape) {
  Tensor t = Tensor::FromVector<float>({1.5f, -2, 3, 4, 5, 6}, TensorShape({2, 3}));
  rpc::TensorWire wire;
  ASSERT_TRUE(TensorToWire(t, &wire).ok());
  EXPECT_EQ(wire.dtype, static_cast<int32_t>(DT_FLOAT));
  EXPECT_EQ(wire.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(wire.data.size(), 24u);
  EXPECT_EQ(std::memcmp(wire.data.data(), t.raw_data(), 24), 0);
  Tensor back = RoundTrip(t);
  EXPECT_EQ(back.dtype(), DT_FLOAT);
  EXPECT_EQ(back.shape(), TensorShape({2, 3}));
  EXPECT_EQ(std::memcmp(back.raw_data(), t.raw_data(), 24), 0);
  EXPECT_FALSE(back.SharesBufferWith(t));
}

TEST(TensorWireTest, Int64ScalarEmptyAndBoolRoundTrip) {
  Tensor i = Tensor::FromVector<int64_t>({-1, 1LL << 40, 7});
  Tensor back = RoundTrip(i);
  EXPECT_EQ(back.dtype(), DT_INT64);
  EXPECT_EQ(back.flat<int64_t>()[1], 1LL << 40);

  Tensor scalar = Tensor::Scalar<int32_t>(42);
  back = RoundTrip(scalar);
  EXPECT_EQ(back.dims(), 0);
  EXPECT_EQ(back.scalar<int32_t>(), 42);

  Tensor empty(DT_FLOAT, TensorShape({0, 5}));
  back = RoundTrip(empty);
  EXPECT_EQ(back.shape(), TensorShape({0, 5}));
  EXPECT_EQ(back.NumElements(), 0);

  Tensor b = Tensor::FromVector<bool>({true, false, true});
  back = RoundTrip(b);
  EXPECT_EQ(back.dtype(), DT_BOOL);
  EXPECT_TRUE(back.flat<bool>()[2]);
}

TEST(TensorWireTest, StringsRoundTrip) {
  Tensor t(DT_STRING, TensorShape({3}));
  t.flat<std::string>()[0] = "hello";
  t.flat<std::string>()[1] = "";
  t.flat<std::string>()[2] = std::string("a\0b", 3);
  Tensor back = RoundTrip(t);
  ASSERT_EQ(back.dtype(), DT_STRING);
  EXPECT_EQ(back.flat<std::string>()[0], "hello");
  EXPECT_EQ(back.flat<std::string>()[1], "");
  EXPECT_EQ(back.flat<std::string>()[2], std::string("a\0b", 3));
}

TEST(TensorWireTest, UsesTheGivenAllocator) {
  CpuAllocator alloc("wire_test");
  rpc::TensorWire wire;
  ASSERT_TRUE(TensorToWire(Tensor::FromVector<float>({1, 2}), &wire).ok());
  absl::StatusOr<Tensor> t = TensorFromWire(wire, &alloc);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(alloc.GetStats().num_allocs, 1);
}

TEST(TensorWireTest, RejectsBadWires) {
  rpc::TensorWire good;
  ASSERT_TRUE(TensorToWire(Tensor::FromVector<float>({1, 2, 3, 4}), &good).ok());

  rpc::TensorWire w = good;
  w.dtype = 999;
  absl::StatusOr<Tensor> t = TensorFromWire(w);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("999"), std::string::npos) << t.status();

  w = good;
  w.dtype = static_cast<int32_t>(DT_INVALID);
  EXPECT_EQ(TensorFromWire(w).status().code(), absl::StatusCode::kInvalidArgument);
  w.dtype = static_cast<int32_t>(DT_FLOAT_REF);
  EXPECT_EQ(TensorFromWire(w).status().code(), absl::StatusCode::kInvalidArgument);
  w.dtype = static_cast<int32_t>(DT_RESOURCE);
  EXPECT_EQ(TensorFromWire(w).status().code(), absl::StatusCode::kInvalidArgument);

  w = good;
  w.shape = {2, -2};
  t = TensorFromWire(w);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("negative"), std::string::npos) << t.status();

  w = good;
  w.shape = {5};  // 20 bytes expected, 16 came
  t = TensorFromWire(w);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("20 bytes"), std::string::npos) << t.status();

  w = good;
  w.data.pop_back();
  EXPECT_EQ(TensorFromWire(w).status().code(), absl::StatusCode::kInvalidArgument);

  w = good;
  w.shape = {1LL << 40, 1LL << 40};
  EXPECT_EQ(TensorFromWire(w).status().code(), absl::StatusCode::kInvalidArgument);

  // Rank at most 254, as TensorFlow's.
  w = good;
  w.shape.assign(255, 1);
  w.shape[0] = 4;
  t = TensorFromWire(w);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("rank 255"), std::string::npos) << t.status();
  w.shape.pop_back();
  EXPECT_TRUE(TensorFromWire(w).ok());
}

TEST(TensorWireTest, RejectsBadStrings) {
  rpc::TensorWire w;
  w.dtype = static_cast<int32_t>(DT_STRING);
  w.shape = {2};
  w.data = std::string("\x03\0\0\0abc", 7);  // one element where two belong
  EXPECT_EQ(TensorFromWire(w).status().code(), absl::StatusCode::kInvalidArgument);
  w.data = std::string("\x09\0\0\0abc", 7);  // length past the end
  EXPECT_EQ(TensorFromWire(w).status().code(), absl::StatusCode::kInvalidArgument);
  w.shape = {1};
  w.data = std::string("\x01\0\0\0ab", 6);  // trailing byte
  EXPECT_EQ(TensorFromWire(w).status().code(), absl::StatusCode::kInvalidArgument);
}

// Hostile shapes: 2^59 + 1 strings (32 bytes each wraps the byte count to
// 32) and 2^30 strings in 8 bytes are refused before anything is built.
TEST(TensorWireTest, RejectsStringShapesTheBytesCannotHold) {
  rpc::TensorWire w;
  w.dtype = static_cast<int32_t>(DT_STRING);
  w.data = std::string("\x00\0\0\0\x00\0\0\0", 8);
  for (int64_t n : {(int64_t{1} << 59) + 1, int64_t{1} << 30, int64_t{3}}) {
    w.shape = {n};
    absl::StatusOr<Tensor> t = TensorFromWire(w);
    ASSERT_FALSE(t.ok()) << n;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
  }
  w.shape = {2};  // two empty strings: fine
  absl::StatusOr<Tensor> t = TensorFromWire(w);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->NumElements(), 2);
}

TEST(TensorWireTest, UninitializedTensorCannotTravel) {
  rpc::TensorWire wire;
  EXPECT_EQ(TensorToWire(Tensor(), &wire).code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorWireTest, RpcErrorRoundTrip) {
  absl::Status s = absl::NotFoundError("no tensor 'a;b' in step 3");
  rpc::RpcError e = ToRpcError(s);
  EXPECT_EQ(e.code, static_cast<int32_t>(absl::StatusCode::kNotFound));
  EXPECT_EQ(FromRpcError(e), s);
  e.code = 0;  // OK is not an error
  EXPECT_EQ(FromRpcError(e).code(), absl::StatusCode::kUnknown);
  e.code = 1234;
  EXPECT_EQ(FromRpcError(e).code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(FromRpcError(e).message(), "no tensor 'a;b' in step 3");
}

}  // namespace
}  // namespace sluice
