// Writes the seed inputs of fuzz/corpus/ from the formats' own writers, so
// that every seed is a valid input the fuzzer then mutates:
//
//   bazel run //fuzz:make_seeds -- $PWD/fuzz/corpus
//
// graph_def_fuzzer: the graphs of tests/testdata, as text and binary;
// rpc_request_fuzzer: each WorkerService / MasterService call as a client
// frames it, and all of them in one connection; npy_fuzzer: tensors of
// several dtypes and shapes; checkpoint_fuzzer: a shard of three tensors,
// one of a table's two slices, and a TensorFlow V1 file of both (beside
// tf_v1_model.ckpt, which TensorFlow wrote);
// cluster_spec_fuzzer: a spec for each parser (first byte picks it);
// task_handlers_fuzzer: a session's steps, a registered graph's run, status
// and abort calls.
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TMultiplexedProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include "absl/strings/str_cat.h"
#include "distributed/rpc/collective_push.h"
#include "distributed/rpc/framed_transport.h"
#include "distributed/rpc/gen-cpp/MasterService.h"
#include "distributed/rpc/gen-cpp/WorkerService.h"
#include "distributed/rpc/tensor_wire.h"
#include "graph/graph_def_io.h"
#include "ops/io/internal/checkpoint_shard.h"
#include "runtime/io/tensor_slice_file.h"
#include "ops/io/internal/tensor_slice.h"
#include "runtime/npy.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

using apache::thrift::protocol::TBinaryProtocolT;
using apache::thrift::protocol::TMultiplexedProtocol;
using apache::thrift::transport::TMemoryBuffer;

std::string g_root;

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  const std::string path = absl::StrCat(g_root, "/", target, "/", name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) std::fprintf(stderr, "make_seeds: cannot write %s\n", path.c_str());
}

// The bytes a client sends for the calls `send` makes.
std::string Calls(const std::function<void(rpc::WorkerServiceClient&, rpc::MasterServiceClient&,
                                           TBinaryProtocolT<FramedTransport>&)>& send) {
  auto buffer = std::make_shared<TMemoryBuffer>();
  auto framed = std::make_shared<FramedTransport>(buffer);
  auto protocol = std::make_shared<TBinaryProtocolT<FramedTransport>>(framed);
  rpc::WorkerServiceClient worker(std::make_shared<TMultiplexedProtocol>(protocol, "worker"));
  rpc::MasterServiceClient master(std::make_shared<TMultiplexedProtocol>(protocol, "master"));
  send(worker, master, *protocol);
  return buffer->getBufferAsString();
}

