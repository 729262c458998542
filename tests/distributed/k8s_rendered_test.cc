// The Kubernetes manifests run as written: `tools:launch --k8s` renders
// them for the command the Dockerfile and README document, and each
// StatefulSet's container command runs here against the real binary with
// the rendered environment and only what its pod would mount (its own
// Secret's files, the shared /data volume). Kubernetes itself is the one
// thing replaced: DNS names become 127.0.0.1 ports, /app the runfiles,
// mount paths directories of the test.
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/cluster/k8s_manifests.h"
#include "distributed/cluster/launcher.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/distributed/child_process.h"

namespace sluice {
namespace {

// The command as the Dockerfile, the README and the generated README give
// it, plus flags that keep the run short.
const std::vector<std::string> kDocumented = {"/app/between_graph_mlp", "--logdir=/data/logs"};
const std::vector<std::string> kShort = {"--steps=150", "--hidden=32", "--examples=2048",
                                         "--batch=32", "--log_every=50", "--checkpoint_steps=50"};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string JsonUnquote(absl::string_view literal) {
  google::protobuf::Struct s;
  const std::string doc = absl::StrCat("{\"v\": ", literal, "}");
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(doc, &s).ok()) << literal;
  return s.fields().count("v") ? s.fields().at("v").string_value() : "";
}

// What one StatefulSet's pod runs and mounts, read back from the YAML.
struct Pod {
  std::string name;                          // the StatefulSet's
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> mounts;  // volume name -> mount path
  std::string secret;                         // the tls volume's Secret
  std::string claim;                          // the data volume's claim
};

std::vector<std::string> Documents(const std::string& yaml) {
  std::vector<std::string> docs;
  for (absl::string_view doc : absl::StrSplit(yaml, "---\n")) docs.emplace_back(doc);
  return docs;
}

// The value after "key: " on `line`, JSON-unquoted when quoted.
std::string ValueOf(absl::string_view line, absl::string_view key) {
  const size_t at = line.find(key);
  absl::string_view value = line.substr(at + key.size());
  return absl::StartsWith(value, "\"") ? JsonUnquote(value) : std::string(value);
}

std::vector<Pod> ParsePods(const std::string& yaml) {
  std::vector<Pod> pods;
  for (const std::string& doc : Documents(yaml)) {
    if (!absl::StrContains(doc, "kind: StatefulSet\n")) continue;
    Pod pod;
    std::vector<std::string> lines = absl::StrSplit(doc, '\n');
    std::string section, volume, env_name;
    for (const std::string& line : lines) {
      if (pod.name.empty() && absl::StartsWith(line, "  name: ")) pod.name = ValueOf(line, "name: ");
      if (section != "volumes:" && absl::StartsWith(line, "          ") &&
          !absl::StartsWith(line, "           ")) {
        section = line.substr(10);  // "command:", "env:", "volumeMounts:", ...
      }
      if (absl::StartsWith(line, "      volumes:")) section = "volumes:";
      const bool item = absl::StartsWith(line, "            - ") ||
                        absl::StartsWith(line, "        - ");
      if (section == "command:" && absl::StartsWith(line, "            - ")) {
        pod.command.push_back(JsonUnquote(line.substr(14)));
      } else if (section == "env:") {
        if (absl::StrContains(line, "- name: ")) env_name = ValueOf(line, "name: ");
        if (absl::StrContains(line, "value: ")) pod.env[env_name] = ValueOf(line, "value: ");
      } else if (section == "volumeMounts:") {
        if (item) volume = ValueOf(line, "name: ");
        if (absl::StrContains(line, "mountPath: ")) pod.mounts[volume] = ValueOf(line, "mountPath: ");
      } else if (section == "volumes:") {
        if (absl::StrContains(line, "secretName: ")) pod.secret = ValueOf(line, "secretName: ");
        if (absl::StrContains(line, "claimName: ")) pod.claim = ValueOf(line, "claimName: ");
      }
    }
    pods.push_back(std::move(pod));
  }
  return pods;
}

// Secret name -> (file name -> contents).
std::map<std::string, std::map<std::string, std::string>> ParseSecrets(const std::string& yaml) {
  std::map<std::string, std::map<std::string, std::string>> secrets;
  for (const std::string& doc : Documents(yaml)) {
    if (!absl::StrContains(doc, "kind: Secret\n")) continue;
    std::string name;
    bool in_data = false;
    for (absl::string_view line : absl::StrSplit(doc, '\n')) {
      if (absl::StartsWith(line, "  name: ")) name = ValueOf(line, "name: ");
      if (line == "data:") in_data = true;
      if (in_data && absl::StartsWith(line, "  \"")) {
        const size_t colon = line.find("\": ");
        std::string decoded;
        EXPECT_TRUE(absl::Base64Unescape(JsonUnquote(line.substr(colon + 3)), &decoded));
        secrets[name][JsonUnquote(line.substr(2, colon - 1))] = decoded;
      }
    }
  }
  return secrets;
}

TEST(KubernetesRenderedTest, EveryContainerCommandRunsAsRendered) {
  const std::string root = TestTmpPath("k8s-rendered");
  std::filesystem::remove_all(root);
  const std::string dir = root + "/manifests";
  std::vector<std::string> args = {"--ps=1", "--workers=2", "--k8s=" + dir, "--image=me/sluice:1",
                                   "--"};
  for (const std::string& a : kDocumented) args.push_back(a);
  for (const std::string& a : kShort) args.push_back(a);
  std::ostringstream out, err;
  ASSERT_EQ(LaunchMain(args, out, err), 0) << err.str();

  // The keys' file is the owner's alone.
  struct stat st;
  ASSERT_EQ(stat((dir + "/tls-secret.yaml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const auto secrets = ParseSecrets(ReadFile(dir + "/tls-secret.yaml"));
  std::vector<Pod> pods = ParsePods(ReadFile(dir + "/ps.yaml"));
  for (Pod& p : ParsePods(ReadFile(dir + "/worker.yaml"))) pods.push_back(std::move(p));
  ASSERT_EQ(pods.size(), 3u);

  // Kubernetes' part: a loopback port per DNS name, directories for mounts.
  K8sOptions names;
  names.num_ps = 1;
  names.num_workers = 2;
  absl::StatusOr<ClusterSpec> cluster = K8sCluster(names);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  absl::StatusOr<std::vector<int>> ports = PickFreePorts(3);
  ASSERT_TRUE(ports.ok()) << ports.status();
  std::vector<std::pair<std::string, std::string>> dns;
  int next = 0;
  for (const std::string& task : {std::string("ps"), std::string("worker")}) {
    for (int i = 0; i < cluster->num_tasks(task); ++i) {
      dns.emplace_back(*cluster->Address(task, i), absl::StrCat("127.0.0.1:", (*ports)[next++]));
    }
  }
  const std::string data = root + "/data";  // the one shared volume
  std::filesystem::create_directories(data);

  std::map<std::string, std::unique_ptr<ChildProcess>> running;
  for (const Pod& pod : pods) {
    SCOPED_TRACE(pod.name);
    ASSERT_EQ(pod.command.size(), kDocumented.size() + kShort.size());
    EXPECT_EQ(pod.claim, kK8sDataClaim);
    EXPECT_EQ(pod.mounts.at("data"), kK8sDataDir);
    // Its Secret: the CA and its own certificate and key, nothing more.
    ASSERT_EQ(pod.secret, K8sSecretName(pod.name));
    const auto& files = secrets.at(pod.secret);
    EXPECT_EQ(files.size(), 3u);
    const std::string tls = absl::StrCat(root, "/pods/", pod.name, "/tls");
    std::filesystem::create_directories(tls);
    for (const auto& [file, text] : files) {
      std::ofstream(tls + "/" + file, std::ios::binary) << text;
      std::filesystem::permissions(tls + "/" + file, std::filesystem::perms::owner_read);
    }
    ASSERT_EQ(pod.env.at("SLUICE_TLS_DIR"), pod.mounts.at("tls"));

    std::vector<std::string> argv = pod.command;
    ASSERT_EQ(argv[0], "/app/between_graph_mlp");
    argv[0] = RunfilePath("examples/between_graph_mlp");
    for (std::string& a : argv) a = absl::StrReplaceAll(a, {{kK8sDataDir, data}});
    // No POD_NAME: the task's index is in its own SLUICE_CONFIG.
    std::vector<std::string> env = {"SLUICE_INSECURE=", "BUILD_WORKING_DIRECTORY=", "POD_NAME="};
    for (const auto& [name, value] : pod.env) {
      std::string v = value;
      if (name == "SLUICE_CONFIG") v = absl::StrReplaceAll(v, dns);
      if (name == "SLUICE_TLS_DIR") v = tls;
      env.push_back(absl::StrCat(name, "=", v));
    }
    absl::StatusOr<std::unique_ptr<ChildProcess>> child =
        ChildProcess::Start(argv, env, TestTmpPath(absl::StrCat("k8s-", pod.name, ".log")));
    ASSERT_TRUE(child.ok()) << child.status();
    running[pod.name] = *std::move(child);
  }

  ChildProcess* chief = running.at("worker-0").get();
  std::optional<int> status = chief->WaitForExit(absl::Seconds(120));
  ASSERT_TRUE(status.has_value()) << "the chief still runs:\n" << chief->Output();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << chief->Output() << "\nps:\n" << running.at("ps-0")->Output();
  EXPECT_TRUE(absl::StrContains(chief->Output(), "final: loss=")) << chief->Output();
  // The checkpoint is in the shared volume, where a restarted chief finds it.
  EXPECT_TRUE(std::filesystem::exists(data + "/logs/checkpoint")) << chief->Output();
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace sluice
