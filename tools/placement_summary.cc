// Per-device costs and cross-device tensors. See placement_summary.h.
#include "tools/placement_summary.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/view_placement.h"

namespace sluice {
namespace {

// Three significant digits, trailing zeros dropped: 1.5, 32, 2.25, 123.
std::string ThreeDigits(double v) {
  // The precision as an argument: clang requires a constant format string.
  const int digits = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  std::string s = absl::StrFormat("%.*f", digits, v);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// Bytes of one output: the cost model's, else from the inferred shape.
int64_t OutputBytes(const Node& node, int output, const CostModel& cost) {
  const NodeCost& c = cost.cost(node);
  if (output < static_cast<int>(c.output_bytes.size())) return c.output_bytes[output];
  int64_t n = node.output_shape(output).num_elements();
  return n < 0 ? 0 : n * DataTypeSize(BaseType(node.output_type(output)));
}

}  // namespace

int64_t PlacementSummary::transfer_bytes() const {
  int64_t total = 0;
  for (const Transfer& t : transfers) total += t.bytes;
  return total;
}

absl::StatusOr<PlacementSummary> SummarizePlacement(const Graph& graph,
                                                    absl::Span<const std::string> device_of,
                                                    absl::Span<const std::string> listed_devices,
                                                    absl::Span<const DeviceSpec> specs,
                                                    const CostModel& cost) {
  if (listed_devices.size() != specs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("SummarizePlacement: ", listed_devices.size(),
                                                   " device names for ", specs.size(),
                                                   " device specs"));
  }
  PlacementSummary summary;
  absl::flat_hash_map<std::string, int> index;
  for (size_t i = 0; i < listed_devices.size(); ++i) {
    if (index.contains(listed_devices[i])) continue;
    index[listed_devices[i]] = static_cast<int>(summary.devices.size());
    DeviceSummary d;
    d.device = listed_devices[i];
    d.memory_limit = specs[i].memory_bytes;
    summary.devices.push_back(std::move(d));
  }
  // Devices not in the list, by name, the unplaced last.
  std::vector<std::string> others;
  for (const Node* n : graph.nodes()) {
    const std::string& d = device_of[n->id()];
    if (!index.contains(d) && std::find(others.begin(), others.end(), d) == others.end()) {
      others.push_back(d);
    }
  }
  std::sort(others.begin(), others.end(), [](const std::string& a, const std::string& b) {
    return std::make_tuple(a == kUnplacedDevice, a) < std::make_tuple(b == kUnplacedDevice, b);
  });
  for (const std::string& d : others) {
    index[d] = static_cast<int>(summary.devices.size());
    summary.devices.push_back(DeviceSummary{d});
  }

  // (source node, output, destination device) -> transfer, ordered.
  std::map<std::tuple<int, int, std::string>, Transfer> transfers;
  for (const Node* n : graph.nodes()) {
    DeviceSummary& d = summary.devices[index[device_of[n->id()]]];
    const NodeCost& c = cost.cost(*n);
    ++d.op_count;
    d.flops += c.flops;
    d.persistent_bytes += c.persistent_bytes;
    d.output_bytes += c.memory_bytes() - c.persistent_bytes;
    for (const Edge* e : n->out_edges()) {
      if (e->IsControl()) continue;
      const std::string& dst_device = device_of[e->dst->id()];
      if (dst_device == device_of[n->id()]) continue;
      Transfer& t = transfers[{n->id(), e->src_output, dst_device}];
      if (t.src == nullptr) {
        t.src = n;
        t.src_output = e->src_output;
        t.src_device = device_of[n->id()];
        t.dst_device = dst_device;
        t.dtype = BaseType(n->output_type(e->src_output));
        t.shape = n->output_shape(e->src_output);
        t.bytes = OutputBytes(*n, e->src_output, cost);
      }
      t.consumers.push_back(e->dst);
    }
  }
  for (auto& [key, t] : transfers) {
    std::sort(t.consumers.begin(), t.consumers.end(),
              [](const Node* a, const Node* b) { return a->id() < b->id(); });
    t.consumers.erase(std::unique(t.consumers.begin(), t.consumers.end()), t.consumers.end());
    summary.transfers.push_back(std::move(t));
  }
  return summary;
}

std::string FormatBytes(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (v >= 1024 && unit + 1 < 5) {
    v /= 1024;
    ++unit;
  }
  return absl::StrCat(ThreeDigits(v), " ", kUnits[unit]);
}

std::string FormatFlops(double flops) {
  if (!(flops >= 1000)) return absl::StrCat(ThreeDigits(std::max(flops, 0.0)), " FLOP");
  static constexpr const char* kUnits[] = {"kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
  double v = flops / 1000;
  int unit = 0;
  while (v >= 1000 && unit + 1 < 5) {
    v /= 1000;
    ++unit;
  }
  return absl::StrCat(ThreeDigits(v), " ", kUnits[unit]);
}

std::string DescribeTransfer(const Transfer& t) {
  std::string s = absl::StrCat(DataTypeName(t.dtype), " ", t.shape.DebugString(), " ",
                               t.shape.IsFullyDefined() ? "" : "~", FormatBytes(t.bytes));
  if (t.consumers.size() > 1) absl::StrAppend(&s, " → ", t.consumers.size(), " consumers");
  return s;
}

}  // namespace sluice
