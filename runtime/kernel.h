// The kernel API: OpKernel (one node's computation on one device), what it
// sees when it is built (OpKernelConstruction) and when it runs
// (OpKernelContext).
//
//   class ReluOp : public OpKernel {
//    public:
//     absl::Status Compute(OpKernelContext* ctx) override {
//       const Tensor& x = ctx->input(0);
//       ASSIGN_OR_RETURN(Tensor* y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
//       ... write y->flat<float>() ...
//       return absl::OkStatus();
//     }
//     bool IsExpensive() const override { return false; }
//   };
//
// Errors are returned, never thrown or aborted on; the executor adds the node
// name. Thread-safety: Compute may run concurrently for different steps, so a
// kernel keeps no per-step state in members (Init-time state is read-only).
#ifndef SLUICE_RUNTIME_KERNEL_H_
#define SLUICE_RUNTIME_KERNEL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "runtime/device.h"
#include "runtime/function_runtime.h"
#include "runtime/rendezvous.h"
#include "runtime/resource_mgr.h"
#include "runtime/tensor.h"

namespace sluice {

// Arguments and results of one executor run (feeds in, fetches out); the
// internal _Arg/_Retval kernels read and write it.
class CollectiveExecutor;  // runtime/collective/collective_executor.h

struct CallFrame {
  std::vector<Tensor> args;
  std::vector<Tensor> retvals;
};

// A value on an edge: a tensor, or for ref-typed edges (a variable's output)
// the variable itself.
struct TensorValue {
  Tensor tensor;
  Var* ref = nullptr;
};

class OpKernelConstruction {
 public:
  OpKernelConstruction(const Node& node, Device* device,
                       FunctionRuntime* function_runtime = nullptr)
      : node_(node), device_(device), function_runtime_(function_runtime) {}
  const Node& node() const { return node_; }
  Device* device() const { return device_; }
  // Runs the functions of the graph's library on this device; nullptr when
  // whoever builds the executor provides none.
  FunctionRuntime* function_runtime() const { return function_runtime_; }
  template <typename T>
  absl::StatusOr<T> GetAttr(absl::string_view name) const {
    return node_.GetAttr<T>(name);
  }
  DataType input_type(int i) const { return node_.input_type(i); }
  DataType output_type(int i) const { return node_.output_type(i); }

 private:
  const Node& node_;
  Device* device_;
  FunctionRuntime* function_runtime_;
};

class OpKernelContext {
 public:
  struct Params {
    const Node* node = nullptr;
    Device* device = nullptr;
    int64_t step_id = 0;
    absl::Span<TensorValue> inputs;
    absl::Span<TensorValue> outputs;  // sized num_outputs by the caller
    CallFrame* call_frame = nullptr;
    Rendezvous* rendezvous = nullptr;  // the step's; set when it has several partitions
    // Per output: 1 when the KernelDef puts it in host memory (HostMemory)
    // on a device with device memory; nullptr: none is.
    const uint8_t* output_on_host = nullptr;
    CollectiveExecutor* collective_executor = nullptr;  // the process's, when it has one
    // A host kernel on a device with device memory (KernelDef::AllHostMemory,
    // e.g. a CPU kernel copied by KernelRegistry::RegisterHostKernels): it
    // runs on the host, so allocator() and allocate_temp give host memory.
    bool host_kernel = false;
    // The loop iteration this run of the node belongs to (root: {0, 0}).
    FrameAndIter frame_iter;
    // The node's inputs are dead (an untaken branch; the executor runs only
    // the transfer kernels in that case: a _Send sends the deadness on).
    bool is_input_dead = false;
    // The executor's; nullptr when it has none (OpKernelConstruction).
    FunctionRuntime* function_runtime = nullptr;
  };
  explicit OpKernelContext(const Params& params) : p_(params) {}

  const Node& node() const { return *p_.node; }
  Device* device() const { return p_.device; }
  // Where this kernel's own memory comes from: the device's allocator
  // (device memory on a GPU), or its host allocator for a host kernel
  // (Params::host_kernel).
  Allocator* allocator() const {
    return p_.host_kernel ? p_.device->host_allocator() : p_.device->allocator();
  }
  // Where output i is allocated: the device's host allocator for a
  // HostMemory output, else allocator().
  Allocator* output_allocator(int i) const {
    return output_on_host(i) ? p_.device->host_allocator() : p_.device->allocator();
  }
  bool output_on_host(int i) const {
    return p_.output_on_host != nullptr && p_.output_on_host[i] != 0;
  }
  ThreadPool* thread_pool() const { return p_.device->thread_pool(); }
  ResourceMgr* resource_manager() const { return p_.device->resource_manager(); }
  FunctionRuntime* function_runtime() const { return p_.function_runtime; }
  int64_t step_id() const { return p_.step_id; }
  CallFrame* call_frame() const { return p_.call_frame; }
  // Where this step's Send and Recv kernels meet; nullptr for a step of one
  // partition.
  Rendezvous* rendezvous() const { return p_.rendezvous; }
  FrameAndIter frame_iter() const { return p_.frame_iter; }
  bool is_input_dead() const { return p_.is_input_dead; }
  // Makes every output of this run dead, as if the node's inputs were (a
  // _Recv that received a dead tensor).
  void set_is_output_dead() { is_output_dead_ = true; }
  bool is_output_dead() const { return is_output_dead_; }
  // Where collective ops (ops/collective/collective_ops.h) meet their peers; nullptr
  // when the caller of the executor provides none.
  CollectiveExecutor* collective_executor() const { return p_.collective_executor; }

