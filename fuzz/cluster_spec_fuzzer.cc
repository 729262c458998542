// The cluster-spec parsers (JSON, TensorFlow's ClusterDef text, the inline
// "ps=h:p;worker=h:p" flag) and the TaskConfig JSON on arbitrary text; the
// first byte picks the parser. What parses writes out as JSON and parses
// back to the same spec.
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "distributed/cluster/cluster_spec.h"
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  absl::StatusOr<sluice::ClusterSpec> spec;
  switch (data[0] % 4) {
    case 0:
      spec = sluice::ClusterSpec::FromJson(text);
      break;
    case 1:
      spec = sluice::ClusterSpec::FromTextProto(text);
      break;
    case 2:
      spec = sluice::ClusterSpec::FromFlag(text);
      break;
    default: {
      absl::StatusOr<sluice::TaskConfig> config = sluice::ParseTaskConfig(text);
      if (!config.ok()) return 0;
      absl::StatusOr<sluice::TaskConfig> back =
          sluice::ParseTaskConfig(sluice::TaskConfigToJson(*config));
      if (!back.ok() || back->job != config->job || back->task != config->task ||
          back->cluster.ToJson() != config->cluster.ToJson()) {
        std::abort();
      }
      return 0;
    }
  }
  if (!spec.ok()) return 0;
  const std::string json = spec->ToJson();
  absl::StatusOr<sluice::ClusterSpec> back = sluice::ClusterSpec::FromJson(json);
  if (!back.ok() || back->ToJson() != json) std::abort();  // the round trip changed it
  return 0;
}
