#include "distributed/cluster/cluster_spec.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Sets (or, with nullptr, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::string old_;
  bool had_ = false;
};

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/cluster_spec_test_", name);
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

void ExpectInvalid(const absl::StatusOr<ClusterSpec>& spec, const std::string& substr) {
  ASSERT_FALSE(spec.ok()) << "expected an error containing: " << substr;
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << spec.status();
  EXPECT_THAT(std::string(spec.status().message()), HasSubstr(substr));
}

TEST(ClusterSpecTest, FromJobsKeepsOrderAndAnswersQueries) {
  auto spec = ClusterSpec::FromJobs({{"worker", {"w0:1", "w1:1"}}, {"ps", {"p0:1"}}});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->jobs(), ElementsAre("worker", "ps"));
  EXPECT_EQ(spec->num_tasks("worker"), 2);
  EXPECT_EQ(spec->num_tasks("ps"), 1);
  EXPECT_EQ(spec->num_tasks("chief"), 0);
  EXPECT_EQ(*spec->Address("worker", 1), "w1:1");
  EXPECT_TRUE(spec->ValidateTask("ps", 0).ok());
  EXPECT_THAT(spec->AllTasks(),
              ElementsAre("/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1",
                          "/job:ps/replica:0/task:0"));
  EXPECT_EQ(spec->ToJson(), R"({"worker": ["w0:1", "w1:1"], "ps": ["p0:1"]})");
  EXPECT_EQ(TaskName("ps", 3), "/job:ps/replica:0/task:3");
}

TEST(ClusterSpecTest, UnknownJobAndIndexOutOfRange) {
  auto spec = ClusterSpec::FromFlag("ps=p:1;worker=w:1,w:2");
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto unknown = spec->Address("chief", 0);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("'chief'"));
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("ps, worker"));
  for (int bad : {2, -1}) {
    absl::Status status = spec->ValidateTask("worker", bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()), HasSubstr("[0, 2)"));
    EXPECT_THAT(std::string(status.message()), HasSubstr(absl::StrCat("task ", bad)));
  }
}

TEST(ClusterSpecTest, AddressesValidated) {
  EXPECT_TRUE(ClusterSpec::FromJobs({{"w", {"[::1]:80", "127.0.0.1:65535", "a-b.c_d:1"}}}).ok());
  ExpectInvalid(ClusterSpec::FromJobs({{"w", {"h:1", "h:0"}}}),
                "job 'w' task 1: bad address 'h:0'");
  ExpectInvalid(ClusterSpec::FromJobs({{"w", {"h:70000"}}}), "'h:70000': port must be in 1..65535");
  ExpectInvalid(ClusterSpec::FromJobs({{"w", {"h:x"}}}), "'h:x': port is not a number");
  ExpectInvalid(ClusterSpec::FromJobs({{"w", {"h"}}}), "'h': expected host:port");
  ExpectInvalid(ClusterSpec::FromJobs({{"w", {":80"}}}), "empty host");
  ExpectInvalid(ClusterSpec::FromJobs({{"w", {"h:"}}}), "empty port");
  ExpectInvalid(ClusterSpec::FromJobs({{"w", {"::1:80"}}}), "need brackets");
  ExpectInvalid(ClusterSpec::FromJobs({{"w", {"[::1:80"}}}), "closing ']'");
  ExpectInvalid(ClusterSpec::FromJobs({{"w", {"h h:80"}}}), "bad character");
}

TEST(ClusterSpecTest, JobsValidated) {
  ExpectInvalid(ClusterSpec::FromJobs({}), "no jobs");
  ExpectInvalid(ClusterSpec::FromJobs({{"ps", {}}}), "job 'ps' has no tasks");
  ExpectInvalid(ClusterSpec::FromJobs({{"Worker", {"h:1"}}}), "bad job name 'Worker'");
  ExpectInvalid(ClusterSpec::FromJobs({{"", {"h:1"}}}), "bad job name ''");
  ExpectInvalid(ClusterSpec::FromJobs({{"1x", {"h:1"}}}), "bad job name '1x'");
  ExpectInvalid(ClusterSpec::FromJobs({{"ps", {"h:1"}}, {"ps", {"h:2"}}}),
                "job 'ps' appears twice");
  ExpectInvalid(ClusterSpec::FromJobs({{"ps", {"h:1"}}, {"worker", {"h:2", "h:1"}}}),
                "job 'worker' task 1: address 'h:1' is already used by job 'ps' task 0");
}

TEST(ClusterSpecTest, FromJsonKeepsWrittenOrder) {
  auto spec =
      ClusterSpec::FromJson(R"( { "worker" : ["w:1", "w:2"], "ps": ["p:1"], "chief": ["c:1"] } )");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->jobs(), ElementsAre("worker", "ps", "chief"));
  EXPECT_EQ(*spec->Address("worker", 1), "w:2");
  auto again = ClusterSpec::FromJson(spec->ToJson());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(*again == *spec);
}

