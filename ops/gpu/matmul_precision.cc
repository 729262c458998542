#include "ops/gpu/matmul_precision.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/capture_epoch.h"

namespace sluice {
namespace {

GpuMatMulPrecision FromEnvironment() {
  const char* env = std::getenv("SLUICE_GPU_MATMUL");
  if (env == nullptr || *env == '\0') return GpuMatMulPrecision::kFloat32;
  absl::StatusOr<GpuMatMulPrecision> p = ParseGpuMatMulPrecision(env);
  if (!p.ok()) {
    std::fprintf(stderr, "sluice: ignoring SLUICE_GPU_MATMUL: %s; using fp32\n",
                 std::string(p.status().message()).c_str());
    return GpuMatMulPrecision::kFloat32;
  }
  return *p;
}

// Initialized from the environment on first use (thread-safe static).
std::atomic<GpuMatMulPrecision>& Setting() {
  static std::atomic<GpuMatMulPrecision> setting(FromEnvironment());
  return setting;
}

}  // namespace

void SetGpuMatMulPrecision(GpuMatMulPrecision precision) {
  if (Setting().exchange(precision, std::memory_order_relaxed) != precision) {
    AdvanceCaptureEpoch();  // recorded MatMuls chose their compute type already
  }
}

GpuMatMulPrecision GetGpuMatMulPrecision() { return Setting().load(std::memory_order_relaxed); }

absl::StatusOr<GpuMatMulPrecision> ParseGpuMatMulPrecision(absl::string_view name) {
  if (name == "fp32") return GpuMatMulPrecision::kFloat32;
  if (name == "tf32") return GpuMatMulPrecision::kTF32;
  if (name == "bf16") return GpuMatMulPrecision::kBF16;
  return absl::InvalidArgumentError(absl::StrCat("unknown GPU MatMul precision '", name,
                                                 "' (expected fp32, tf32 or bf16)"));
}

absl::string_view GpuMatMulPrecisionName(GpuMatMulPrecision precision) {
  switch (precision) {
    case GpuMatMulPrecision::kFloat32:
      return "fp32";
    case GpuMatMulPrecision::kTF32:
      return "tf32";
    case GpuMatMulPrecision::kBF16:
      return "bf16";
  }
  return "fp32";
}

}  // namespace sluice
