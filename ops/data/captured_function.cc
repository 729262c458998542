#include "ops/data/captured_function.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {

absl::StatusOr<FunctionSpec> FunctionSpec::Instantiate(const OpKernelConstruction& ctx,
                                                       absl::string_view attr) {
  const Node& node = ctx.node();
  auto it = node.attrs().find(std::string(attr));
  if (it == node.attrs().end() || !it->second.has_func()) {
    return absl::InvalidArgumentError(absl::StrCat(node.op(), " '", node.name(),
                                                   "': attr '", attr, "' must name a function"));
  }
  const ::tensorflow::NameAttrList& func = it->second.func();
  FunctionSpec spec;
  spec.function = func.name();
  spec.node = node.name();
  if (ctx.function_runtime() == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        node.op(), " '", node.name(), "' calls function '", func.name(),
        "', but the executor running this graph has no function runtime"));
  }
  // Shared when the runtime is shared-owned; borrowed (the caller keeps it
  // alive) otherwise.
  spec.runtime = ctx.function_runtime()->weak_from_this().lock();
  if (spec.runtime == nullptr) {
    spec.runtime = std::shared_ptr<FunctionRuntime>(std::shared_ptr<FunctionRuntime>(),
                                                    ctx.function_runtime());
  }
  absl::StatusOr<FunctionRuntime::Handle> h = spec.runtime->Instantiate(func);
  if (!h.ok()) {
    return absl::Status(h.status().code(), absl::StrCat(node.op(), " '", node.name(), "': ",
                                                        h.status().message()));
  }
  spec.handle = *h;
  return spec;
}

absl::Status CapturedFunction::Run(std::vector<Tensor> args, std::vector<Tensor>* rets) const {
  args.insert(args.end(), captured_.begin(), captured_.end());
  absl::Status s = spec_.runtime->Run(spec_.handle, std::move(args), rets);
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("in function '", spec_.function, "' of dataset '",
                                             spec_.node, "': ", s.message()));
}

std::vector<Tensor> InputRange(OpKernelContext* ctx, int first, int n) {
  std::vector<Tensor> out;
  out.reserve(n);
  for (int i = 0; i < n; ++i) out.push_back(ctx->input(first + i));
  return out;
}

}  // namespace sluice
