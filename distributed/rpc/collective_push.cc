#include "distributed/rpc/collective_push.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "distributed/rpc/gen-cpp/WorkerService.h"
#include "distributed/rpc/recv_tensor_reply.h"
#include "distributed/rpc/tensor_wire.h"

namespace sluice {

using apache::thrift::protocol::TProtocol;
using apache::thrift::protocol::TType;

namespace {

// Field ids of WorkerService_CollectivePush_args (sluice.thrift).
constexpr int16_t kArgToDevice = 1;
constexpr int16_t kArgKey = 2;
constexpr int16_t kArgValue = 3;
constexpr int16_t kArgTimeout = 4;

}  // namespace

void WriteCollectivePushCall(TProtocol* out, const std::string& to_device, const std::string& key,
                             const Tensor& value, int64_t timeout_ms) {
  using namespace apache::thrift::protocol;  // NOLINT: T_* type tags
  std::string strings;  // DT_STRING elements, alive until the flush
  out->writeMessageBegin("worker:CollectivePush", T_CALL, 0);
  out->writeStructBegin("WorkerService_CollectivePush_pargs");
  out->writeFieldBegin("to_device", T_STRING, kArgToDevice);
  out->writeString(to_device);
  out->writeFieldEnd();
  out->writeFieldBegin("key", T_STRING, kArgKey);
  out->writeString(key);
  out->writeFieldEnd();
  out->writeFieldBegin("value", T_STRUCT, kArgValue);
  WriteTensorWireStruct(out, value, &strings);
  out->writeFieldEnd();
  out->writeFieldBegin("timeout_ms", T_I64, kArgTimeout);
  out->writeI64(timeout_ms);
  out->writeFieldEnd();
  out->writeFieldStop();
  out->writeStructEnd();
  out->writeMessageEnd();
  out->getTransport()->writeEnd();
  out->getTransport()->flush();
}

CollectivePushRequest ReadCollectivePushArgs(TProtocol* in, Allocator* allocator,
                                             const LandingLookup& landing_for) {
  CollectivePushRequest req;
  bool have_to_device = false, have_key = false;
  req.value = absl::InvalidArgumentError("CollectivePush without a value");
  std::string name;
  TType ftype;
  int16_t fid;
  in->readStructBegin(name);
  while (true) {
    in->readFieldBegin(name, ftype, fid);
    if (ftype == apache::thrift::protocol::T_STOP) break;
    if (fid == kArgToDevice && ftype == apache::thrift::protocol::T_STRING) {
      in->readString(req.to_device);
      have_to_device = true;
    } else if (fid == kArgKey && ftype == apache::thrift::protocol::T_STRING) {
      in->readString(req.key);
      have_key = true;
    } else if (fid == kArgValue && ftype == apache::thrift::protocol::T_STRUCT) {
      Tensor landing;
      if (landing_for && have_to_device && have_key) landing = landing_for(req.to_device, req.key);
      req.value = ReadTensorWireStruct(in, allocator, &landing);
    } else if (fid == kArgTimeout && ftype == apache::thrift::protocol::T_I64) {
      in->readI64(req.timeout_ms);
    } else {
      in->skip(ftype);
    }
    in->readFieldEnd();
  }
  in->readStructEnd();
  in->readMessageEnd();
  in->getTransport()->readEnd();
  return req;
}

void WriteCollectivePushReply(TProtocol* out, int32_t seqid, const absl::Status& status) {
  rpc::WorkerService_CollectivePush_result result;
  if (!status.ok()) {
    result.err = ToRpcError(status);
    result.__isset.err = true;
  }
  out->writeMessageBegin("CollectivePush", apache::thrift::protocol::T_REPLY, seqid);
  result.write(out);
  out->writeMessageEnd();
  out->getTransport()->writeEnd();
  out->getTransport()->flush();
}

}  // namespace sluice
