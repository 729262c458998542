#include "placement/pipeline.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/gradients.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

Scope OnDevice(const Scope& scope, const std::string& device) {
  return device.empty() ? scope : scope.WithDevice(device);
}

std::string StageName(const PipelineStage& stage, size_t s) {
  return stage.name.empty() ? absl::StrCat("stage", s) : stage.name;
}

// Static row count of `t`, or -1 when unknown.
int64_t StaticRows(const Output& t) {
  const TensorShape& shape = t.shape();
  return shape.rank() < 1 ? -1 : shape.dim(0);
}

absl::Status CheckArguments(absl::Span<const PipelineStage> stages, const Output& input,
                            absl::Span<const Output> targets, const PipelineLossFn& loss_fn,
                            const PipelineOptions& options) {
  if (stages.empty()) return absl::InvalidArgumentError("BuildPipeline: no stages");
  if (options.num_micro_batches < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "BuildPipeline: num_micro_batches must be >= 1, got ", options.num_micro_batches));
  }
  if (!input.valid()) return absl::InvalidArgumentError("BuildPipeline: the input is invalid");
  if (!loss_fn) return absl::InvalidArgumentError("BuildPipeline: no loss function");
  for (size_t s = 0; s < stages.size(); ++s) {
    if (!stages[s].apply) {
      return absl::InvalidArgumentError(absl::StrCat(
          "BuildPipeline: stage ", s, " ('", StageName(stages[s], s), "') has no apply function"));
    }
  }
  const int64_t rows = StaticRows(input);
  if (rows >= 0 && rows % options.num_micro_batches != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("BuildPipeline: the batch of ", rows, " rows (input '", input.node->name(),
                     "') does not split into ", options.num_micro_batches, " equal micro-batches"));
  }
  for (const Output& t : targets) {
    if (!t.valid()) return absl::InvalidArgumentError("BuildPipeline: a target is invalid");
    const int64_t t_rows = StaticRows(t);
    if (rows >= 0 && t_rows >= 0 && t_rows != rows) {
      return absl::InvalidArgumentError(absl::StrCat("BuildPipeline: target '", t.node->name(),
                                                     "' has ", t_rows, " rows, the input ", rows));
    }
    if (t_rows >= 0 && t_rows % options.num_micro_batches != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("BuildPipeline: the ", t_rows, " rows of target '", t.node->name(),
                       "' do not split into ", options.num_micro_batches, " equal micro-batches"));
    }
  }
  return absl::OkStatus();
}

// `value` split into `m` pieces along dimension 0 (itself when m == 1).
std::vector<Output> SplitRows(const Scope& scope, const Output& value, int m) {
  if (m == 1) return {value};
  return ops::Split(scope, 0, value, m);
}

// A scalar of `dtype` holding `value`: the gradient seed of each micro-batch
// loss.
absl::StatusOr<Output> ScalarOfType(const Scope& scope, DataType dtype, double value) {
  if (dtype == DT_FLOAT) return ops::Const(scope, static_cast<float>(value));
  if (dtype == DT_DOUBLE) return ops::Const(scope, value);
  return absl::InvalidArgumentError(
      absl::StrCat("BuildPipeline: the loss must be float or double, got ", DataTypeName(dtype)));
}

}  // namespace

