#include "distributed/rpc/service_processor.h"

#include <utility>

#include <thrift/TApplicationException.h>
#include <thrift/protocol/TProtocol.h>

#include "absl/strings/str_cat.h"
#include "distributed/rpc/collective_push.h"
#include "distributed/rpc/recv_tensor_frames.h"
#include "distributed/rpc/recv_tensor_reply.h"
#include "distributed/rpc/tensor_wire.h"
#include "runtime/rendezvous.h"

namespace sluice {

using apache::thrift::TApplicationException;
using apache::thrift::TProcessor;
using apache::thrift::protocol::TProtocol;

namespace {

// True for a tensor of a fixed-size dtype of under 2 GiB, or of strings:
// the cheap check every reply passes; the rest get their error message
// from DataTypeFromWire and WireByteCount.
bool FitsOnTheWire(const Tensor& t) {
  if (t.dtype() == DT_STRING) return true;
  return !IsRefType(t.dtype()) && DataTypeSize(t.dtype()) > 0 &&
         t.TotalBytes() <= static_cast<size_t>(INT32_MAX);
}

// The generated worker processor with RecvTensor always answered from the
// TensorSource.
class WorkerProcessor : public rpc::WorkerServiceProcessor {
 public:
  WorkerProcessor(std::shared_ptr<rpc::WorkerServiceIf> iface, TensorSource* source,
                  TensorSink* sink)
      : rpc::WorkerServiceProcessor(std::move(iface)), source_(source), sink_(sink) {}

  // `peer`: the connection's authenticated identity ("" without TLS).
  bool Dispatch(TProtocol* in, TProtocol* out, const std::string& method, int32_t seqid,
                const std::string* peer) {
    return dispatchCall(in, out, method, seqid, const_cast<std::string*>(peer));
  }

  // The reply to a RecvTensor call, its tensor from the TensorSource; on
  // `out_transport` when a tensor (the hand-written encoding), through `out`
  // (a protocol over it) when an error.
  // `Transport`: FramedTransport (ProcessNext) or TTransport (the
  // generated dispatch).
  template <typename Transport>
  void AnswerRecvTensor(int32_t seqid, int64_t step_id, const std::string& key,
                        int64_t timeout_ms, Transport& out_transport, TProtocol* out) {
    // The error is built only when it is the answer: this is the hot path
    // of every cross-task tensor.
    absl::StatusOr<Tensor> tensor = Fetch(step_id, key, timeout_ms);
    // An uninitialized tensor is a dead one (runtime/rendezvous.h): it
    // travels as RecvTensorResponse.is_dead.
    if (tensor.ok() && !IsDeadValue(*tensor) && !FitsOnTheWire(*tensor)) {
      absl::Status travel = DataTypeFromWire(static_cast<int32_t>(tensor->dtype())).status();
      if (travel.ok() && tensor->dtype() != DT_STRING) {
        travel = WireByteCount(tensor->dtype(), tensor->shape()).status();
      }
      if (!travel.ok()) {
        tensor = absl::Status(travel.code(),
                              absl::StrCat("RecvTensor '", key, "': ", travel.message()));
      }
    }
    if (tensor.ok()) {
      WriteRecvTensorReply(out_transport, seqid, *tensor);
      return;
    }
    rpc::WorkerService_RecvTensor_result result;
    result.err = ToRpcError(tensor.status());
    result.__isset.err = true;
    out->writeMessageBegin("RecvTensor", apache::thrift::protocol::T_REPLY, seqid);
    result.write(out);
    out->writeMessageEnd();
    out->getTransport()->writeEnd();
    out->getTransport()->flush();
  }

 protected:
  bool dispatchCall(TProtocol* in, TProtocol* out, const std::string& fname, int32_t seqid,
                    void* context) override {
    // One RecvTensor path: the zero-copy one, from the TensorSource (the
    // handler's copying RecvTensor is never called).
    if (fname == "RecvTensor") {
      ProcessRecvTensor(in, out, seqid);
      return true;
    }
    if (sink_ != nullptr && fname == "CollectivePush") {
      const std::string* peer = static_cast<const std::string*>(context);
      ProcessCollectivePush(in, out, seqid, peer != nullptr ? *peer : std::string());
      return true;
    }
    return rpc::WorkerServiceProcessor::dispatchCall(in, out, fname, seqid, context);
  }

 private:
  void ProcessRecvTensor(TProtocol* in, TProtocol* out, int32_t seqid) {
    rpc::WorkerService_RecvTensor_args args;
    args.read(in);
    in->readMessageEnd();
    in->getTransport()->readEnd();
    const rpc::RecvTensorRequest& req = args.req;
    AnswerRecvTensor(seqid, req.step_id, req.rendezvous_key, req.timeout_ms,
                     *out->getTransport(), out);
  }

  absl::StatusOr<Tensor> Fetch(int64_t step_id, const std::string& key, int64_t timeout_ms) {
    if (source_ == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat("RecvTensor '", key, "': this server has no tensors to give"));
    }
    try {
      return source_->WaitForTensor(step_id, key, timeout_ms);
    } catch (const std::exception& e) {
      return absl::InternalError(absl::StrCat("RecvTensor '", key, "': ", e.what()));
    }
  }

