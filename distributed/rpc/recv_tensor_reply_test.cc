#include "distributed/rpc/recv_tensor_reply.h"

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TTransportException.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "distributed/rpc/framed_transport.h"
#include "distributed/rpc/gen-cpp/WorkerService.h"
#include "gtest/gtest.h"
#include "runtime/rendezvous.h"

namespace sluice {
namespace {

using apache::thrift::protocol::TBinaryProtocolT;
using apache::thrift::transport::TMemoryBuffer;

// A framed binary connection looped through memory: what one end writes,
// the other reads.
struct Loop {
  std::shared_ptr<TMemoryBuffer> wire = std::make_shared<TMemoryBuffer>();
  std::shared_ptr<FramedTransport> writer = std::make_shared<FramedTransport>(wire);
  std::shared_ptr<FramedTransport> reader = std::make_shared<FramedTransport>(wire);
  std::shared_ptr<TBinaryProtocolT<FramedTransport>> out =
      std::make_shared<TBinaryProtocolT<FramedTransport>>(writer);
  std::shared_ptr<TBinaryProtocolT<FramedTransport>> in =
      std::make_shared<TBinaryProtocolT<FramedTransport>>(reader);

  // Writes `result` as the generated processor would, as one frame.
  void WriteGenerated(const rpc::WorkerService_RecvTensor_result& result) {
    out->writeMessageBegin("RecvTensor", apache::thrift::protocol::T_REPLY, 0);
    result.write(out.get());
    out->writeMessageEnd();
    writer->writeEnd();
    writer->flush();
  }
  absl::StatusOr<Tensor> Read() { return ReadRecvTensorReply(*reader, in.get(), nullptr); }

  // A hand-laid reply, field by field: everything up to the TensorWire's
  // fields, then everything after them.
  void OpenTensorWire() {
    using namespace apache::thrift::protocol;  // NOLINT: T_* type tags
    out->writeMessageBegin("RecvTensor", T_REPLY, 0);
    out->writeStructBegin("result");
    out->writeFieldBegin("success", T_STRUCT, 0);
    out->writeStructBegin("RecvTensorResponse");
    out->writeFieldBegin("tensor", T_STRUCT, 1);
    out->writeStructBegin("TensorWire");
  }
  void CloseReply() {
    for (int level = 0; level < 3; ++level) {  // TensorWire, RecvTensorResponse, result
      if (level > 0) out->writeFieldEnd();
      out->writeFieldStop();
      out->writeStructEnd();
    }
    out->writeMessageEnd();
    writer->writeEnd();
    writer->flush();
  }
};

void ExpectSameTensor(const Tensor& got, const Tensor& want) {
  ASSERT_TRUE(got.IsInitialized());
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(got.shape(), want.shape());
  if (want.dtype() == DT_STRING) {
    for (int64_t i = 0; i < want.NumElements(); ++i) {
      EXPECT_EQ(got.flat<std::string>()[i], want.flat<std::string>()[i]);
    }
  } else {
    EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), want.TotalBytes()), 0);
  }
}

