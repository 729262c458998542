// GPU tests of the row updates an embedding on a GPU trains with: the
// scatter ops, the SparseApply* rules and the dense rules sharing their
// kernels against the CPU after three steps, and an embedding table on GPU:0 trained
// by each optimizer's sparse update against the same table on the CPU.
#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ops/training/optimizers.h"
#include "sluice.h"
#include "tests/gpu/gpu_compare.h"

namespace sluice::gpu_test {
namespace {

class GpuSparseTest : public GpuTest {};

constexpr int64_t kRows = 50;
constexpr int64_t kDim = 7;

// Builds one update of `vars` (on the device scope `d`) from the fed
// gradient `grad` and indices `ids`; `c` is unplaced, for constants.
using UpdateFn = std::function<Output(const Scope& d, const Scope& c,
                                      const std::vector<Output>& vars, Output grad, Output ids)>;

struct RowCase {
  std::string label;
  int num_vars = 1;
  UpdateFn update;
  bool resource = false;  // the variables are resource handles, not refs
  // The range of each slot's initial values (slot i at i - 1); the slots
  // not listed take the caller's range.
  std::vector<std::pair<float, float>> slot_ranges = {};
};

// The initial values of c's variables: var in [-1, 1), slots in their range
// or [slot_lo, 0.5).
std::vector<Tensor> InitialValues(std::mt19937& rng, const RowCase& c, float slot_lo) {
  const TensorShape shape({kRows, kDim});
  std::vector<Tensor> init = {RandomTensor(rng, DT_FLOAT, shape, -1, 1)};
  for (int i = 1; i < c.num_vars; ++i) {
    const size_t at = i - 1;
    const auto [lo, hi] =
        at < c.slot_ranges.size() ? c.slot_ranges[at] : std::pair<float, float>(slot_lo, 0.5f);
    init.push_back(RandomTensor(rng, DT_FLOAT, shape, lo, hi));
  }
  return init;
}

// An argument of OpCase's op after its variables: a float constant, the fed
// gradient or the fed indices.
struct Arg {
  enum Kind { kValue, kGrad, kIds };
  Kind kind = kValue;
  float value = 0;
};
Arg Value(float x) { return {Arg::kValue, x}; }
constexpr Arg kGradArg{Arg::kGrad};
constexpr Arg kIdsArg{Arg::kIds};

// The case of `op` over `num_vars` variables (resource handles when its name
// starts with "Resource") and then `args`, with bool attributes `flags`.
RowCase OpCase(std::string label, const std::string& op, int num_vars, std::vector<Arg> args,
               std::vector<std::pair<std::string, bool>> flags = {},
               std::vector<std::pair<float, float>> slot_ranges = {}) {
  RowCase c;
  c.label = std::move(label);
  c.num_vars = num_vars;
  c.resource = op.rfind("Resource", 0) == 0;
  c.slot_ranges = std::move(slot_ranges);
  c.update = [op, args = std::move(args), flags = std::move(flags)](
                 const Scope& d, const Scope& k, const std::vector<Output>& v, Output g,
                 Output ids) {
    OpBuilder b = d.Op(op);
    for (const Output& var : v) b.Input(var);
    for (const Arg& a : args) {
      b.Input(a.kind == Arg::kGrad ? g : a.kind == Arg::kIds ? ids : ops::Const(k, a.value));
    }
    for (const auto& [name, value] : flags) b.Attr(name, value);
    return Output(b.Finalize(), 0);
  };
  return c;
}

// Variables [kRows, kDim] on `device` set to `init`, then one update per
// (grad, ids) pair; every variable's value afterwards.
absl::StatusOr<std::vector<Tensor>> RunRowUpdates(
    const char* device, int max_gpus, const RowCase& c, const std::vector<Tensor>& init,
    const std::vector<std::pair<Tensor, Tensor>>& steps) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope d = root.WithDevice(device);
  std::vector<Output> vars, values;
  std::vector<Node*> assigns;
  for (int i = 0; i < c.num_vars; ++i) {
    const std::string name = i == 0 ? "var" : absl::StrCat("slot", i);
    values.push_back(ops::Placeholder(d.WithOpName(name + "_init"), DT_FLOAT));
    if (c.resource) {
      vars.push_back(ops::VarHandleOp(d.WithOpName(name), DT_FLOAT, init[i].shape()));
      assigns.push_back(ops::AssignVariableOp(d.WithOpName(name + "_assign"), vars[i], values[i]));
      continue;
    }
    vars.push_back(ops::Variable(d.WithOpName(name), init[i].shape(), DT_FLOAT));
    assigns.push_back(ops::Assign(d.WithOpName(name + "_assign"), vars[i], values[i]).node);
  }
  Output grad = ops::Placeholder(d.WithOpName("grad"), DT_FLOAT);
  Output ids = ops::Placeholder(Unplaced(d).WithOpName("ids"), steps[0].second.dtype());
  Output update = c.update(d.WithOpName("update"), Unplaced(d), vars, grad, ids);
  std::vector<Output> reads;
  for (size_t i = 0; i < vars.size(); ++i) {
    const std::string name = absl::StrCat("read", i);
    reads.push_back(c.resource ? ops::ReadVariableOp(d.WithOpName(name), vars[i], DT_FLOAT)
                               : ops::Identity(d.WithOpName(name), vars[i]));
  }
  RETURN_IF_ERROR(root.status());
  ASSIGN_OR_RETURN(std::unique_ptr<TestSession> session,
                   TestSession::Create(root, TestSessionOptions(max_gpus)));
  std::vector<std::pair<Output, Tensor>> feeds;
  for (size_t i = 0; i < vars.size(); ++i) feeds.push_back({values[i], init[i]});
  RETURN_IF_ERROR(session->Run(feeds, {}, assigns).status());
  for (const auto& [g, i] : steps) {
    RETURN_IF_ERROR(session->Run({{grad, g}, {ids, i}}, {}, {update.node}).status());
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> out, session->Run({}, reads, {}));
  ::testing::AssertionResult placed = session->PlacedOn("update", device);
  if (!placed) return absl::FailedPreconditionError(placed.message());
  return out;
}

// `n` row ids in [0, kRows) of `dtype`: distinct, or with repeats.
Tensor RowIds(std::mt19937& rng, DataType dtype, int64_t n, bool distinct) {
  std::vector<int64_t> all(kRows);
  for (int64_t i = 0; i < kRows; ++i) all[i] = i;
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<int64_t> ids(all.begin(), all.begin() + n);
  if (!distinct) {
    for (int64_t i = 1; i < n; i += 3) ids[i] = ids[0];
  }
  if (dtype == DT_INT64) return Tensor::FromVector(ids);
  return Tensor::FromVector(std::vector<int32_t>(ids.begin(), ids.end()));
}

void ExpectGpuMatchesCpu(std::mt19937& rng, const RowCase& c, bool distinct, bool scalar_grad,
                         float slot_lo = -0.1f) {
  for (DataType index_type : {DT_INT32, DT_INT64}) {
    const std::string label = absl::StrCat(c.label, " ", DataTypeName(index_type));
    const std::vector<Tensor> init = InitialValues(rng, c, slot_lo);
    std::vector<std::pair<Tensor, Tensor>> steps;
    for (int step = 0; step < 3; ++step) {
      const int64_t n = 12;
      const TensorShape g = scalar_grad ? TensorShape({}) : TensorShape({n, kDim});
      steps.push_back(
          {RandomTensor(rng, DT_FLOAT, g, -1, 1), RowIds(rng, index_type, n, distinct)});
    }
    absl::StatusOr<std::vector<Tensor>> cpu = RunRowUpdates(kCpu0, 0, c, init, steps);
    ASSERT_TRUE(cpu.ok()) << label << " on the CPU: " << cpu.status();
    absl::StatusOr<std::vector<Tensor>> gpu = RunRowUpdates(kGpu0, 1, c, init, steps);
    ASSERT_TRUE(gpu.ok()) << label << " on the GPU: " << gpu.status();
    for (size_t i = 0; i < cpu->size(); ++i) {
      EXPECT_TRUE(Close((*gpu)[i], (*cpu)[i], 1e-5)) << label << ", variable " << i;
    }
  }
}

TEST_F(GpuSparseTest, ScatterOpsMatchTheCpu) {
  using Fn =
      Output (*)(const Scope&, Input, Input, Input, const ops::ScatterAttrs&, std::source_location);
  const std::vector<std::pair<const char*, Fn>> ops_ = {{"ScatterUpdate", &ops::ScatterUpdate},
                                                        {"ScatterAdd", &ops::ScatterAdd},
                                                        {"ScatterSub", &ops::ScatterSub}};
  for (const auto& [name, fn] : ops_) {
    RowCase c{
        name, 1,
        [fn = fn](const Scope& d, const Scope&, const std::vector<Output>& v, Output g,
                  Output ids) { return fn(d, v[0], ids, g, {}, std::source_location::current()); }};
    // ScatterUpdate's last write wins on the CPU; on the GPU repeated rows
    // race (as in TensorFlow), so it gets distinct rows.
    const bool distinct = std::string(name) == "ScatterUpdate";
    ExpectGpuMatchesCpu(rng(), c, distinct, /*scalar_grad=*/false);
    c.label = absl::StrCat(name, " (scalar updates)");
    ExpectGpuMatchesCpu(rng(), c, distinct, /*scalar_grad=*/true);
  }
}

TEST_F(GpuSparseTest, SparseApplyRulesMatchTheCpu) {
  const std::vector<RowCase> cases = {
      {"SparseApplyMomentum", 2,
       [](const Scope& d, const Scope& c, const std::vector<Output>& v, Output g, Output ids) {
         return ops::SparseApplyMomentum(d, v[0], v[1], ops::Const(c, 0.05f), g, ids,
                                         ops::Const(c, 0.9f));
       }},
      {"SparseApplyMomentum(nesterov)", 2,
       [](const Scope& d, const Scope& c, const std::vector<Output>& v, Output g, Output ids) {
         return ops::SparseApplyMomentum(d, v[0], v[1], ops::Const(c, 0.05f), g, ids,
                                         ops::Const(c, 0.9f), {.use_nesterov = true});
       }},
      {"SparseApplyAdagrad", 2,
       [](const Scope& d, const Scope& c, const std::vector<Output>& v, Output g, Output ids) {
         return ops::SparseApplyAdagrad(d, v[0], v[1], ops::Const(c, 0.1f), g, ids);
       }},
      {"SparseApplyFtrl", 3,
       [](const Scope& d, const Scope& c, const std::vector<Output>& v, Output g, Output ids) {
         return ops::SparseApplyFtrl(d, v[0], v[1], v[2], g, ids, ops::Const(c, 0.1f),
                                     ops::Const(c, 0.01f), ops::Const(c, 0.02f),
                                     ops::Const(c, -0.5f));
       }},
      {"SparseApplyFtrl(lr_power -0.7, linear by lr)", 3,
       [](const Scope& d, const Scope& c, const std::vector<Output>& v, Output g, Output ids) {
         return ops::SparseApplyFtrl(d, v[0], v[1], v[2], g, ids, ops::Const(c, 0.1f),
                                     ops::Const(c, 0.01f), ops::Const(c, 0.02f),
                                     ops::Const(c, -0.7f), {.multiply_linear_by_lr = true});
       }},
  };
  // Adagrad's and FTRL's accumulators stay positive.
  for (const RowCase& c : cases) ExpectGpuMatchesCpu(rng(), c, /*distinct=*/true, false, 0.1f);
  // The other adaptive rules, in their ref and resource forms.
  const Arg g = kGradArg, ids = kIdsArg;
  const std::vector<RowCase> adaptive = {
      OpCase("SparseApplyAdagradV2", "SparseApplyAdagradV2", 2,
             {Value(0.1f), Value(1e-3f), g, ids}),
      OpCase("ResourceSparseApplyAdagradV2(no slot update)", "ResourceSparseApplyAdagradV2", 2,
             {Value(0.1f), Value(1e-3f), g, ids}, {{"update_slots", false}}),
      OpCase("SparseApplyFtrlV2(lr_power -0.7, linear by lr)", "SparseApplyFtrlV2", 3,
             {g, ids, Value(0.1f), Value(0.01f), Value(0.02f), Value(0.05f), Value(-0.7f)},
             {{"multiply_linear_by_lr", true}}),
      OpCase("SparseApplyAdadelta", "SparseApplyAdadelta", 3,
             {Value(1.0f), Value(0.95f), Value(1e-6f), g, ids}),
      OpCase("SparseApplyRMSProp", "SparseApplyRMSProp", 3,
             {Value(0.01f), Value(0.9f), Value(0.5f), Value(1e-6f), g, ids}),
      OpCase("ResourceSparseApplyRMSProp", "ResourceSparseApplyRMSProp", 3,
             {Value(0.01f), Value(0.9f), Value(0.5f), Value(1e-6f), g, ids}),
      // ms well above mg^2, so that the centered denominator stays positive.
      OpCase("SparseApplyCenteredRMSProp", "SparseApplyCenteredRMSProp", 4,
             {Value(0.01f), Value(0.95f), Value(0.5f), Value(1e-6f), g, ids}, {},
             {{-0.1f, 0.1f}, {0.2f, 0.5f}, {-0.1f, 0.1f}}),
      OpCase("ResourceSparseApplyCenteredRMSProp", "ResourceSparseApplyCenteredRMSProp", 4,
             {Value(0.01f), Value(0.95f), Value(0.5f), Value(1e-6f), g, ids}, {},
             {{-0.1f, 0.1f}, {0.2f, 0.5f}, {-0.1f, 0.1f}}),
  };
  for (const RowCase& c : adaptive) ExpectGpuMatchesCpu(rng(), c, /*distinct=*/true, false, 0.1f);
  // Keras's momentum, which has only the resource form.
  for (bool nesterov : {false, true}) {
    RowCase keras{
        absl::StrCat("ResourceSparseApplyKerasMomentum", nesterov ? "(nesterov)" : ""), 2,
        [nesterov](const Scope& d, const Scope& c, const std::vector<Output>& v, Output g,
                   Output ids) {
          return Output(d.Op("ResourceSparseApplyKerasMomentum")
                            .Input(v[0])
                            .Input(v[1])
                            .Input(ops::Const(c, 0.05f))
                            .Input(g)
                            .Input(ids)
                            .Input(ops::Const(c, 0.9f))
                            .Attr("use_nesterov", nesterov)
                            .Finalize(),
                        0);
        },
        /*resource=*/true};
    ExpectGpuMatchesCpu(rng(), keras, /*distinct=*/true, false);
  }
}

TEST_F(GpuSparseTest, DenseRulesMatchTheCpu) {
  const Arg g = kGradArg;
  // Centered RMSProp's ms well above mg^2 (its denominator stays positive).
  const std::vector<std::pair<float, float>> centered = {
      {-0.1f, 0.1f}, {0.2f, 0.5f}, {-0.1f, 0.1f}};
  const std::vector<RowCase> cases = {
      OpCase("ApplyAdagrad", "ApplyAdagrad", 2, {Value(0.1f), g}),
      OpCase("ApplyAdagradV2", "ApplyAdagradV2", 2, {Value(0.1f), Value(1e-3f), g}),
      OpCase("ApplyFtrl", "ApplyFtrl", 3,
             {g, Value(0.1f), Value(0.01f), Value(0.02f), Value(-0.5f)}),
      OpCase("ApplyFtrlV2", "ApplyFtrlV2", 3,
             {g, Value(0.1f), Value(0.01f), Value(0.02f), Value(0.05f), Value(-0.5f)}),
      OpCase("ApplyAdadelta", "ApplyAdadelta", 3, {Value(1.0f), Value(0.95f), Value(1e-6f), g}),
      OpCase("ApplyRMSProp", "ApplyRMSProp", 3,
             {Value(0.01f), Value(0.9f), Value(0.5f), Value(1e-6f), g}),
      OpCase("ResourceApplyRMSProp", "ResourceApplyRMSProp", 3,
             {Value(0.01f), Value(0.9f), Value(0.5f), Value(1e-6f), g}),
      OpCase("ApplyCenteredRMSProp", "ApplyCenteredRMSProp", 4,
             {Value(0.01f), Value(0.95f), Value(0.5f), Value(1e-6f), g}, {}, centered),
      OpCase("ResourceApplyCenteredRMSProp", "ResourceApplyCenteredRMSProp", 4,
             {Value(0.01f), Value(0.95f), Value(0.5f), Value(1e-6f), g}, {}, centered),
      // beta1_power, lr, beta1, beta2, epsilon
      OpCase("ApplyAdaMax", "ApplyAdaMax", 3,
             {Value(0.729f), Value(0.01f), Value(0.9f), Value(0.999f), Value(1e-7f), g}),
      // beta1_power, beta2_power, lr, beta1, beta2, epsilon; vhat above v
      // for some elements, below for others.
      OpCase("ResourceApplyAdamWithAmsgrad", "ResourceApplyAdamWithAmsgrad", 4,
             {Value(0.729f), Value(0.997f), Value(0.01f), Value(0.9f), Value(0.999f),
              Value(1e-7f), g},
             {}, {{-0.1f, 0.1f}, {0.1f, 0.5f}, {0.0f, 0.6f}}),
      // lr, alpha, sign_decay, beta; m of either sign, so signs agree and not.
      OpCase("ApplyAddSign", "ApplyAddSign", 2,
             {Value(0.01f), Value(1.0f), Value(0.5f), Value(0.9f), g}, {}, {{-0.5f, 0.5f}}),
      // lr, logbase, sign_decay, beta
      OpCase("ResourceApplyPowerSign", "ResourceApplyPowerSign", 2,
             {Value(0.01f), Value(0.6931f), Value(0.5f), Value(0.9f), g}, {}, {{-0.5f, 0.5f}}),
  };
  for (const RowCase& c : cases) {
    const TensorShape shape({kRows, kDim});
    const std::vector<Tensor> init = InitialValues(rng(), c, 0.1f);
    std::vector<std::pair<Tensor, Tensor>> steps;
    for (int step = 0; step < 3; ++step) {
      steps.push_back(
          {RandomTensor(rng(), DT_FLOAT, shape, -1, 1), Tensor::FromVector<int64_t>({0})});
    }
    absl::StatusOr<std::vector<Tensor>> cpu = RunRowUpdates(kCpu0, 0, c, init, steps);
    ASSERT_TRUE(cpu.ok()) << c.label << " on the CPU: " << cpu.status();
    absl::StatusOr<std::vector<Tensor>> gpu = RunRowUpdates(kGpu0, 1, c, init, steps);
    ASSERT_TRUE(gpu.ok()) << c.label << " on the GPU: " << gpu.status();
    for (size_t i = 0; i < cpu->size(); ++i) {
      EXPECT_TRUE(Close((*gpu)[i], (*cpu)[i], 1e-5)) << c.label << ", variable " << i;
      EXPECT_FALSE(Close((*cpu)[i], init[i], 1e-6)) << c.label << ": variable " << i
                                                    << " did not change";
    }
  }
}

// An embedding table [100, 16] on `device`, loss = sum((gather(table, ids) *
// w)^2) / 2 over ids with repeats, five steps of `opt`: the table after.
absl::StatusOr<Tensor> TrainEmbedding(const char* device, int max_gpus, Optimizer* opt,
                                      const Tensor& init, const std::vector<Tensor>& batches) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope d = root.WithDevice(device);
  Output table = ops::Variable(d.WithOpName("table"), init.shape(), DT_FLOAT);
  Output value = ops::Placeholder(d.WithOpName("table_init"), DT_FLOAT);
  Node* assign = ops::Assign(d.WithOpName("table_assign"), table, value).node;
  Output ids = ops::Placeholder(Unplaced(d).WithOpName("ids"), DT_INT64);
  Output rows = ops::GatherV2(d, table, ids, int32_t{0});
  Output w = ops::Const(Unplaced(d), std::vector<float>(16, 0.5f), TensorShape({16}));
  Output loss = ops::Mul(d.WithOpName("loss"),
                         ops::Sum(d, ops::Square(d, ops::Mul(d, rows, w)), {0, 1}), 0.5f);
  ASSIGN_OR_RETURN(Node * train, opt->Minimize(root, loss, {table}));
  Node* init_slots = ops::GlobalVariablesInitializer(root);
  Output read = ops::Identity(d.WithOpName("read"), table);
  RETURN_IF_ERROR(root.status());
  ASSIGN_OR_RETURN(std::unique_ptr<TestSession> session,
                   TestSession::Create(root, TestSessionOptions(max_gpus)));
  RETURN_IF_ERROR(session->Run({}, {}, {init_slots}).status());
  RETURN_IF_ERROR(session->Run({{value, init}}, {}, {assign}).status());
  for (const Tensor& b : batches) RETURN_IF_ERROR(session->Run({{ids, b}}, {}, {train}).status());
  ASSIGN_OR_RETURN(std::vector<Tensor> out, session->Run({}, {read}, {}));
  ::testing::AssertionResult placed = session->PlacedOn("table", device);
  if (!placed) return absl::FailedPreconditionError(placed.message());
  return out[0];
}

