#include "distributed/rpc/recv_tensor_frames.h"

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TMultiplexedProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "distributed/rpc/gen-cpp/WorkerService.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using apache::thrift::protocol::TBinaryProtocol;
using apache::thrift::transport::TMemoryBuffer;

std::vector<uint8_t> Contents(TMemoryBuffer& buffer) {
  const std::string s = buffer.getBufferAsString();
  return std::vector<uint8_t>(s.begin(), s.end());
}

// What the generated client sends for RecvTensor, multiplexed as "worker".
std::vector<uint8_t> GeneratedCall(int64_t step, const std::string& key, int64_t timeout) {
  auto buffer = std::make_shared<TMemoryBuffer>();
  auto binary = std::make_shared<TBinaryProtocol>(buffer);
  rpc::WorkerServiceClient client(
      std::make_shared<apache::thrift::protocol::TMultiplexedProtocol>(binary, "worker"));
  rpc::RecvTensorRequest req;
  req.step_id = step;
  req.rendezvous_key = key;
  req.timeout_ms = timeout;
  client.send_RecvTensor(req);
  return Contents(*buffer);
}

// What the generated processor writes as RecvTensor's reply.
std::vector<uint8_t> GeneratedReply(const rpc::WorkerService_RecvTensor_result& result,
                                    int32_t seqid) {
  auto buffer = std::make_shared<TMemoryBuffer>();
  TBinaryProtocol out(buffer);
  out.writeMessageBegin("RecvTensor", apache::thrift::protocol::T_REPLY, seqid);
  result.write(&out);
  out.writeMessageEnd();
  return Contents(*buffer);
}

rpc::WorkerService_RecvTensor_result TensorResult(int32_t dtype, std::vector<int64_t> dims,
                                                  std::string data) {
  rpc::WorkerService_RecvTensor_result result;
  result.success.tensor.dtype = dtype;
  result.success.tensor.shape = std::move(dims);
  result.success.tensor.data = std::move(data);
  result.success.__isset.tensor = true;
  result.__isset.success = true;
  return result;
}

std::vector<uint8_t> EncodedCall(const RecvTensorCall& call) {
  std::vector<uint8_t> bytes(RecvTensorCallBytes(call.key.size()));
  EncodeRecvTensorCall(call, bytes.data());
  return bytes;
}

TEST(RecvTensorFramesTest, CallIsByteForByteTheGeneratedClients) {
  for (const std::string& key :
       {std::string(), std::string("small"), std::string(300, 'k') + ";0:0"}) {
    const std::vector<uint8_t> ours = EncodedCall(RecvTensorCall{0, -7, key, 30000});
    EXPECT_EQ(ours, GeneratedCall(-7, key, 30000)) << "key of " << key.size() << " bytes";
  }
}

TEST(RecvTensorFramesTest, CallParsesBackIncludingTheGeneratedOne) {
  const std::string key =
      "/job:w/replica:0/task:0/device:CPU:0;1;/job:ps/replica:0/task:0/device:CPU:0;w:0;0:0";
  RecvTensorCall call;
  const std::vector<uint8_t> generated = GeneratedCall(42, key, 5000);
  ASSERT_TRUE(ParseRecvTensorCall(absl::MakeConstSpan(generated), &call));
  EXPECT_EQ(call.seqid, 0);
  EXPECT_EQ(call.step_id, 42);
  EXPECT_EQ(call.key, key);
  EXPECT_EQ(call.timeout_ms, 5000);
}

TEST(RecvTensorFramesTest, CallParserSaysNoToEverythingElse) {
  const std::vector<uint8_t> good = EncodedCall(RecvTensorCall{3, 1, "abc", 10});
  RecvTensorCall call;
  // Every truncation, and one byte too many.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(ParseRecvTensorCall(absl::MakeConstSpan(good.data(), n), &call)) << n;
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_FALSE(ParseRecvTensorCall(absl::MakeConstSpan(longer), &call));
  // Another method of the same length, a reply, a key longer than the frame,
  // a step id of another type.
  std::vector<uint8_t> other = good;
  other[8] = 'W';  // "Worker:RecvTensor"
  EXPECT_FALSE(ParseRecvTensorCall(absl::MakeConstSpan(other), &call));
  other = good;
  other[3] = 2;  // T_REPLY
  EXPECT_FALSE(ParseRecvTensorCall(absl::MakeConstSpan(other), &call));
  other = good;
  other[4 + 4 + 17 + 4 + 3 + 11 + 3] = 0x7f;  // the key's length: far past the end
  EXPECT_FALSE(ParseRecvTensorCall(absl::MakeConstSpan(other), &call));
  other = good;
  other[4 + 4 + 17 + 4 + 3] = 8;  // step_id as an i32
  EXPECT_FALSE(ParseRecvTensorCall(absl::MakeConstSpan(other), &call));
  EXPECT_TRUE(ParseRecvTensorCall(absl::MakeConstSpan(good), &call));
  EXPECT_EQ(call.seqid, 3);
  EXPECT_EQ(call.key, "abc");
}

