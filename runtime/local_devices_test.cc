#include "runtime/local_devices.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "gtest/gtest.h"
#include "runtime/cpu_share.h"
#include "runtime/thread_pool.h"

namespace sluice {
namespace {

int Hardware() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

TEST(CpuShareTest, TheShareAndWhetherTheMachineIsShared) {
  unsetenv("SLUICE_NUM_THREADS");
  EXPECT_EQ(HardwareThreads(), Hardware());
  EXPECT_EQ(ProcessCpuShare(), Hardware());
  EXPECT_FALSE(SharesTheMachine());
  setenv("SLUICE_NUM_THREADS", "1", 1);
  EXPECT_EQ(ProcessCpuShare(), 1);
  EXPECT_EQ(SharesTheMachine(), Hardware() > 1);
  setenv("SLUICE_NUM_THREADS", "1000000", 1);  // more than the machine: not shared
  EXPECT_FALSE(SharesTheMachine());
  unsetenv("SLUICE_NUM_THREADS");
}

class LocalDevicesTest : public testing::Test {
 protected:
  void TearDown() override { unsetenv("SLUICE_NUM_THREADS"); }
};

TEST_F(LocalDevicesTest, CpuZeroHasOneThreadPerCoreByDefault) {
  unsetenv("SLUICE_NUM_THREADS");
  EXPECT_EQ(ProcessCpuShare(), Hardware());
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = CreateLocalDevices({});
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0]->thread_pool()->num_threads(), Hardware());
}

// A launcher starting several tasks on one machine tells each its share.
TEST_F(LocalDevicesTest, TheEnvironmentsShareSizesTheDefaultPools) {
  setenv("SLUICE_NUM_THREADS", "3", 1);
  EXPECT_EQ(ProcessCpuShare(), 3);
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = CreateLocalDevices({});
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_EQ((*devices)[0]->thread_pool()->num_threads(), 3);
  // Virtual CPUs divide the share; an explicit count wins over it.
  LocalDevicesOptions two;
  two.num_virtual_cpus = 2;
  devices = CreateLocalDevices(two);
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 3u);
  for (const auto& d : *devices) EXPECT_EQ(d->thread_pool()->num_threads(), 1);
  LocalDevicesOptions explicit_threads;
  explicit_threads.cpu_threads = 5;
  devices = CreateLocalDevices(explicit_threads);
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_EQ((*devices)[0]->thread_pool()->num_threads(), 5);
}

TEST_F(LocalDevicesTest, ABadShareIsIgnored) {
  for (const char* bad : {"0", "-2", "many", ""}) {
    setenv("SLUICE_NUM_THREADS", bad, 1);
    EXPECT_EQ(ProcessCpuShare(), Hardware()) << "'" << bad << "'";
  }
}

TEST_F(LocalDevicesTest, NegativeCountsAreInvalid) {
  LocalDevicesOptions bad;
  bad.num_virtual_cpus = -1;
  EXPECT_EQ(CreateLocalDevices(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
