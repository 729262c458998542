// The GPU MatMul precision setting (plain C++: runs without a GPU). The test
// sets SLUICE_GPU_MATMUL=tf32 itself, before main, so that it holds however
// the binary is started (under bazel test, or alone on a machine without
// Bazel, where an `env` of the BUILD rule would not reach it).
#include "ops/gpu/matmul_precision.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace sluice {
namespace {

// Before any test reads the setting, which takes the environment once.
const bool kEnvironmentSet = setenv("SLUICE_GPU_MATMUL", "tf32", /*overwrite=*/1) == 0;

TEST(GpuMatMulPrecisionTest, StartsFromTheEnvironmentThenFollowsSet) {
  ASSERT_TRUE(kEnvironmentSet);
  EXPECT_EQ(GetGpuMatMulPrecision(), GpuMatMulPrecision::kTF32);
  SetGpuMatMulPrecision(GpuMatMulPrecision::kBF16);
  EXPECT_EQ(GetGpuMatMulPrecision(), GpuMatMulPrecision::kBF16);
  SetGpuMatMulPrecision(GpuMatMulPrecision::kFloat32);
  EXPECT_EQ(GetGpuMatMulPrecision(), GpuMatMulPrecision::kFloat32);
}

TEST(GpuMatMulPrecisionTest, ParsesTheThreeSpellings) {
  for (GpuMatMulPrecision p :
       {GpuMatMulPrecision::kFloat32, GpuMatMulPrecision::kTF32, GpuMatMulPrecision::kBF16}) {
    absl::StatusOr<GpuMatMulPrecision> parsed = ParseGpuMatMulPrecision(GpuMatMulPrecisionName(p));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, p);
  }
  EXPECT_EQ(GpuMatMulPrecisionName(GpuMatMulPrecision::kTF32), "tf32");
}

TEST(GpuMatMulPrecisionTest, RejectsOtherSpellings) {
  for (const char* bad : {"", "FP32", "fp16", "tf32 "}) {
    absl::StatusOr<GpuMatMulPrecision> parsed = ParseGpuMatMulPrecision(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(parsed.status().message()).find("fp32, tf32 or bf16"), std::string::npos)
        << parsed.status();
  }
}

}  // namespace
}  // namespace sluice
