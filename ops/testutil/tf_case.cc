#include "ops/testutil/tf_case.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "graph/graph_def_io.h"

namespace sluice {

absl::StatusOr<::tensorflow::GraphDef> ReadTensorFlowCaseGraph(const std::string& base) {
  const std::string pb = base + ".pb";
  return ReadGraphDefFile(std::ifstream(pb).good() ? pb : base + ".pbtxt");
}

absl::StatusOr<TensorFlowCase> ReadTensorFlowCase(const Graph& graph,
                                                  const std::string& expected_path) {
  std::ifstream expected(expected_path);
  if (!expected.good()) return absl::NotFoundError(absl::StrCat("no file '", expected_path, "'"));
  TensorFlowCase c;
  for (std::string line; std::getline(expected, line);) {
    std::istringstream in(line);
    std::string kind, tensor;
    in >> kind >> tensor;
    std::vector<float> values;
    for (float v; in >> v;) values.push_back(v);
    if (kind == "run") {
      c.first_run.push_back(tensor);
    } else if (kind == "feed") {
      const Node* n = graph.FindNode(tensor.substr(0, tensor.find(':')));
      if (n == nullptr) return absl::NotFoundError(absl::StrCat("no node for feed ", tensor));
      absl::StatusOr<TensorShape> shape = n->GetAttr<TensorShape>("shape");
      const TensorShape dims = shape.ok() && shape->IsFullyDefined()
                                   ? *shape
                                   : TensorShape({static_cast<int64_t>(values.size())});
      if (n->GetAttr<DataType>("dtype").value_or(DT_FLOAT) == DT_INT32) {  // labels
        c.feeds.emplace_back(tensor, Tensor::FromVector<int32_t>(
                                         std::vector<int32_t>(values.begin(), values.end()), dims));
      } else {
        c.feeds.emplace_back(tensor, Tensor::FromVector<float>(values, dims));
      }
    } else if (kind == "fetch") {
      c.fetches.push_back(tensor);
      c.want.push_back(std::move(values));
    }
  }
  return c;
}

}  // namespace sluice
