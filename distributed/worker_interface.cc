#include "distributed/worker_interface.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace sluice {

std::string TaskOfDevice(const std::string& device_name) {
  std::string task;
  for (absl::string_view part : absl::StrSplit(device_name, '/', absl::SkipEmpty())) {
    if (absl::StartsWith(part, "job:") || absl::StartsWith(part, "replica:") ||
        absl::StartsWith(part, "task:")) {
      absl::StrAppend(&task, "/", part);
    }
  }
  return task;
}

}  // namespace sluice
