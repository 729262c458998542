// The CUDA row rules (ops/gpu/row_rules.cu.h), compiled by nvcc and run on
// the host (row_rules_on_host.cu.h), against the CPU kernels of the same
// ops: three steps of every rule, dense and (where the op has one) sparse
// form. What the GPU kernels compute is checked here on any machine with
// CUDA's compiler, without a GPU; tests/gpu/gpu_sparse_test.cc checks the
// launches on a GPU.
#include "ops/gpu/row_rules_on_host.cu.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/state/state_ops.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using gpu::RowRule;

constexpr int64_t kRows = 20;
constexpr int64_t kDim = 5;
constexpr int kSteps = 3;

struct RuleCase {
  std::string op;  // the dense form, "Apply<Rule>" (or "ResourceApply<Rule>")
  RowRule rule;
  int num_vars;
  std::vector<float> hyper;  // the scalars, in the op's order
  int grad_at;               // grad's place among the inputs after the variables
  bool has_sparse_form;
  std::string flag;  // the bool attr RowUpdate::flag stands for, if any
  bool flag_value = false;
  // Each slot's initial range (slot i at i - 1); [0.1, 0.5) otherwise.
  std::vector<std::pair<float, float>> slot_ranges = {};
};

std::vector<float> Uniform(std::mt19937& rng, int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

Tensor ToTensor(const std::vector<float>& v, TensorShape shape) {
  Tensor t(DT_FLOAT, std::move(shape));
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

// One gradient and its rows: all rows for the dense form, `ids` for the
// sparse one.
struct Step {
  std::vector<float> grad;
  std::vector<int64_t> ids;
};

// "SparseApplyX" for "ApplyX", "ResourceSparseApplyX" for "ResourceApplyX".
std::string SparseForm(const std::string& op) {
  if (op.rfind("Resource", 0) == 0) return absl::StrCat("ResourceSparse", op.substr(8));
  return "Sparse" + op;
}

// The variables after `steps` of c's op (its Sparse form when `sparse`) on
// the CPU.
absl::StatusOr<std::vector<std::vector<float>>> RunOnTheCpu(
    const RuleCase& c, bool sparse, const std::vector<std::vector<float>>& init,
    const std::vector<Step>& steps) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const TensorShape shape({kRows, kDim});
  const bool resource = c.op.rfind("Resource", 0) == 0;
  std::vector<Output> vars, values, reads;
  std::vector<Node*> assigns;
  for (int i = 0; i < c.num_vars; ++i) {
    const std::string name = absl::StrCat("v", i);
    values.push_back(ops::Placeholder(s, DT_FLOAT));
    if (resource) {
      vars.push_back(ops::VarHandleOp(s.WithOpName(name), DT_FLOAT, shape));
      assigns.push_back(ops::AssignVariableOp(s, vars[i], values[i]));
      reads.push_back(ops::ReadVariableOp(s, vars[i], DT_FLOAT));
    } else {
      vars.push_back(ops::Variable(s.WithOpName(name), shape, DT_FLOAT));
      assigns.push_back(ops::Assign(s, vars[i], values[i]).node);
      reads.push_back(vars[i]);
    }
  }
  Output grad = ops::Placeholder(s.WithOpName("grad"), DT_FLOAT);
  Output ids = ops::Placeholder(s.WithOpName("ids"), DT_INT64);
  OpBuilder b = s.WithOpName("update").Op(sparse ? SparseForm(c.op) : c.op);
  for (const Output& v : vars) b.Input(v);
  int h = 0;
  for (int arg = 0; arg < static_cast<int>(c.hyper.size()) + 1; ++arg) {
    if (arg == c.grad_at) {
      b.Input(grad);
      if (sparse) b.Input(ids);
    } else {
      b.Input(ops::Const(s, c.hyper[h++]));
    }
  }
  if (!c.flag.empty()) b.Attr(c.flag, c.flag_value);
  Node* update = b.Finalize();
  RETURN_IF_ERROR(s.status());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> sess,
                   NewSession(BuiltinSessionConfig(), *s.graph()));
  std::vector<std::pair<Output, Tensor>> feeds;
  for (int i = 0; i < c.num_vars; ++i) feeds.push_back({values[i], ToTensor(init[i], shape)});
  RETURN_IF_ERROR(sess->Run(feeds, {}, assigns).status());
  for (const Step& st : steps) {
    const int64_t n = sparse ? static_cast<int64_t>(st.ids.size()) : kRows;
    RETURN_IF_ERROR(sess->Run({{grad, ToTensor(st.grad, TensorShape({n, kDim}))},
                               {ids, Tensor::FromVector(st.ids)}},
                              {}, {update})
                        .status());
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> out, sess->Run({}, reads, {}));
  std::vector<std::vector<float>> result;
  for (const Tensor& t : out) {
    result.emplace_back(t.data<float>(), t.data<float>() + t.NumElements());
  }
  return result;
}

