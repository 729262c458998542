#include "runtime/kernel_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace sluice {

bool KernelDef::Matches(const AttrMap& attrs) const {
  for (const auto& [attr, types] : constraints_) {
    auto it = attrs.find(attr);
    if (it == attrs.end()) return false;
    if (it->second.value_case() == AttrValue::kType) {
      if (std::find(types.begin(), types.end(), it->second.type()) == types.end()) return false;
    } else if (it->second.value_case() == AttrValue::kList) {
      for (int t : it->second.list().type()) {
        if (std::find(types.begin(), types.end(), static_cast<DataType>(t)) == types.end()) {
          return false;
        }
      }
    } else {
      return false;
    }
  }
  return true;
}

std::string KernelDef::DebugString() const {
  std::string s = absl::StrCat(op_, " on ", device_type_);
  for (const auto& [attr, types] : constraints_) {
    absl::StrAppend(
        &s, " ", attr, " in {",
        absl::StrJoin(types, ",",
                      [](std::string* out, DataType t) { absl::StrAppend(out, DataTypeName(t)); }),
        "}");
  }
  return s;
}

void KernelRegistry::Register(KernelDef def, KernelFactory factory) {
  absl::MutexLock lock(&mu_);
  std::string op = def.op();
  kernels_[op].push_back(std::make_unique<Entry>(Entry{std::move(def), std::move(factory)}));
}

int KernelRegistry::RegisterHostKernels(absl::string_view op, absl::string_view device_type,
                                        const std::function<bool(const KernelDef&)>& accept) {
  std::vector<std::pair<KernelDef, KernelFactory>> copies;
  {
    absl::MutexLock lock(&mu_);
    auto it = kernels_.find(op);
    if (it == kernels_.end()) return 0;
    for (const auto& e : it->second) {
      if (e->def.device_type() != kDeviceTypeCpu || !accept(e->def)) continue;
      KernelDef def(e->def.op(), std::string(device_type));
      for (const auto& [attr, types] : e->def.constraints()) def.TypeConstraint(attr, types);
      def.AllHostMemory();
      copies.emplace_back(std::move(def), e->factory);
    }
  }
  for (auto& [def, factory] : copies) Register(std::move(def), std::move(factory));
  return static_cast<int>(copies.size());
}

ArgMemoryTypes HostMemoryArgs(const KernelDef& def, const Node& node) {
  ArgMemoryTypes m;
  m.input_on_host.assign(node.num_inputs(), def.all_host_memory() ? 1 : 0);
  m.output_on_host.assign(node.num_outputs(), def.all_host_memory() ? 1 : 0);
  if (def.all_host_memory()) return m;
  const std::vector<DataType>& host_types = def.host_memory_types();
  auto on_host = [&host_types](DataType t) {
    return std::find(host_types.begin(), host_types.end(), BaseType(t)) != host_types.end();
  };
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (on_host(node.input_type(i))) m.input_on_host[i] = 1;
  }
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (on_host(node.output_type(i))) m.output_on_host[i] = 1;
  }
  if (def.host_memory().empty()) return m;
  // The number of tensors behind each arg of the op's signature.
  auto count = [&node](const ArgDef& arg) -> int {
    if (!arg.number_attr.empty()) {
      absl::StatusOr<int64_t> n = node.GetAttr<int64_t>(arg.number_attr);
      return n.ok() ? static_cast<int>(*n) : 1;
    }
    if (!arg.type_list_attr.empty()) {
      absl::StatusOr<std::vector<DataType>> types =
          node.GetAttr<std::vector<DataType>>(arg.type_list_attr);
      return types.ok() ? static_cast<int>(types->size()) : 1;
    }
    return 1;
  };
  auto mark = [&](const std::vector<ArgDef>& args, std::vector<uint8_t>* flags) {
    size_t index = 0;
    for (const ArgDef& arg : args) {
      const int n = count(arg);
      const bool host = std::find(def.host_memory().begin(), def.host_memory().end(), arg.name) !=
                        def.host_memory().end();
      for (int k = 0; k < n && index < flags->size(); ++k, ++index) {
        if (host) (*flags)[index] = 1;
      }
    }
  };
  mark(node.op_def().inputs, &m.input_on_host);
  mark(node.op_def().outputs, &m.output_on_host);
  return m;
}

const KernelDef* KernelRegistry::FindKernelDef(const Node& node,
                                               absl::string_view device_type) const {
  return FindKernelDef(node.op(), node.attrs(), device_type);
}

const KernelDef* KernelRegistry::FindKernelDef(absl::string_view op, const AttrMap& attrs,
                                               absl::string_view device_type) const {
  absl::MutexLock lock(&mu_);
  auto it = kernels_.find(op);
  if (it == kernels_.end()) return nullptr;
  for (const auto& e : it->second) {
    if (e->def.device_type() == device_type && e->def.Matches(attrs)) return &e->def;
  }
  return nullptr;
}

absl::StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(
    const Node& node, Device* device, FunctionRuntime* function_runtime) const {
  KernelFactory factory;
  std::vector<std::string> registered;
  {
    absl::MutexLock lock(&mu_);
    auto it = kernels_.find(node.op());
    if (it != kernels_.end()) {
      for (const auto& e : it->second) {
        if (e->def.device_type() == device->device_type() && e->def.Matches(node.attrs())) {
          factory = e->factory;
          break;
        }
        registered.push_back(e->def.DebugString());
      }
    }
  }
  if (!factory) {
    std::string attrs;
    for (const auto& [name, value] : node.attrs()) {
      if (value.value_case() == AttrValue::kType) {
        absl::StrAppend(&attrs, attrs.empty() ? "" : ", ", name, "=", DataTypeName(value.type()));
      }
    }
    return absl::NotFoundError(absl::StrCat(
        "no ", device->device_type(), " kernel for node ", node.DebugName(),
        attrs.empty() ? "" : absl::StrCat(" with ", attrs),
        "; registered: ", registered.empty() ? "none" : absl::StrJoin(registered, "; ")));
  }
  std::unique_ptr<OpKernel> kernel = factory();
  OpKernelConstruction ctx(node, device, function_runtime);
  absl::Status s = kernel->Init(ctx);
  if (!s.ok()) return AddContext(s, absl::StrCat("node ", node.DebugName()));
  return kernel;
}

bool KernelRegistry::HasKernelsFor(absl::string_view op, absl::string_view device_type) const {
  absl::MutexLock lock(&mu_);
  auto it = kernels_.find(op);
  if (it == kernels_.end()) return false;
  for (const auto& e : it->second) {
    if (e->def.device_type() == device_type) return true;
  }
  return false;
}

std::vector<std::string> KernelRegistry::OpsWithKernels(absl::string_view device_type) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [op, entries] : kernels_) {
    for (const auto& e : entries) {
      if (e->def.device_type() == device_type) {
        out.push_back(op);
        break;
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace sluice
