// launch: runs a program once per task of a local cluster, or writes
// Kubernetes manifests for it (see distributed/cluster/launcher.h).
//
//   bazel run //tools:launch -- --ps=1 --workers=2 -- //examples:between_graph_mlp
//   bazel run //tools:launch -- --workers=4 --k8s=/tmp/k8s --image=me/mlp:1 -- /app/mlp
#include <iostream>
#include <string>
#include <vector>

#include "distributed/cluster/launcher.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return sluice::LaunchMain(args, std::cout, std::cerr);
}
