#include "runtime/cpu_share.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "absl/strings/numbers.h"

namespace sluice {

int HardwareThreads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

int ProcessCpuShare() {
  if (const char* n = std::getenv(kNumThreadsEnv)) {
    int threads = 0;
    if (absl::SimpleAtoi(n, &threads) && threads > 0) return threads;
  }
  return HardwareThreads();
}

bool SharesTheMachine() { return ProcessCpuShare() < HardwareThreads(); }

}  // namespace sluice
