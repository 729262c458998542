#include "distributed/cluster/k8s_manifests.h"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/atomic_file.h"

namespace sluice {
namespace {

bool IsDnsLabel(const std::string& name) {
  if (name.empty() || name.size() > 63 || name.front() == '-' || name.back() == '-') return false;
  for (char c : name) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '-') return false;
  }
  return true;
}

// The labels that tie a job's Service, StatefulSet and pods together,
// indented by `indent` spaces.
std::string Labels(const std::string& job, int indent) {
  std::string pad(indent, ' ');
  return absl::StrCat(pad, "app: \"sluice\"\n", pad, "sluice-job: ", JsonQuote(job), "\n");
}

std::string JobYaml(const K8sOptions& options, const ClusterSpec& cluster, const std::string& job) {
  const std::string ns = JsonQuote(options.k8s_namespace);
  const std::string name = JsonQuote(job);
  std::string config = absl::StrCat("{\"cluster\": ", cluster.ToJson(),
                                    ", \"task\": {\"type\": ", JsonQuote(job), "}}");
  std::string command;
  for (const std::string& arg : options.command) {
    absl::StrAppend(&command, "            - ", JsonQuote(arg), "\n");
  }
  const bool tls = !options.tls_files.empty();
  std::string security_env =
      tls ? absl::StrCat("            - name: \"SLUICE_TLS_DIR\"\n", "              value: ",
                         JsonQuote(kK8sTlsDir), "\n")
          : "            - name: \"SLUICE_INSECURE\"\n              value: \"1\"\n";
  std::string resources;
  if (job == "worker" && options.gpus_per_worker > 0) {
    resources = absl::StrCat("          resources:\n", "            limits:\n",
                             "              nvidia.com/gpu: ", options.gpus_per_worker, "\n");
  }
  std::string mounts = absl::StrCat("          volumeMounts:\n", "            - name: \"data\"\n",
                                    "              mountPath: ", JsonQuote(kK8sDataDir), "\n");
  std::string volumes;
  if (tls) {
    absl::StrAppend(&mounts, "            - name: \"tls\"\n", "              mountPath: ",
                    JsonQuote(kK8sTlsDir), "\n", "              readOnly: true\n");
    volumes = absl::StrCat("      volumes:\n", "        - name: \"tls\"\n", "          secret:\n",
                           "            secretName: \"sluice-tls\"\n",
                           "            defaultMode: 0400\n");
  }
  return absl::StrCat(
      "# Sluice job ", name, ": ", cluster.num_tasks(job), " task(s). Written by //tools:launch.\n",
      "apiVersion: v1\n", "kind: Service\n", "metadata:\n", "  name: ", name, "\n",
      "  namespace: ", ns, "\n", "  labels:\n", Labels(job, 4), "spec:\n", "  clusterIP: None\n",
      "  publishNotReadyAddresses: true\n", "  selector:\n", Labels(job, 4), "  ports:\n",
      "    - name: \"rpc\"\n", "      port: ", options.port, "\n",
      "      targetPort: ", options.port, "\n", "---\n", "apiVersion: apps/v1\n",
      "kind: StatefulSet\n", "metadata:\n", "  name: ", name, "\n", "  namespace: ", ns, "\n",
      "  labels:\n", Labels(job, 4), "spec:\n", "  serviceName: ", name, "\n",
      "  replicas: ", cluster.num_tasks(job), "\n", "  podManagementPolicy: Parallel\n",
      "  selector:\n", "    matchLabels:\n", Labels(job, 6), "  template:\n", "    metadata:\n",
      "      labels:\n", Labels(job, 8), "    spec:\n", "      containers:\n",
      "        - name: ", name, "\n", "          image: ", JsonQuote(options.image), "\n",
      "          command:\n", command, "          ports:\n",
      "            - containerPort: ", options.port, "\n", "          env:\n",
      "            - name: \"SLUICE_CONFIG\"\n", "              value: ", JsonQuote(config), "\n",
      "            - name: \"POD_NAME\"\n", "              valueFrom:\n",
      "                fieldRef:\n", "                  fieldPath: metadata.name\n", security_env,
      resources, mounts, "      restartPolicy: \"Always\"\n", volumes,
      "  volumeClaimTemplates:\n", "    - metadata:\n", "        name: \"data\"\n",
      "      spec:\n", "        accessModes: [\"ReadWriteOnce\"]\n", "        resources:\n",
      "          requests:\n", "            storage: ", JsonQuote(options.storage), "\n");
}

