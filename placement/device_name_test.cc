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

TEST(DeviceNameTest, MergeFromFillsUnsetParts) {
  DeviceName a = *DeviceName::Parse("/job:ps/task:1");
  ASSERT_TRUE(a.MergeFrom(*DeviceName::Parse("/device:GPU:2")).ok());
  EXPECT_EQ(a.ToString(), "/job:ps/task:1/device:GPU:2");
  EXPECT_FALSE(a.IsFullySpecified());  // no replica yet
  ASSERT_TRUE(a.MergeFrom(*DeviceName::Parse("/job:ps/replica:0/task:1")).ok());
  EXPECT_TRUE(a.IsFullySpecified());
  EXPECT_EQ(a.ToString(), "/job:ps/replica:0/task:1/device:GPU:2");
  // Parts set on both sides that agree, and an empty name, change nothing.
  ASSERT_TRUE(a.MergeFrom(*DeviceName::Parse("/job:ps/device:GPU:2")).ok());
  ASSERT_TRUE(a.MergeFrom(*DeviceName::Parse("")).ok());
  EXPECT_EQ(a.ToString(), "/job:ps/replica:0/task:1/device:GPU:2");
  // A wildcard id takes the other side's id; the legacy form merges too.
  DeviceName any_gpu = *DeviceName::Parse("/device:GPU:*");
  ASSERT_TRUE(any_gpu.MergeFrom(*DeviceName::Parse("/gpu:3")).ok());
  EXPECT_EQ(any_gpu.ToString(), "/device:GPU:3");
  // Merging into an empty request copies the other.
  DeviceName empty;
  ASSERT_TRUE(empty.MergeFrom(*DeviceName::Parse("/job:w/replica:2/task:0/device:CPU:1")).ok());
  EXPECT_EQ(empty.ToString(), "/job:w/replica:2/task:0/device:CPU:1");
}

TEST(DeviceNameTest, MergeFromConflictNamesBothAndChangesNothing) {
  struct Case {
    const char* a;
    const char* b;
  };
  for (const Case& c :
       {Case{"/job:ps/device:CPU:0", "/job:worker"}, Case{"/replica:0", "/replica:1"},
        Case{"/task:0/cpu:0", "/task:2"}, Case{"/device:GPU:0", "/device:CPU:0"},
        Case{"/device:GPU:0", "/device:GPU:1"}}) {
    DeviceName a = *DeviceName::Parse(c.a);
    const std::string before = a.ToString();
    const std::string other = DeviceName::Parse(c.b)->ToString();
    absl::Status s = a.MergeFrom(*DeviceName::Parse(c.b));
    ASSERT_FALSE(s.ok()) << c.a << " + " << c.b;
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("'" + before + "'"), std::string::npos) << s;
    EXPECT_NE(s.message().find("'" + other + "'"), std::string::npos) << s;
    EXPECT_EQ(a.ToString(), before) << "a failed merge must leave the name as it was";
  }
}

}  // namespace
}  // namespace sluice
