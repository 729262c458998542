// PrintV2 to a file, stderr and stdout with its end; Print's pass-through,
// message, layout and first_n; Print's gradient; the errors.
#include "ops/io/print_ops.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/strings/string_format_ops.h"
#include "ops/testutil/math_test_util.h"
#include "runtime/atomic_file.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::GradError;
using testing_util::Placeholder;
using testing_util::TryEval;

absl::Status RunTarget(const Scope& s, Node* target) {
  if (target == nullptr) return s.status();
  Node* const deps[] = {target};
  return TryEval(s, {}, ops::Const(s.WithControlDependencies(deps), 0)).status();
}

TEST(PrintV2Test, WritesLinesWhereAsked) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/print_v2_test.log";
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output line = ops::StringFormat(
      s, {ops::Const(s, 3), ops::Const(s, Tensor::FromVector<float>({0.5f, 0.25f}))},
      {.template_ = "step {} loss {}", .placeholder = "{}"});
  Node* to_file = ops::PrintV2(s, line, {.output_stream = "file://" + path});
  ASSERT_TRUE(RunTarget(s, to_file).ok());
  ASSERT_TRUE(RunTarget(s, to_file).ok());
  absl::StatusOr<std::string> text = ReadFileToString(path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "step 3 loss [0.5 0.25]\nstep 3 loss [0.5 0.25]\n");

  testing::internal::CaptureStderr();
  ASSERT_TRUE(RunTarget(s, ops::PrintV2(s, line, {.end = "|"})).ok());
  ASSERT_TRUE(RunTarget(s, ops::PrintV2(s.WithOpName("warn"), line,
                                        {.output_stream = "log(warning)"}))
                  .ok());
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "step 3 loss [0.5 0.25]|WARNING warn: step 3 loss [0.5 0.25]\n");
  testing::internal::CaptureStdout();
  ASSERT_TRUE(RunTarget(s, ops::PrintV2(s, line, {.output_stream = "stdout"})).ok());
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "step 3 loss [0.5 0.25]\n");
}

TEST(PrintV2Test, Errors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::Status st = RunTarget(s, ops::PrintV2(s, ops::Const(s, std::string("x")),
                                              {.output_stream = "stdlog"}));
  EXPECT_THAT(std::string(st.message()), HasSubstr("Unknown output stream: stdlog"));
  Scope s2 = Scope::NewRootScope(BuiltinOps());
  Output fed = Placeholder(s2, DT_STRING);
  Node* p = ops::PrintV2(s2, fed);
  Node* const deps[] = {p};
  absl::StatusOr<Tensor> r = TryEval(s2, {{fed, Tensor::FromVector<std::string>({"a", "b"})}},
                                     ops::Const(s2.WithControlDependencies(deps), 0));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Input is expected to be scalar"));
  // A directory is not a file to append to.
  const char* tmp = std::getenv("TEST_TMPDIR");
  Scope s3 = Scope::NewRootScope(BuiltinOps());
  st = RunTarget(s3, ops::PrintV2(s3, ops::Const(s3, std::string("x")),
                                  {.output_stream = std::string("file://") +
                                                    (tmp != nullptr ? tmp : "/tmp")}));
  EXPECT_FALSE(st.ok());
}

TEST(PrintTest, PassesItsInputThroughAndPrintsTheFirstN) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Tensor::FromVector<float>({1, 2}));
  Output y = ops::Print(
      s, x, {ops::Const(s, Tensor::FromVector<int32_t>({0, 1, 2, 3, 4, 5}, TensorShape({2, 3}))),
             ops::Const(s, std::string("a\nb"))},
      {.message = "values: ", .first_n = 1, .summarize = 3});
  testing::internal::CaptureStderr();
  ExpectTensor<float>(Eval(s, {}, y), TensorShape({2}), {1, 2});
  ExpectTensor<float>(Eval(s, {}, y), TensorShape({2}), {1, 2});
  // Each Eval builds a new session (a new kernel): one line each.
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "values: [[0 1 2]...][a\\nb]\nvalues: [[0 1 2]...][a\\nb]\n");
}

TEST(PrintTest, FirstNCountsTheKernelsRuns) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output y = ops::Print(s, ops::Const(s, 1.0f), {ops::Const(s, 7)},
                        {.message = "n=", .first_n = 2});
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(session.ok()) << session.status();
  testing::internal::CaptureStderr();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE((*session)->Run({}, {y.name()}, {}).ok());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "n=[7]\nn=[7]\n");
}

TEST(PrintTest, GradientPassesThrough) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE, TensorShape({3}));
  Output y = ops::Print(s, x, {x}, {.first_n = 0});
  EXPECT_LT(GradError(s, {{x, Tensor::FromVector<double>({1, -2, 3})}}, y), 1e-8);
}

TEST(TimestampTest, IsNowInSeconds) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const double before = absl::ToUnixMicros(absl::Now()) / 1e6;
  Tensor t = Eval(s, {}, ops::Timestamp(s));
  const double after = absl::ToUnixMicros(absl::Now()) / 1e6;
  ASSERT_EQ(t.dtype(), DT_DOUBLE);
  EXPECT_GE(t.flat<double>()[0], before);
  EXPECT_LE(t.flat<double>()[0], after);
}

}  // namespace
}  // namespace sluice
