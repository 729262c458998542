#include "distributed/cluster/cluster_spec.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <system_error>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "distributed/cluster/cluster.pb.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "graph/text_proto.h"

namespace sluice {
namespace {

bool IsJobName(absl::string_view name) {
  if (name.empty() || !absl::ascii_islower(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '_' && c != '-') return false;
  }
  return true;
}

// Empty when `address` is a valid "host:port", else why not.
std::string AddressProblem(absl::string_view address) {
  absl::string_view host;
  absl::string_view port;
  if (absl::StartsWith(address, "[")) {
    size_t close = address.find(']');
    if (close == absl::string_view::npos) return "IPv6 host has no closing ']'";
    host = address.substr(1, close - 1);
    absl::string_view rest = address.substr(close + 1);
    if (!absl::StartsWith(rest, ":")) return "expected ':port' after ']'";
    port = rest.substr(1);
    if (host.empty()) return "empty host";
    for (char c : host) {
      if (!absl::ascii_isxdigit(c) && c != ':' && c != '.' && c != '%') {
        return absl::StrCat("bad character '", std::string(1, c), "' in IPv6 host");
      }
    }
  } else {
    size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) return "expected host:port";
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.empty()) return "empty host";
    for (char c : host) {
      if (c == ':') return "IPv6 hosts need brackets, as in [::1]:80";
      if (!absl::ascii_isalnum(c) && c != '.' && c != '-' && c != '_') {
        return absl::StrCat("bad character '", std::string(1, c), "' in host");
      }
    }
  }
  if (port.empty()) return "empty port";
  if (port.size() > 5) return "port must be in 1..65535";
  int value = 0;
  for (char c : port) {
    if (!absl::ascii_isdigit(c)) return "port is not a number";
    value = value * 10 + (c - '0');
  }
  if (value < 1 || value > 65535) return "port must be in 1..65535";
  return "";
}

// Walks JSON text that protobuf's parser already accepted and collects, in
// text order, the keys of the object reached by following `path` from the
// top-level object. Returns false on text it does not understand (the caller
// then falls back to sorted order).
class KeyScanner {
 public:
  KeyScanner(absl::string_view text, std::vector<std::string> path)
      : text_(text), path_(std::move(path)) {}

  bool Scan(std::vector<std::string>* keys) {
    keys_ = keys;
    SkipSpace();
    if (!Value(0, true)) return false;
    SkipSpace();
    return pos_ == text_.size();
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool Eat(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }
  // A string literal; escapes decoded for ASCII, others kept as '?'.
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) return false;
      char e = text_[pos_++];
      switch (e) {
        case 'n':
          out->push_back('\n');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'u': {
          if (pos_ + 4 > text_.size()) return false;
          int code = 0;
          for (int k = 0; k < 4; ++k) {
            char h = text_[pos_++];
            if (!absl::ascii_isxdigit(h)) return false;
            code =
                code * 16 + (absl::ascii_isdigit(h) ? h - '0' : absl::ascii_tolower(h) - 'a' + 10);
          }
          out->push_back(code < 0x80 ? static_cast<char>(code) : '?');
          break;
        }
        default:
          out->push_back(e);
      }
    }
    return false;
  }
  bool Value(size_t depth, bool on_path) {
    SkipSpace();
    if (pos_ >= text_.size()) return false;
    char c = text_[pos_];
    if (c == '{') {
      ++pos_;
      if (Eat('}')) return true;
      do {
        std::string key;
        if (!String(&key) || !Eat(':')) return false;
        if (on_path && depth == path_.size()) keys_->push_back(key);
        bool next_on_path = on_path && depth < path_.size() && key == path_[depth];
        if (!Value(depth + 1, next_on_path)) return false;
      } while (Eat(','));
      return Eat('}');
    }
    if (c == '[') {
      ++pos_;
      if (Eat(']')) return true;
      do {
        if (!Value(depth + 1, false)) return false;
      } while (Eat(','));
      return Eat(']');
    }
    if (c == '"') {
      std::string ignored;
      return String(&ignored);
    }
    size_t start = pos_;
    while (pos_ < text_.size() && !absl::ascii_isspace(text_[pos_]) && text_[pos_] != ',' &&
           text_[pos_] != '}' && text_[pos_] != ']') {
      ++pos_;
    }
    return pos_ > start;
  }

  absl::string_view text_;
  std::vector<std::string> path_;
  std::vector<std::string>* keys_ = nullptr;
  size_t pos_ = 0;
};

