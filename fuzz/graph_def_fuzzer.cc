// GraphDef import and validation on arbitrary bytes: parsed as a binary or
// text GraphDef (graph_def_io.h), then imported into a Graph against every
// CPU op family's definitions (attrs, inputs, shape functions) and pruned
// to its last node. Errors, never a crash, a hang or an allocation the
// input does not justify.
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "fuzz/fuzz_target.h"
#include "graph/graph.h"
#include "graph/graph_def_io.h"
#include "graph/op_registry.h"
#include "ops/array/array_ops.h"
#include "ops/collective/collective_ops.h"
#include "ops/data_flow/data_flow_ops.h"
#include "ops/io/io_ops.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/random/random_ops.h"
#include "ops/state/state_ops.h"
#include "ops/io/summary_ops.h"
#include "ops/training/training_ops.h"
#include "runtime/frame_ops.h"
#include "runtime/sendrecv_ops.h"

namespace {

// The op families of ops/builtins.cc without the GPU backend (no kernels
// are needed to import a graph).
const sluice::OpRegistry& Ops() {
  static const sluice::OpRegistry* ops = [] {
    auto* r = new sluice::OpRegistry();
    for (auto reg : {sluice::RegisterFrameOps, sluice::RegisterSendRecvOps,
                     sluice::RegisterArrayOps, sluice::RegisterMathOps, sluice::RegisterNnOps,
                     sluice::RegisterStateOps, sluice::RegisterRandomOps,
                     sluice::RegisterTrainingOps, sluice::RegisterDataFlowOps,
                     sluice::RegisterSummaryOps, sluice::RegisterIoOps,
                     sluice::RegisterCollectiveOps}) {
      if (!reg(r).ok()) std::abort();
    }
    return r;
  }();
  return *ops;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Large inputs only slow the search (the parser's own limits apply).
  if (size > (1 << 20)) return 0;
  absl::StatusOr<sluice::GraphDef> def =
      sluice::ParseGraphDef(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!def.ok()) return 0;
  sluice::Graph graph(&Ops());
  (void)sluice::ImportGraphDef(*def, &graph);
  if (def->node_size() > 0) {
    (void)sluice::PruneGraphDef(*def, {def->node(def->node_size() - 1).name()});
  }
  return 0;
}
