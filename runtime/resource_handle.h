// How a DT_RESOURCE scalar names a resource in its device's ResourceMgr
// ("container\x1fname"), and the lookup a kernel does with one of its inputs.
//
//   handle->scalar<std::string>() = MakeResourceHandle(container_, name_);  // the handle op
//   ASSIGN_OR_RETURN(Writer * w, LookupResourceInput<Writer>(ctx, 0, "summary writer"));
//
// Errors: InvalidArgument for an input that is not one resource handle;
// NotFound naming the resource and the device when none of that type exists
// there (the message ends with `hint`, if any, e.g. what creates it).
// Thread-safe: no state.
#ifndef SLUICE_RUNTIME_RESOURCE_HANDLE_H_
#define SLUICE_RUNTIME_RESOURCE_HANDLE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/kernel.h"
#include "runtime/resource_mgr.h"
#include "runtime/tensor.h"

namespace sluice {

std::string MakeResourceHandle(absl::string_view container, absl::string_view name);

struct ResourceName {
  std::string container, name;
};
// `what` names the expected resource in the error ("summary writer").
absl::StatusOr<ResourceName> ParseResourceHandle(const Tensor& handle, absl::string_view what);
// The same for a handle's string (an iterator's string handle).
absl::StatusOr<ResourceName> ParseResourceHandle(absl::string_view handle, absl::string_view what);

template <typename T>
absl::StatusOr<T*> LookupResourceInput(OpKernelContext* ctx, int input, absl::string_view what,
                                       absl::string_view hint = "") {
  absl::StatusOr<ResourceName> n = ParseResourceHandle(ctx->input(input), what);
  if (!n.ok()) return n.status();
  T* r = ctx->resource_manager()->Find<T>(n->container, n->name);
  if (r == nullptr) {
    return absl::NotFoundError(absl::StrCat(what, " '", n->name, "' does not exist on ",
                                            ctx->device()->name(), hint.empty() ? "" : ": ", hint));
  }
  return r;
}

}  // namespace sluice

#endif  // SLUICE_RUNTIME_RESOURCE_HANDLE_H_