absl::StatusOr<google::protobuf::Struct> ParseJsonObject(absl::string_view json) {
  google::protobuf::Struct parsed;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &parsed);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON: ", std::string(status.message())));
  }
  return parsed;
}

// Builds a cluster from the JSON object `cluster`, found in `text` by
// following `path` (for the job order).
absl::StatusOr<ClusterSpec> ClusterFromStruct(const google::protobuf::Struct& cluster,
                                              absl::string_view text,
                                              const std::vector<std::string>& path) {
  std::vector<std::string> order;
  std::vector<std::string> scanned;
  if (KeyScanner(text, path).Scan(&scanned)) {
    for (const std::string& key : scanned) {
      if (cluster.fields().contains(key) &&
          std::find(order.begin(), order.end(), key) == order.end()) {
        order.push_back(key);
      }
    }
  }
  std::vector<std::string> rest;  // keys the scanner missed: sorted, last
  for (const auto& [key, value] : cluster.fields()) {
    if (std::find(order.begin(), order.end(), key) == order.end()) rest.push_back(key);
  }
  std::sort(rest.begin(), rest.end());
  order.insert(order.end(), rest.begin(), rest.end());

  ClusterSpec::JobList jobs;
  for (const std::string& job : order) {
    const google::protobuf::Value& value = cluster.fields().at(job);
    if (value.kind_case() != google::protobuf::Value::kListValue) {
      return absl::InvalidArgumentError(
          absl::StrCat("job '", job, "': expected a list of \"host:port\" strings"));
    }
    std::vector<std::string> addresses;
    const auto& list = value.list_value().values();
    for (int i = 0; i < list.size(); ++i) {
      if (list[i].kind_case() != google::protobuf::Value::kStringValue) {
        return absl::InvalidArgumentError(
            absl::StrCat("job '", job, "' task ", i, ": expected a \"host:port\" string"));
      }
      addresses.push_back(list[i].string_value());
    }
    jobs.emplace_back(job, std::move(addresses));
  }
  return ClusterSpec::FromJobs(std::move(jobs));
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a directory"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read '", path, "'"));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The index of a StatefulSet pod from its name: "worker-3" -> 3.
absl::StatusOr<int> IndexFromPodName() {
  const char* pod = std::getenv("POD_NAME");
  if (pod == nullptr || *pod == '\0') {
    return absl::InvalidArgumentError(
        "task.index is missing and POD_NAME is not set to take it from");
  }
  absl::string_view name(pod);
  size_t dash = name.rfind('-');
  int index = -1;
  if (dash == absl::string_view::npos || !absl::SimpleAtoi(name.substr(dash + 1), &index) ||
      index < 0 || !absl::ascii_isdigit(name[dash + 1])) {
    return absl::InvalidArgumentError(absl::StrCat("task.index is missing and POD_NAME '", name,
                                                   "' has no numeric suffix like 'worker-3'"));
  }
  return index;
}

}  // namespace

std::string TaskName(absl::string_view job, int task) {
  return absl::StrCat("/job:", job, "/replica:0/task:", task);
}

