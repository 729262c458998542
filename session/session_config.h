// SessionConfig: every knob of a session, in one struct that the local
// session, the master of a cluster session and each server take alike (as
// TensorFlow's DirectSession and MasterSession take the same SessionConfig).
// A knob is added here, and, when a remote master must see it, to the wire
// form (distributed/rpc/session_config_wire.h and SessionConfig in
// distributed/rpc/sluice.thrift); nothing else relays it.
//
//   SessionConfig config = BuiltinSessionConfig();   // builtin_session.h
//   config.devices.num_virtual_cpus = 2;
//   config.auto_place = true;
//   ASSIGN_OR_RETURN(std::unique_ptr<Session> local, NewSession(config, graph_def));
//
//   ClusterSessionOptions cluster;                    // distributed/cluster_session.h
//   cluster.session.auto_place = true;                // the same field, on a cluster
//   cluster.session.fuse_ops = false;
//
// The groups, as LevelDB groups its Options: the registries the session
// uses, where its nodes are placed, the devices it makes, and how its steps
// run. Each default is stated beside its field and is the same for every
// kind of session. Devices and registries stay in the process that makes
// them: a client's cluster session sends the placement and execution knobs
// to the master; each server's tasks make their own devices.
#ifndef SLUICE_SESSION_SESSION_CONFIG_H_
#define SLUICE_SESSION_SESSION_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/op_registry.h"
#include "runtime/backend.h"
#include "runtime/kernel_registry.h"
#include "runtime/local_devices.h"

namespace sluice {

struct SessionConfig {
  // -------------------------------------------------------------------
  // Registries (borrowed; they must outlive the session)

  // The op definitions and kernels. Required by a local session; a cluster
  // session or server left without them uses the built-ins
  // (ops/builtins.h).
  const OpRegistry* ops = nullptr;
  const KernelRegistry* kernels = nullptr;
  // The backends whose devices the session runs on and whose all-reduce its
  // collectives use (runtime/backend.h; BuiltinBackends() for Sluice's own).
  // Null: this process's CPU devices only. The kernel registry must hold
  // kernels for them (BackendRegistry::RegisterKernels).
  const BackendRegistry* backends = nullptr;

  // -------------------------------------------------------------------
  // Placement (placement/placer.h)

  // When a node asks for a device that does not exist, place it on a
  // similar device (another of its type, else the default) instead of
  // failing. False, as in TensorFlow.
  bool allow_soft_placement = false;
  // Where nodes that ask for no device go, a (partial) device name such as
  // "/job:worker/task:1". "": the first device (a local session's CPU:0, a
  // server's own task, the first task of a client's cluster).
  std::string default_device;
  // Place the nodes that ask for no device with the automatic
  // model-parallel placer (placement/auto_placer.h) over every device of the
  // session, each within its memory limit. Explicit requests stay. A graph
  // that fits no combination fails with ResourceExhausted. Default false.
  bool auto_place = false;
  // Rewrite each compiled signature where a pattern of placement/fuse_ops.h
  // allows (MatMul with bias and ReLU, summed products, the weight-gradient
  // MatMul into its update), like TensorFlow's grappler remapper. False runs
  // the graph as written, e.g. to compare. Default true.
  bool fuse_ops = true;
  // TensorFlow's automatic mixed precision (placement/auto_mixed_precision.h):
  // the GEMMs and the ops between them compute in a 16-bit type, variables
  // and their updates stay float, and the partition graphs show the casts.
  // kBfloat16 converts on GPUs and on CPUs that multiply bfloat16 natively
  // (AVX512-BF16, AMX: as the CPU of the process that compiles the step,
  // the master, sees it; a task whose CPU lacks them still computes right,
  // through oneDNN's emulation, only slower); kFloat16 on GPUs only, and
  // wants loss scaling (training/loss_scale.h). Default kOff.
  enum class MixedPrecision { kOff = 0, kBfloat16 = 1, kFloat16 = 2 };
  MixedPrecision mixed_precision = MixedPrecision::kOff;
  // With kBfloat16, convert on every CPU (oneDNN emulates bfloat16 where the
  // CPU lacks it: the numerics, not the speed), e.g. to test a model's
  // convergence in bfloat16 on any machine. Default false.
  bool mixed_precision_on_any_cpu = false;
  // The device types ("GPU", "CPU") on which a step's ApplyGradientDescent
  // and ApplyAdam nodes of one device become one multi-tensor update
  // (placement/group_updates.h). GPUs by default, where it saves a launch
  // per variable; add "CPU" to group there too, or clear it to turn it off.
  std::vector<std::string> group_updates_on = {"GPU"};

  // -------------------------------------------------------------------
  // Devices (runtime/local_devices.h): CPU:0, virtual CPUs and the
  // backends' GPUs, with their threads and memory limits. A local session
  // and a server make theirs from this; name_prefix is set by them.
  LocalDevicesOptions devices;

  // -------------------------------------------------------------------
  // Execution

  // How many nodes of a step may run at once (TensorFlow's
  // inter_op_parallelism_threads). 1 runs each partition's nodes one after
  // the other in one thread: best when the heavy kernels (GEMMs) already use
  // every core, as on small machines. 0 (default): up to the device pool.
  int inter_op_parallelism = 0;
  // A signature whose step runs on one device that can record it (a GPU:
  // CUDA graphs) is recorded once its feed shapes repeat and replayed from
  // then on (runtime/step_replay.h says which steps qualify). Default true.
  bool capture_steps = true;
  // A step that runs longer fails with DeadlineExceeded (the per-run
  // RunOptions::timeout_in_ms overrides it). 0 (default): none for a local
  // session; kDefaultClusterStepTimeoutMs for a cluster session, where a
  // lost task must not hold a step forever.
  int64_t step_timeout_ms = 0;
};

// A cluster step's deadline when neither the config nor the run sets one.
inline constexpr int64_t kDefaultClusterStepTimeoutMs = 60000;

}  // namespace sluice

#endif  // SLUICE_SESSION_SESSION_CONFIG_H_
