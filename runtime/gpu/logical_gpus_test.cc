#include "runtime/gpu/logical_gpus.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(LogicalGpusTest, WithoutConfigurationEachGpuIsOneDevice) {
  LocalDevicesOptions options;
  options.gpu_memory_fraction = 0.5;
  absl::StatusOr<std::vector<LogicalGpu>> layout =
      LayOutLogicalGpus(3, options);
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ((*layout)[k].ordinal, k);
    EXPECT_EQ((*layout)[k].logical, 0);
    EXPECT_EQ((*layout)[k].memory_limit, 0);
    EXPECT_DOUBLE_EQ((*layout)[k].memory_fraction, 0.5);
  }
}

TEST(LogicalGpusTest, EachGpuIsCarvedInTensorFlowsOrder) {
  LocalDevicesOptions options;
  options.gpu_logical_memory_limits = {100 * kMiB, 200 * kMiB, 300 * kMiB};
  absl::StatusOr<std::vector<LogicalGpu>> layout =
      LayOutLogicalGpus(2, options);
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->size(), 6u);
  // GPU:0..2 from ordinal 0, GPU:3..5 from ordinal 1, each its own limit.
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ((*layout)[k].ordinal, k / 3) << k;
    EXPECT_EQ((*layout)[k].logical, k % 3) << k;
    EXPECT_EQ((*layout)[k].memory_limit, (k % 3 + 1) * 100 * kMiB) << k;
  }
}

TEST(LogicalGpusTest, MaxGpusCountsPhysicalGpus) {
  LocalDevicesOptions options;
  options.max_gpus = 1;
  options.gpu_logical_memory_limits = {kMiB, kMiB};
  absl::StatusOr<std::vector<LogicalGpu>> layout =
      LayOutLogicalGpus(8, options);
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->size(), 2u);
  EXPECT_EQ((*layout)[1].ordinal, 0);
  EXPECT_EQ((*layout)[1].logical, 1);
  EXPECT_TRUE(LayOutLogicalGpus(0, options)->empty());
}

TEST(LogicalGpusTest, UnsetLimitsShareTheGpusLimitOrFraction) {
  LocalDevicesOptions options;
  options.gpu_logical_memory_limits = {0, 0, 0, 0};
  options.gpu_memory_fraction = 0.8;
  absl::StatusOr<std::vector<LogicalGpu>> layout =
      LayOutLogicalGpus(1, options);
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->size(), 4u);
  for (const LogicalGpu &gpu : *layout) {
    EXPECT_EQ(gpu.memory_limit, 0);
    EXPECT_DOUBLE_EQ(gpu.memory_fraction, 0.2);
  }
  options.gpu_memory_limit = 1024 * kMiB;
  options.gpu_logical_memory_limits = {0, 512 * kMiB};
  layout = LayOutLogicalGpus(1, options);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ((*layout)[0].memory_limit, 512 * kMiB); // 1024 MiB / 2
  EXPECT_EQ((*layout)[1].memory_limit, 512 * kMiB); // its own
}

TEST(LogicalGpusTest, TheEnvironmentConfiguresWhatTheOptionsLeaveOpen) {
  LocalDevicesOptions options;
  absl::StatusOr<std::vector<LogicalGpu>> layout =
      LayOutLogicalGpus(1, options, "2");
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->size(), 2u);
  EXPECT_DOUBLE_EQ((*layout)[0].memory_fraction, 0.45);
  EXPECT_EQ((*layout)[1].logical, 1);

  layout = LayOutLogicalGpus(2, options, " 3:4096 ");
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->size(), 6u);
  for (const LogicalGpu &gpu : *layout)
    EXPECT_EQ(gpu.memory_limit, 4096 * kMiB);

  // The options win over the environment.
  options.gpu_logical_memory_limits = {kMiB};
  layout = LayOutLogicalGpus(1, options, "4");
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->size(), 1u);
}

TEST(LogicalGpusTest, BadConfigurationsAreRefusedByName) {
  LocalDevicesOptions options;
  for (const char *spec :
       {"0", "17", "x", "2:", "2:0", "2:-5", "2:1.5", "-1", "2:3:4"}) {
    absl::StatusOr<std::vector<LogicalGpu>> layout =
        LayOutLogicalGpus(1, options, spec);
    ASSERT_FALSE(layout.ok()) << spec;
    EXPECT_EQ(layout.status().code(), absl::StatusCode::kInvalidArgument)
        << spec;
    EXPECT_THAT(layout.status().message(), HasSubstr("SLUICE_LOGICAL_GPUS"))
        << spec;
  }
  options.gpu_logical_memory_limits = {kMiB, -1};
  EXPECT_THAT(LayOutLogicalGpus(1, options).status().message(),
              HasSubstr("gpu_logical_memory_limits[1] is negative"));
  options.gpu_logical_memory_limits.assign(17, kMiB);
  EXPECT_THAT(LayOutLogicalGpus(1, options).status().message(),
              HasSubstr("at most 16"));
  options.gpu_logical_memory_limits.clear();
  options.max_gpus = -2;
  EXPECT_THAT(LayOutLogicalGpus(1, options).status().message(),
              HasSubstr("max_gpus"));
  options.max_gpus = -1;
  options.gpu_memory_fraction = 1.5;
  EXPECT_THAT(LayOutLogicalGpus(1, options).status().message(),
              HasSubstr("gpu_memory_fraction"));
}

} // namespace
} // namespace sluice