TEST(RecvTensorReplyTest, WhatWeWriteTheGeneratedCodeReads) {
  Loop loop;
  const Tensor t = Tensor::FromVector<float>({1.5f, -2, 3, 4, 5, 6}, TensorShape({2, 3}));
  WriteRecvTensorReply(*loop.writer, 7, t);
  std::string name;
  apache::thrift::protocol::TMessageType type;
  int32_t seqid;
  loop.in->readMessageBegin(name, type, seqid);
  EXPECT_EQ(name, "RecvTensor");
  EXPECT_EQ(type, apache::thrift::protocol::T_REPLY);
  EXPECT_EQ(seqid, 7);
  rpc::WorkerService_RecvTensor_result result;
  result.read(loop.in.get());
  loop.in->readMessageEnd();
  loop.reader->readEnd();
  EXPECT_EQ(loop.wire->available_read(), 0u);
  ASSERT_TRUE(result.__isset.success);
  EXPECT_EQ(result.success.tensor.dtype, static_cast<int32_t>(DT_FLOAT));
  EXPECT_EQ(result.success.tensor.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(result.success.tensor.data.size(), 24u);
  EXPECT_EQ(std::memcmp(result.success.tensor.data.data(), t.raw_data(), 24), 0);
}

TEST(RecvTensorReplyTest, EveryKindOfTensorRoundTrips) {
  Loop loop;
  const std::vector<Tensor> tensors = {
      Tensor::Scalar<float>(3.0f),
      Tensor::FromVector<int64_t>({-1, int64_t{1} << 40, 7}),
      Tensor(DT_FLOAT, TensorShape({0, 5})),
      Tensor::FromVector<std::string>({"a", "", std::string(100, 'z')}),
      Tensor::FromVector<double>(std::vector<double>(5000, 0.25), TensorShape({50, 100})),
  };
  for (const Tensor& t : tensors) WriteRecvTensorReply(*loop.writer, 0, t);
  WriteRecvTensorReply(*loop.writer, 0, Tensor());  // dead
  for (const Tensor& t : tensors) {
    absl::StatusOr<Tensor> got = loop.Read();
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSameTensor(*got, t);
  }
  absl::StatusOr<Tensor> dead = loop.Read();
  ASSERT_TRUE(dead.ok()) << dead.status();
  EXPECT_TRUE(IsDeadValue(*dead));
  EXPECT_EQ(loop.wire->available_read(), 0u);
}

TEST(RecvTensorReplyTest, OtherLayoutsGoThroughTheProtocol) {
  Loop loop;
  // The generated code's own bytes (the common layout), then an error, then
  // a tensor whose fields come in another order with a field we do not
  // know, then one more common reply: each is read whole, in step.
  rpc::WorkerService_RecvTensor_result plain;
  plain.success.tensor.dtype = static_cast<int32_t>(DT_INT32);
  plain.success.tensor.shape = {2};
  plain.success.tensor.data = std::string("\1\0\0\0\2\0\0\0", 8);
  plain.success.__isset.tensor = true;
  plain.__isset.success = true;
  loop.WriteGenerated(plain);

  rpc::WorkerService_RecvTensor_result error;
  error.err.code = static_cast<int32_t>(absl::StatusCode::kNotFound);
  error.err.message = "no tensor 'x'";
  error.__isset.err = true;
  loop.WriteGenerated(error);

  using namespace apache::thrift::protocol;  // NOLINT: T_* type tags
  TProtocol* out = loop.out.get();
  loop.OpenTensorWire();
  out->writeFieldBegin("shape", T_LIST, 2);
  out->writeListBegin(T_I64, 1);
  out->writeI64(1);
  out->writeListEnd();
  out->writeFieldEnd();
  out->writeFieldBegin("future", T_I32, 9);
  out->writeI32(5);
  out->writeFieldEnd();
  out->writeFieldBegin("dtype", T_I32, 1);
  out->writeI32(static_cast<int32_t>(DT_FLOAT));
  out->writeFieldEnd();
  const float value = 2.5f;
  out->writeFieldBegin("data", T_STRING, 3);
  out->writeBinary(std::string(reinterpret_cast<const char*>(&value), 4));
  out->writeFieldEnd();
  loop.CloseReply();

  // The common head, then a field a newer peer added after the data.
  loop.OpenTensorWire();
  out->writeFieldBegin("dtype", T_I32, 1);
  out->writeI32(static_cast<int32_t>(DT_FLOAT));
  out->writeFieldEnd();
  out->writeFieldBegin("shape", T_LIST, 2);
  out->writeListBegin(T_I64, 0);
  out->writeListEnd();
  out->writeFieldEnd();
  out->writeFieldBegin("data", T_STRING, 3);
  out->writeBinary(std::string(reinterpret_cast<const char*>(&value), 4));
  out->writeFieldEnd();
  out->writeFieldBegin("later", T_STRING, 4);
  out->writeString("ignored");
  out->writeFieldEnd();
  loop.CloseReply();

  WriteRecvTensorReply(*loop.writer, 0, Tensor::Scalar<int64_t>(99));

  absl::StatusOr<Tensor> first = loop.Read();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->flat<int32_t>()[1], 2);
  try {
    (void)loop.Read();
    ADD_FAILURE() << "an error reply must throw its RpcError";
  } catch (const rpc::RpcError& e) {
    EXPECT_EQ(e.code, static_cast<int32_t>(absl::StatusCode::kNotFound));
    EXPECT_EQ(e.message, "no tensor 'x'");
  }
  absl::StatusOr<Tensor> reordered = loop.Read();
  ASSERT_TRUE(reordered.ok()) << reordered.status();
  EXPECT_EQ(reordered->shape(), TensorShape({1}));
  EXPECT_EQ(reordered->flat<float>()[0], 2.5f);
  absl::StatusOr<Tensor> extended = loop.Read();
  ASSERT_TRUE(extended.ok()) << extended.status();
  EXPECT_EQ(extended->flat<float>()[0], 2.5f);
  absl::StatusOr<Tensor> last = loop.Read();
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->flat<int64_t>()[0], 99);
  EXPECT_EQ(loop.wire->available_read(), 0u);
}