void RpcSeeds(const std::string& graph_bytes) {
  rpc::TensorWire wire;
  (void)TensorToWire(Tensor::FromVector<float>({1, 2, 3}), &wire);
  std::vector<std::pair<std::string, std::function<void(rpc::WorkerServiceClient&,
                                                        rpc::MasterServiceClient&,
                                                        TBinaryProtocolT<FramedTransport>&)>>>
      calls = {
          {"get_status", [](auto& w, auto&, auto&) { w.send_GetStatus(); }},
          {"register_graph",
           [&](auto& w, auto&, auto&) {
             rpc::RegisterGraphRequest req;
             req.session_handle = "s";
             req.partitions["/job:fuzz/replica:0/task:0/device:CPU:0"] = graph_bytes;
             w.send_RegisterGraph(req);
           }},
          {"run_graph",
           [&](auto& w, auto&, auto&) {
             rpc::RunGraphRequest req;
             req.graph_handle = "graph1";
             w.send_RunGraph(req);
           }},
          {"recv_tensor",
           [](auto& w, auto&, auto&) {
             rpc::RecvTensorRequest req;
             req.rendezvous_key = "t";
             req.timeout_ms = 10;
             w.send_RecvTensor(req);
           }},
          {"abort_cleanup",
           [](auto& w, auto&, auto&) {
             w.send_AbortStep(7, 10, "aborted");
             w.send_CleanupStep(7);
             w.send_DeregisterGraph("graph1");
           }},
          {"collective_push_generated",
           [&](auto& w, auto&, auto&) {
             w.send_CollectivePush("/job:fuzz/replica:0/task:0/device:CPU:0", "g1/i1/n0/x", wire,
                                   100);
           }},
          {"collective_push_zero_copy",
           [](auto&, auto&, auto& protocol) {
             WriteCollectivePushCall(&protocol, "/job:fuzz/replica:0/task:0/device:CPU:0",
                                     "g1/i1/n0/y", Tensor::FromVector<int64_t>({4, 5}), 100);
           }},
          {"master",
           [&](auto&, auto& m, auto&) {
             rpc::CreateSessionRequest create;
             create.graph_def = graph_bytes;
             m.send_CreateSession(create);
             m.send_ExtendSession("s", graph_bytes);
             rpc::RunStepRequest run;
             run.session_handle = "s";
             run.fetches = {"y:0"};
             m.send_RunStep(run);
             m.send_ListDevices();
             m.send_CloseSession("s");
           }},
      };
  std::string all;
  for (auto& [name, send] : calls) {
    const std::string bytes = Calls(send);
    Write("rpc_request_fuzzer", name, bytes);
    all += bytes;
  }
  Write("rpc_request_fuzzer", "all_calls", all);
}