  void ProcessCollectivePush(TProtocol* in, TProtocol* out, int32_t seqid,
                             const std::string& peer) {
    CollectivePushRequest req =
        ReadCollectivePushArgs(in, sink_->PushAllocator(),
                               [this](const std::string& to_device, const std::string& key) {
                                 return sink_->LandingFor(to_device, key);
                               });
    absl::Status status = req.value.status();
    if (status.ok()) {
      try {
        status = sink_->AcceptCollectivePush(req.to_device, req.key, *std::move(req.value),
                                             req.timeout_ms, peer);
      } catch (const std::exception& e) {
        status = absl::InternalError(absl::StrCat("CollectivePush '", req.key, "': ", e.what()));
      }
    } else {
      status = absl::Status(status.code(), absl::StrCat("CollectivePush '", req.key, "' to ",
                                                        req.to_device, ": ", status.message()));
    }
    WriteCollectivePushReply(out, seqid, status);
  }

  TensorSource* const source_;
  TensorSink* const sink_;
};

class MasterProcessor : public rpc::MasterServiceProcessor {
 public:
  using rpc::MasterServiceProcessor::MasterServiceProcessor;
  bool Dispatch(TProtocol* in, TProtocol* out, const std::string& method, int32_t seqid) {
    return dispatchCall(in, out, method, seqid, nullptr);
  }
};

// The longest RecvTensor call taken the hand-parsed way (a rendezvous key
// is a few hundred bytes at most); longer ones go through the protocol.
constexpr size_t kMaxHandParsedCallBytes = RecvTensorCallBytes(4096);

// Routes "service:method" calls (TMultiplexedProtocol's naming) to the
// worker or master processor without per-call allocations.
class ServiceMux : public ServiceProcessor {
 public:
  ServiceMux(std::string task, std::unique_ptr<WorkerProcessor> worker,
             std::unique_ptr<MasterProcessor> master)
      : task_(std::move(task)), worker_(std::move(worker)), master_(std::move(master)) {}

  bool ProcessNext(FramedTransport& in, FramedTransport& out,
                   const std::shared_ptr<TProtocol>& in_protocol,
                   const std::shared_ptr<TProtocol>& out_protocol,
                   const std::string* peer) override {
    if (worker_ != nullptr) {
      size_t len;
      const uint8_t* frame = in.PeekFrame(kMaxHandParsedCallBytes, &len);
      if (frame == nullptr) return false;  // the peer left between calls
      RecvTensorCall call;
      if (len == in.frame_remaining() &&
          ParseRecvTensorCall(absl::MakeConstSpan(frame, len), &call)) {
        const std::string key(call.key);
        in.ConsumeFrame();
        worker_->AnswerRecvTensor(call.seqid, call.step_id, key, call.timeout_ms, out,
                                  out_protocol.get());
        return true;
      }
    }
    return process(in_protocol, out_protocol, const_cast<std::string*>(peer));
  }

  // `context`: the connection's peer identity (a std::string), or null.
  bool process(std::shared_ptr<TProtocol> in, std::shared_ptr<TProtocol> out,
               void* context) override {
    const std::string* peer = static_cast<const std::string*>(context);
    // "worker:RecvTensor" is past std::string's inline capacity; a buffer
    // per connection thread saves an allocation per call.
    thread_local std::string name;
    apache::thrift::protocol::TMessageType type;
    int32_t seqid;
    in->readMessageBegin(name, type, seqid);
    const size_t colon = name.find(':');
    const absl::string_view service =
        colon == std::string::npos ? absl::string_view() : absl::string_view(name).substr(0, colon);
    const std::string method = colon == std::string::npos ? name : name.substr(colon + 1);
    if (type == apache::thrift::protocol::T_CALL) {
      if (service == "worker" && worker_ != nullptr) {
        return worker_->Dispatch(in.get(), out.get(), method, seqid, peer);
      }
      if (service == "master" && master_ != nullptr) {
        return master_->Dispatch(in.get(), out.get(), method, seqid);
      }
    }
    in->skip(apache::thrift::protocol::T_STRUCT);
    in->readMessageEnd();
    in->getTransport()->readEnd();
    TApplicationException x(
        type == apache::thrift::protocol::T_CALL ? TApplicationException::UNKNOWN_METHOD
                                                 : TApplicationException::INVALID_MESSAGE_TYPE,
        type != apache::thrift::protocol::T_CALL
            ? absl::StrCat("task ", task_, " answers only calls ('", name, "')")
            : absl::StrCat("task ", task_, " serves no service '", service, "' (call '", name,
                           "'; services are 'worker:' and 'master:')"));
    out->writeMessageBegin(method, apache::thrift::protocol::T_EXCEPTION, seqid);
    x.write(out.get());
    out->writeMessageEnd();
    out->getTransport()->writeEnd();
    out->getTransport()->flush();
    return true;
  }

 private:
  const std::string task_;
  const std::unique_ptr<WorkerProcessor> worker_;
  const std::unique_ptr<MasterProcessor> master_;
};

}  // namespace

std::shared_ptr<ServiceProcessor> NewServiceProcessor(const std::string& task,
                                                std::shared_ptr<rpc::WorkerServiceIf> worker,
                                                TensorSource* source, TensorSink* sink,
                                                std::shared_ptr<rpc::MasterServiceIf> master) {
  return std::make_shared<ServiceMux>(
      task,
      worker != nullptr ? std::make_unique<WorkerProcessor>(std::move(worker), source, sink)
                        : nullptr,
      master != nullptr ? std::make_unique<MasterProcessor>(std::move(master)) : nullptr);
}

}  // namespace sluice
