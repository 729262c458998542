// Device names: /job:J/replica:R/task:T/device:TYPE:ID, any part omitted in a
// request. Parsing, matching a request against a full name, and formatting.
//
//   ASSIGN_OR_RETURN(DeviceName req, DeviceName::Parse("/device:GPU:1"));
//   ASSIGN_OR_RETURN(DeviceName full, DeviceName::Parse(device->name()));
//   if (req.Matches(full)) ...
//
// Also accepts the legacy short forms "/cpu:0" and "/gpu:1", and "*" as an id.
// Thread-compatible value type.
#ifndef SLUICE_PLACEMENT_DEVICE_NAME_H_
#define SLUICE_PLACEMENT_DEVICE_NAME_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {

struct DeviceName {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> type;  // upper case: CPU, GPU
  std::optional<int> id;

  // InvalidArgument naming the string and the bad part. "" parses to an
  // empty request that matches every device.
  static absl::StatusOr<DeviceName> Parse(absl::string_view name);

  // True when every part set here equals that part of `full`.
  bool Matches(const DeviceName& full) const;
  // True when some device could satisfy both requests.
  bool IsCompatibleWith(const DeviceName& other) const;
  // Fills the parts unset here from `other`. InvalidArgument naming both
  // names when a part set in both differs.
  absl::Status MergeFrom(const DeviceName& other);
  bool IsFullySpecified() const { return job && replica && task && type && id; }

  // The canonical form of the parts that are set.
  std::string ToString() const;
};

}  // namespace sluice

#endif  // SLUICE_PLACEMENT_DEVICE_NAME_H_
