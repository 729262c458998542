#include "session/compile_signature.h"

#include <utility>

#include "base/status_macros.h"
#include "graph/function_inline.h"
#include "graph/graph_def_io.h"
#include "ops/internal/bf16_gemm.h"
#include "placement/auto_mixed_precision.h"
#include "placement/auto_placer.h"
#include "placement/fuse_ops.h"
#include "placement/group_updates.h"
#include "placement/placer.h"
#include "runtime/step_partitions.h"

namespace sluice {

absl::StatusOr<CompiledSignature> CompileSignature(const Graph& graph,
                                                   const std::vector<std::string>& feeds,
                                                   const std::vector<std::string>& fetches,
                                                   const std::vector<std::string>& targets,
                                                   const SignatureCompileOptions& options) {
  if (options.config == nullptr || options.config->kernels == nullptr) {
    return absl::InvalidArgumentError("CompileSignature: no kernel registry");
  }
  const SessionConfig& config = *options.config;
  ASSIGN_OR_RETURN(ClientGraph client, BuildClientGraph(graph, feeds, fetches, targets));
  Graph* pruned = client.graph.get();
  // Function calls become their bodies before placement: each call site's
  // body is placed on its own (on the call's device unless its nodes ask
  // for another), and its nodes are fused and partitioned like any other.
  RETURN_IF_ERROR(InlineFunctionCalls(pruned).status());
  if (config.auto_place) {
    // Placed over the whole graph, then applied to this signature's nodes: a
    // variable lives on one device for all signatures (the one that
    // initializes it and the one that trains with it), and AutoPlace is
    // deterministic, so every signature sees the same decision.
    AutoPlacerOptions auto_options;
    for (Device* d : options.devices) {
      DeviceSpec spec;
      spec.name = d->name();
      spec.memory_bytes = d->memory_limit();
      auto_options.devices.push_back(std::move(spec));
    }
    GraphDef def;
    graph.ToGraphDef(&def);
    Graph whole(graph.registry());
    RETURN_IF_ERROR(ImportGraphDef(def, &whole, {.allow_internal_ops = true}));
    RETURN_IF_ERROR(InlineFunctionCalls(&whole).status());
    RETURN_IF_ERROR(AutoPlace(&whole, auto_options).status());
    for (Node* n : pruned->nodes()) {
      if (const Node* placed = whole.FindNode(n->name()); placed != nullptr) {
        n->set_requested_device(placed->requested_device());
      }
    }
  }
  CompiledSignature out;
  out.collective_groups = CollectiveGroupsOf(*pruned);
  PlacerOptions placer;
  placer.allow_soft_placement = config.allow_soft_placement;
  placer.default_device = config.default_device;
  placer.whole_graph = &graph;
  RETURN_IF_ERROR(PlaceGraph(pruned, options.devices, *config.kernels, placer));
  if (config.mixed_precision != SessionConfig::MixedPrecision::kOff) {
    // After placement (a node converts only where its device has the 16-bit
    // kernel), before fusion (which fuses float chains only).
    MixedPrecisionOptions amp;
    amp.kernels = config.kernels;
    const bool half = config.mixed_precision == SessionConfig::MixedPrecision::kFloat16;
    amp.type = half ? DT_HALF : DT_BFLOAT16;
    amp.device_types = {"GPU"};
    if (!half && (config.mixed_precision_on_any_cpu || internal::CpuHasNativeBf16Gemm())) {
      amp.device_types.push_back("CPU");
    }
    RETURN_IF_ERROR(AutoMixedPrecision(pruned, amp).status());
  }
  if (config.fuse_ops) {
    // After placement: chains are fused only on one device that has the
    // fused kernel. Fetched tensors are protected by their _Retval consumer;
    // targets by name.
    FuseOptions fuse;
    fuse.kernels = config.kernels;
    fuse.keep = targets;
    RETURN_IF_ERROR(FuseOps(pruned, fuse).status());
  }
  if (!config.group_updates_on.empty()) {
    // After fusion: the updates fused with their gradient's MatMul are no
    // longer ApplyGradientDescent.
    GroupUpdatesOptions group;
    group.kernels = config.kernels;
    group.keep = targets;
    group.device_types = config.group_updates_on;
    RETURN_IF_ERROR(GroupUpdates(pruned, group).status());
  }
  PartitionOptions partition;
  partition.get_incarnation = options.get_incarnation;
  ASSIGN_OR_RETURN(out.partitions, Partition(*pruned, partition));
  if (out.partitions.size() == 1) out.single_partition = std::move(client.graph);
  client.graph = nullptr;
  out.client = std::move(client);
  return out;
}

}  // namespace sluice