// task_handlers_fuzzer: a selector byte, then the request as strict binary
// Thrift, per call (task_handlers_fuzzer.cc).
void TaskHandlerSeeds(const std::string& graph_bytes) {
  const auto seed = [](const std::string& name,
                       const std::function<void(TBinaryProtocolT<TMemoryBuffer>&)>& calls) {
    auto buffer = std::make_shared<TMemoryBuffer>();
    TBinaryProtocolT<TMemoryBuffer> out(buffer);
    calls(out);
    Write("task_handlers_fuzzer", name, buffer->getBufferAsString());
  };
  seed("session_steps", [&](auto& out) {
    rpc::CreateSessionRequest create;
    create.graph_def = graph_bytes;
    out.writeByte(0);
    create.write(&out);
    rpc::RunStepRequest init;
    init.targets = {"W/Assign", "b/Assign"};
    out.writeByte(2);
    init.write(&out);
    rpc::RunStepRequest read;
    read.fetches = {"W/read:0", "b/read:0"};
    out.writeByte(2);
    read.write(&out);
    out.writeByte(1);
    out.writeBinary(graph_bytes);
    out.writeByte(7);
  });
  seed("register_and_run_graph", [&](auto& out) {
    rpc::RegisterGraphRequest reg;
    reg.session_handle = "s";
    reg.partitions["/job:fuzz/replica:0/task:0/device:CPU:0"] = graph_bytes;
    out.writeByte(3);
    reg.write(&out);
    rpc::RunGraphRequest run;
    run.step_id = 1;
    out.writeByte(4);
    run.write(&out);
    out.writeByte(7);
  });
  seed("status_abort_cleanup", [&](auto& out) {
    out.writeByte(6);
    out.writeByte(5);
    out.writeI64(3);
    out.writeI32(10);
    out.writeString(std::string("aborted by the fuzzer's seed"));
  });
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds CORPUS_DIR (absolute)\n");
    return 2;
  }
  g_root = argv[1];
  std::string first_graph, regression_graph;
  for (const char* name : {"mlp_frozen", "linear_regression"}) {
    const std::string path = absl::StrCat(g_root, "/../../tests/testdata/", name, ".pbtxt");
    absl::StatusOr<GraphDef> def = ReadGraphDefFile(path);
    if (!def.ok()) {
      std::fprintf(stderr, "make_seeds: %s\n", def.status().ToString().c_str());
      return 1;
    }
    std::string text, binary;
    (void)def->SerializeToString(&binary);
    Write("graph_def_fuzzer", absl::StrCat(name, ".pb"), binary);
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    Write("graph_def_fuzzer", absl::StrCat(name, ".pbtxt"), text);
    if (first_graph.empty()) first_graph = binary;
    regression_graph = binary;  // the last: linear_regression (variables, assigns)
  }
  RpcSeeds(first_graph);
  TaskHandlerSeeds(regression_graph);

  Tensor strings(DT_STRING, TensorShape({2}));
  strings.flat<std::string>()[0] = "a";
  const std::vector<std::pair<std::string, Tensor>> tensors = {
      {"float_2x3", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}))},
      {"int64_scalar", Tensor::Scalar<int64_t>(-7)},
      {"bool_vector", Tensor::FromVector<bool>({true, false, true})},
      {"double_empty", Tensor(DT_DOUBLE, TensorShape({0, 4}))},
      {"int8_3d", Tensor::FromVector<int8_t>({1, -2, 3, -4, 5, -6, 7, -8}, TensorShape({2, 2, 2}))},
  };
  for (const auto& [name, t] : tensors) {
    absl::StatusOr<std::string> npy = EncodeNpy(t);
    if (npy.ok()) Write("npy_fuzzer", name + ".npy", *npy);
  }
  const std::string shard = absl::StrCat(g_root, "/checkpoint_fuzzer/model.ckpt-1.shard-0-of-1");
  absl::Status written = internal::WriteCheckpointShard(
      shard, {{"w", tensors[0].second}, {"step", tensors[1].second}, {"names", strings}});
  if (!written.ok()) std::fprintf(stderr, "make_seeds: %s\n", written.ToString().c_str());
  // A partitioned table's two parts, as SaveV2 stores slices.
  absl::StatusOr<internal::ShapeAndSlice> top = internal::ParseShapeAndSlice("3 2 0,2:-");
  absl::StatusOr<internal::ShapeAndSlice> bottom = internal::ParseShapeAndSlice("3 2 2,1:-");
  if (top.ok() && bottom.ok()) {
    written = internal::WriteCheckpointShard(
        absl::StrCat(g_root, "/checkpoint_fuzzer/sliced.shard-0-of-1"),
        {{internal::SliceEntryName("emb", *top),
          Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))},
         {internal::SliceEntryName("emb", *bottom),
          Tensor::FromVector<float>({5, 6}, TensorShape({1, 2}))}});
    if (!written.ok()) std::fprintf(stderr, "make_seeds: %s\n", written.ToString().c_str());
    written = WriteTensorSliceFile(
        absl::StrCat(g_root, "/checkpoint_fuzzer/v1.ckpt"),
        {{"w", tensors[0].second.shape(), {std::vector<int64_t>(tensors[0].second.dims(), 0),
                                           tensors[0].second.shape().dims()}, tensors[0].second},
         {"names", strings.shape(), {{0}, strings.shape().dims()}, strings},
         {"emb", top->full_shape, {top->start, top->length},
          Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))},
         {"emb", bottom->full_shape, {bottom->start, bottom->length},
          Tensor::FromVector<float>({5, 6}, TensorShape({1, 2}))}});
    if (!written.ok()) std::fprintf(stderr, "make_seeds: %s\n", written.ToString().c_str());
  }

  Write("cluster_spec_fuzzer", "json",
        std::string("\0", 1) + R"({"ps": ["127.0.0.1:4000"], "worker": ["a:1", "b:2"]})");
  Write("cluster_spec_fuzzer", "text_proto",
        "\x01" R"(job { name: "worker" tasks { key: 0 value: "h:1" } tasks { key: 1 value: "h:2" } })");
  Write("cluster_spec_fuzzer", "flag", "\x02ps=127.0.0.1:4000;worker=w0:1,w1:2");
  Write("cluster_spec_fuzzer", "task_config",
        "\x03" R"({"cluster": {"worker": ["w:1", "w:2"]}, "task": {"type": "worker", "index": 1}})");
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Main(argc, argv); }
