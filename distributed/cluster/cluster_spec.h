// ClusterSpec: the jobs of a cluster and the "host:port" address of each of
// their tasks (task index = position in the job's list), plus TaskConfig, one
// process's place in it, as a launcher or Kubernetes hands it over in the
// SLUICE_CONFIG environment variable.
//
//   ASSIGN_OR_RETURN(ClusterSpec cluster,
//                    ClusterSpec::FromFlag("ps=h0:2222;worker=h1:2222,h2:2222"));
//   cluster.jobs();                         // {"ps", "worker"}
//   cluster.num_tasks("worker");            // 2
//   ASSIGN_OR_RETURN(std::string addr, cluster.Address("worker", 1));  // "h2:2222"
//   cluster.AllTasks();  // {"/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0", ...}
//
//   // In a task's main (flags --cluster, --job, --task; SLUICE_CONFIG when --cluster is empty):
//   ASSIGN_OR_RETURN(TaskConfig me, TaskConfigFromFlags(cluster_flag, job_flag, task_flag));
//
// Sources: FromJobs (C++), FromJson ({"ps": ["h:p"], "worker": [...]}),
// FromTextProto (TensorFlow's ClusterDef text format), FromFlag
// ("ps=h:p;worker=h:p,h:p") and FromFile (JSON or text proto, detected).
// Every one validates the whole spec (see FromJobs), so a ClusterSpec that
// exists is valid.
//
// Job order: FromJobs, FromFlag and FromTextProto keep the order given; JSON
// keeps the order in which the job keys are written in the text (the keys are
// scanned beside protobuf's parser, whose Struct forgets the order).
//
// Thread-safety: ClusterSpec is an immutable value; const methods may be
// called from any number of threads. The env-reading functions read the
// process environment (getenv) and must not race with setenv.
// Ownership: plain values, no borrowed pointers.
#ifndef SLUICE_DISTRIBUTED_CLUSTER_CLUSTER_SPEC_H_
#define SLUICE_DISTRIBUTED_CLUSTER_CLUSTER_SPEC_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {

class ClusterSpec {
 public:
  using JobList = std::vector<std::pair<std::string, std::vector<std::string>>>;

  // The empty cluster (no jobs). Only FromX produce non-empty ones.
  ClusterSpec() = default;

  // Validates and builds. Rules: at least one job; job names match
  // [a-z][a-z0-9_-]* and appear once; every job has at least one task; every
  // address is "host:port" with a port in 1..65535 (IPv6 as "[::1]:80"); no
  // address appears twice in the whole cluster. InvalidArgument naming the
  // job, the task index and the offending text otherwise.
  static absl::StatusOr<ClusterSpec> FromJobs(JobList jobs);

  // {"ps": ["h:p"], "worker": ["h:p", "h:p"]}. InvalidArgument for malformed
  // JSON (with protobuf's parser message) or values that are not lists of
  // strings, then FromJobs's checks.
  static absl::StatusOr<ClusterSpec> FromJson(absl::string_view json);

  // TensorFlow's ClusterDef in text format:
  //   job { name: "ps" tasks { key: 0 value: "h:p" } }
  // Task keys of a job must be exactly 0..N-1 (in any order).
  static absl::StatusOr<ClusterSpec> FromTextProto(absl::string_view text);

  // "ps=h:p;worker=h:p,h:p". Spaces around items are ignored, as is a
  // trailing ';'.
  static absl::StatusOr<ClusterSpec> FromFlag(absl::string_view spec);

  // A file holding JSON (first non-blank character '{') or a ClusterDef text
  // proto. NotFound when it cannot be read; every error names the file.
  static absl::StatusOr<ClusterSpec> FromFile(const std::string& path);

  // Job names in the order described above.
  const std::vector<std::string>& jobs() const { return job_names_; }

  // Tasks of `job`; 0 for an unknown job.
  int num_tasks(absl::string_view job) const;

  // "host:port" of task `task` of `job`. NotFound for an unknown job (the
  // message lists the jobs), InvalidArgument for an index out of range (the
  // message gives the range).
  absl::StatusOr<std::string> Address(absl::string_view job, int task) const;

  // OK when `job` has a task `task`; else the errors of Address.
  absl::Status ValidateTask(absl::string_view job, int task) const;

  // Every task's name, jobs in order, tasks by index:
  // "/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0", ...
  std::vector<std::string> AllTasks() const;

  // {"ps": ["h:p"], "worker": ["h:p", "h:p"]}, jobs in order; FromJson
  // reads it back to an equal spec.
  std::string ToJson() const;

  // The jobs with their addresses, in order.
  const JobList& job_list() const { return jobs_; }

  friend bool operator==(const ClusterSpec& a, const ClusterSpec& b) { return a.jobs_ == b.jobs_; }

 private:
  const std::vector<std::string>* FindJob(absl::string_view job) const;

  JobList jobs_;
  std::vector<std::string> job_names_;
};

// "/job:J/replica:0/task:T".
std::string TaskName(absl::string_view job, int task);

// `text` as a JSON string literal, quotes included (also a valid YAML
// double-quoted scalar): "a\"b" for a"b; control characters as \uXXXX.
std::string JsonQuote(absl::string_view text);

// This process's place: the cluster plus its own job and index.
struct TaskConfig {
  ClusterSpec cluster;
  std::string job;
  int task = 0;
};

// TF_CONFIG-style JSON:
//   {"cluster": {"ps": [...], "worker": [...]}, "task": {"type": "worker", "index": 1}}
// When "index" is absent it comes from the numeric suffix of the POD_NAME
// environment variable (a Kubernetes StatefulSet pod "worker-3" -> 3);
// InvalidArgument when POD_NAME is unset or has no such suffix. The task must
// exist in the cluster (ValidateTask's errors).
absl::StatusOr<TaskConfig> ParseTaskConfig(absl::string_view json);

// The JSON ParseTaskConfig reads, with "index" always written.
std::string TaskConfigToJson(const TaskConfig& config);

// ParseTaskConfig of the SLUICE_CONFIG environment variable; NotFound when it
// is unset, other errors prefixed "SLUICE_CONFIG: ".
absl::StatusOr<TaskConfig> TaskConfigFromEnv();

// For mains with flags --cluster, --job, --task. `cluster` is JSON text
// (starts with '{'), a file path (when such a file exists), or an inline
// "ps=h:p;worker=..." spec (contains '='); `job` is then required. When
// `cluster` is empty, SLUICE_CONFIG is used (TaskConfigFromEnv); a non-empty
// `job` then overrides its job and task. The task must exist in the cluster.
absl::StatusOr<TaskConfig> TaskConfigFromFlags(const std::string& cluster, const std::string& job,
                                               int task);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_CLUSTER_CLUSTER_SPEC_H_
