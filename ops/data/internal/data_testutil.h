// Test helpers for ops/data (testonly): a FunctionRuntime whose functions are
// C++ lambdas, and a small graph runner that builds every kernel with it
// (executors get a real FunctionRuntime in a later change; until then the
// function-taking datasets are tested through this runner).
//
//   auto fr = std::make_shared<FakeFunctionRuntime>(device.get());
//   fr->Add("times_two", [](std::vector<Tensor> a, std::vector<Tensor>* r) {
//     r->push_back(Tensor::Scalar<int64_t>(a[0].scalar<int64_t>() * 2));
//     return absl::OkStatus();
//   });
//   TestGraphRunner runner(graph, device.get(), fr.get());
//   ASSIGN_OR_RETURN(std::vector<Tensor> out, runner.Run({next}, {init}));
//
// Nodes run one at a time in topological order, on the calling thread
// (asynchronous kernels are waited for). Kernels are built once, on first
// use, and kept: resources and iterators persist across Run calls.
// Thread-safety: FakeFunctionRuntime is thread-safe; the runner is not.
#ifndef SLUICE_OPS_DATA_INTERNAL_DATA_TESTUTIL_H_
#define SLUICE_OPS_DATA_INTERNAL_DATA_TESTUTIL_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/scope.h"
#include "runtime/device.h"
#include "runtime/function_runtime.h"
#include "runtime/kernel.h"

namespace sluice {
namespace data {

class FakeFunctionRuntime : public FunctionRuntime {
 public:
  using Fn = std::function<absl::Status(std::vector<Tensor> args, std::vector<Tensor>* rets)>;
  explicit FakeFunctionRuntime(Device* device) : device_(device) {}

  void Add(const std::string& name, Fn fn) { fns_[name] = std::move(fn); }

  absl::StatusOr<Handle> Instantiate(const ::tensorflow::NameAttrList& func) override;
  const std::vector<DataType>& arg_types(Handle) const override { return none_; }
  const std::vector<DataType>& ret_types(Handle) const override { return none_; }
  absl::Status Run(Handle handle, std::vector<Tensor> args, std::vector<Tensor>* rets) override;
  void RunAsync(Handle handle, std::vector<Tensor> args, std::vector<Tensor>* rets,
                DoneCallback done) override {
    done(Run(handle, std::move(args), rets));
  }
  Device* device() const override { return device_; }
  int64_t calls() const { return calls_.load(); }

 private:
  Device* device_;
  std::map<std::string, Fn> fns_;  // filled before use
  std::vector<std::string> handles_;
  std::vector<DataType> none_;
  std::atomic<int64_t> calls_{0};
};

class TestGraphRunner {
 public:
  TestGraphRunner(const Graph* graph, Device* device, FunctionRuntime* fr)
      : graph_(graph), device_(device), fr_(fr) {}

  // Runs what `fetches` and `targets` need; feeds replace nodes' output 0.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Output>& fetches,
                                          const std::vector<Node*>& targets = {},
                                          const std::map<std::string, Tensor>& feeds = {});

 private:
  const Graph* graph_;
  Device* device_;
  FunctionRuntime* fr_;
  absl::flat_hash_map<const Node*, std::unique_ptr<OpKernel>> kernels_;
  int64_t step_ = 0;
};

}  // namespace data
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_INTERNAL_DATA_TESTUTIL_H_