absl::StatusOr<Pipeline> BuildPipeline(const Scope& scope, absl::Span<const PipelineStage> stages,
                                       const Output& input, absl::Span<const Output> targets,
                                       const PipelineLossFn& loss_fn,
                                       const PipelineOptions& options) {
  RETURN_IF_ERROR(scope.status());
  RETURN_IF_ERROR(CheckArguments(stages, input, targets, loss_fn, options));
  const int m_count = options.num_micro_batches;
  const size_t s_count = stages.size();
  const Scope root = scope.NewSubScope(options.name);
  const Scope first = OnDevice(root, stages.front().device);
  const Scope last = OnDevice(root, stages.back().device);

  // Variables, once per stage.
  std::vector<std::vector<Output>> vars(s_count);
  bool any_var = false;
  for (size_t s = 0; s < s_count; ++s) {
    if (!stages[s].create_variables) continue;
    absl::StatusOr<std::vector<Output>> v =
        stages[s].create_variables(OnDevice(scope, stages[s].device));
    if (!v.ok()) {
      return AddContext(v.status(), absl::StrCat("creating the variables of pipeline stage ", s));
    }
    RETURN_IF_ERROR(scope.status());
    vars[s] = *std::move(v);
    any_var |= !vars[s].empty();
  }
  if (!any_var) return absl::InvalidArgumentError("BuildPipeline: no stage created a variable");

  // The micro-batches: the input split on the first device, the targets on
  // the last (where the loss is).
  std::vector<Output> inputs = SplitRows(first.WithOpName("split_input"), input, m_count);
  std::vector<std::vector<Output>> micro_targets(m_count);
  for (size_t t = 0; t < targets.size(); ++t) {
    std::vector<Output> pieces =
        SplitRows(last.WithOpName(absl::StrCat("split_target", t)), targets[t], m_count);
    for (int m = 0; m < m_count; ++m) micro_targets[m].push_back(pieces[m]);
  }
  RETURN_IF_ERROR(scope.status());

  // Forward: stage_inputs[s][m] is the input of stage s for micro-batch m.
  Pipeline p;
  std::vector<std::vector<Output>> stage_inputs(s_count, std::vector<Output>(m_count));
  for (int m = 0; m < m_count; ++m) {
    const Scope mb = root.NewSubScope(absl::StrCat("micro_batch", m));
    Output h = inputs[m];
    for (size_t s = 0; s < s_count; ++s) {
      stage_inputs[s][m] = h;
      const Scope ss = OnDevice(mb.NewSubScope(StageName(stages[s], s)), stages[s].device);
      absl::StatusOr<Output> out = stages[s].apply(ss, h, vars[s]);
      const std::string where = absl::StrCat("pipeline stage ", s, ", micro-batch ", m);
      if (!out.ok()) return AddContext(out.status(), where);
      RETURN_IF_ERROR(scope.status());
      if (!out->valid()) return absl::InvalidArgumentError(absl::StrCat(where, ": invalid output"));
      h = *out;
    }
    p.micro_batch_outputs.push_back(h);
    absl::StatusOr<Output> loss =
        loss_fn(OnDevice(mb.NewSubScope("loss"), stages.back().device), h, micro_targets[m]);
    if (!loss.ok())
      return AddContext(loss.status(), absl::StrCat("pipeline loss, micro-batch ", m));
    RETURN_IF_ERROR(scope.status());
    if (!loss->valid() || loss->shape().rank() > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("BuildPipeline: the loss of micro-batch ", m, " must be a scalar, got ",
                       loss->valid() ? loss->shape().DebugString() : "an invalid output"));
    }
    p.micro_batch_losses.push_back(*loss);
  }
  const DataType loss_type = p.micro_batch_losses[0].dtype();
  ASSIGN_OR_RETURN(Output inv_m, ScalarOfType(last.WithOpName("inverse_micro_batches"), loss_type,
                                              1.0 / m_count));
  if (m_count == 1) {
    p.loss = ops::Identity(last.WithOpName("loss"), p.micro_batch_losses[0]);
    p.output = ops::Identity(last.WithOpName("output"), p.micro_batch_outputs[0]);
  } else {
    p.loss = ops::Mul(last.WithOpName("loss"), ops::AddN(last, p.micro_batch_losses), inv_m);
    p.output = ops::ConcatV2(last.WithOpName("output"), p.micro_batch_outputs, 0);
  }
  RETURN_IF_ERROR(scope.status());

  // Backward, last stage first, each on its stage's device. ys of stage s are
  // its micro-batch outputs, seeded with the gradients stage s + 1 computed
  // for its inputs (the last stage: the losses, seeded with 1/M).
  std::vector<Output> ys = p.micro_batch_losses;
  std::vector<Output> grad_ys(m_count, inv_m);
  std::vector<std::vector<Output>> grads(s_count);
  for (size_t s = s_count; s-- > 0;) {
    std::vector<Output> xs = vars[s];
    if (s > 0) xs.insert(xs.end(), stage_inputs[s].begin(), stage_inputs[s].end());
    std::vector<Output> live_ys, live_grad_ys;
    for (int m = 0; m < m_count; ++m) {
      if (!grad_ys[m].valid()) continue;  // nothing downstream depends on it
      live_ys.push_back(ys[m]);
      live_grad_ys.push_back(grad_ys[m]);
    }
    std::vector<Output> dx(xs.size());
    if (!live_ys.empty() && !xs.empty()) {
      const Scope back = OnDevice(root.NewSubScope("backward").NewSubScope(StageName(stages[s], s)),
                                  stages[s].device);
      absl::StatusOr<std::vector<Output>> r = AddGradients(back, live_ys, xs, live_grad_ys);
      if (!r.ok()) return AddContext(r.status(), absl::StrCat("backward of pipeline stage ", s));
      dx = *std::move(r);
    }
    grads[s].assign(dx.begin(), dx.begin() + vars[s].size());
    ys = stage_inputs[s];
    grad_ys.assign(dx.begin() + vars[s].size(), dx.end());
  }
  for (size_t s = 0; s < s_count; ++s) {
    for (size_t i = 0; i < vars[s].size(); ++i)
      p.grads_and_vars.push_back({grads[s][i], vars[s][i]});
  }
  RETURN_IF_ERROR(scope.status());
  return p;
}

}  // namespace sluice
