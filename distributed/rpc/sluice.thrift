// Sluice's wire protocol: the services every cluster task exposes.
//
// Transport: framed (4-byte big-endian length, then a TBinaryProtocol
// message), one port per task serving both services (multiplexed by service
// name: "worker" and "master"). Tensors travel as raw little-endian bytes in
// a `binary` field beside their dtype and shape (DESIGN.md, "Tensors on the
// wire"); dtype values are TensorFlow's DataType enum.
//
// Every call may fail with RpcError, whose code is an absl::StatusCode and
// whose message names the task that failed.

namespace cpp sluice.rpc

struct TensorWire {
  1: i32 dtype,
  2: list<i64> shape,
  3: binary data,
}

struct NamedTensor {
  1: string name,
  2: TensorWire tensor,
}

exception RpcError {
  1: i32 code,
  2: string message,
}

struct DeviceAttributes {
  1: string name,          // "/job:ps/replica:0/task:0/device:CPU:0"
  2: string device_type,   // "CPU", "GPU"
  3: i64 memory_limit,     // bytes; 0: none
}

struct WorkerStatus {
  1: string task,                    // "/job:ps/replica:0/task:0"
  2: list<DeviceAttributes> devices,
  3: i64 incarnation,                // new each time the process starts
}

struct RegisterGraphRequest {
  1: string session_handle,
  // Device name -> serialized GraphDef of that device's partition (with its
  // _Send/_Recv, _Arg and _Retval nodes).
  2: map<string, binary> partitions,
}

struct RegisterGraphResponse {
  1: string graph_handle,
}

struct RunGraphRequest {
  1: string graph_handle,
  2: i64 step_id,
  3: map<i32, TensorWire> feeds,     // _Arg index -> fed value
  4: list<i32> retval_indices,       // the _Retval indices this task produces
  5: i64 timeout_ms,                 // 0: the worker's default
}

struct RunGraphResponse {
  1: map<i32, TensorWire> retvals,
}

struct RecvTensorRequest {
  1: i64 step_id,
  2: string rendezvous_key,          // runtime/rendezvous.h CreateKey
  3: i64 timeout_ms,
}

struct RecvTensorResponse {
  1: TensorWire tensor,
  // The sender's input was dead (an untaken cond branch, a loop's last
  // iteration): no tensor comes, and the receiver's outputs are dead.
  2: bool is_dead,
}

service WorkerService {
  WorkerStatus GetStatus() throws (1: RpcError err),
  RegisterGraphResponse RegisterGraph(1: RegisterGraphRequest req) throws (1: RpcError err),
  void DeregisterGraph(1: string graph_handle) throws (1: RpcError err),
  RunGraphResponse RunGraph(1: RunGraphRequest req) throws (1: RpcError err),
  // Answers when the producing partition has sent the tensor (or the step
  // was aborted, or the deadline passed).
  RecvTensorResponse RecvTensor(1: RecvTensorRequest req) throws (1: RpcError err),
  void AbortStep(1: i64 step_id, 2: i32 code, 3: string message) throws (1: RpcError err),
  // Forgets a finished step's rendezvous.
  void CleanupStep(1: i64 step_id) throws (1: RpcError err),
  // A collective message for member `to_device` of this task under `key`
  // (runtime/collective): delivered into the task's collective mailbox,
  // answered at once (it never waits for a receiver). `timeout_ms` is the
  // sender's deadline, for the server's information.
  void CollectivePush(1: string to_device, 2: string key, 3: TensorWire value,
                      4: i64 timeout_ms) throws (1: RpcError err),
}

// The wire form of session/session_config.h's SessionConfig: its placement
// and execution groups (registries and devices stay in each process).
// Converted in one place, distributed/rpc/session_config_wire.h; each
// field's default is SessionConfig's.
struct SessionConfig {
  // Placement.
  1: string default_device,          // "": the first device of the cluster
  2: bool allow_soft_placement = false,
  4: bool auto_place = false,
  5: bool fuse_ops = true,
  8: i32 mixed_precision = 0,        // SessionConfig::MixedPrecision
  9: bool mixed_precision_on_any_cpu = false,
  10: list<string> group_updates_on = ["GPU"],
  // Execution.
  3: i64 step_timeout_ms = 0,        // 0: kDefaultClusterStepTimeoutMs
  6: i32 inter_op_parallelism = 0,
  7: bool capture_steps = true,
}

struct CreateSessionRequest {
  1: binary graph_def,               // serialized GraphDef
  2: SessionConfig config,
}

struct CreateSessionResponse {
  1: string session_handle,
}

struct RunStepRequest {
  1: string session_handle,
  2: list<NamedTensor> feeds,
  3: list<string> fetches,
  4: list<string> targets,
  // RunOptions::timeout_in_ms; 0: the session's step deadline.
  5: i64 timeout_in_ms,
  // RunOptions::output_partition_graphs: answer with the graph each device ran.
  6: bool output_partition_graphs,
}

struct RunStepResponse {
  1: list<TensorWire> fetches,
  2: list<binary> partition_graphs,  // serialized GraphDefs, in device order
}

service MasterService {
  CreateSessionResponse CreateSession(1: CreateSessionRequest req) throws (1: RpcError err),
  void ExtendSession(1: string session_handle, 2: binary graph_def) throws (1: RpcError err),
  RunStepResponse RunStep(1: RunStepRequest req) throws (1: RpcError err),
  void CloseSession(1: string session_handle) throws (1: RpcError err),
  list<DeviceAttributes> ListDevices() throws (1: RpcError err),
}
