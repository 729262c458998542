// The Thrift processor behind a task's port: "worker:" and "master:" calls
// (TMultiplexedProtocol's naming) routed to the WorkerService and
// MasterService handlers, with RecvTensor answered from a TensorSource and
// CollectivePush read into a TensorSink without copying (recv_tensor_reply.h,
// collective_push.h). ThriftServer runs one per server; a fuzzer feeds it
// bytes directly.
//
//   std::shared_ptr<ServiceProcessor> p = NewServiceProcessor(task, worker, &source, &sink, master);
//   std::string peer = "/job:worker/replica:0/task:1";   // the TLS identity, or none
//   while (p->ProcessNext(*framed, *framed, protocol, protocol, &peer)) {}
//
// process()'s `context` is the connection's authenticated peer (a
// std::string*, or null on a plaintext connection): pushes are handed to
// the sink with it. Any other call, or a reply instead of a call, is
// answered with a TApplicationException and the connection stays usable.
// Transport and protocol errors are thrown (the caller drops the
// connection). Thread-compatible: one protocol per thread; the handlers,
// source and sink must be thread-safe when shared by several connections.
#ifndef SLUICE_DISTRIBUTED_RPC_SERVICE_PROCESSOR_H_
#define SLUICE_DISTRIBUTED_RPC_SERVICE_PROCESSOR_H_

#include <memory>
#include <string>

#include <thrift/TProcessor.h>

#include "distributed/rpc/framed_transport.h"
#include "distributed/rpc/gen-cpp/MasterService.h"
#include "distributed/rpc/gen-cpp/WorkerService.h"
#include "distributed/rpc/tensor_sink.h"
#include "distributed/rpc/tensor_source.h"

namespace sluice {

// The processor with one more entry point: ProcessNext answers the next
// call the way process() does, but takes a RecvTensor call in the common
// layout straight from the FramedTransport's buffer (recv_tensor_frames.h)
// and writes its reply by hand; any other call goes to process(). Same
// return value and exceptions as process(), plus false at a clean end of
// stream before a call. `peer`: process()'s context.
class ServiceProcessor : public apache::thrift::TProcessor {
 public:
  virtual bool ProcessNext(FramedTransport& in, FramedTransport& out,
                           const std::shared_ptr<apache::thrift::protocol::TProtocol>& in_protocol,
                           const std::shared_ptr<apache::thrift::protocol::TProtocol>& out_protocol,
                           const std::string* peer) = 0;
};

// Either handler may be null (that service is absent). RecvTensor is always
// answered from `source` (null: Unimplemented; `worker`'s RecvTensor is
// never called); a null `sink` leaves CollectivePush to `worker`. `source` and
// `sink` are borrowed.
std::shared_ptr<ServiceProcessor> NewServiceProcessor(
    const std::string& task, std::shared_ptr<rpc::WorkerServiceIf> worker, TensorSource* source,
    TensorSink* sink, std::shared_ptr<rpc::MasterServiceIf> master);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_SERVICE_PROCESSOR_H_
