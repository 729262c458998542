#include "runtime/resource_mgr.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

class Counter : public ResourceBase {
 public:
  explicit Counter(int start, int* destroyed = nullptr) : value(start), destroyed_(destroyed) {}
  ~Counter() override {
    if (destroyed_ != nullptr) ++*destroyed_;
  }
  std::string DebugString() const override { return "Counter"; }
  std::atomic<int> value;

 private:
  int* destroyed_;
};

class Other : public ResourceBase {
 public:
  std::string DebugString() const override { return "Other"; }
};

std::function<absl::StatusOr<std::unique_ptr<Counter>>()> MakeCounter(int start, int* calls,
                                                                      int* destroyed = nullptr) {
  return [=]() -> absl::StatusOr<std::unique_ptr<Counter>> {
    ++*calls;
    return std::make_unique<Counter>(start, destroyed);
  };
}

TEST(ResourceMgrTest, LookupOrCreateCreatesOnce) {
  ResourceMgr rm;
  int calls = 0;
  absl::StatusOr<Counter*> a = rm.LookupOrCreate<Counter>("", "c", MakeCounter(5, &calls));
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<Counter*> b = rm.LookupOrCreate<Counter>("", "c", MakeCounter(7, &calls));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*a, *b);
  EXPECT_EQ((*b)->value, 5);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(rm.Find<Counter>("", "c"), *a);
  EXPECT_EQ(rm.Find<Counter>("other_container", "c"), nullptr);
  EXPECT_EQ(rm.Find<Other>("", "c"), nullptr);  // another type
  EXPECT_EQ(rm.Find<Counter>("", "missing"), nullptr);
}

TEST(ResourceMgrTest, AnotherTypeIsFailedPrecondition) {
  ResourceMgr rm;
  int calls = 0;
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("", "c", MakeCounter(0, &calls)).ok());
  absl::StatusOr<Other*> o = rm.LookupOrCreate<Other>(
      "", "c",
      []() -> absl::StatusOr<std::unique_ptr<Other>> { return std::make_unique<Other>(); });
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(o.status().message().find("'c'"), std::string::npos) << o.status();
  EXPECT_NE(o.status().message().find("Counter"), std::string::npos) << o.status();
}

TEST(ResourceMgrTest, CreateErrorIsReturnedAndNothingStored) {
  ResourceMgr rm;
  absl::StatusOr<Counter*> r =
      rm.LookupOrCreate<Counter>("", "c", []() -> absl::StatusOr<std::unique_ptr<Counter>> {
        return absl::InvalidArgumentError("bad shape");
      });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rm.Find<Counter>("", "c"), nullptr);
}

TEST(ResourceMgrTest, VarsAndResourcesHaveSeparateNames) {
  ResourceMgr rm;
  int calls = 0;
  ASSERT_TRUE(rm.LookupOrCreateVar("", "x", DT_FLOAT, TensorShape({2})).ok());
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("", "x", MakeCounter(1, &calls)).ok());
  EXPECT_NE(rm.FindVar("", "x"), nullptr);
  EXPECT_NE(rm.Find<Counter>("", "x"), nullptr);
}

TEST(ResourceMgrTest, ClearContainerDestroysOnlyThatContainer) {
  int calls = 0, destroyed = 0;  // before rm, which counts into them as it goes
  ResourceMgr rm;
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("a", "c", MakeCounter(1, &calls, &destroyed)).ok());
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("b", "c", MakeCounter(2, &calls, &destroyed)).ok());
  ASSERT_TRUE(rm.LookupOrCreateVar("a", "v", DT_FLOAT, TensorShape({})).ok());
  rm.ClearContainer("a");
  EXPECT_EQ(destroyed, 1);
  EXPECT_EQ(rm.Find<Counter>("a", "c"), nullptr);
  EXPECT_EQ(rm.FindVar("a", "v"), nullptr);
  ASSERT_NE(rm.Find<Counter>("b", "c"), nullptr);
  EXPECT_EQ(rm.Find<Counter>("b", "c")->value, 2);
}

TEST(ResourceMgrTest, ClearStepDestroysOnlyThatStepsResources) {
  int calls = 0, destroyed = 0;  // before rm, which counts into them as it goes
  ResourceMgr rm;
  rm.ClearStep(1);  // no step resources yet: nothing to do
  const std::string step1 = rm.UseStepContainer(1);
  const std::string step2 = rm.UseStepContainer(2);
  EXPECT_NE(step1, step2);
  EXPECT_EQ(step1, ResourceMgr::StepContainer(1));
  ASSERT_TRUE(rm.LookupOrCreate<Counter>(step1, "ta", MakeCounter(1, &calls, &destroyed)).ok());
  ASSERT_TRUE(rm.LookupOrCreate<Counter>(step2, "ta", MakeCounter(2, &calls, &destroyed)).ok());
  ASSERT_TRUE(rm.LookupOrCreate<Counter>("", "kept", MakeCounter(3, &calls, &destroyed)).ok());
  rm.ClearStep(1);
  EXPECT_EQ(destroyed, 1);
  EXPECT_EQ(rm.Find<Counter>(step1, "ta"), nullptr);
  EXPECT_NE(rm.Find<Counter>(step2, "ta"), nullptr);
  rm.ClearStep(1);  // again: nothing left
  rm.ClearStep(2);
  EXPECT_EQ(destroyed, 2);
  EXPECT_NE(rm.Find<Counter>("", "kept"), nullptr);
}

TEST(ResourceMgrTest, ConcurrentLookupOrCreateMakesOne) {
  ResourceMgr rm;
  std::atomic<int> calls{0};
  std::vector<Counter*> got(8, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      absl::StatusOr<Counter*> c = rm.LookupOrCreate<Counter>(
          "", "shared", [&]() -> absl::StatusOr<std::unique_ptr<Counter>> {
            ++calls;
            return std::make_unique<Counter>(0);
          });
      if (c.ok()) {
        got[t] = *c;
        ++(*c)->value;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(calls, 1);
  for (Counter* c : got) EXPECT_EQ(c, got[0]);
  EXPECT_EQ(got[0]->value, 8);
}

}  // namespace
}  // namespace sluice
