// Logical GPUs: one physical GPU carved into several devices, as
// TensorFlow's virtual device configuration does
// (tf.config.set_logical_device_configuration). Each logical GPU is a
// device of its own, GPU:k, with its own GpuContext
// (runtime/gpu/gpu_context.h): its own streams, event queue, cuBLAS handle and
// allocator with its own memory limit. So "layers on different GPUs" (model
// parallelism, pipelining, replicas) runs on a one-GPU machine. Copies between
// two logical GPUs of one card go device to device; collectives between them
// take the in-process path, not NCCL, which refuses one card twice.
//
//   LocalDevicesOptions options;
//   options.max_gpus = 1;
//   options.gpu_logical_memory_limits = {int64_t{8} << 30, int64_t{8} << 30};
//   ASSIGN_OR_RETURN(std::vector<LogicalGpu> layout,
//   LayOutLogicalGpus(/*visible=*/1, options));
//   // layout[0]: GPU:0 = ordinal 0, logical 0; layout[1]: GPU:1 = ordinal 0,
//   logical 1
//
// Naming follows TensorFlow: the logical GPUs of physical GPU 0 come first
// (GPU:0..n-1), then those of GPU 1, and so on.
//
// Without gpu_logical_memory_limits, $SLUICE_LOGICAL_GPUS configures every
// program of the process alike (examples, server, runner; the launcher's
// tasks inherit it): "N" makes N logical GPUs per GPU, each an equal share
// of the memory; "N:MiB" gives each one MiB mebibytes.
//
// Contexts are process-wide and keep the options of their first creation
// (runtime/gpu/gpu_context.h): a limit given as a fraction is taken of the
// memory free when each logical GPU's context is made, so limits in bytes
// are the ones that add up exactly. Each logical GPU has its own pool of
// pinned host memory too. The options are checked where no GPU is visible
// as well, so a bad value fails alike on every machine.
//
// Pure functions, thread-safe; compiled with or without CUDA.
#ifndef SLUICE_RUNTIME_GPU_LOGICAL_GPUS_H_
#define SLUICE_RUNTIME_GPU_LOGICAL_GPUS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/local_devices.h"

namespace sluice {

// The most logical GPUs one physical GPU may be carved into.
inline constexpr int kMaxLogicalGpusPerGpu = 16;

// One device GPU:k (k: its place in the layout).
struct LogicalGpu {
  int ordinal = 0; // the CUDA device
  int logical = 0; // its index among the logical GPUs of that ordinal
  // Bytes; 0: memory_fraction of the device memory free when it is made.
  int64_t memory_limit = 0;
  double memory_fraction = 0.9;
};

// The GPU devices that `visible` physical GPUs make under `options`
// (max_gpus, gpu_memory_limit, gpu_memory_fraction and
// gpu_logical_memory_limits; `env_spec` stands for $SLUICE_LOGICAL_GPUS when
// the latter is empty). A logical GPU whose limit is 0 gets an equal share:
// gpu_memory_limit / n bytes, else gpu_memory_fraction / n of the free
// memory, with n the logical GPUs per card. InvalidArgument for a negative
// or malformed option, naming it.
absl::StatusOr<std::vector<LogicalGpu>>
LayOutLogicalGpus(int visible, const LocalDevicesOptions &options,
                  absl::string_view env_spec = "");

// $SLUICE_LOGICAL_GPUS ("" when unset).
absl::string_view LogicalGpusFromEnvironment();

} // namespace sluice

#endif // SLUICE_RUNTIME_GPU_LOGICAL_GPUS_H_
