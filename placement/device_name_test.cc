#include "placement/device_name.h"

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(DeviceNameTest, ParsesFullPartialAndLegacy) {
  absl::StatusOr<DeviceName> full = DeviceName::Parse("/job:worker/replica:0/task:3/device:GPU:1");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(*full->job, "worker");
  EXPECT_EQ(*full->task, 3);
  EXPECT_EQ(*full->type, "GPU");
  EXPECT_EQ(*full->id, 1);
  EXPECT_TRUE(full->IsFullySpecified());
  EXPECT_EQ(full->ToString(), "/job:worker/replica:0/task:3/device:GPU:1");
  absl::StatusOr<DeviceName> legacy = DeviceName::Parse("/cpu:0");
  ASSERT_TRUE(legacy.ok());
  EXPECT_EQ(*legacy->type, "CPU");
  EXPECT_TRUE(DeviceName::Parse("").ok());
  EXPECT_FALSE(DeviceName::Parse("/device:GPU:*")->id.has_value());
}

TEST(DeviceNameTest, MatchesAndCompatibility) {
  DeviceName full = *DeviceName::Parse("/job:localhost/replica:0/task:0/device:CPU:1");
  EXPECT_TRUE(DeviceName::Parse("/device:CPU:1")->Matches(full));
  EXPECT_FALSE(DeviceName::Parse("/device:CPU:0")->Matches(full));
  EXPECT_TRUE(DeviceName::Parse("")->Matches(full));
  EXPECT_FALSE(DeviceName::Parse("/job:ps")->Matches(full));
  EXPECT_TRUE(DeviceName::Parse("/job:ps")->IsCompatibleWith(*DeviceName::Parse("/device:GPU:0")));
  EXPECT_FALSE(DeviceName::Parse("/device:GPU:0")->IsCompatibleWith(*DeviceName::Parse("/device:CPU:0")));
}

TEST(DeviceNameTest, MalformedNamesSayWhichPart) {
  for (const char* bad : {"device:CPU:0", "/job:", "/task:x", "/device:CPU", "/replica:-1",
                          "/foo:1", "/job:a//task:0"}) {
    absl::StatusOr<DeviceName> d = DeviceName::Parse(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(d.status().message().find(bad), std::string::npos) << d.status();
  }
}

}  // namespace
}  // namespace sluice
