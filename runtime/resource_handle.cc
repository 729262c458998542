#include "runtime/resource_handle.h"

namespace sluice {
namespace {

constexpr char kSeparator = '\x1f';

}  // namespace

std::string MakeResourceHandle(absl::string_view container, absl::string_view name) {
  return absl::StrCat(container, absl::string_view(&kSeparator, 1), name);
}

absl::StatusOr<ResourceName> ParseResourceHandle(const Tensor& handle, absl::string_view what) {
  if (handle.dtype() != DT_RESOURCE || handle.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("expected a ", what, "'s resource handle, got ",
                                                   DataTypeName(handle.dtype()), " ",
                                                   handle.shape().DebugString()));
  }
  const std::string& h = handle.flat<std::string>()[0];
  const size_t sep = h.find(kSeparator);
  if (sep == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("the handle names no ", what));
  }
  return ResourceName{h.substr(0, sep), h.substr(sep + 1)};
}

}  // namespace sluice
