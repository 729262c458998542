// What a peer can send to a task's port: bytes through the framed transport
// (its frame limit) and the strict binary protocol into the service
// processor of tools:server (service_processor.h), which decodes every
// WorkerService and MasterService request, the hand-parsed RecvTensor call
// (recv_tensor_frames.h) and the zero-copy CollectivePush path included. Up to 16 calls per input. Errors and
// dropped connections, never a crash or an allocation past the input.
#include <memory>
#include <string>

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TTransportException.h>

#include "absl/strings/str_cat.h"
#include "distributed/rpc/framed_transport.h"
#include "distributed/rpc/gen-cpp/MasterService.h"
#include "distributed/rpc/gen-cpp/WorkerService.h"
#include "distributed/rpc/service_processor.h"
#include "fuzz/fuzz_target.h"

namespace {

using apache::thrift::transport::TMemoryBuffer;

// Answers at once: a 4-byte tensor for key "t", NotFound otherwise.
class NoWaitSource : public sluice::TensorSource {
 public:
  absl::StatusOr<sluice::Tensor> WaitForTensor(int64_t, const std::string& key,
                                               int64_t) override {
    if (key == "t") return sluice::Tensor::Scalar<float>(1.5f);
    return absl::NotFoundError(absl::StrCat("no tensor '", key, "'"));
  }
};

// Takes every push and keeps none.
class DropSink : public sluice::TensorSink {
 public:
  sluice::Allocator* PushAllocator() override { return nullptr; }
  absl::Status AcceptCollectivePush(const std::string&, const std::string&, sluice::Tensor,
                                    int64_t, const std::string&) override {
    return absl::OkStatus();
  }
};

// The frame limit a server sets from its configuration; kept small here so
// that the fuzzer tries the refusal, not 1 GiB buffers.
constexpr int64_t kMaxFrameBytes = 8 << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static NoWaitSource source;
  static DropSink sink;
  static const std::shared_ptr<sluice::ServiceProcessor> processor = sluice::NewServiceProcessor(
      "/job:fuzz/replica:0/task:0", std::make_shared<sluice::rpc::WorkerServiceNull>(), &source,
      &sink, std::make_shared<sluice::rpc::MasterServiceNull>());
  auto in_buffer = std::make_shared<TMemoryBuffer>(const_cast<uint8_t*>(data),
                                                   static_cast<uint32_t>(size));
  sluice::FramedTransportOptions framing;
  framing.max_frame_bytes = kMaxFrameBytes;
  auto in = std::make_shared<sluice::FramedTransport>(in_buffer, framing);
  auto out_buffer = std::make_shared<TMemoryBuffer>();
  auto out = std::make_shared<sluice::FramedTransport>(out_buffer, framing);
  const int32_t limit = static_cast<int32_t>(kMaxFrameBytes);
  auto in_protocol = std::make_shared<apache::thrift::protocol::TBinaryProtocolT<sluice::FramedTransport>>(
      in, limit, limit, /*strict_read=*/true, /*strict_write=*/true);
  auto out_protocol = std::make_shared<apache::thrift::protocol::TBinaryProtocolT<sluice::FramedTransport>>(
      out, limit, limit, true, true);
  std::string peer = "/job:worker/replica:0/task:1";
  try {
    for (int call = 0; call < 16 && in->peek(); ++call) {
      if (!processor->ProcessNext(*in, *out, in_protocol, out_protocol,
                                  call % 2 == 0 ? &peer : nullptr)) {
        break;
      }
      out_buffer->resetBuffer();
    }
  } catch (const apache::thrift::TException&) {
    // The server drops such a connection.
  } catch (const std::exception&) {
  }
  return 0;
}