// No byte of a call goes unread: changing any one either makes the parse
// refuse the call or changes a field it returns.
TEST(RecvTensorFramesTest, CallParserReadsEveryByte) {
  const std::vector<uint8_t> good = EncodedCall(RecvTensorCall{3, 1, "abc", 10});
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> changed = good;
    changed[i] ^= 0x40;
    RecvTensorCall call;
    if (!ParseRecvTensorCall(absl::MakeConstSpan(changed), &call)) continue;
    EXPECT_TRUE(call.seqid != 3 || call.step_id != 1 || call.key != "abc" || call.timeout_ms != 10)
        << "byte " << i << " was not read";
  }
}

// Head + data + tail, as WriteRecvTensorReply lays them out.
std::vector<uint8_t> EncodedReply(int32_t seqid, int32_t dtype, std::vector<int64_t> dims,
                                  const std::string& data, bool dead = false) {
  std::vector<uint8_t> bytes(kMaxRecvTensorReplyHeadBytes);
  bytes.resize(EncodeRecvTensorReplyHead(seqid, dtype, dims, static_cast<int32_t>(data.size()),
                                         bytes.data()));
  EXPECT_EQ(bytes.size(), RecvTensorReplyHeadBytes(static_cast<int>(dims.size())));
  bytes.insert(bytes.end(), data.begin(), data.end());
  uint8_t tail[kRecvTensorReplyTailBytes];
  EncodeRecvTensorReplyTail(dead, tail);
  bytes.insert(bytes.end(), tail, tail + kRecvTensorReplyTailBytes);
  return bytes;
}

TEST(RecvTensorFramesTest, TensorReplyIsByteForByteTheGeneratedProcessors) {
  const std::string data(24, '\x5a');
  EXPECT_EQ(EncodedReply(9, 1, {2, 3}, data),  // DT_FLOAT
            GeneratedReply(TensorResult(1, {2, 3}, data), 9));
  EXPECT_EQ(EncodedReply(0, 9, {}, std::string(8, '\1')),  // DT_INT64 scalar
            GeneratedReply(TensorResult(9, {}, std::string(8, '\1')), 0));
}

TEST(RecvTensorFramesTest, DeadReplyIsByteForByteTheGeneratedProcessors) {
  rpc::WorkerService_RecvTensor_result result;
  result.success.is_dead = true;
  result.success.__isset.is_dead = true;
  result.__isset.success = true;
  // An empty tensor (dtype 0, rank 0, no data), then is_dead.
  EXPECT_EQ(EncodedReply(4, 0, {}, "", /*dead=*/true), GeneratedReply(result, 4));
}

TEST(RecvTensorFramesTest, ReplyParsesBack) {
  const std::vector<uint8_t> reply =
      GeneratedReply(TensorResult(3, {4, 0, 7}, std::string()), 11);  // DT_INT32, empty
  RecvTensorReplyHead head;
  const size_t n = ParseRecvTensorReplyHead(absl::MakeConstSpan(reply), &head);
  ASSERT_EQ(n, RecvTensorReplyHeadBytes(3));
  ASSERT_EQ(reply.size(), n + kRecvTensorReplyTailBytes);
  EXPECT_EQ(head.seqid, 11);
  EXPECT_EQ(head.dtype, 3);
  ASSERT_EQ(head.rank, 3);
  EXPECT_EQ(head.dim(0), 4);
  EXPECT_EQ(head.dim(1), 0);
  EXPECT_EQ(head.dim(2), 7);
  EXPECT_EQ(head.data_bytes, 0);
  bool dead = true;
  EXPECT_TRUE(ParseRecvTensorReplyTail(absl::MakeConstSpan(reply.data() + n, 7), &dead));
  EXPECT_FALSE(dead);

  const std::vector<uint8_t> dead_reply = EncodedReply(0, 0, {}, "", /*dead=*/true);
  EXPECT_EQ(ParseRecvTensorReplyHead(absl::MakeConstSpan(dead_reply), &head),
            RecvTensorReplyHeadBytes(0));
  EXPECT_TRUE(ParseRecvTensorReplyTail(
      absl::MakeConstSpan(dead_reply.data() + RecvTensorReplyHeadBytes(0), 7), &dead));
  EXPECT_TRUE(dead);
}

