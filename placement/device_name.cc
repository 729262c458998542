#include "placement/device_name.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace sluice {
namespace {

absl::Status Bad(absl::string_view name, absl::string_view part, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed device name '", name, "': '", part, "' ", why));
}

bool ParseId(absl::string_view s, std::optional<int>* out) {
  if (s == "*") {
    out->reset();
    return true;
  }
  int v;
  if (!absl::SimpleAtoi(s, &v) || v < 0) return false;
  *out = v;
  return true;
}

}  // namespace

absl::StatusOr<DeviceName> DeviceName::Parse(absl::string_view name) {
  DeviceName d;
  if (name.empty()) return d;
  if (name[0] != '/') return Bad(name, name, "must start with '/'");
  for (absl::string_view part : absl::StrSplit(name.substr(1), '/')) {
    if (part.empty()) return Bad(name, part, "is empty");
    std::vector<absl::string_view> kv = absl::StrSplit(part, ':');
    absl::string_view key = kv[0];
    if (key == "job" && kv.size() == 2 && !kv[1].empty()) {
      d.job = std::string(kv[1]);
    } else if (key == "replica" && kv.size() == 2) {
      if (!ParseId(kv[1], &d.replica)) return Bad(name, part, "needs a number");
    } else if (key == "task" && kv.size() == 2) {
      if (!ParseId(kv[1], &d.task)) return Bad(name, part, "needs a number");
    } else if (key == "device" && kv.size() == 3) {
      std::string type = absl::AsciiStrToUpper(kv[1]);
      if (type.empty()) return Bad(name, part, "needs a device type");
      d.type = type;
      if (!ParseId(kv[2], &d.id)) return Bad(name, part, "needs a device number");
    } else if (kv.size() == 2 && (absl::EqualsIgnoreCase(key, "cpu") ||
                                  absl::EqualsIgnoreCase(key, "gpu"))) {
      d.type = absl::AsciiStrToUpper(key);
      if (!ParseId(kv[1], &d.id)) return Bad(name, part, "needs a device number");
    } else {
      return Bad(name, part,
                 "is not one of job:NAME, replica:N, task:N, device:TYPE:N, cpu:N, gpu:N");
    }
  }
  return d;
}

bool DeviceName::Matches(const DeviceName& full) const {
  if (job && job != full.job) return false;
  if (replica && replica != full.replica) return false;
  if (task && task != full.task) return false;
  if (type && type != full.type) return false;
  if (id && id != full.id) return false;
  return true;
}

bool DeviceName::IsCompatibleWith(const DeviceName& o) const {
  auto ok = [](const auto& a, const auto& b) { return !a || !b || *a == *b; };
  return ok(job, o.job) && ok(replica, o.replica) && ok(task, o.task) && ok(type, o.type) &&
         ok(id, o.id);
}

std::string DeviceName::ToString() const {
  std::string s;
  if (job) absl::StrAppend(&s, "/job:", *job);
  if (replica) absl::StrAppend(&s, "/replica:", *replica);
  if (task) absl::StrAppend(&s, "/task:", *task);
  if (type) absl::StrAppend(&s, "/device:", *type, ":", id ? absl::StrCat(*id) : "*");
  return s;
}

absl::Status DeviceName::MergeFrom(const DeviceName& other) {
  if (!IsCompatibleWith(other)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot merge device names '", ToString(),
                                                   "' and '", other.ToString(),
                                                   "': they name different devices"));
  }
  if (!job) job = other.job;
  if (!replica) replica = other.replica;
  if (!task) task = other.task;
  if (!type) type = other.type;
  if (!id) id = other.id;
  return absl::OkStatus();
}

}  // namespace sluice
