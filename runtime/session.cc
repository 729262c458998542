#include "runtime/session.h"

namespace sluice {

absl::StatusOr<std::vector<Tensor>> Session::Run(
    const std::vector<std::pair<Output, Tensor>>& feeds, const std::vector<Output>& fetches,
    const std::vector<Node*>& targets, const RunOptions& options, RunMetadata* metadata) {
  std::vector<std::pair<std::string, Tensor>> named_feeds;
  for (const auto& [output, tensor] : feeds) named_feeds.emplace_back(output.name(), tensor);
  std::vector<std::string> named_fetches;
  for (const Output& o : fetches) named_fetches.push_back(o.name());
  std::vector<std::string> named_targets;
  for (const Node* n : targets) named_targets.push_back(n ? n->name() : "<invalid>");
  return Run(named_feeds, named_fetches, named_targets, options, metadata);
}

}  // namespace sluice
