// KernelRegistry: (op, device type, type constraints) -> kernel factory.
//
//   KernelRegistry kernels;
//   kernels.Register<MatMulOp<float>>(KernelDef("MatMul", kDeviceTypeCpu).TypeConstraint("T",
//   DT_FLOAT)); ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k, kernels.CreateKernel(node, device));
//
// Thread-safe; register during start-up.
#ifndef SLUICE_RUNTIME_KERNEL_REGISTRY_H_
#define SLUICE_RUNTIME_KERNEL_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "runtime/kernel.h"

namespace sluice {

class KernelDef {
 public:
  KernelDef(std::string op, std::string device_type)
      : op_(std::move(op)), device_type_(std::move(device_type)) {}
  // The node's type attr `attr` must be one of `types`.
  KernelDef& TypeConstraint(std::string attr, std::vector<DataType> types) {
    constraints_.emplace_back(std::move(attr), std::move(types));
    return *this;
  }
  KernelDef& TypeConstraint(std::string attr, DataType type) {
    return TypeConstraint(std::move(attr), std::vector<DataType>{type});
  }
  // Input or output arg `arg` lives in host memory on this device. Only
  // devices with device memory (GPUs) care: the executor hands such an input
  // over in host memory and allocates such an output there.
  KernelDef& HostMemory(std::string arg) {
    host_memory_.push_back(std::move(arg));
    return *this;
  }
  // Every arg lives in host memory: a host kernel registered for a device.
  KernelDef& AllHostMemory() {
    all_host_memory_ = true;
    return *this;
  }
  bool all_host_memory() const { return all_host_memory_; }
  // Every input and output whose dtype is one of `types` lives in host
  // memory, whatever arg it belongs to: a kernel forwarding a list of
  // mixed types (IdentityN) keeps int32 counters and handles on the host.
  KernelDef& HostMemoryForTypes(std::vector<DataType> types) {
    host_memory_types_ = std::move(types);
    return *this;
  }
  const std::vector<DataType>& host_memory_types() const { return host_memory_types_; }

  const std::string& op() const { return op_; }
  const std::string& device_type() const { return device_type_; }
  const std::vector<std::pair<std::string, std::vector<DataType>>>& constraints() const {
    return constraints_;
  }
  const std::vector<std::string>& host_memory() const { return host_memory_; }
  // True when the node's attrs satisfy every constraint.
  bool Matches(const AttrMap& attrs) const;
  std::string DebugString() const;  // "MatMul on CPU with T in {float}"

 private:
  std::string op_;
  std::string device_type_;
  std::vector<std::pair<std::string, std::vector<DataType>>> constraints_;
  std::vector<std::string> host_memory_;
  std::vector<DataType> host_memory_types_;
  bool all_host_memory_ = false;
};

// Per input and per output of `node` (for which `def` matched): 1 where the
// argument lives in host memory.
struct ArgMemoryTypes {
  std::vector<uint8_t> input_on_host;
  std::vector<uint8_t> output_on_host;
};
ArgMemoryTypes HostMemoryArgs(const KernelDef& def, const Node& node);

using KernelFactory = std::function<std::unique_ptr<OpKernel>()>;

class KernelRegistry {
 public:
  KernelRegistry() = default;
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  void Register(KernelDef def, KernelFactory factory);
  template <typename K>
  void Register(KernelDef def) {
    Register(std::move(def), [] { return std::make_unique<K>(); });
  }

  // Builds and Inits the kernel for `node` on `device`. NotFound naming the
  // node, op, device type and the registered constraints when none matches.
  // `function_runtime` (may be null) is handed to the kernel's Init.
  absl::StatusOr<std::unique_ptr<OpKernel>> CreateKernel(
      const Node& node, Device* device, FunctionRuntime* function_runtime = nullptr) const;
  // The KernelDef that would serve `node` on `device_type`, or nullptr.
  const KernelDef* FindKernelDef(const Node& node, absl::string_view device_type) const;
  // The same for a node of `op` with `attrs` that does not exist yet (a
  // rewrite asking whether a retyped node would have a kernel).
  const KernelDef* FindKernelDef(absl::string_view op, const AttrMap& attrs,
                                 absl::string_view device_type) const;
  bool HasKernelsFor(absl::string_view op, absl::string_view device_type) const;
  // Registers for `device_type` a copy of each CPU kernel of `op` that
  // `accept` takes, with AllHostMemory(): the kernel runs on the host on
  // behalf of that device. This is how int32 shape arithmetic sits beside
  // GPU kernels without device round trips (TensorFlow's convention too).
  // Returns how many were registered.
  int RegisterHostKernels(absl::string_view op, absl::string_view device_type,
                          const std::function<bool(const KernelDef&)>& accept);
  std::vector<std::string> OpsWithKernels(absl::string_view device_type) const;

 private:
  struct Entry {
    KernelDef def;
    KernelFactory factory;
  };
  mutable absl::Mutex mu_;
  // op -> entries (all devices)
  absl::flat_hash_map<std::string, std::vector<std::unique_ptr<Entry>>> kernels_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_KERNEL_REGISTRY_H_
