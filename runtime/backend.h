// Backend: one kind of device (CPU, GPU, or a test's fake) as a whole: the
// devices of that type this process has, the kernels that run on them, and
// the all-reduce they bring (the collective executor's, for members that
// are all of the type). A BackendRegistry is the ordered list a session,
// a worker and their collective executor are handed (SessionConfig::backends,
// which servers and workers take too): no process-global device or all-reduce table exists, so
// where GPUs come from has one answer (ops/builtins.h: BuiltinBackends(),
// the one list), and a test can hand in its own backend. ggml's backend
// registry is the model.
//
//   BackendRegistry backends;
//   RETURN_IF_ERROR(backends.Add(NewCpuBackend()));
//   RETURN_IF_ERROR(backends.Add(std::make_unique<MyBackend>()));
//   KernelRegistry kernels;
//   backends.RegisterKernels(&kernels);
//   SessionConfig o;  o.ops = &ops;  o.kernels = &kernels;  o.backends = &backends;
//
// Thread-safety: fill a registry before sharing it; then every method may
// be called concurrently. Ownership: the registry owns its backends.
#ifndef SLUICE_RUNTIME_BACKEND_H_
#define SLUICE_RUNTIME_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/collective/collective_executor.h"
#include "runtime/device.h"
#include "runtime/kernel_registry.h"
#include "runtime/local_devices.h"

namespace sluice {

class Backend {
 public:
  virtual ~Backend() = default;

  // "CPU", "GPU", ...: the type of the devices it makes.
  virtual std::string device_type() const = 0;
  // This process's devices of the type, named under options.name_prefix;
  // none (say, no GPU visible) is not an error. Bad options:
  // InvalidArgument.
  virtual absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
      const LocalDevicesOptions& options) const = 0;
  // Adds the kernels that run on its devices.
  virtual void RegisterKernels(KernelRegistry* kernels) const = 0;
  // Its own all-reduce when every member is one of its devices, in this
  // process or across processes (runtime/collective/collective_executor.h);
  // null: the executor's CPU ring.
  virtual LocalAllReduceImpl LocalAllReduce() const { return nullptr; }
  virtual CrossProcessAllReduceImpl CrossProcessAllReduce() const { return nullptr; }
};

class BackendRegistry : public AllReduceProvider {
 public:
  BackendRegistry() = default;
  BackendRegistry(const BackendRegistry&) = delete;
  BackendRegistry& operator=(const BackendRegistry&) = delete;

  // AlreadyExists when a backend of the same device type is in.
  absl::Status Add(std::unique_ptr<Backend> backend);

  // In the order added. Find: null when none has the type.
  std::vector<const Backend*> backends() const;
  const Backend* Find(absl::string_view device_type) const;

  // Every backend's devices, backend by backend in the order added.
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
      const LocalDevicesOptions& options) const;
  // Every backend's kernels, in the order added (a later backend may
  // build on an earlier one's, as the GPU's host kernels do on the CPU's).
  void RegisterKernels(KernelRegistry* kernels) const;

  LocalAllReduceImpl LocalAllReduceFor(const std::string& device_type) const override;
  CrossProcessAllReduceImpl CrossProcessAllReduceFor(const std::string& device_type) const override;

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

// What a session or worker runs on: `backends`' devices, or this process's
// CPU devices alone when `backends` is null (runtime/local_devices.h).
absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
    const BackendRegistry* backends, const LocalDevicesOptions& options);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_BACKEND_H_
