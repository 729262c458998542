#include "runtime/stateful_kernels.h"

#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace sluice {
namespace {

bool HasFunctionAttr(const Node& node) {
  for (const auto& [name, value] : node.attrs()) {
    if (value.has_func() || (value.has_list() && value.list().func_size() > 0)) return true;
  }
  return false;
}

// Op, input count and attrs (in name order, each serialized
// deterministically).
std::string Fingerprint(const Node& node) {
  std::string out = absl::StrCat(node.op(), "|", node.num_inputs());
  std::map<std::string, const AttrValue*> sorted;
  for (const auto& [name, value] : node.attrs()) sorted[name] = &value;
  for (const auto& [name, value] : sorted) {
    std::string bytes;
    {
      google::protobuf::io::StringOutputStream stream(&bytes);
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.SetSerializationDeterministic(true);
      value->SerializeToCodedStream(&coded);
    }
    absl::StrAppend(&out, "|", name, "=", bytes.size(), ":", bytes);
  }
  return out;
}

}  // namespace

bool StatefulKernels::Shares(const Node& node) {
  return node.op_def().is_stateful && !absl::StartsWith(node.op(), "_") &&
         !absl::StartsWith(node.name(), "_") && node.control_flow() == ControlFlowRole::kNone &&
         !HasFunctionAttr(node);
}

absl::StatusOr<std::shared_ptr<OpKernel>> StatefulKernels::GetOrCreate(const Node& node,
                                                                      const Device& device,
                                                                      MakeKernel make) {
  if (!Shares(node)) {
    ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k, make());
    return std::shared_ptr<OpKernel>(std::move(k));
  }
  const std::string key = absl::StrCat(device.name(), "|", node.name());
  const std::string fingerprint = Fingerprint(node);
  absl::MutexLock lock(&mu_);
  auto it = kernels_.find(key);
  if (it != kernels_.end() && it->second.fingerprint == fingerprint) return it->second.kernel;
  ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k, make());
  std::shared_ptr<OpKernel> shared(std::move(k));
  kernels_[key] = Entry{fingerprint, shared};
  return shared;
}

int StatefulKernels::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(kernels_.size());
}

}  // namespace sluice
