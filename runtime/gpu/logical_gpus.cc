#include "runtime/gpu/logical_gpus.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace sluice {
namespace {

constexpr char kEnvironmentVariable[] = "SLUICE_LOGICAL_GPUS";

absl::Status BadSpec(absl::string_view spec, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      kEnvironmentVariable, "='", spec, "': ", why,
      " (want \"N\" or \"N:MiB\", N in 1..", kMaxLogicalGpusPerGpu, ")"));
}

// "N" -> N zeros (equal shares); "N:MiB" -> N limits of MiB mebibytes.
absl::StatusOr<std::vector<int64_t>> ParseSpec(absl::string_view spec) {
  spec = absl::StripAsciiWhitespace(spec);
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(spec, absl::MaxSplits(':', 1));
  int count = 0;
  if (!absl::SimpleAtoi(parts.first, &count) || count < 1 ||
      count > kMaxLogicalGpusPerGpu) {
    return BadSpec(spec, "bad count");
  }
  int64_t limit = 0;
  if (spec.find(':') != absl::string_view::npos) {
    int64_t mib = 0;
    if (!absl::SimpleAtoi(parts.second, &mib) || mib < 1 ||
        mib > (int64_t{1} << 30)) {
      return BadSpec(spec, "bad MiB");
    }
    limit = mib << 20;
  }
  return std::vector<int64_t>(count, limit);
}

} // namespace

absl::string_view LogicalGpusFromEnvironment() {
  const char *value = std::getenv(kEnvironmentVariable);
  return value == nullptr ? absl::string_view() : absl::string_view(value);
}

absl::StatusOr<std::vector<LogicalGpu>>
LayOutLogicalGpus(int visible, const LocalDevicesOptions &options,
                  absl::string_view env_spec) {
  if (options.max_gpus < -1 || options.gpu_memory_limit < 0) {
    return absl::InvalidArgumentError("local device options: max_gpus must be "
                                      ">= -1 and gpu_memory_limit >= 0");
  }
  if (options.gpu_memory_limit == 0 &&
      !(options.gpu_memory_fraction > 0 && options.gpu_memory_fraction <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "local device options: gpu_memory_fraction must be in (0, 1], not ",
        options.gpu_memory_fraction));
  }
  std::vector<int64_t> limits = options.gpu_logical_memory_limits;
  if (limits.empty() && !absl::StripAsciiWhitespace(env_spec).empty()) {
    absl::StatusOr<std::vector<int64_t>> parsed = ParseSpec(env_spec);
    if (!parsed.ok())
      return parsed.status();
    limits = *std::move(parsed);
  }
  if (static_cast<int>(limits.size()) > kMaxLogicalGpusPerGpu) {
    return absl::InvalidArgumentError(
        absl::StrCat("local device options: ", limits.size(),
                     " logical GPUs per GPU; at most ", kMaxLogicalGpusPerGpu));
  }
  for (size_t i = 0; i < limits.size(); ++i) {
    if (limits[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("local device options: gpu_logical_memory_limits[", i,
                       "] is negative: ", limits[i]));
    }
  }
  if (limits.empty())
    limits = {0}; // one device per GPU
  const int per_gpu = static_cast<int>(limits.size());

  int count = std::max(visible, 0);
  if (options.max_gpus >= 0)
    count = std::min(count, options.max_gpus);
  std::vector<LogicalGpu> layout;
  layout.reserve(static_cast<size_t>(count) * limits.size());
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    for (int logical = 0; logical < per_gpu; ++logical) {
      LogicalGpu gpu;
      gpu.ordinal = ordinal;
      gpu.logical = logical;
      gpu.memory_limit = limits[logical];
      gpu.memory_fraction = options.gpu_memory_fraction;
      if (gpu.memory_limit == 0) {
        if (options.gpu_memory_limit > 0) {
          gpu.memory_limit = options.gpu_memory_limit / per_gpu;
        } else {
          gpu.memory_fraction = options.gpu_memory_fraction / per_gpu;
        }
      }
      layout.push_back(gpu);
    }
  }
  return layout;
}

} // namespace sluice