std::string SecretYaml(const K8sOptions& options) {
  std::string data;
  for (const auto& [name, text] : options.tls_files) {
    absl::StrAppend(&data, "  ", JsonQuote(name), ": ", JsonQuote(absl::Base64Escape(text)), "\n");
  }
  return absl::StrCat("# The job's TLS credentials (a CA made for this job, a certificate per task).\n",
                      "apiVersion: v1\n", "kind: Secret\n", "metadata:\n",
                      "  name: \"sluice-tls\"\n", "  namespace: ", JsonQuote(options.k8s_namespace),
                      "\n", "type: Opaque\n", "data:\n", data);
}

}  // namespace

absl::StatusOr<ClusterSpec> K8sCluster(const K8sOptions& options) {
  if (!IsDnsLabel(options.k8s_namespace)) {
    return absl::InvalidArgumentError(absl::StrCat("namespace '", options.k8s_namespace,
                                                   "' is not a DNS label ([a-z0-9-], at most 63)"));
  }
  if (options.port < 1 || options.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("port must be in 1..65535, not ", options.port));
  }
  if (options.num_ps < 0 || options.num_workers < 1) {
    return absl::InvalidArgumentError(absl::StrCat("need ps >= 0 and workers >= 1, not ",
                                                   options.num_ps, " and ", options.num_workers));
  }
  ClusterSpec::JobList jobs;
  auto add = [&](const std::string& job, int count) {
    std::vector<std::string> addresses;
    for (int i = 0; i < count; ++i) {
      addresses.push_back(absl::StrCat(job, "-", i, ".", job, ".", options.k8s_namespace,
                                       ".svc.cluster.local:", options.port));
    }
    jobs.emplace_back(job, std::move(addresses));
  };
  if (options.num_ps > 0) add("ps", options.num_ps);
  add("worker", options.num_workers);
  return ClusterSpec::FromJobs(std::move(jobs));
}

absl::StatusOr<std::vector<K8sFile>> K8sManifests(const K8sOptions& options) {
  if (options.image.empty()) return absl::InvalidArgumentError("no container image given");
  if (options.command.empty() || options.command[0].empty()) {
    return absl::InvalidArgumentError("no command given");
  }
  if (options.storage.empty()) return absl::InvalidArgumentError("no storage size given");
  ASSIGN_OR_RETURN(ClusterSpec cluster, K8sCluster(options));
  std::vector<K8sFile> files;
  std::string apply;
  if (!options.tls_files.empty()) {
    files.push_back({"tls-secret.yaml", SecretYaml(options), /*secret=*/true});
    absl::StrAppend(&apply, " -f tls-secret.yaml");
  }
  for (const std::string& job : cluster.jobs()) {
    files.push_back({job + ".yaml", JobYaml(options, cluster, job)});
    absl::StrAppend(&apply, " -f ", job, ".yaml");
  }
  files.push_back(
      {"README.txt",
       absl::StrCat("Sluice cluster for image ", options.image, " in namespace ",
                    options.k8s_namespace, ".\n", "Apply (from this directory):   kubectl apply",
                    apply, "\n", "Follow the chief:              kubectl logs -f -n ",
                    options.k8s_namespace, " worker-0\n",
                    "Remove:                        kubectl delete", apply, "\n",
                    "StatefulSet pods are restarted when they exit; delete the cluster when the "
                    "chief is done.\n",
                    "Checkpoints and event files survive a pod's restart only under ", kK8sDataDir,
                    " (each pod's PersistentVolumeClaim): pass e.g. --checkpoint_dir=", kK8sDataDir,
                    "/ckpt --logdir=", kK8sDataDir, "/logs to the program.\n",
                    options.tls_files.empty()
                        ? "Tasks talk in PLAINTEXT (--insecure): keep the namespace closed.\n"
                        : "Tasks use mutual TLS with the credentials in tls-secret.yaml (a CA "
                          "made for this job); keep that file private.\n",
                    "Build the image with the Dockerfile at the root of the Sluice source.\n")});
  return files;
}

absl::Status WriteK8sFiles(const std::string& dir, const std::vector<K8sFile>& files) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot create '", dir, "': ", ec.message()));
  }
  for (const K8sFile& file : files) {
    std::string path = (std::filesystem::path(dir) / file.name).string();
    if (file.secret) {
      // A new 0600 file renamed over the path: never readable by others,
      // even for a moment, and not written through a link planted there.
      RETURN_IF_ERROR(WriteFileAtomically(path, file.contents));
      continue;
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << file.contents;
    out.close();
    if (!out) return absl::InternalError(absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace sluice
