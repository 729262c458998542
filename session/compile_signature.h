// CompileSignature: what every session does once per run signature (feeds,
// fetches, targets), for any set of devices, local or across a cluster:
// prune the graph to the signature (runtime/client_graph.h), inline its
// function calls (graph/function_inline.h), place it —
// automatically (placement/auto_placer.h) when asked, then by the placer
// (placement/placer.h) —, fuse op chains on each device
// (placement/fuse_ops.h), partition it per device (placement/partition.h)
// and collect the collective groups it uses.
//
//   SignatureCompileOptions o;
//   o.devices = devices;  o.config = &session_config;   // session/session_config.h
//   ASSIGN_OR_RETURN(CompiledSignature c,
//                    CompileSignature(graph, {"x:0"}, {"loss:0"}, {"train"}, o));
//   // c.partitions: device name -> partition GraphDef (_Send/_Recv added)
//
// The local session builds StepPartitions (runtime/step_partitions.h) from
// the partitions; the master registers each task's share with its worker,
// which builds them the same way.
//
// Errors: those of BuildClientGraph, AutoPlace, PlaceGraph, FuseOps and Partition.
// Thread-compatible: reads `graph` only.
#ifndef SLUICE_SESSION_COMPILE_SIGNATURE_H_
#define SLUICE_SESSION_COMPILE_SIGNATURE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "placement/partition.h"
#include "runtime/client_graph.h"
#include "runtime/device.h"
#include "runtime/kernel_registry.h"
#include "session/session_config.h"

namespace sluice {

struct SignatureCompileOptions {
  std::vector<Device*> devices;  // where it may run (borrowed)
  // The session's knobs: its kernels (required) and placement group
  // (allow_soft_placement, default_device, auto_place, fuse_ops). A
  // default_device of "" means the first device. Borrowed.
  const SessionConfig* config = nullptr;
  // The incarnation of each sending device (a cluster's tasks); default 1.
  std::function<uint64_t(const std::string& device)> get_incarnation;
};

struct CompiledSignature {
  // Feed types and shapes (its graph is gone into the partitions).
  ClientGraph client;
  // Device name -> the partition that device runs.
  std::map<std::string, tensorflow::GraphDef> partitions;
  // When everything runs on one device: the placed graph itself, to run
  // without importing the partition again (no transfers to add).
  std::unique_ptr<Graph> single_partition;
  // The group_key of every collective op of the signature, sorted.
  std::vector<int64_t> collective_groups;
};

absl::StatusOr<CompiledSignature> CompileSignature(const Graph& graph,
                                                   const std::vector<std::string>& feeds,
                                                   const std::vector<std::string>& fetches,
                                                   const std::vector<std::string>& targets,
                                                   const SignatureCompileOptions& options);

}  // namespace sluice

#endif  // SLUICE_SESSION_COMPILE_SIGNATURE_H_
