#include "training/sweep_report.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(SweepReportTest, OneJsonLineWithStepFirstAndSortedMetrics) {
  EXPECT_EQ(FormatSweepReport(200, {{"loss", 0.25}, {"accuracy", 0.5}}),
            "SLUICE_SWEEP {\"step\": 200, \"accuracy\": 0.5, \"loss\": 0.25}");
}

TEST(SweepReportTest, NoMetrics) {
  EXPECT_EQ(FormatSweepReport(0, {}), "SLUICE_SWEEP {\"step\": 0}");
}

TEST(SweepReportTest, NumbersReadBackExactly) {
  double v = 0.1 + 0.2;  // needs 17 digits
  std::string line = FormatSweepReport(1, {{"x", v}});
  std::string num = line.substr(line.find("\"x\": ") + 5);
  num.pop_back();  // '}'
  EXPECT_EQ(std::strtod(num.c_str(), nullptr), v);
  EXPECT_EQ(FormatSweepReport(1, {{"x", 1e-7}}), "SLUICE_SWEEP {\"step\": 1, \"x\": 1e-07}");
}

TEST(SweepReportTest, NonFiniteIsNullAndNamesAreEscaped) {
  EXPECT_EQ(FormatSweepReport(3, {{"a\"b\\c\n", std::nan("")},
                                  {"inf", std::numeric_limits<double>::infinity()}}),
            "SLUICE_SWEEP {\"step\": 3, \"a\\\"b\\\\c\\u000a\": null, \"inf\": null}");
}

TEST(SweepReportTest, AMetricNamedStepIsLeftOut) {
  EXPECT_EQ(FormatSweepReport(5, {{"step", 9}, {"loss", 1}}),
            "SLUICE_SWEEP {\"step\": 5, \"loss\": 1}");
}

TEST(SweepReportTest, PrintsTheLineToStdoutOnlyUnderASweep) {
  setenv("SLUICE_SWEEP_DIR", "/out/trial_000", 1);
  testing::internal::CaptureStdout();
  SweepReport(7, {{"loss", 2}});
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "SLUICE_SWEEP {\"step\": 7, \"loss\": 2}\n");
  unsetenv("SLUICE_SWEEP_DIR");
  testing::internal::CaptureStdout();
  SweepReport(8, {{"loss", 1}});
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
}

TEST(SweepReportTest, TrialDirComesFromTheSweepsEnvironment) {
  unsetenv("SLUICE_SWEEP_DIR");
  EXPECT_EQ(SweepTrialDir(), "");
  setenv("SLUICE_SWEEP_DIR", "/out/trial_004", 1);
  EXPECT_EQ(SweepTrialDir(), "/out/trial_004");
  unsetenv("SLUICE_SWEEP_DIR");
}

}  // namespace
}  // namespace sluice
