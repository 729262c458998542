#include "base/status_macros.h"

#include <memory>
#include <string>

#include "base/source_location.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

absl::StatusOr<std::unique_ptr<int>> MakeInt(int value) {
  if (value < 0) return absl::InvalidArgumentError("negative");
  return std::make_unique<int>(value);
}

absl::Status Check(int value, int* calls) {
  ++*calls;
  if (value == 0) return absl::NotFoundError("zero");
  return absl::OkStatus();
}

absl::Status Chain(int value, int* calls) {
  RETURN_IF_ERROR(Check(value, calls));
  RETURN_IF_ERROR(Check(value, calls));
  return absl::OkStatus();
}

absl::StatusOr<int> Doubled(int value) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> p, MakeInt(value));  // move-only
  ASSIGN_OR_RETURN(auto q, MakeInt(value));                 // twice on one scope
  return *p + *q;
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtTheFirstError) {
  int calls = 0;
  EXPECT_TRUE(Chain(1, &calls).ok());
  EXPECT_EQ(calls, 2);
  calls = 0;
  EXPECT_EQ(Chain(0, &calls).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(calls, 1);
}

TEST(StatusMacrosTest, AssignOrReturnMovesTheValueOrReturnsTheError) {
  absl::StatusOr<int> ok = Doubled(21);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, 42);
  absl::StatusOr<int> bad = Doubled(-1);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "negative");
}

TEST(StatusMacrosTest, AddContextPrefixesTheMessageAndKeepsTheCode) {
  const absl::Status s = AddContext(absl::UnavailableError("peer gone"), "step 7");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "step 7: peer gone");
  EXPECT_TRUE(AddContext(absl::OkStatus(), "anything").ok());
}

TEST(SourceLocationTest, NamesTheCallersLine) {
  const std::source_location here = std::source_location::current();
  EXPECT_EQ(here.line(), static_cast<uint_least32_t>(__LINE__ - 1));
  EXPECT_NE(std::string(here.file_name()).find("status_macros_test.cc"), std::string::npos);
}

}  // namespace
}  // namespace sluice
