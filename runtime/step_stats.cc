#include "runtime/step_stats.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&out, "\\u00", c < 16 ? "0" : "", absl::Hex(c));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

StepStatsCollector::StepStatsCollector() : origin_ns_(SteadyNanos()) {}

int64_t StepStatsCollector::NowMicros() const { return (SteadyNanos() - origin_ns_) / 1000; }

void StepStatsCollector::Record(NodeExecStats stats) {
  absl::MutexLock lock(&mu_);
  stats_.nodes.push_back(std::move(stats));
}

StepStats StepStatsCollector::Finish() {
  absl::MutexLock lock(&mu_);
  return std::move(stats_);
}

std::string ToChromeTraceJson(const StepStats& stats) {
  std::map<std::string, int> pids;
  for (const NodeExecStats& n : stats.nodes) pids.emplace(n.device, 0);
  int next = 1;
  for (auto& [device, pid] : pids) pid = next++;
  std::string out = "{\"traceEvents\":[";
  bool first = true;
  auto sep = [&] {
    if (!first) out += ",";
    first = false;
  };
  for (const auto& [device, pid] : pids) {
    sep();
    absl::StrAppend(&out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", pid,
                    ",\"args\":{\"name\":\"", JsonEscape(device), "\"}}");
  }
  for (const NodeExecStats& n : stats.nodes) {
    sep();
    absl::StrAppend(&out, "{\"ph\":\"X\",\"cat\":\"op\",\"name\":\"", JsonEscape(n.node_name),
                    "\",\"pid\":", pids[n.device], ",\"tid\":", n.thread_id,
                    ",\"ts\":", n.start_us, ",\"dur\":", std::max<int64_t>(n.end_us - n.start_us, 0),
                    ",\"args\":{\"op\":\"", JsonEscape(n.op), "\",\"output_bytes\":", n.output_bytes,
                    n.input_copies > 0 ? absl::StrCat(",\"input_copies\":", n.input_copies) : "",
                    "}}");
  }
  // Flow arrows: one id per transfer key, from inside the _Send's slice to
  // inside the _Recv's (whose slice spans its wait).
  std::map<std::string, int> flow_ids;
  for (const NodeExecStats& n : stats.nodes) {
    if (n.flow_key.empty()) continue;
    auto [it, added] = flow_ids.emplace(n.flow_key, static_cast<int>(flow_ids.size()) + 1);
    sep();
    // The send hands over at its start; the receive gets the tensor at its end.
    const int64_t ts = n.flow_is_send ? n.start_us : std::max(n.start_us, n.end_us - 1);
    absl::StrAppend(&out, "{\"ph\":\"", n.flow_is_send ? "s" : "f",
                    "\",\"bp\":\"e\",\"cat\":\"transfer\",\"name\":\"",
                    JsonEscape(n.flow_key), "\",\"id\":", it->second,
                    ",\"pid\":", pids[n.device], ",\"tid\":", n.thread_id, ",\"ts\":", ts, "}");
  }
  out += "],\"displayTimeUnit\":\"ms\"}";
  return out;
}

}  // namespace sluice
