// Placer: gives every node of a graph one of the available devices.
//
//   PlacerOptions opts;  opts.allow_soft_placement = true;
//   RETURN_IF_ERROR(PlaceGraph(&graph, devices, kernels, opts));
//   // every node's assigned_device() is now a full device name
//
// Rules: a node already assigned keeps its device; a requested (possibly
// partial) device name is honoured; nodes colocated by "_class" loc:@ attrs or
// joined by reference edges (a variable and the ops that update it) share one
// device; only devices with a kernel for every member of a group qualify;
// otherwise the first device (the default) among those that qualify.
// With allow_soft_placement, a request no device can meet is dropped rather
// than failing. Errors (InvalidArgument) name the node, what it asked for and
// why no device fits.
//
// Thread-compatible: it sets assigned devices on the graph's nodes; the
// devices are borrowed.
#ifndef SLUICE_PLACEMENT_PLACER_H_
#define SLUICE_PLACEMENT_PLACER_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "runtime/device.h"
#include "runtime/kernel_registry.h"

namespace sluice {

struct PlacerOptions {
  bool allow_soft_placement = false;
};

absl::Status PlaceGraph(Graph* graph, absl::Span<Device* const> devices,
                        const KernelRegistry& kernels, const PlacerOptions& options);

}  // namespace sluice

#endif  // SLUICE_PLACEMENT_PLACER_H_
