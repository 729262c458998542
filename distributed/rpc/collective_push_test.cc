// CollectivePush on the wire: a call written by WriteCollectivePushCall and
// read back by ReadCollectivePushArgs, with and without a landing.
#include "distributed/rpc/collective_push.h"

#include <memory>
#include <string>
#include <vector>

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include "gtest/gtest.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

using apache::thrift::protocol::TBinaryProtocol;
using apache::thrift::protocol::TMessageType;
using apache::thrift::transport::TMemoryBuffer;

constexpr char kDevice[] = "/job:worker/replica:0/task:1/device:CPU:0";

// Writes one push into a memory buffer and reads it back as a server does
// (message begin first), landing as `lookup` says.
CollectivePushRequest RoundTrip(const Tensor& value, const LandingLookup& lookup) {
  auto buffer = std::make_shared<TMemoryBuffer>();
  TBinaryProtocol proto(buffer);
  WriteCollectivePushCall(&proto, kDevice, "g1/i2/n0/ag/s0/c3", value, 5000);
  std::string name;
  TMessageType type;
  int32_t seqid;
  proto.readMessageBegin(name, type, seqid);
  EXPECT_EQ(name, "worker:CollectivePush");
  CollectivePushRequest req = ReadCollectivePushArgs(&proto, nullptr, lookup);
  EXPECT_EQ(buffer->available_read(), 0u) << "the whole call was read";
  return req;
}

TEST(CollectivePushTest, ArgumentsRoundTripIntoFreshMemory) {
  CollectivePushRequest req = RoundTrip(Tensor::FromVector<float>({1, 2, 3}), nullptr);
  EXPECT_EQ(req.to_device, kDevice);
  EXPECT_EQ(req.key, "g1/i2/n0/ag/s0/c3");
  EXPECT_EQ(req.timeout_ms, 5000);
  ASSERT_TRUE(req.value.ok()) << req.value.status();
  EXPECT_EQ(req.value->flat<float>()[2], 3.0f);
}

TEST(CollectivePushTest, BytesLandInTheRegisteredMemory) {
  Tensor result = Tensor::FromVector<float>({0, 0, 0, 0, 0, 0});
  absl::StatusOr<Tensor> piece = result.Reshaped(TensorShape({6}));
  ASSERT_TRUE(piece.ok());
  std::vector<std::string> asked;
  CollectivePushRequest req = RoundTrip(
      Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})),
      [&](const std::string& to_device, const std::string& key) {
        asked.push_back(to_device + "|" + key);
        return *piece;
      });
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0], std::string(kDevice) + "|g1/i2/n0/ag/s0/c3");
  ASSERT_TRUE(req.value.ok()) << req.value.status();
  EXPECT_TRUE(req.value->SharesBufferWith(result));
  EXPECT_EQ(req.value->shape(), TensorShape({2, 3}));  // the shape that came
  EXPECT_EQ(result.flat<float>()[5], 6.0f);
}

TEST(CollectivePushTest, LandingOfAnotherSizeOrDtypeIsLeftAlone) {
  Tensor small = Tensor::FromVector<float>({-1, -1});
  Tensor ints = Tensor::FromVector<int32_t>({-1, -1, -1});
  for (const Tensor& landing : {small, ints}) {
    CollectivePushRequest req =
        RoundTrip(Tensor::FromVector<float>({1, 2, 3}),
                  [&](const std::string&, const std::string&) { return landing; });
    ASSERT_TRUE(req.value.ok()) << req.value.status();
    EXPECT_FALSE(req.value->SharesBufferWith(landing));
    EXPECT_EQ(req.value->flat<float>()[1], 2.0f);
  }
  EXPECT_EQ(small.flat<float>()[0], -1.0f);
  EXPECT_EQ(ints.flat<int32_t>()[0], -1);
}

TEST(CollectivePushTest, EmptyTensorLeavesTheLandingAlone) {
  Tensor landing = Tensor::FromVector<float>({-1});
  CollectivePushRequest req =
      RoundTrip(Tensor::FromVector<float>(std::vector<float>{}),
                [&](const std::string&, const std::string&) { return landing; });
  ASSERT_TRUE(req.value.ok()) << req.value.status();
  EXPECT_EQ(req.value->NumElements(), 0);
  EXPECT_FALSE(req.value->SharesBufferWith(landing));
  EXPECT_EQ(landing.flat<float>()[0], -1.0f);
}

}  // namespace
}  // namespace sluice