TEST(ClusterSpecTest, FromJsonErrors) {
  ExpectInvalid(ClusterSpec::FromJson(R"({"ps": ["p:1"],)"), "malformed JSON");
  ExpectInvalid(ClusterSpec::FromJson("not json"), "malformed JSON");
  ExpectInvalid(ClusterSpec::FromJson(R"({"ps": "p:1"})"), "job 'ps': expected a list");
  ExpectInvalid(ClusterSpec::FromJson(R"({"ps": ["p:1", 3]})"), "job 'ps' task 1: expected");
  ExpectInvalid(ClusterSpec::FromJson(R"({"ps": []})"), "job 'ps' has no tasks");
  ExpectInvalid(ClusterSpec::FromJson(R"({})"), "no jobs");
}

TEST(ClusterSpecTest, FromTextProto) {
  auto spec = ClusterSpec::FromTextProto(R"(
    job { name: "ps" tasks { key: 0 value: "p:1" } }
    job { name: "worker" tasks { key: 1 value: "w:2" } tasks { key: 0 value: "w:1" } }
  )");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->jobs(), ElementsAre("ps", "worker"));
  EXPECT_EQ(*spec->Address("worker", 0), "w:1");
  EXPECT_EQ(*spec->Address("worker", 1), "w:2");
  ExpectInvalid(ClusterSpec::FromTextProto(R"(job { name: "w" tasks { key: 2 value: "w:1" } })"),
                "job 'w': task keys must be 0..0, got 2");
  ExpectInvalid(ClusterSpec::FromTextProto("job { nam: 1 }"), "malformed ClusterDef text: line 1");
  ExpectInvalid(ClusterSpec::FromTextProto(R"(job { name: "w" })"), "job 'w' has no tasks");
}

TEST(ClusterSpecTest, FromFlag) {
  auto spec = ClusterSpec::FromFlag(" ps = p:1 ; worker=w:1, w:2; ");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->jobs(), ElementsAre("ps", "worker"));
  EXPECT_EQ(*spec->Address("worker", 1), "w:2");
  ExpectInvalid(ClusterSpec::FromFlag("ps"), "cluster item 'ps' is not JOB=HOST:PORT");
  ExpectInvalid(ClusterSpec::FromFlag("ps="), "job 'ps' has no tasks");
  ExpectInvalid(ClusterSpec::FromFlag("ps=p:1,p:1"), "already used");
  ExpectInvalid(ClusterSpec::FromFlag(""), "no jobs");
}

TEST(ClusterSpecTest, FromFileDetectsFormatAndNamesFile) {
  std::string json = TempPath("c.json");
  std::string text = TempPath("c.pbtxt");
  std::string bad = TempPath("bad.json");
  WriteFile(json, "\n  {\"ps\": [\"p:1\"], \"worker\": [\"w:1\"]}\n");
  WriteFile(text, "job { name: \"worker\" tasks { key: 0 value: \"w:1\" } }\n");
  WriteFile(bad, "{\"ps\": [\"p:0\"]}");
  auto a = ClusterSpec::FromFile(json);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->jobs(), ElementsAre("ps", "worker"));
  auto b = ClusterSpec::FromFile(text);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(b->jobs(), ElementsAre("worker"));
  auto c = ClusterSpec::FromFile(bad);
  ExpectInvalid(c, bad);
  ExpectInvalid(c, "port must be");
  auto missing = ClusterSpec::FromFile(TempPath("missing.json"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("missing.json"));
  for (const auto& path : {json, text, bad}) std::filesystem::remove(path);
}

TEST(TaskConfigTest, RoundTrip) {
  TaskConfig config;
  config.cluster = *ClusterSpec::FromFlag("worker=w:1,w:2;ps=p:1");
  config.job = "worker";
  config.task = 1;
  std::string json = TaskConfigToJson(config);
  EXPECT_EQ(json, R"({"cluster": {"worker": ["w:1", "w:2"], "ps": ["p:1"]}, )"
                  R"("task": {"type": "worker", "index": 1}})");
  auto parsed = ParseTaskConfig(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->cluster == config.cluster);
  EXPECT_THAT(parsed->cluster.jobs(), ElementsAre("worker", "ps"));
  EXPECT_EQ(parsed->job, "worker");
  EXPECT_EQ(parsed->task, 1);
}

TEST(TaskConfigTest, IndexFromPodName) {
  const char* json =
      R"({"task": {"type": "worker"}, "cluster": {"worker": ["a:1", "b:1", "c:1"]}})";
  {
    ScopedEnv pod("POD_NAME", "worker-2");
    auto parsed = ParseTaskConfig(json);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->task, 2);
  }
  {
    ScopedEnv pod("POD_NAME", "worker-7");
    auto parsed = ParseTaskConfig(json);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("task 7"));
  }
  {
    ScopedEnv pod("POD_NAME", "worker");
    EXPECT_THAT(std::string(ParseTaskConfig(json).status().message()),
                HasSubstr("POD_NAME 'worker' has no numeric suffix"));
  }
  {
    ScopedEnv pod("POD_NAME", nullptr);
    EXPECT_THAT(std::string(ParseTaskConfig(json).status().message()),
                HasSubstr("POD_NAME is not set"));
  }
}

