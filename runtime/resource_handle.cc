#include "runtime/resource_handle.h"

#include "absl/strings/escaping.h"

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
  return ParseResourceHandle(absl::string_view(handle.flat<std::string>()[0]), what);
}

absl::StatusOr<ResourceName> ParseResourceHandle(absl::string_view handle, absl::string_view what) {
  const size_t sep = handle.find(kSeparator);
  if (sep == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", absl::CEscape(handle), "' is not a ", what, " handle"));
  }
  return ResourceName{std::string(handle.substr(0, sep)), std::string(handle.substr(sep + 1))};
}

}  // namespace sluice