std::string JsonQuote(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out += "\"";
  return out;
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromJobs(JobList jobs) {
  if (jobs.empty()) return absl::InvalidArgumentError("cluster has no jobs");
  absl::flat_hash_map<std::string, std::string> seen_address;  // address -> "job 'j' task t"
  absl::flat_hash_map<std::string, int> seen_job;
  for (const auto& [job, addresses] : jobs) {
    if (!IsJobName(job)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad job name '", job, "' (want [a-z][a-z0-9_-]*)"));
    }
    if (!seen_job.emplace(job, 0).second) {
      return absl::InvalidArgumentError(absl::StrCat("job '", job, "' appears twice"));
    }
    if (addresses.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("job '", job, "' has no tasks"));
    }
    for (int i = 0; i < static_cast<int>(addresses.size()); ++i) {
      const std::string& address = addresses[i];
      std::string where = absl::StrCat("job '", job, "' task ", i);
      std::string problem = AddressProblem(address);
      if (!problem.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": bad address '", address, "': ", problem));
      }
      auto [it, inserted] = seen_address.emplace(address, where);
      if (!inserted) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": address '", address, "' is already used by ", it->second));
      }
    }
  }
  ClusterSpec spec;
  spec.jobs_ = std::move(jobs);
  for (const auto& job : spec.jobs_) spec.job_names_.push_back(job.first);
  return spec;
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromJson(absl::string_view json) {
  ASSIGN_OR_RETURN(google::protobuf::Struct parsed, ParseJsonObject(json));
  return ClusterFromStruct(parsed, json, {});
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromTextProto(absl::string_view text) {
  tensorflow::ClusterDef def;
  if (absl::Status parsed = ParseTextProto(text, &def); !parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed ClusterDef text: ", parsed.message()));
  }
  JobList jobs;
  for (const tensorflow::JobDef& job : def.job()) {
    std::vector<std::string> addresses(job.tasks().size());
    for (const auto& [index, address] : job.tasks()) {
      if (index < 0 || index >= static_cast<int>(addresses.size())) {
        return absl::InvalidArgumentError(absl::StrCat("job '", job.name(),
                                                       "': task keys must be 0..",
                                                       addresses.size() - 1, ", got ", index));
      }
      addresses[index] = address;
    }
    jobs.emplace_back(job.name(), std::move(addresses));
  }
  return FromJobs(std::move(jobs));
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromFlag(absl::string_view spec) {
  JobList jobs;
  for (absl::string_view item : absl::StrSplit(spec, ';')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("cluster item '", item, "' is not JOB=HOST:PORT[,HOST:PORT...]"));
    }
    std::vector<std::string> addresses;
    absl::string_view list = absl::StripAsciiWhitespace(item.substr(eq + 1));
    if (!list.empty()) {
      for (absl::string_view address : absl::StrSplit(list, ',')) {
        addresses.emplace_back(absl::StripAsciiWhitespace(address));
      }
    }
    jobs.emplace_back(std::string(absl::StripAsciiWhitespace(item.substr(0, eq))),
                      std::move(addresses));
  }
  return FromJobs(std::move(jobs));
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return AddContext(text.status(), "cluster file");
  absl::string_view body = absl::StripLeadingAsciiWhitespace(*text);
  absl::StatusOr<ClusterSpec> spec =
      absl::StartsWith(body, "{") ? FromJson(*text) : FromTextProto(*text);
  if (!spec.ok()) return AddContext(spec.status(), absl::StrCat("cluster file '", path, "'"));
  return spec;
}

const std::vector<std::string>* ClusterSpec::FindJob(absl::string_view job) const {
  for (const auto& [name, addresses] : jobs_) {
    if (name == job) return &addresses;
  }
  return nullptr;
}

int ClusterSpec::num_tasks(absl::string_view job) const {
  const std::vector<std::string>* addresses = FindJob(job);
  return addresses == nullptr ? 0 : static_cast<int>(addresses->size());
}

absl::StatusOr<std::string> ClusterSpec::Address(absl::string_view job, int task) const {
  const std::vector<std::string>* addresses = FindJob(job);
  if (addresses == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "unknown job '", job, "' (the cluster has jobs: ", absl::StrJoin(job_names_, ", "), ")"));
  }
  if (task < 0 || task >= static_cast<int>(addresses->size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", task, " of job '", job, "' is out of range [0, ", addresses->size(), ")"));
  }
  return (*addresses)[task];
}

absl::Status ClusterSpec::ValidateTask(absl::string_view job, int task) const {
  return Address(job, task).status();
}

std::vector<std::string> ClusterSpec::AllTasks() const {
  std::vector<std::string> names;
  for (const auto& [job, addresses] : jobs_) {
    for (int i = 0; i < static_cast<int>(addresses.size()); ++i) names.push_back(TaskName(job, i));
  }
  return names;
}

std::string ClusterSpec::ToJson() const {
  std::string out = "{";
  for (size_t j = 0; j < jobs_.size(); ++j) {
    if (j > 0) out += ", ";
    absl::StrAppend(&out, JsonQuote(jobs_[j].first), ": [");
    const std::vector<std::string>& addresses = jobs_[j].second;
    for (size_t i = 0; i < addresses.size(); ++i) {
      absl::StrAppend(&out, i > 0 ? ", " : "", JsonQuote(addresses[i]));
    }
    out += "]";
  }
  out += "}";
  return out;
}

