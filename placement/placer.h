// Placer: gives every node of a graph one of the available devices.
//
//   PlacerOptions opts;  opts.allow_soft_placement = true;
//   RETURN_IF_ERROR(PlaceGraph(&graph, devices, kernels, opts));
//   // every node's assigned_device() is now a full device name
//
// Rules, in order:
//  - a node already assigned keeps its device; a requested (possibly
//    partial) device name is honoured;
//  - colocation groups (placement/colocation.h: "_class" loc:@ attrs from
//    Scope::ColocateWith, a variable with the ops that assign, apply or read
//    it) share one device, and their requests are merged;
//  - only devices with a kernel for every member of a group qualify; with
//    options.whole_graph, the members the group has there count too;
//  - where a request leaves the device type open, a GPU with kernels for the
//    whole group comes before other devices;
//  - a group that asks for nothing goes to the default device (the first
//    device's task, or options.default_device), except a lone source node (a Const
//    or other op with no inputs and no state), which joins its consumers when
//    they all sit on one device, so a layer's constants do not cross devices.
// With allow_soft_placement, a request no device can meet is relaxed (first
// its device id, then its device type) rather than failing, and conflicting
// requests in a group keep the first.
//
// Errors (InvalidArgument) name the node, what it asked for and why no
// device fits: no device matches (listing the devices), no kernel for a
// member on the matching devices, or two colocated nodes pinned to
// different devices; a malformed device name names the node and the part.
//
// Thread-compatible: it sets assigned devices on the graph's nodes; the
// devices are borrowed.
#ifndef SLUICE_PLACEMENT_PLACER_H_
#define SLUICE_PLACEMENT_PLACER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "runtime/device.h"
#include "runtime/kernel_registry.h"

namespace sluice {

struct PlacerOptions {
  bool allow_soft_placement = false;
  // Where nodes that ask for nothing go: a (partial) device name, e.g.
  // "/device:CPU:1"; "" for the first device. Must match some device.
  std::string default_device;
  // The graph `graph` was pruned from (a session's whole graph, the same
  // node names), or null. A colocation group's members in the whole graph
  // then also need kernels on its device (those with a kernel on no device
  // type at hand are left out) and their requests are merged where they
  // agree, so that a variable lands on the same device in every run
  // signature whichever of its users the signature keeps (TensorFlow places
  // the whole graph once). Without it, a variable read by a CPU-only op in
  // one run and only by GPU ops in another was two variables on two devices.
  const Graph* whole_graph = nullptr;
};

absl::Status PlaceGraph(Graph* graph, absl::Span<Device* const> devices,
                        const KernelRegistry& kernels, const PlacerOptions& options);

}  // namespace sluice

#endif  // SLUICE_PLACEMENT_PLACER_H_