  int num_inputs() const { return static_cast<int>(p_.inputs.size()); }
  int num_outputs() const { return static_cast<int>(p_.outputs.size()); }
  // The tensor on input i (not for ref inputs: see input_ref).
  const Tensor& input(int i) const { return p_.inputs[i].tensor; }
  // The variable on a ref input (an arg declared Ref(T)); nullptr otherwise.
  Var* input_ref(int i) const { return p_.inputs[i].ref; }

  // In output_allocator(i). ResourceExhausted naming the output, the device,
  // the bytes asked and the bytes free when the allocator refuses.
  absl::StatusOr<Tensor*> allocate_output(int i, const TensorShape& shape);
  // Reuses input `in`'s buffer for output `out` when this kernel holds the
  // only reference to it and dtype and size match; else allocates.
  absl::StatusOr<Tensor*> forward_input_or_allocate_output(int in, int out,
                                                           const TensorShape& shape);
  // A scratch tensor from allocator().
  absl::StatusOr<Tensor> allocate_temp(DataType dtype, const TensorShape& shape);
  void set_output(int i, Tensor t) { p_.outputs[i].tensor = std::move(t); }
  void set_output_ref(int i, Var* var) { p_.outputs[i].ref = var; }
  const Tensor& output(int i) const { return p_.outputs[i].tensor; }

  // For step traces: a kernel that hands a tensor to another device names
  // the transfer (its rendezvous key), so the trace can draw a flow arrow
  // from the send to the receive.
  void set_trace_flow(std::string key, bool is_send) {
    flow_key_ = std::move(key);
    flow_is_send_ = is_send;
  }
  const std::string& trace_flow_key() const { return flow_key_; }
  bool trace_flow_is_send() const { return flow_is_send_; }

 private:
  Params p_;
  std::string flow_key_;
  bool flow_is_send_ = false;
  bool is_output_dead_ = false;
};

class AsyncOpKernel;

class OpKernel {
 public:
  OpKernel() = default;
  virtual ~OpKernel() = default;
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  // Reads attrs once, when the executor is built. Errors name the attr.
  virtual absl::Status Init(const OpKernelConstruction& ctx) { return absl::OkStatus(); }
  virtual absl::Status Compute(OpKernelContext* ctx) = 0;
  // Cheap kernels run inline in the executor's thread; expensive ones may be
  // handed to the device's thread pool.
  virtual bool IsExpensive() const { return true; }
  // Non-null for kernels that finish later (AsyncOpKernel).
  virtual AsyncOpKernel* AsAsync() { return nullptr; }
  // For a stateful op: whether a recorded step (runtime/step_replay.h)
  // replays this kernel right, because the state it carries from run to
  // run lives in device memory and advances in the recorded work (a random
  // op's counter), because it has none worth keeping (a collective of one
  // member), or because its state lives for one step only and holds device
  // buffers the recording keeps (a TensorArray, a stack: a replay redoes
  // the device work of the recorded run's writes and reads on the same
  // buffers), or because its state is the device's variables, whose
  // buffers the recorder tracks (a resource variable's read, assignment or
  // update). Other stateful kernels keep their steps from being recorded.
  virtual bool ReplaysRight() const { return false; }
};

// A kernel that waits for something outside the step's dataflow (a tensor
// from another device or process) without holding a thread: ComputeAsync
// returns at once and calls `done` exactly once, possibly from another
// thread. The context and its inputs stay valid until `done` is called.
class AsyncOpKernel : public OpKernel {
 public:
  using DoneCallback = std::function<void(absl::Status)>;
  virtual void ComputeAsync(OpKernelContext* ctx, DoneCallback done) = 0;
  // Blocking form, for callers that run a kernel on its own.
  absl::Status Compute(OpKernelContext* ctx) final;
  AsyncOpKernel* AsAsync() final { return this; }
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_KERNEL_H_
