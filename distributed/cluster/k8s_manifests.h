// Kubernetes manifests for a Sluice cluster: per job a headless Service, and
// per task a StatefulSet of one pod, so that each pod's template holds its
// own index and mounts its own key. Used by `//tools:launch --k8s=DIR`
// (distributed/cluster/launcher.h).
//
//   K8sOptions options;
//   options.num_ps = 1;  options.num_workers = 4;  options.image = "me/mlp:1";
//   options.command = {"/app/between_graph_mlp", "--logdir=/data/logs"};
//   ASSIGN_OR_RETURN(std::vector<K8sFile> files, K8sManifests(options));
//   RETURN_IF_ERROR(WriteK8sFiles("/tmp/k8s", files));
//   // storage.yaml, tls-secret.yaml, ps.yaml, worker.yaml, README.txt
//
// Task "worker" 3 is StatefulSet "worker-3", pod "worker-3-0", reached at
// worker-3-0.worker.<namespace>.svc.cluster.local:<port>; its SLUICE_CONFIG
// names the whole cluster and its own type and index. The Services publish
// not-ready addresses, so tasks resolve each other while starting up. Pods
// restart when their program exits (restartPolicy Always) at the same DNS
// name. Every pod mounts one shared ReadWriteMany volume at kK8sDataDir
// (storage.yaml): checkpoints are written by the ps tasks and the chief
// together and restored by a restarted chief, so all of them must see the
// same files. With TLS, each task's Secret holds the CA's certificate and
// that task's certificate and key, nothing else.
//
// YAML is written by hand; every string is JSON-quoted (valid YAML).
// Thread-safety: pure functions. Ownership: plain values.
#ifndef SLUICE_DISTRIBUTED_CLUSTER_K8S_MANIFESTS_H_
#define SLUICE_DISTRIBUTED_CLUSTER_K8S_MANIFESTS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distributed/cluster/cluster_spec.h"

namespace sluice {

struct K8sOptions {
  int num_ps = 0;  // no ps job when 0
  int num_workers = 1;
  std::string image;
  int port = 2222;  // every task listens on it, in its own pod
  std::string k8s_namespace = "default";
  std::vector<std::string> command;  // program (a path inside the image) and args
  // The job's TLS credentials by file name (MakeJobCredentials): each task's
  // Secret (K8sSecretName) holds ca.crt and that task's <stem>.crt/.key,
  // mounted read-only at kK8sTlsDir (SLUICE_TLS_DIR). Empty: plaintext
  // (SLUICE_INSECURE=1).
  std::map<std::string, std::string> tls_files;
  // nvidia.com/gpu each worker pod asks for (a limit; 0: none).
  int gpus_per_worker = 0;
  // The job's shared volume (PersistentVolumeClaim kK8sDataClaim,
  // ReadWriteMany), mounted at kK8sDataDir in every pod: where checkpoints
  // and event files go. storage_class: its storageClassName ("": the
  // cluster's default).
  std::string storage = "10Gi";
  std::string storage_class;
};

inline constexpr char kK8sTlsDir[] = "/etc/sluice/tls";
inline constexpr char kK8sDataDir[] = "/data";
inline constexpr char kK8sDataClaim[] = "sluice-data";

// "worker-3": a task's StatefulSet, and its credential stem.
std::string K8sTaskName(const std::string& job, int index);
// "sluice-tls-worker-3": the Secret of a task (or of "client").
std::string K8sSecretName(const std::string& task_name);

struct K8sFile {
  std::string name;  // relative to the output directory: "worker.yaml"
  std::string contents;
  // Holds private keys (tls-secret.yaml): written owner-only (0600) from
  // its creation on, whatever the umask, and made so if it existed.
  bool secret = false;
};

// The cluster of DNS names: <job>-<i>-0.<job>.<namespace>.svc.cluster.local:<port>.
// InvalidArgument for a namespace that is not a DNS label, a port outside
// 1..65535 or bad counts.
absl::StatusOr<ClusterSpec> K8sCluster(const K8sOptions& options);

// "storage.yaml", "tls-secret.yaml" when there are credentials, one
// "<job>.yaml" per job (its Service and a StatefulSet per task), and
// README.txt. Errors as K8sCluster, plus InvalidArgument for an empty
// image, command or storage size, or credentials that lack a task's files.
absl::StatusOr<std::vector<K8sFile>> K8sManifests(const K8sOptions& options);

// Writes the files into `dir` (created if needed). Internal error naming the
// file on failure.
absl::Status WriteK8sFiles(const std::string& dir, const std::vector<K8sFile>& files);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_CLUSTER_K8S_MANIFESTS_H_