absl::StatusOr<TaskConfig> ParseTaskConfig(absl::string_view json) {
  ASSIGN_OR_RETURN(google::protobuf::Struct parsed, ParseJsonObject(json));
  auto cluster_it = parsed.fields().find("cluster");
  if (cluster_it == parsed.fields().end() ||
      cluster_it->second.kind_case() != google::protobuf::Value::kStructValue) {
    return absl::InvalidArgumentError("task config needs a \"cluster\" object");
  }
  auto task_it = parsed.fields().find("task");
  if (task_it == parsed.fields().end() ||
      task_it->second.kind_case() != google::protobuf::Value::kStructValue) {
    return absl::InvalidArgumentError(
        "task config needs a \"task\" object like {\"type\": \"worker\", \"index\": 0}");
  }
  TaskConfig config;
  absl::StatusOr<ClusterSpec> cluster =
      ClusterFromStruct(cluster_it->second.struct_value(), json, {"cluster"});
  if (!cluster.ok()) return AddContext(cluster.status(), "task config cluster");
  config.cluster = *std::move(cluster);

  const auto& task = task_it->second.struct_value().fields();
  auto type = task.find("type");
  if (type == task.end() || type->second.kind_case() != google::protobuf::Value::kStringValue) {
    return absl::InvalidArgumentError("task config: task.type must be a job name string");
  }
  config.job = type->second.string_value();
  auto index = task.find("index");
  if (index == task.end()) {
    ASSIGN_OR_RETURN(config.task, IndexFromPodName());
  } else {
    double value = index->second.kind_case() == google::protobuf::Value::kNumberValue
                       ? index->second.number_value()
                       : -1;
    // The range check comes first: converting a double past int's range is
    // undefined (found by fuzz/cluster_spec_fuzzer with "index": 1e32).
    if (!(value >= 0 && value <= std::numeric_limits<int>::max()) ||
        value != static_cast<double>(static_cast<int>(value))) {
      return absl::InvalidArgumentError("task config: task.index must be a non-negative integer");
    }
    config.task = static_cast<int>(value);
  }
  absl::Status valid = config.cluster.ValidateTask(config.job, config.task);
  if (!valid.ok()) return AddContext(valid, "task config");
  return config;
}

std::string TaskConfigToJson(const TaskConfig& config) {
  return absl::StrCat("{\"cluster\": ", config.cluster.ToJson(),
                      ", \"task\": {\"type\": ", JsonQuote(config.job),
                      ", \"index\": ", config.task, "}}");
}

absl::StatusOr<TaskConfig> TaskConfigFromEnv() {
  const char* value = std::getenv("SLUICE_CONFIG");
  if (value == nullptr || value[0] == '\0') {  // empty: unset (a test's way to clear it)
    return absl::NotFoundError(
        "SLUICE_CONFIG is not set (give --cluster/--job/--task, or start under //tools:launch)");
  }
  absl::StatusOr<TaskConfig> config = ParseTaskConfig(value);
  if (!config.ok()) return AddContext(config.status(), "SLUICE_CONFIG");
  return config;
}

absl::StatusOr<TaskConfig> TaskConfigFromFlags(const std::string& cluster, const std::string& job,
                                               int task) {
  TaskConfig config;
  if (cluster.empty()) {
    absl::StatusOr<TaskConfig> from_env = TaskConfigFromEnv();
    if (!from_env.ok()) {
      if (absl::IsNotFound(from_env.status())) {
        return absl::InvalidArgumentError("no --cluster given and SLUICE_CONFIG is not set");
      }
      return from_env.status();
    }
    config = *std::move(from_env);
    if (job.empty()) return config;
  } else {
    absl::string_view text = absl::StripAsciiWhitespace(cluster);
    std::error_code ec;
    absl::StatusOr<ClusterSpec> spec;
    if (absl::StartsWith(text, "{")) {
      spec = ClusterSpec::FromJson(text);
    } else if (std::filesystem::exists(cluster, ec)) {
      spec = ClusterSpec::FromFile(cluster);
    } else if (absl::StrContains(text, '=')) {
      spec = ClusterSpec::FromFlag(text);
    } else {
      return absl::NotFoundError(absl::StrCat(
          "--cluster '", cluster, "' is neither a file, JSON, nor a JOB=HOST:PORT,... spec"));
    }
    if (!spec.ok()) return AddContext(spec.status(), "--cluster");
    config.cluster = *std::move(spec);
    if (job.empty()) return absl::InvalidArgumentError("--job is required with --cluster");
  }
  config.job = job;
  config.task = task;
  RETURN_IF_ERROR(config.cluster.ValidateTask(config.job, config.task));
  return config;
}

}  // namespace sluice