TEST(TaskConfigTest, ParseErrors) {
  auto message = [](const char* json) {
    return std::string(ParseTaskConfig(json).status().message());
  };
  EXPECT_THAT(message("{"), HasSubstr("malformed JSON"));
  EXPECT_THAT(message(R"({"task": {"type": "w", "index": 0}})"), HasSubstr("\"cluster\" object"));
  EXPECT_THAT(message(R"({"cluster": {"w": ["h:1"]}})"), HasSubstr("\"task\" object"));
  EXPECT_THAT(message(R"({"cluster": {"w": ["h:1"]}, "task": {"index": 0}})"),
              HasSubstr("task.type"));
  EXPECT_THAT(message(R"({"cluster": {"w": ["h:1"]}, "task": {"type": "w", "index": 0.5}})"),
              HasSubstr("task.index must be a non-negative integer"));
  // Past int's range (found by fuzz/cluster_spec_fuzzer: the conversion was
  // undefined behavior before the check).
  EXPECT_THAT(message(R"({"cluster": {"w": ["h:1"]}, "task": {"type": "w", "index": 1e32}})"),
              HasSubstr("task.index must be a non-negative integer"));
  EXPECT_THAT(message(R"({"cluster": {"w": ["h:1"]}, "task": {"type": "w", "index": 2147483648}})"),
              HasSubstr("task.index must be a non-negative integer"));
  EXPECT_THAT(message(R"({"cluster": {"w": ["h:1"]}, "task": {"type": "ps", "index": 0}})"),
              HasSubstr("unknown job 'ps'"));
  EXPECT_THAT(message(R"({"cluster": {"w": ["h:0"]}, "task": {"type": "w", "index": 0}})"),
              HasSubstr("task config cluster: job 'w' task 0: bad address"));
}

TEST(TaskConfigTest, FromEnv) {
  {
    ScopedEnv config("SLUICE_CONFIG", nullptr);
    EXPECT_EQ(TaskConfigFromEnv().status().code(), absl::StatusCode::kNotFound);
    auto flags = TaskConfigFromFlags("", "", 0);
    EXPECT_EQ(flags.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(flags.status().message()), HasSubstr("SLUICE_CONFIG is not set"));
  }
  {
    ScopedEnv config("SLUICE_CONFIG", "{bad");
    auto parsed = TaskConfigFromEnv();
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("SLUICE_CONFIG: malformed"));
  }
  {
    ScopedEnv config("SLUICE_CONFIG",
                     R"({"cluster": {"ps": ["p:1"], "worker": ["w:1", "w:2"]},
                         "task": {"type": "worker", "index": 1}})");
    auto parsed = TaskConfigFromEnv();
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->job, "worker");
    EXPECT_EQ(parsed->task, 1);
    auto flags = TaskConfigFromFlags("", "", 0);  // env as is
    ASSERT_TRUE(flags.ok()) << flags.status();
    EXPECT_EQ(flags->task, 1);
    auto overridden = TaskConfigFromFlags("", "ps", 0);
    ASSERT_TRUE(overridden.ok()) << overridden.status();
    EXPECT_EQ(overridden->job, "ps");
    EXPECT_EQ(overridden->task, 0);
  }
}

TEST(TaskConfigTest, FromFlags) {
  ScopedEnv config("SLUICE_CONFIG", nullptr);
  auto inline_spec = TaskConfigFromFlags("ps=p:1;worker=w:1,w:2", "worker", 1);
  ASSERT_TRUE(inline_spec.ok()) << inline_spec.status();
  EXPECT_EQ(*inline_spec->cluster.Address(inline_spec->job, inline_spec->task), "w:2");

  auto json = TaskConfigFromFlags(R"({"ps": ["p:1"]})", "ps", 0);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_THAT(json->cluster.jobs(), ElementsAre("ps"));

  std::string path = TempPath("flags.pbtxt");
  WriteFile(path, "job { name: \"worker\" tasks { key: 0 value: \"w:1\" } }");
  auto file = TaskConfigFromFlags(path, "worker", 0);
  ASSERT_TRUE(file.ok()) << file.status();
  std::filesystem::remove(path);

  EXPECT_EQ(TaskConfigFromFlags("ps=p:1", "worker", 0).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(TaskConfigFromFlags("ps=p:1", "ps", 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(TaskConfigFromFlags("ps=p:1", "", 0).status().message()),
              HasSubstr("--job is required"));
  EXPECT_THAT(std::string(TaskConfigFromFlags("ps=p:0", "ps", 0).status().message()),
              HasSubstr("--cluster: job 'ps' task 0: bad address"));
  auto missing = TaskConfigFromFlags("/no/such/cluster.json", "ps", 0);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/no/such/cluster.json"));
}

TEST(JsonQuoteTest, Escapes) { EXPECT_EQ(JsonQuote("a\"b\\c\nd\x01"), R"("a\"b\\c\nd\u0001")"); }

}  // namespace
}  // namespace sluice
