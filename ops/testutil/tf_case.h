// A graph TensorFlow wrote for a test, with TensorFlow's feeds and results
// (ops/functional/testdata/make_fixtures.py): NAME.pb or NAME.pbtxt, and
// NAME.expected.txt, one line each: "run TARGET" (to run once first),
// "feed TENSOR v v ...", "fetch TENSOR v v ...".
//
//   ASSIGN_OR_RETURN(GraphDef def, ReadTensorFlowCaseGraph("ops/functional/testdata/x"));
//   ... import into `graph` ...
//   ASSIGN_OR_RETURN(TensorFlowCase c,
//                    ReadTensorFlowCase(graph, "ops/functional/testdata/x.expected.txt"));
//   session->Run(c.feeds, c.fetches, {});   // compare with c.want
//
// A feed takes its Placeholder's shape (else a vector of its values) and
// dtype (int32 or float). Errors: NotFound for a missing file or feed
// node. Thread-safety: pure functions.
#ifndef SLUICE_OPS_TESTUTIL_TF_CASE_H_
#define SLUICE_OPS_TESTUTIL_TF_CASE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/proto/graph.pb.h"
#include "runtime/tensor.h"

namespace sluice {

struct TensorFlowCase {
  std::vector<std::string> first_run;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  std::vector<std::vector<float>> want;  // per fetch, flattened
};

// `base`.pb when it exists, else `base`.pbtxt.
absl::StatusOr<::tensorflow::GraphDef> ReadTensorFlowCaseGraph(const std::string& base);

absl::StatusOr<TensorFlowCase> ReadTensorFlowCase(const Graph& graph,
                                                  const std::string& expected_path);

}  // namespace sluice

#endif  // SLUICE_OPS_TESTUTIL_TF_CASE_H_
