#include "examples/dense_stage.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace sluice {

PipelineStage DenseStage(const std::string& device, std::vector<int64_t> sizes, int first,
                         int last) {
  PipelineStage stage;
  stage.device = device;
  stage.create_variables = [=](const Scope& s) -> absl::StatusOr<std::vector<Output>> {
    std::vector<Output> vars;
    for (int l = first; l <= last; ++l) {
      Scope layer = s.NewSubScope(absl::StrCat("layer", l));
      const int64_t fan_in = sizes[l - 1], fan_out = sizes[l];
      // He initialization: N(0, 2/fan_in), truncated at two deviations.
      Output init = ops::Mul(layer,
                             ops::TruncatedNormal(layer, {fan_in, fan_out}, DT_FLOAT,
                                                  {.seed = 1, .seed2 = int64_t{l}}),
                             static_cast<float>(std::sqrt(2.0 / fan_in)));
      vars.push_back(ops::VariableWithInit(layer.WithOpName("weights"), init).var);
      vars.push_back(
          ops::VariableWithInit(layer.WithOpName("bias"), ops::Fill(layer, {fan_out}, 0.0f)).var);
    }
    return vars;
  };
  const int num_layers = static_cast<int>(sizes.size()) - 1;
  stage.apply = [=](const Scope& s, const Output& x,
                    absl::Span<const Output> vars) -> absl::StatusOr<Output> {
    Output h = x;
    for (int l = first; l <= last; ++l) {
      Scope layer = s.NewSubScope(absl::StrCat("layer", l));
      const int i = 2 * (l - first);
      h = ops::BiasAdd(layer, ops::MatMul(layer, h, vars[i]), vars[i + 1]);
      if (l < num_layers) h = ops::Relu(layer, h);
    }
    return h;
  };
  return stage;
}

}  // namespace sluice