TEST(RecvTensorReplyTest, AnInvalidTensorIsAStatusAndTheConnectionStaysInStep) {
  Loop loop;
  rpc::WorkerService_RecvTensor_result bad;
  bad.success.tensor.dtype = 12345;  // no such dtype
  bad.success.tensor.shape = {2};
  bad.success.tensor.data = std::string(8, 'x');
  bad.success.__isset.tensor = true;
  bad.__isset.success = true;
  loop.WriteGenerated(bad);
  rpc::WorkerService_RecvTensor_result short_data;
  short_data.success.tensor.data = std::string(8, 'x');
  short_data.success.__isset.tensor = true;
  short_data.__isset.success = true;
  short_data.success.tensor.dtype = static_cast<int32_t>(DT_FLOAT);
  short_data.success.tensor.shape = {3};  // 12 bytes, 8 come
  loop.WriteGenerated(short_data);
  WriteRecvTensorReply(*loop.writer, 0, Tensor::Scalar<float>(1.0f));

  absl::StatusOr<Tensor> first = loop.Read();
  EXPECT_EQ(first.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(first.status().message().find("12345"), std::string::npos) << first.status();
  absl::StatusOr<Tensor> second = loop.Read();
  EXPECT_EQ(second.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(second.status().message().find("12 bytes, but 8 came"), std::string::npos)
      << second.status();
  absl::StatusOr<Tensor> third = loop.Read();
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->flat<float>()[0], 1.0f);
}

TEST(RecvTensorReplyTest, GeneratedDeadAndTensorlessReplies) {
  Loop loop;
  rpc::WorkerService_RecvTensor_result dead;  // an empty tensor field, then is_dead
  dead.success.is_dead = true;
  dead.__isset.success = true;
  loop.WriteGenerated(dead);
  rpc::WorkerService_RecvTensor_result tensorless;  // is_dead false and no tensor
  tensorless.__isset.success = true;
  loop.WriteGenerated(tensorless);
  WriteRecvTensorReply(*loop.writer, 0, Tensor::Scalar<float>(4.0f));

  absl::StatusOr<Tensor> first = loop.Read();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(IsDeadValue(*first));
  absl::StatusOr<Tensor> second = loop.Read();
  EXPECT_EQ(second.status().code(), absl::StatusCode::kInvalidArgument) << second.status();
  absl::StatusOr<Tensor> third = loop.Read();
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->flat<float>()[0], 4.0f);
}

TEST(RecvTensorReplyTest, DataLongerThanItsFrameIsRefusedBeforeAllocation) {
  Loop loop;
  rpc::WorkerService_RecvTensor_result big;
  big.success.tensor.dtype = static_cast<int32_t>(DT_FLOAT);
  big.success.tensor.shape = {4};
  big.success.tensor.data = std::string(16, 'x');
  big.success.__isset.tensor = true;
  big.__isset.success = true;
  loop.WriteGenerated(big);
  // The data length says 1 GiB (the frame holds 16 bytes and the tail).
  std::string wire = loop.wire->getBufferAsString();
  const size_t len_at = 4 + 22 + 3 + 3 + 7 + 3 + 1 + 4 + 8 + 3;
  ASSERT_EQ(wire[len_at + 3], '\x10');
  wire[len_at] = '\x40';
  wire[len_at + 3] = '\0';
  loop.wire->resetBuffer();
  loop.wire->write(reinterpret_cast<const uint8_t*>(wire.data()), static_cast<uint32_t>(wire.size()));
  EXPECT_THROW(loop.Read(), apache::thrift::transport::TTransportException);
}

TEST(RecvTensorReplyTest, CallIsOneFrameTheServerParses) {
  Loop loop;
  WriteRecvTensorCall(*loop.writer, 5, "k", 100);
  std::string name;
  apache::thrift::protocol::TMessageType type;
  int32_t seqid;
  loop.in->readMessageBegin(name, type, seqid);
  EXPECT_EQ(name, "worker:RecvTensor");
  rpc::WorkerService_RecvTensor_args args;
  args.read(loop.in.get());
  loop.in->readMessageEnd();
  loop.reader->readEnd();
  EXPECT_EQ(args.req.step_id, 5);
  EXPECT_EQ(args.req.rendezvous_key, "k");
  EXPECT_EQ(args.req.timeout_ms, 100);
  EXPECT_EQ(loop.wire->available_read(), 0u);
}

}  // namespace
}  // namespace sluice
