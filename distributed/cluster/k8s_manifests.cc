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

// The headless Service that gives the job's pods their DNS names.
std::string ServiceYaml(const K8sOptions& options, const ClusterSpec& cluster,
                        const std::string& job) {
  return absl::StrCat(
      "# Sluice job ", JsonQuote(job), ": ", cluster.num_tasks(job),
      " task(s), a StatefulSet each. Written by //tools:launch.\n", "apiVersion: v1\n",
      "kind: Service\n", "metadata:\n", "  name: ", JsonQuote(job), "\n",
      "  namespace: ", JsonQuote(options.k8s_namespace), "\n", "  labels:\n", Labels(job, 4),
      "spec:\n", "  clusterIP: None\n", "  publishNotReadyAddresses: true\n", "  selector:\n",
      Labels(job, 4), "  ports:\n", "    - name: \"rpc\"\n", "      port: ", options.port, "\n",
      "      targetPort: ", options.port, "\n");
}

// One task: a StatefulSet of one pod, so that its template (its index, its
// own key) is its alone and Kubernetes restarts or reschedules it under
// the same name.
std::string TaskYaml(const K8sOptions& options, const ClusterSpec& cluster, const std::string& job,
                     int index) {
  const std::string name = K8sTaskName(job, index);
  const std::string config =
      absl::StrCat("{\"cluster\": ", cluster.ToJson(), ", \"task\": {\"type\": ", JsonQuote(job),
                   ", \"index\": ", index, "}}");
  std::string command;
  for (const std::string& arg : options.command) {
    absl::StrAppend(&command, "            - ", JsonQuote(arg), "\n");
  }
  const bool tls = !options.tls_files.empty();
  const std::string security_env =
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
  std::string volumes = absl::StrCat("      volumes:\n", "        - name: \"data\"\n",
                                     "          persistentVolumeClaim:\n",
                                     "            claimName: ", JsonQuote(kK8sDataClaim), "\n");
  if (tls) {
    absl::StrAppend(&mounts, "            - name: \"tls\"\n", "              mountPath: ",
                    JsonQuote(kK8sTlsDir), "\n", "              readOnly: true\n");
    absl::StrAppend(&volumes, "        - name: \"tls\"\n", "          secret:\n",
                    "            secretName: ", JsonQuote(K8sSecretName(name)), "\n",
                    "            defaultMode: 0400\n");
  }
  std::string labels = absl::StrCat(Labels(job, 8), "        sluice-task: ", JsonQuote(name), "\n");
  return absl::StrCat(
      "apiVersion: apps/v1\n", "kind: StatefulSet\n", "metadata:\n", "  name: ", JsonQuote(name),
      "\n", "  namespace: ", JsonQuote(options.k8s_namespace), "\n", "  labels:\n",
      Labels(job, 4), "spec:\n", "  serviceName: ", JsonQuote(job), "\n", "  replicas: 1\n",
      "  selector:\n", "    matchLabels:\n", Labels(job, 6), "      sluice-task: ", JsonQuote(name),
      "\n", "  template:\n", "    metadata:\n", "      labels:\n", labels, "    spec:\n",
      "      containers:\n", "        - name: ", JsonQuote(job), "\n",
      "          image: ", JsonQuote(options.image), "\n", "          command:\n", command,
      "          ports:\n", "            - containerPort: ", options.port, "\n",
      "          env:\n", "            - name: \"SLUICE_CONFIG\"\n", "              value: ",
      JsonQuote(config), "\n", security_env, resources, mounts,
      "      restartPolicy: \"Always\"\n", volumes);
}

// The volume every task mounts at kK8sDataDir: one, so that what the
// parameter servers write for the chief's checkpoint and what the chief
// restores from are the same files.
std::string StorageYaml(const K8sOptions& options) {
  return absl::StrCat(
      "# Checkpoints and event files, shared by every task of the job: the ps tasks\n",
      "# write their variables' shards of a checkpoint and the chief its index, so\n",
      "# they must see one directory (ReadWriteMany: NFS, CephFS, EFS, Filestore...).\n",
      "apiVersion: v1\n", "kind: PersistentVolumeClaim\n", "metadata:\n",
      "  name: ", JsonQuote(kK8sDataClaim), "\n", "  namespace: ", JsonQuote(options.k8s_namespace),
      "\n", "spec:\n", "  accessModes: [\"ReadWriteMany\"]\n",
      options.storage_class.empty()
          ? std::string()
          : absl::StrCat("  storageClassName: ", JsonQuote(options.storage_class), "\n"),
      "  resources:\n", "    requests:\n", "      storage: ", JsonQuote(options.storage), "\n");
}

std::string OneSecretYaml(const K8sOptions& options, const std::string& name,
                          const std::vector<std::string>& file_names) {
  std::string data;
  for (const std::string& file : file_names) {
    absl::StrAppend(&data, "  ", JsonQuote(file), ": ",
                    JsonQuote(absl::Base64Escape(options.tls_files.at(file))), "\n");
  }
  return absl::StrCat("apiVersion: v1\n", "kind: Secret\n", "metadata:\n", "  name: ",
                      JsonQuote(name), "\n", "  namespace: ", JsonQuote(options.k8s_namespace),
                      "\n", "type: Opaque\n", "data:\n", data);
}

