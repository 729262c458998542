// Kubernetes manifests for a Sluice cluster: per job a headless Service and a
// StatefulSet whose pods find each other by stable DNS names. Used by
// `//tools:launch --k8s=DIR` (distributed/cluster/launcher.h).
//
//   K8sOptions options;
//   options.num_ps = 1;  options.num_workers = 4;  options.image = "me/mlp:1";
//   options.command = {"/app/between_graph_mlp", "--steps=1000"};
//   ASSIGN_OR_RETURN(std::vector<K8sFile> files, K8sManifests(options));
//   RETURN_IF_ERROR(WriteK8sFiles("/tmp/k8s", files));   // ps.yaml, worker.yaml, README.txt
//
// Every pod gets env SLUICE_CONFIG = {"cluster": {...}, "task": {"type": JOB}}
// (no index) and POD_NAME from metadata.name, so ParseTaskConfig takes the
// index from the StatefulSet ordinal ("worker-3" -> 3). The Services publish
// not-ready addresses, so tasks resolve each other while starting up. Pods
// restart when their program exits (restartPolicy Always) at the same DNS
// name; what they write under /data is on their own PersistentVolumeClaim
// and survives it.
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
  // The job's TLS credentials by file name (MakeJobCredentials): written as
  // the Secret "sluice-tls", mounted read-only at kK8sTlsDir in every pod
  // (SLUICE_TLS_DIR). Empty: plaintext (SLUICE_INSECURE=1).
  std::map<std::string, std::string> tls_files;
  // nvidia.com/gpu each worker pod asks for (a limit; 0: none).
  int gpus_per_worker = 0;
  // Each pod's PersistentVolumeClaim (volumeClaimTemplates), mounted at
  // kK8sDataDir: where checkpoints and event files must go to outlive a
  // pod's restart.
  std::string storage = "10Gi";
};

inline constexpr char kK8sTlsDir[] = "/etc/sluice/tls";
inline constexpr char kK8sDataDir[] = "/data";

struct K8sFile {
  std::string name;  // relative to the output directory: "worker.yaml"
  std::string contents;
  // Holds private keys (tls-secret.yaml): written owner-only (0600) from
  // its creation on, whatever the umask, and made so if it existed.
  bool secret = false;
};

// The cluster of DNS names: <job>-<i>.<job>.<namespace>.svc.cluster.local:<port>.
// InvalidArgument for a namespace that is not a DNS label, a port outside
// 1..65535 or bad counts.
absl::StatusOr<ClusterSpec> K8sCluster(const K8sOptions& options);

// One "<job>.yaml" per job (Service + StatefulSet), "tls-secret.yaml" when
// there are credentials, and README.txt. Errors as K8sCluster, plus
// InvalidArgument for an empty image, command or storage size.
absl::StatusOr<std::vector<K8sFile>> K8sManifests(const K8sOptions& options);

// Writes the files into `dir` (created if needed). Internal error naming the
// file on failure.
absl::Status WriteK8sFiles(const std::string& dir, const std::vector<K8sFile>& files);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_CLUSTER_K8S_MANIFESTS_H_
