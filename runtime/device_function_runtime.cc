#include "runtime/device_function_runtime.h"

#include <atomic>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "graph/attr_map_key.h"
#include "graph/function_inline.h"
#include "graph/function_instantiate.h"
#include "runtime/executor.h"

namespace sluice {
namespace {

// Step ids of function runs: far above any session's, unique in the process.
std::atomic<int64_t> next_function_step_id{int64_t{1} << 62};

// The cache key of an instantiation: the name and its attrs' key.
std::string InstantiationKey(const NameAttrList& func) {
  return absl::StrCat(func.name(), AttrMapKey(func.attr()));
}

class DeviceFunctionRuntime : public FunctionRuntime {
 public:
  DeviceFunctionRuntime(const FunctionRuntimeOptions& options)
      : device_(options.device), kernels_(options.kernels), library_(options.ops) {}

  absl::Status Init(const FunctionRuntimeOptions& options) {
    *library_.mutable_versions() = options.versions;
    return library_.AddFunctionLibrary(options.library);
  }

  absl::StatusOr<Handle> Instantiate(const NameAttrList& func) override;
  // Empty for a handle this runtime did not hand out.
  const std::vector<DataType>& arg_types(Handle handle) const override {
    const Instance* instance = Get(handle);
    return instance == nullptr ? kNoTypes : instance->arg_types;
  }
  const std::vector<DataType>& ret_types(Handle handle) const override {
    const Instance* instance = Get(handle);
    return instance == nullptr ? kNoTypes : instance->ret_types;
  }
  absl::Status Run(Handle handle, std::vector<Tensor> args, std::vector<Tensor>* rets) override;
  void RunAsync(Handle handle, std::vector<Tensor> args, std::vector<Tensor>* rets,
                DoneCallback done) override;
  Device* device() const override { return device_; }

 private:
  struct Instance {
    std::string name;
    std::vector<DataType> arg_types;
    std::vector<DataType> ret_types;
    std::unique_ptr<Executor> executor;
  };

  const Instance* Get(Handle handle) const {
    absl::MutexLock lock(&mu_);
    if (handle < 0 || handle >= static_cast<Handle>(instances_.size())) return nullptr;
    return instances_[handle].get();
  }
  // The instance of `handle` and a call frame for `args`, checked.
  absl::StatusOr<const Instance*> Prepare(Handle handle, std::vector<Tensor> args,
                                          CallFrame* frame) const;

  static inline const std::vector<DataType> kNoTypes;
  Device* const device_;
  const KernelRegistry* const kernels_;
  // The library (and the op registry) functions are instantiated from; read
  // only after Init.
  Graph library_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Handle> handles_ ABSL_GUARDED_BY(mu_);
  std::deque<std::unique_ptr<Instance>> instances_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<FunctionRuntime::Handle> DeviceFunctionRuntime::Instantiate(
    const NameAttrList& func) {
  const std::string key = InstantiationKey(func);
  {
    absl::MutexLock lock(&mu_);
    auto it = handles_.find(key);
    if (it != handles_.end()) return it->second;
  }
  const std::string context =
      absl::StrCat("instantiating function '", func.name(), "' on ", device_->name());
  absl::StatusOr<FunctionBody> body = InstantiateFunctionBody(library_, func);
  if (!body.ok()) return AddContext(body.status(), context);
  absl::StatusOr<int> inlined = InlineFunctionCalls(body->graph.get());
  if (!inlined.ok()) return AddContext(inlined.status(), context);
  for (Node* n : body->graph->nodes()) n->set_assigned_device(device_->name());
  auto instance = std::make_unique<Instance>();
  instance->name = func.name();
  instance->arg_types = std::move(body->arg_types);
  instance->ret_types = std::move(body->ret_types);
  absl::StatusOr<std::unique_ptr<Executor>> executor =
      Executor::Create(std::move(body->graph), device_, *kernels_, this);
  if (!executor.ok()) {
    return AddContext(executor.status(), absl::StrCat(context, ": function '", func.name(), "'"));
  }
  instance->executor = *std::move(executor);
  absl::MutexLock lock(&mu_);
  auto [it, added] = handles_.try_emplace(key, static_cast<Handle>(instances_.size()));
  if (added) instances_.push_back(std::move(instance));  // else another thread won
  return it->second;
}

absl::StatusOr<const DeviceFunctionRuntime::Instance*> DeviceFunctionRuntime::Prepare(
    Handle handle, std::vector<Tensor> args, CallFrame* frame) const {
  const Instance* instance = Get(handle);
  if (instance == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("no instantiated function has handle ", handle));
  }
  if (args.size() != instance->arg_types.size()) {
    return absl::InvalidArgumentError(absl::StrCat("function '", instance->name, "' takes ",
                                                   instance->arg_types.size(),
                                                   " arguments, got ", args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].dtype() != instance->arg_types[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "function '", instance->name, "': argument ", i, " is ", DataTypeName(args[i].dtype()),
          ", the function takes ", DataTypeName(instance->arg_types[i])));
    }
  }
  frame->args = std::move(args);
  frame->retvals.assign(instance->ret_types.size(), Tensor());
  return instance;
}

absl::Status DeviceFunctionRuntime::Run(Handle handle, std::vector<Tensor> args,
                                        std::vector<Tensor>* rets) {
  CallFrame frame;
  ASSIGN_OR_RETURN(const Instance* instance, Prepare(handle, std::move(args), &frame));
  Executor::Args run;
  run.step_id = next_function_step_id.fetch_add(1);
  run.call_frame = &frame;
  run.run_inline = true;
  absl::Status s = instance->executor->Run(run);
  if (!s.ok()) return AddContext(s, absl::StrCat("function '", instance->name, "'"));
  *rets = std::move(frame.retvals);
  return absl::OkStatus();
}

void DeviceFunctionRuntime::RunAsync(Handle handle, std::vector<Tensor> args,
                                     std::vector<Tensor>* rets, DoneCallback done) {
  auto frame = std::make_shared<CallFrame>();
  absl::StatusOr<const Instance*> instance = Prepare(handle, std::move(args), frame.get());
  if (!instance.ok()) {
    done(instance.status());
    return;
  }
  Executor::Args run;
  run.step_id = next_function_step_id.fetch_add(1);
  run.call_frame = frame.get();
  const std::string name = (*instance)->name;
  // The runtime stays alive until the run is done.
  (*instance)->executor->RunAsync(
      run, [self = shared_from_this(), frame, rets, name, done = std::move(done)](absl::Status s) {
        if (!s.ok()) {
          done(AddContext(s, absl::StrCat("function '", name, "'")));
          return;
        }
        *rets = std::move(frame->retvals);
        done(absl::OkStatus());
      });
}

}  // namespace

absl::StatusOr<std::shared_ptr<FunctionRuntime>> NewFunctionRuntime(
    FunctionRuntimeOptions options) {
  if (options.device == nullptr || options.ops == nullptr || options.kernels == nullptr) {
    return absl::InvalidArgumentError("a function runtime needs a device and both registries");
  }
  auto runtime = std::make_shared<DeviceFunctionRuntime>(options);
  RETURN_IF_ERROR(runtime->Init(options));
  return std::shared_ptr<FunctionRuntime>(std::move(runtime));
}

}  // namespace sluice
