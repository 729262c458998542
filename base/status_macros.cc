#include "base/status_macros.h"

#include "absl/strings/str_cat.h"

namespace sluice {

absl::Status AddContext(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

}  // namespace sluice