// A Secret per task (the CA's certificate, the task's certificate and key)
// and one for "client" (a tool outside the job; mounted by no pod).
absl::StatusOr<std::string> SecretsYaml(const K8sOptions& options, const ClusterSpec& cluster) {
  std::string out = "# The job's TLS credentials: a CA made for this job, a certificate and key per\n"
                    "# task, each task's in its own Secret (a pod mounts only its own).\n";
  auto add = [&](const std::string& secret, const std::string& stem) -> absl::Status {
    std::vector<std::string> names = {"ca.crt", stem + ".crt", stem + ".key"};
    for (const std::string& file : names) {
      if (!options.tls_files.contains(file)) {
        return absl::InvalidArgumentError(absl::StrCat("the job's credentials lack ", file));
      }
    }
    absl::StrAppend(&out, "---\n", OneSecretYaml(options, secret, names));
    return absl::OkStatus();
  };
  for (const std::string& job : cluster.jobs()) {
    for (int i = 0; i < cluster.num_tasks(job); ++i) {
      RETURN_IF_ERROR(add(K8sSecretName(K8sTaskName(job, i)), K8sTaskName(job, i)));
    }
  }
  if (options.tls_files.contains("client.key")) {
    RETURN_IF_ERROR(add(K8sSecretName("client"), "client"));
  }
  return out;
}

}  // namespace

std::string K8sTaskName(const std::string& job, int index) {
  return absl::StrCat(job, "-", index);
}

std::string K8sSecretName(const std::string& task_name) {
  return absl::StrCat("sluice-tls-", task_name);
}

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
      // A StatefulSet's one pod is "<set>-0"; its set is "<job>-<i>".
      addresses.push_back(absl::StrCat(K8sTaskName(job, i), "-0.", job, ".",
                                       options.k8s_namespace, ".svc.cluster.local:", options.port));
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
  std::string apply = " -f storage.yaml";
  files.push_back({"storage.yaml", StorageYaml(options)});
  if (!options.tls_files.empty()) {
    ASSIGN_OR_RETURN(std::string secrets, SecretsYaml(options, cluster));
    files.push_back({"tls-secret.yaml", std::move(secrets), /*secret=*/true});
    absl::StrAppend(&apply, " -f tls-secret.yaml");
  }
  for (const std::string& job : cluster.jobs()) {
    std::string yaml = ServiceYaml(options, cluster, job);
    for (int i = 0; i < cluster.num_tasks(job); ++i) {
      absl::StrAppend(&yaml, "---\n", TaskYaml(options, cluster, job, i));
    }
    files.push_back({job + ".yaml", std::move(yaml)});
    absl::StrAppend(&apply, " -f ", job, ".yaml");
  }
  const std::string chief_pod = absl::StrCat(K8sTaskName("worker", 0), "-0");
  files.push_back(
      {"README.txt",
       absl::StrCat(
           "Sluice cluster for image ", options.image, " in namespace ", options.k8s_namespace,
           ".\n", "Apply (from this directory):   kubectl apply", apply, "\n",
           "Follow the chief:              kubectl logs -f -n ", options.k8s_namespace, " ",
           chief_pod, "\n", "Remove:                        kubectl delete", apply, "\n",
           "Each task is a StatefulSet of one pod (ps-0-0, worker-0-0, ...), restarted at the "
           "same DNS name when it exits or its node goes; delete the cluster when the chief is "
           "done.\n",
           "Every task mounts ONE shared volume at ", kK8sDataDir, " (storage.yaml, claim ",
           kK8sDataClaim, ", ReadWriteMany",
           options.storage_class.empty() ? "" : absl::StrCat(", class ", options.storage_class),
           "): the ps tasks write their shards of each checkpoint there and the chief the index "
           "and state, and a restarted chief resumes from the newest one. Your cluster needs a "
           "storage class that offers ReadWriteMany (NFS, CephFS, EFS, Filestore); pass "
           "--storage_class=NAME to name it.\n",
           "Point the program's directories there: between_graph_mlp --logdir=", kK8sDataDir,
           "/logs, multi_worker_mlp --checkpoint_dir=", kK8sDataDir, "/ckpt.\n",
           options.tls_files.empty()
               ? "Tasks talk in PLAINTEXT (--insecure): keep the namespace closed.\n"
               : "Tasks use mutual TLS with a CA made for this job: tls-secret.yaml holds a "
                 "Secret per task (the CA certificate, its certificate and key), and each pod "
                 "mounts only its own. Keep that file private.\n",
           options.gpus_per_worker > 0
               ? "Worker pods ask for GPUs: build the image with the CUDA backend "
                 "(docker build --target gpu -t IMAGE .).\n"
               : "",
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
