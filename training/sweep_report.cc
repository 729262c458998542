#include "training/sweep_report.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace sluice {
namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  return out;
}

// Shortest form that reads back as the same double ("%.17g" is exact but
// noisy; try fewer digits first).
std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  for (int digits = 6; digits < 17; ++digits) {
    std::string s = absl::StrFormat("%.*g", digits, v);
    if (std::strtod(s.c_str(), nullptr) == v) return s;
  }
  return absl::StrFormat("%.17g", v);
}

absl::Mutex stdout_mu;

}  // namespace

std::string FormatSweepReport(int64_t step, const std::map<std::string, double>& metrics) {
  std::string line = absl::StrCat("SLUICE_SWEEP {\"step\": ", step);
  for (const auto& [name, value] : metrics) {
    if (name == "step") continue;
    absl::StrAppend(&line, ", ", JsonString(name), ": ", JsonNumber(value));
  }
  line.push_back('}');
  return line;
}

void SweepReport(int64_t step, const std::map<std::string, double>& metrics) {
  if (SweepTrialDir().empty()) return;  // no sweep runs this process
  std::string line = FormatSweepReport(step, metrics);
  line.push_back('\n');
  absl::MutexLock lock(&stdout_mu);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

std::string SweepTrialDir() {
  const char* dir = std::getenv("SLUICE_SWEEP_DIR");
  return dir != nullptr ? dir : "";
}

}  // namespace sluice
