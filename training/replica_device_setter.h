// The replica device setter for between-graph replication (TensorFlow's
// replica_device_setter, as a pass over a built graph): each worker builds
// the same graph and runs this pass, so that variables — and every op that
// must sit with them — live on parameter-server tasks, and the rest of the
// step runs on the worker.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   ... build the model, AddGradients, an optimizer's update ops ...
//   ReplicaDeviceSetterOptions opts;
//   opts.num_ps_tasks = 2;
//   opts.worker_device = "/job:worker/task:3/device:GPU:0";
//   ASSIGN_OR_RETURN(auto where, ApplyReplicaDeviceSetter(s.graph(), opts));
//   // where["w1"] == "/job:ps/task:0", where["w2"] == "/job:ps/task:1", ...
//
// What it sets, per colocation group (placement/colocation.h: a variable with
// its Assign / Apply* / read Identity nodes, and everything Scope::ColocateWith
// put beside them, such as optimizer slots and gradient accumulators). Nodes
// whose request already names a job keep it; the others get the group's
// device, which is, with R the merge of the group's requests:
//  - for a group holding a variable (VariableV2 / Variable), when
//    num_ps_tasks > 0 and R names no job or options.ps_job:
//    "/job:<ps_job>/task:<k>" plus R's other parts (e.g. "/device:CPU:0"),
//    where k is R's task if it names one, else chosen by the strategy:
//      kRoundRobin:    0, 1, ..., num_ps_tasks-1, 0, ... over such groups in
//                      graph order (of each group's first node);
//      kGreedyByBytes: the task holding the fewest variable bytes so far
//                      (lowest task on ties), in the same order. A group's
//                      bytes are its variables' elements times their dtype
//                      size, from the "shape" and "dtype" attrs; a variable
//                      whose shape is not fully defined counts as 0 bytes.
//                      Groups that name their task count toward it too;
//  - for any other group naming a job in R: R;
//  - for every other group: worker_device with R's parts laid over it, so a
//    partial request such as "/device:GPU:0" becomes
//    "/job:worker/task:0/device:GPU:0" (a device type that differs from the
//    worker's drops the worker's device id).
// Nodes without a request end with a job; the placer completes the rest.
//
// Returns, for every variable node, the device it now requests.
// Errors (InvalidArgument): num_ps_tasks < 0; an empty ps_job with ps tasks;
// an unparsable worker_device or node request (naming the node); colocated
// nodes requesting devices that cannot be merged (naming both). On error the
// graph may be partly updated.
//
// Thread-compatible: no other thread may use the graph meanwhile. The graph is
// borrowed.
#ifndef SLUICE_TRAINING_REPLICA_DEVICE_SETTER_H_
#define SLUICE_TRAINING_REPLICA_DEVICE_SETTER_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace sluice {

struct ReplicaDeviceSetterOptions {
  int num_ps_tasks = 0;  // 0: everything goes to worker_device
  std::string ps_job = "ps";
  // This worker; may name a device ("/job:worker/task:1/device:GPU:0").
  std::string worker_device = "/job:worker/task:0";
  enum class Strategy { kRoundRobin, kGreedyByBytes };
  Strategy strategy = Strategy::kRoundRobin;
};

// Variable node name -> the device it requests after the pass.
absl::StatusOr<std::map<std::string, std::string>> ApplyReplicaDeviceSetter(
    Graph* graph, const ReplicaDeviceSetterOptions& options);

}  // namespace sluice

#endif  // SLUICE_TRAINING_REPLICA_DEVICE_SETTER_H_
