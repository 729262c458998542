// What a job member can ask of a task, past decoding: fuzzed requests into
// the real handlers of a task (WorkerServiceHandler over a real Worker,
// MasterServiceHandler over a MasterSession on that worker), as
// tools:server wires them. Handles are 128-bit random capabilities a
// fuzzer cannot guess, so the harness puts the ones this input's
// CreateSession and RegisterGraph returned into its later calls; everything
// else (graphs, feeds, fetches, configs, step ids) comes from the input.
//
// Input: up to 8 calls, each a selector byte and then the call's request as
// strict binary Thrift (the generated structs' read()). Errors (RpcError),
// never a crash, a hang past the worker's 0.5 s bound, or a tensor past the
// device's 256 MiB.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include "builtin_session.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/cluster_worker_cache.h"
#include "distributed/rpc/gen-cpp/MasterService.h"
#include "distributed/rpc/gen-cpp/WorkerService.h"
#include "distributed/service_handlers.h"
#include "distributed/worker.h"
#include "fuzz/fuzz_target.h"
#include "ops/io/file_write_policy.h"

namespace {

using apache::thrift::protocol::TBinaryProtocolT;
using apache::thrift::transport::TMemoryBuffer;

constexpr char kTask[] = "/job:fuzz/replica:0/task:0";
constexpr int32_t kMaxBytes = 1 << 20;

struct Task {
  std::unique_ptr<sluice::ClusterWorkerCache> cache;
  std::unique_ptr<sluice::Worker> worker;
  std::unique_ptr<sluice::WorkerServiceHandler> worker_handler;
  std::unique_ptr<sluice::MasterServiceHandler> master_handler;
};

Task* MakeTask() {
  // A graph's SaveV2 writes only here, as on a server.
  const char* tmp = std::getenv("TMPDIR");
  (void)sluice::RestrictGraphFileWrites(
      {std::string(tmp != nullptr ? tmp : "/tmp") + "/sluice-fuzz-" + std::to_string(getpid())});
  auto* task = new Task;
  absl::StatusOr<sluice::ClusterSpec> cluster =
      sluice::ClusterSpec::FromJobs({{"fuzz", {"127.0.0.1:1"}}});
  if (!cluster.ok()) std::abort();
  sluice::SessionConfig session = sluice::WithBuiltinRegistries(sluice::SessionConfig());
  session.default_device = kTask;
  session.devices.cpu_threads = 1;
  session.devices.cpu_memory_limit = int64_t{256} << 20;
  task->cache = std::make_unique<sluice::ClusterWorkerCache>(*cluster, kTask, sluice::RpcOptions());
  sluice::WorkerOptions options;
  options.task = kTask;
  options.session = session;
  options.peers = task->cache.get();
  options.default_timeout_ms = 200;
  options.max_timeout_ms = 500;
  absl::StatusOr<std::unique_ptr<sluice::Worker>> worker = sluice::Worker::Create(options);
  if (!worker.ok()) std::abort();
  task->worker = *std::move(worker);
  task->cache->SetLocalWorker(task->worker.get());
  task->worker_handler = std::make_unique<sluice::WorkerServiceHandler>(task->worker.get());
  sluice::MasterSessionOptions master;
  master.workers = task->cache.get();
  master.session = session;
  master.wait_for_cluster_ms = 100;
  task->master_handler = std::make_unique<sluice::MasterServiceHandler>(master);
  return task;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Task* task = MakeTask();
  auto buffer = std::make_shared<TMemoryBuffer>(const_cast<uint8_t*>(data),
                                                static_cast<uint32_t>(size));
  TBinaryProtocolT<TMemoryBuffer> in(buffer, kMaxBytes, kMaxBytes, /*strict_read=*/true,
                                     /*strict_write=*/true);
  sluice::WorkerServiceHandler& worker = *task->worker_handler;
  sluice::MasterServiceHandler& master = *task->master_handler;
  std::vector<std::string> sessions, graphs;
  const auto last = [](const std::vector<std::string>& v) { return v.empty() ? "" : v.back(); };
  for (int call = 0; call < 8 && buffer->available_read() > 0; ++call) {
    try {
      int8_t selector;
      in.readByte(selector);
      switch (static_cast<uint8_t>(selector) % 8) {
        case 0: {
          sluice::rpc::CreateSessionRequest req;
          req.read(&in);
          sluice::rpc::CreateSessionResponse out;
          master.CreateSession(out, req);
          sessions.push_back(out.session_handle);
          break;
        }
        case 1: {
          std::string graph_def;
          in.readBinary(graph_def);
          master.ExtendSession(last(sessions), graph_def);
          break;
        }
        case 2: {
          sluice::rpc::RunStepRequest req;
          req.read(&in);
          req.session_handle = last(sessions);
          sluice::rpc::RunStepResponse out;
          master.RunStep(out, req);
          break;
        }
        case 3: {
          sluice::rpc::RegisterGraphRequest req;
          req.read(&in);
          sluice::rpc::RegisterGraphResponse out;
          worker.RegisterGraph(out, req);
          graphs.push_back(out.graph_handle);
          break;
        }
        case 4: {
          sluice::rpc::RunGraphRequest req;
          req.read(&in);
          req.graph_handle = last(graphs);
          sluice::rpc::RunGraphResponse out;
          worker.RunGraph(out, req);
          break;
        }
        case 5: {
          int64_t step;
          int32_t code;
          std::string message;
          in.readI64(step);
          in.readI32(code);
          in.readString(message);
          worker.AbortStep(step, code, message);
          worker.CleanupStep(step);
          break;
        }
        case 6: {
          sluice::rpc::WorkerStatus status;
          worker.GetStatus(status);
          std::vector<sluice::rpc::DeviceAttributes> devices;
          master.ListDevices(devices);
          break;
        }
        case 7: {
          master.CloseSession(last(sessions));
          worker.DeregisterGraph(last(graphs));
          break;
        }
      }
    } catch (const sluice::rpc::RpcError& e) {
      // The call's answer: an error for the client (shown with
      // SLUICE_FUZZ_VERBOSE=1, to see how far a seed gets).
      if (std::getenv("SLUICE_FUZZ_VERBOSE") != nullptr) {
        std::fprintf(stderr, "call %d: %s\n", call, e.message.c_str());
      }
    } catch (const apache::thrift::TException&) {
      break;  // the input ran out or is not Thrift: the connection would end
    }
  }
  // What this input opened is closed, as a server does when its client
  // leaves, so that inputs do not pile state on each other.
  for (const std::string& s : sessions) {
    try {
      if (!s.empty()) master.CloseSession(s);
    } catch (const sluice::rpc::RpcError&) {
    }
  }
  for (const std::string& g : graphs) {
    try {
      if (!g.empty()) worker.DeregisterGraph(g);
    } catch (const sluice::rpc::RpcError&) {
    }
  }
  return 0;
}