// Likewise for a reply's head and tail.
TEST(RecvTensorFramesTest, ReplyParsersReadEveryByte) {
  const std::vector<uint8_t> good = EncodedReply(5, 1, {2}, std::string(8, 'x'));
  const size_t head_bytes = RecvTensorReplyHeadBytes(1);
  for (size_t i = 0; i < good.size(); ++i) {
    if (i >= head_bytes && i < head_bytes + 8) continue;  // the data: not the parsers' part
    std::vector<uint8_t> changed = good;
    changed[i] ^= 0x40;
    RecvTensorReplyHead head;
    bool dead = true;
    if (ParseRecvTensorReplyHead(absl::MakeConstSpan(changed), &head) != head_bytes ||
        !ParseRecvTensorReplyTail(
            absl::MakeConstSpan(changed.data() + head_bytes + 8, kRecvTensorReplyTailBytes),
            &dead)) {
      continue;
    }
    EXPECT_TRUE(head.seqid != 5 || head.dtype != 1 || head.rank != 1 || head.dim(0) != 2 ||
                head.data_bytes != 8 || dead)
        << "byte " << i << " was not read";
  }
}

TEST(RecvTensorFramesTest, ParsersLeaveOtherRepliesToTheProtocol) {
  RecvTensorReplyHead head;
  // An error reply.
  rpc::WorkerService_RecvTensor_result error;
  error.err.code = 5;
  error.err.message = "no such tensor";
  error.__isset.err = true;
  const std::vector<uint8_t> error_reply = GeneratedReply(error, 0);
  EXPECT_EQ(ParseRecvTensorReplyHead(absl::MakeConstSpan(error_reply), &head), 0u);
  // Every prefix that ends inside the head.
  const std::vector<uint8_t> good = GeneratedReply(TensorResult(1, {2}, std::string(8, 'x')), 0);
  const size_t head_bytes = RecvTensorReplyHeadBytes(1);
  for (size_t n = 0; n < head_bytes; ++n) {
    EXPECT_EQ(ParseRecvTensorReplyHead(absl::MakeConstSpan(good.data(), n), &head), 0u) << n;
  }
  EXPECT_EQ(ParseRecvTensorReplyHead(absl::MakeConstSpan(good.data(), head_bytes), &head),
            head_bytes);
  // A rank past the limit, a negative data length.
  std::vector<uint8_t> bad = good;
  const size_t rank_at = 22 + 3 + 3 + 7 + 3 + 1;
  bad[rank_at] = 0x7f;
  EXPECT_EQ(ParseRecvTensorReplyHead(absl::MakeConstSpan(bad), &head), 0u);
  bad = good;
  bad[head_bytes - 4] = 0xff;
  EXPECT_EQ(ParseRecvTensorReplyHead(absl::MakeConstSpan(bad), &head), 0u);
  // Tails: every truncation, an is_dead that is neither 0 nor 1, a field
  // a newer peer added before the stops.
  const uint8_t* tail = good.data() + head_bytes + 8;
  bool dead;
  for (size_t n = 0; n < kRecvTensorReplyTailBytes; ++n) {
    EXPECT_FALSE(ParseRecvTensorReplyTail(absl::MakeConstSpan(tail, n), &dead)) << n;
  }
  std::vector<uint8_t> odd(tail, tail + kRecvTensorReplyTailBytes);
  odd[4] = 2;
  EXPECT_FALSE(ParseRecvTensorReplyTail(absl::MakeConstSpan(odd), &dead));
  odd = std::vector<uint8_t>(tail, tail + kRecvTensorReplyTailBytes);
  odd[0] = 8;  // a field where TensorWire's end was
  EXPECT_FALSE(ParseRecvTensorReplyTail(absl::MakeConstSpan(odd), &dead));
}

}  // namespace
}  // namespace sluice