// The same through the CUDA rule's code on the host.
std::vector<std::vector<float>> RunTheGpuRuleOnTheHost(const RuleCase& c, bool sparse,
                                                       std::vector<std::vector<float>> vars,
                                                       const std::vector<Step>& steps) {
  for (const Step& st : steps) {
    gpu::RowUpdate<float> u;
    u.rule = c.rule;
    u.var = vars[0].data();
    for (int i = 1; i < c.num_vars; ++i) u.slot[i - 1] = vars[i].data();
    for (size_t i = 0; i < c.hyper.size(); ++i) u.hyper[i] = &c.hyper[i];
    u.flag = c.flag.empty() ? false : c.flag_value;
    u.grad = st.grad.data();
    const int64_t n = sparse ? static_cast<int64_t>(st.ids.size()) : kRows;
    gpu::RunRowUpdateOnHost<float, int64_t>(u, kRows, kDim, sparse ? st.ids.data() : nullptr, n);
  }
  return vars;
}

void ExpectTheGpuRuleMatchesTheCpu(const RuleCase& c, bool sparse) {
  const std::string label = absl::StrCat(sparse ? SparseForm(c.op) : c.op, " ", c.flag, "=",
                                         c.flag_value ? "true" : "false");
  SCOPED_TRACE(label);
  std::mt19937 rng(7);
  std::vector<std::vector<float>> init = {Uniform(rng, kRows * kDim, -1, 1)};
  for (int i = 1; i < c.num_vars; ++i) {
    const size_t at = i - 1;
    const auto [lo, hi] =
        at < c.slot_ranges.size() ? c.slot_ranges[at] : std::pair<float, float>(0.1f, 0.5f);
    init.push_back(Uniform(rng, kRows * kDim, lo, hi));
  }
  std::vector<Step> steps(kSteps);
  for (Step& st : steps) {
    if (sparse) {
      std::vector<int64_t> rows(kRows);
      for (int64_t r = 0; r < kRows; ++r) rows[r] = r;
      std::shuffle(rows.begin(), rows.end(), rng);
      st.ids.assign(rows.begin(), rows.begin() + 8);  // distinct, as the GPU needs
    }
    const int64_t n = sparse ? static_cast<int64_t>(st.ids.size()) : kRows;
    st.grad = Uniform(rng, n * kDim, -1, 1);
  }
  absl::StatusOr<std::vector<std::vector<float>>> cpu = RunOnTheCpu(c, sparse, init, steps);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  const std::vector<std::vector<float>> gpu = RunTheGpuRuleOnTheHost(c, sparse, init, steps);
  for (int v = 0; v < c.num_vars; ++v) {
    int changed = 0;
    for (size_t i = 0; i < init[v].size(); ++i) {
      const float want = (*cpu)[v][i], got = gpu[v][i];
      ASSERT_TRUE(std::isfinite(want)) << "variable " << v << " element " << i;
      EXPECT_NEAR(got, want, 1e-5 * std::max(1.0f, std::abs(want)))
          << "variable " << v << " element " << i;
      changed += want != init[v][i];
    }
    // A rule that leaves its slots alone (update_slots false) is the only
    // one whose variables may not move.
    if (v == 0 || c.flag != "update_slots" || c.flag_value) {
      EXPECT_GT(changed, 0) << "variable " << v << " never changed";
    }
  }
}

// Centered RMSProp's ms well above mg^2: its denominator stays positive.
const std::vector<std::pair<float, float>> kCentered = {{-0.1f, 0.1f}, {0.2f, 0.5f}, {-0.1f, 0.1f}};

