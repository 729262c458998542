#include "ops/data/internal/data_testutil.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/algorithm.h"
#include "ops/builtins.h"

namespace sluice {
namespace data {

absl::StatusOr<FunctionRuntime::Handle> FakeFunctionRuntime::Instantiate(
    const ::tensorflow::NameAttrList& func) {
  if (fns_.find(func.name()) == fns_.end()) {
    return absl::NotFoundError(absl::StrCat("no function '", func.name(), "' in the library"));
  }
  handles_.push_back(func.name());
  return static_cast<Handle>(handles_.size() - 1);
}

absl::Status FakeFunctionRuntime::Run(Handle handle, std::vector<Tensor> args,
                                      std::vector<Tensor>* rets) {
  calls_.fetch_add(1);
  rets->clear();
  return fns_.at(handles_.at(handle))(std::move(args), rets);
}

absl::StatusOr<std::vector<Tensor>> TestGraphRunner::Run(
    const std::vector<Output>& fetches, const std::vector<Node*>& targets,
    const std::map<std::string, Tensor>& feeds) {
  std::vector<Node*> roots = targets;
  for (const Output& f : fetches) roots.push_back(f.node);
  const std::vector<bool> needed = ReachableBackward(*graph_, roots);
  ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph_));
  absl::flat_hash_map<const Node*, std::vector<TensorValue>> values;
  ++step_;
  for (Node* node : order) {
    if (!needed[node->id()]) continue;
    std::vector<TensorValue> outputs(node->num_outputs());
    auto fed = feeds.find(node->name());
    if (fed != feeds.end()) {
      outputs[0].tensor = fed->second;
      values[node] = std::move(outputs);
      continue;
    }
    std::vector<TensorValue> inputs(node->num_inputs());
    for (int i = 0; i < node->num_inputs(); ++i) {
      const Edge* e = node->input_edge(i);
      inputs[i] = values.at(e->src)[e->src_output];
    }
    auto& kernel = kernels_[node];
    if (kernel == nullptr) {
      ASSIGN_OR_RETURN(kernel, BuiltinKernels()->CreateKernel(*node, device_, fr_));
    }
    OpKernelContext::Params p;
    p.node = node;
    p.device = device_;
    p.step_id = step_;
    p.inputs = absl::MakeSpan(inputs);
    p.outputs = absl::MakeSpan(outputs);
    p.function_runtime = fr_;
    OpKernelContext ctx(p);
    absl::Status s = kernel->Compute(&ctx);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(node->DebugName(), ": ", s.message()));
    values[node] = std::move(outputs);
  }
  std::vector<Tensor> out;
  for (const Output& f : fetches) out.push_back(values.at(f.node)[f.index].tensor);
  return out;
}

}  // namespace data
}  // namespace sluice
