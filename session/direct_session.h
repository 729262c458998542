// NewSession: the local Session (runtime/session.h) over this process's
// devices — those of SessionConfig::backends, else its CPUs. Each run
// signature is compiled once (session/compile_signature.h) and its
// partitions built and run by the step engine (runtime/step_partitions.h),
// the same one a cluster's workers use.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
//                    NewSession(BuiltinSessionConfig(), graph_def));
//   ASSIGN_OR_RETURN(std::vector<Tensor> out, session->Run({}, {"y:0"}, {}));
//
// Errors: InvalidArgument when options lack the op or kernel registry,
// and the graph's import errors (naming the node). Thread-safe: Run may be
// called concurrently. The graph is copied.
#ifndef SLUICE_SESSION_DIRECT_SESSION_H_
#define SLUICE_SESSION_DIRECT_SESSION_H_

#include <memory>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/proto/graph.pb.h"
#include "runtime/session.h"
#include "session/session_config.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionConfig& options,
                                                    const GraphDef& def);
absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionConfig& options,
                                                    const Graph& graph);

}  // namespace sluice

#endif  // SLUICE_SESSION_DIRECT_SESSION_H_