// Epsilons of 0.1, against slots of 0.1 to 0.5: a rule that dropped or
// misplaced one would be off by far more than the tolerance. (The dense and
// sparse formulas of Adagrad and the RMSProps agree to rounding, so which
// one a form takes is checked by TensorFlow's values in the CPU tests, not
// here.)
std::vector<RuleCase> Cases() {
  return {
      {"ApplyMomentum", RowRule::kMomentum, 2, {0.05f, 0.9f}, 1, true, "use_nesterov", false},
      {"ApplyMomentum", RowRule::kMomentum, 2, {0.05f, 0.9f}, 1, true, "use_nesterov", true},
      {"ResourceApplyKerasMomentum", RowRule::kKerasMomentum, 2, {0.05f, 0.9f}, 1, true,
       "use_nesterov", false},
      {"ResourceApplyKerasMomentum", RowRule::kKerasMomentum, 2, {0.05f, 0.9f}, 1, true,
       "use_nesterov", true},
      {"ApplyAdagrad", RowRule::kAdagrad, 2, {0.1f}, 1, true, "update_slots", true},
      {"ApplyAdagrad", RowRule::kAdagrad, 2, {0.1f}, 1, true, "update_slots", false},
      {"ApplyAdagradV2", RowRule::kAdagradV2, 2, {0.1f, 0.1f}, 2, true, "update_slots", true},
      {"ApplyFtrl", RowRule::kFtrl, 3, {0.1f, 0.01f, 0.02f, -0.5f}, 0, true,
       "multiply_linear_by_lr", false},
      {"ApplyFtrl", RowRule::kFtrl, 3, {0.1f, 0.01f, 0.02f, -0.7f}, 0, true,
       "multiply_linear_by_lr", true},
      {"ApplyFtrlV2", RowRule::kFtrlV2, 3, {0.1f, 0.01f, 0.02f, 0.05f, -0.5f}, 0, true,
       "multiply_linear_by_lr", false},
      {"ApplyFtrlV2", RowRule::kFtrlV2, 3, {0.1f, 0.01f, 0.02f, 0.05f, -0.7f}, 0, true,
       "multiply_linear_by_lr", true},
      {"ApplyAdadelta", RowRule::kAdadelta, 3, {1.0f, 0.95f, 0.1f}, 3, true, ""},
      {"ApplyRMSProp", RowRule::kRMSProp, 3, {0.01f, 0.9f, 0.5f, 0.1f}, 4, true, ""},
      {"ResourceApplyRMSProp", RowRule::kRMSProp, 3, {0.01f, 0.9f, 0.5f, 0.1f}, 4, true, ""},
      {"ApplyCenteredRMSProp", RowRule::kCenteredRMSProp, 4, {0.01f, 0.95f, 0.5f, 0.1f}, 4, true,
       "", false, kCentered},
      {"ApplyAdaMax", RowRule::kAdaMax, 3, {0.729f, 0.01f, 0.9f, 0.999f, 0.1f}, 5, false, ""},
      {"ResourceApplyAdamWithAmsgrad", RowRule::kAmsgrad, 4,
       {0.729f, 0.997f, 0.01f, 0.9f, 0.999f, 0.1f}, 6, false, "", false,
       {{-0.1f, 0.1f}, {0.1f, 0.5f}, {0.0f, 0.6f}}},
      {"ApplyAddSign", RowRule::kAddSign, 2, {0.01f, 1.0f, 0.5f, 0.9f}, 4, false, "", false,
       {{-0.5f, 0.5f}}},
      {"ApplyPowerSign", RowRule::kPowerSign, 2, {0.01f, 0.6931f, 0.5f, 0.9f}, 4, false, "",
       false, {{-0.5f, 0.5f}}},
  };
}

TEST(RowRulesOnHostTest, DenseFormsMatchTheCpuKernels) {
  for (const RuleCase& c : Cases()) ExpectTheGpuRuleMatchesTheCpu(c, /*sparse=*/false);
}

TEST(RowRulesOnHostTest, SparseFormsMatchTheCpuKernels) {
  for (const RuleCase& c : Cases()) {
    if (c.has_sparse_form) ExpectTheGpuRuleMatchesTheCpu(c, /*sparse=*/true);
  }
}

// int32 indices, one of them out of range: the device skips it (the host
// cannot check indices in device memory), and the other rows update as the
// CPU updates them without it.
TEST(RowRulesOnHostTest, AnIndexOutOfRangeIsSkipped) {
  const RuleCase c = Cases()[0];  // Momentum: var, accum
  std::mt19937 rng(3);
  std::vector<std::vector<float>> init = {Uniform(rng, kRows * kDim, -1, 1),
                                          Uniform(rng, kRows * kDim, 0.1f, 0.5f)};
  Step in_range{Uniform(rng, 2 * kDim, -1, 1), {4, 9}};
  absl::StatusOr<std::vector<std::vector<float>>> cpu = RunOnTheCpu(c, true, init, {in_range});
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  std::vector<float> grad = in_range.grad;
  grad.insert(grad.begin() + kDim, kDim, 7.0f);  // the out-of-range row's gradient
  const std::vector<int32_t> ids = {4, kRows + 3, 9};
  std::vector<std::vector<float>> vars = init;
  gpu::RowUpdate<float> u;
  u.rule = c.rule;
  u.var = vars[0].data();
  u.slot[0] = vars[1].data();
  u.hyper[0] = &c.hyper[0];
  u.hyper[1] = &c.hyper[1];
  u.grad = grad.data();
  gpu::RunRowUpdateOnHost<float, int32_t>(u, kRows, kDim, ids.data(), 3);
  for (int v = 0; v < 2; ++v) {
    for (size_t i = 0; i < vars[v].size(); ++i) {
      EXPECT_NEAR(vars[v][i], (*cpu)[v][i], 1e-6) << "variable " << v << " element " << i;
    }
  }
}

}  // namespace
}  // namespace sluice