TEST_F(GpuSparseTest, EmbeddingTrainsLikeOnTheCpu) {
  const Tensor init = RandomTensor(rng(), DT_FLOAT, TensorShape({100, 16}), -1, 1);
  std::vector<Tensor> batches;
  for (int step = 0; step < 5; ++step) {
    std::vector<int64_t> ids(64);
    std::uniform_int_distribution<int64_t> row(0, 29);  // 64 draws of 30 rows: repeats
    for (int64_t& id : ids) id = row(rng());
    batches.push_back(Tensor::FromVector(ids));
  }
  for (int k = 0; k < 8; ++k) {
    // A fresh optimizer per session: each keeps its slots by graph.
    auto make = [k]() -> std::unique_ptr<Optimizer> {
      switch (k) {
        case 0:
          return std::make_unique<GradientDescentOptimizer>(0.1);
        case 1:
          return std::make_unique<MomentumOptimizer>(0.1, 0.9);
        case 2:
          return std::make_unique<AdamOptimizer>(0.01);
        case 3:
          return std::make_unique<AdagradOptimizer>(0.1);
        case 4:
          return std::make_unique<RMSPropOptimizer>(0.01);
        case 5:
          return std::make_unique<RMSPropOptimizer>(
              0.01, RMSPropOptimizer::Options{.momentum = 0.9, .centered = true});
        case 6:
          return std::make_unique<AdadeltaOptimizer>(1.0);
        default:
          return std::make_unique<FtrlOptimizer>(0.1);
      }
    };
    std::unique_ptr<Optimizer> on_cpu = make(), on_gpu = make();
    absl::StatusOr<Tensor> cpu = TrainEmbedding(kCpu0, 0, on_cpu.get(), init, batches);
    ASSERT_TRUE(cpu.ok()) << on_cpu->name() << " on the CPU: " << cpu.status();
    absl::StatusOr<Tensor> gpu = TrainEmbedding(kGpu0, 1, on_gpu.get(), init, batches);
    ASSERT_TRUE(gpu.ok()) << on_gpu->name() << " on the GPU: " << gpu.status();
    EXPECT_TRUE(Close(*gpu, *cpu, 1e-5)) << on_gpu->name();
    EXPECT_FALSE(Close(*gpu, init, 1e-4)) << on_gpu->name() << ": the table did not change";
  }
}

}  // namespace
}  // namespace sluice::gpu_test
