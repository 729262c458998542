// Property: placing a graph at random over several devices does not change
// what it computes. Random DAGs (seeded) of float [4,4] ops with random
// control edges run once on one device and once with their nodes pinned at
// random over 2-4 devices; every fetch must match. A second family adds
// variables on random devices, updated by AssignAdd under control
// dependencies and read on other devices, compared over several steps.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/state/state_ops.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

const TensorShape kShape({4, 4});

using Feeds = std::vector<std::pair<std::string, Tensor>>;

// What a random graph asks of a run.
struct RunSpec {
  Feeds feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;    // the variable updates
  std::string init;                    // "" without variables
  std::vector<std::string> variables;  // fetched after the steps
};

// Op `kind` of the random graphs: 0-4 unary, 5-8 binary, 9 AddN, 10 MatMul.
Output MakeOp(int kind, const Scope& s, const std::vector<Output>& in) {
  switch (kind) {
    case 0:
      return ops::Neg(s, in[0]);
    case 1:
      return ops::Tanh(s, in[0]);
    case 2:
      return ops::Square(s, in[0]);
    case 3:
      return ops::Relu(s, in[0]);
    case 4:
      return ops::Identity(s, in[0]);
    case 5:
      return ops::Add(s, in[0], in[1]);
    case 6:
      return ops::Mul(s, in[0], in[1]);
    case 7:
      return ops::Sub(s, in[0], in[1]);
    case 8:
      return ops::Maximum(s, in[0], in[1]);
    case 9:
      return ops::AddN(s, in);
    default:
      return ops::MatMul(s, in[0], in[1]);
  }
}

// Builds one random graph. The random stream does not depend on whether
// nodes are pinned, so the same seed gives the same graph with and without
// devices.
class RandomGraphBuilder {
 public:
  RandomGraphBuilder(uint32_t seed, int num_devices, bool pin, bool with_variables)
      : rng_(seed), num_devices_(num_devices), pin_(pin), with_variables_(with_variables) {}

  RunSpec Build(const Scope& root) {
    RunSpec spec;
    const int num_nodes = Rand(20, 60);
    if (with_variables_) {
      const int num_vars = Rand(2, 4);
      for (int v = 0; v < num_vars; ++v) {
        Var var;
        const std::string name = absl::StrCat("v", v);
        ops::VariableAndInit vi =
            ops::VariableWithInit(Placed(root).WithOpName(name), ops::Const(root, RandomTensor()));
        var.ref = vi.var;
        vars_.push_back(var);
        spec.variables.push_back(name);
      }
    }
    for (int i = 0; i < 3; ++i) AddSource(root, &spec);
    while (static_cast<int>(items_.size()) < num_nodes) {
      if (with_variables_ && Rand(0, 99) < 15 && AddUpdate(root, &spec)) continue;
      if (Rand(0, 99) < 8) {
        AddSource(root, &spec);
      } else {
        AddOp(root);
      }
    }
    // Fetch every sink and a few other nodes.
    for (const Item& item : items_) {
      if (item.out.node->out_edges().empty() || Rand(0, 99) < 10) {
        spec.fetches.push_back(item.out.node->name());
      }
    }
    if (with_variables_) spec.init = ops::GlobalVariablesInitializer(root)->name();
    return spec;
  }

 private:
  // A tensor-valued node, with the variable updates ordered before it.
  struct Item {
    Output out;
    uint64_t updates_before = 0;  // bit i: update i is an ancestor
  };
  struct Var {
    Output ref;
    std::vector<int> updates;  // ids, in chain order
    bool closed = false;       // read after its last update: no more updates
  };
  // An input choice: a node's output, or a variable read.
  struct Choice {
    bool is_var;
    int index;
  };

  int Rand(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  Tensor RandomTensor() {
    Tensor t(DT_FLOAT, kShape);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (float& x : t.flat<float>()) x = dist(rng_);
    return t;
  }

  // A scope pinned to a random device (most of the time).
  Scope Placed(const Scope& s) {
    const int device = Rand(0, num_devices_ - 1);
    const bool pinned = Rand(0, 99) >= 15;
    if (!pin_ || !pinned) return s;
    return s.WithDevice(absl::StrCat("/device:CPU:", device));
  }

  std::string NextName() { return absl::StrCat("n", next_name_++); }

  void AddSource(const Scope& root, RunSpec* spec) {
    const bool placeholder = Rand(0, 1) == 0;
    Tensor value = RandomTensor();
    Scope s = Placed(root).WithOpName(NextName());
    Item item;
    if (placeholder) {
      item.out = ops::Placeholder(s, DT_FLOAT, {.shape = kShape});
      spec->feeds.emplace_back(item.out.node->name(), value);
    } else {
      item.out = ops::Const(s, value);
    }
    items_.push_back(item);
  }

  // AssignAdd of a random tensor to a variable that is still open, after
  // the variable's previous update (updates of one variable form a chain,
  // so their float sums are deterministic).
  bool AddUpdate(const Scope& root, RunSpec* spec) {
    const int v = Rand(0, static_cast<int>(vars_.size()) - 1);
    const int value = Rand(0, static_cast<int>(items_.size()) - 1);
    if (vars_[v].closed || num_updates_ >= 60) return false;
    std::vector<Node*> deps;
    uint64_t before = items_[value].updates_before;
    if (!vars_[v].updates.empty()) {
      const int last = vars_[v].updates.back();
      deps.push_back(update_nodes_[last]);
      before |= update_before_[last] | (uint64_t{1} << last);
    }
    const int id = num_updates_++;
    Output u = ops::AssignAdd(root.WithOpName(absl::StrCat("u", id)).WithControlDependencies(deps),
                              vars_[v].ref, items_[value].out);
    update_nodes_.push_back(u.node);
    update_before_.push_back(before);
    vars_[v].updates.push_back(id);
    spec->targets.push_back(u.node->name());
    return true;
  }

  uint64_t UpdatesOf(int v) const {
    uint64_t mask = 0;
    for (int id : vars_[v].updates) mask |= uint64_t{1} << id;
    return mask;
  }

  Choice PickInput(bool allow_var) {
    if (allow_var && with_variables_ && Rand(0, 99) < 20) {
      return {true, Rand(0, static_cast<int>(vars_.size()) - 1)};
    }
    // Recent nodes a little more often, for deeper graphs.
    const int n = static_cast<int>(items_.size());
    const int a = Rand(0, n - 1), b = Rand(0, n - 1);
    return {false, std::max(a, b)};
  }

  void AddOp(const Scope& root) {
    const int kind = Rand(0, 10);  // 0-4 unary, 5-8 binary, 9 AddN, 10 MatMul
    const int arity = kind <= 4 ? 1 : kind <= 8 ? 2 : kind == 9 ? Rand(2, 4) : 2;
    const bool is_identity = kind == 4;  // a read Identity sits with its variable
    std::vector<Choice> inputs;
    for (int i = 0; i < arity; ++i) inputs.push_back(PickInput(!is_identity));
    // Random control dependencies, on earlier nodes or on variable updates.
    std::vector<Node*> deps;
    uint64_t ctrl_before = 0;
    const int num_deps = Rand(0, 99) < 30 ? Rand(1, 2) : 0;
    for (int d = 0; d < num_deps; ++d) {
      if (num_updates_ > 0 && Rand(0, 99) < 40) {
        const int u = Rand(0, num_updates_ - 1);
        deps.push_back(update_nodes_[u]);
        ctrl_before |= update_before_[u] | (uint64_t{1} << u);
      } else {
        const Item& item = items_[Rand(0, static_cast<int>(items_.size()) - 1)];
        deps.push_back(item.out.node);
        ctrl_before |= item.updates_before;
      }
    }
    // A variable read ordered after some of its updates reads when it runs,
    // so it must come after all of them (and the variable takes no more):
    // otherwise the value read would depend on the schedule, on any device.
    auto before_of = [&] {
      uint64_t before = ctrl_before;
      for (const Choice& c : inputs) {
        if (!c.is_var) before |= items_[c.index].updates_before;
      }
      return before;
    };
    uint64_t before = before_of();
    for (bool changed = true; changed;) {  // each pass turns one read into a node input
      changed = false;
      for (Choice& c : inputs) {
        if (!c.is_var) continue;
        const uint64_t seen = before & UpdatesOf(c.index);
        if (seen != 0 && !(seen & (uint64_t{1} << vars_[c.index].updates.back()))) {
          c = PickInput(false);
          before = before_of();
          changed = true;
          break;
        }
      }
    }
    for (const Choice& c : inputs) {
      if (c.is_var && (before & UpdatesOf(c.index)) != 0) vars_[c.index].closed = true;
    }
    std::vector<Output> in;
    for (const Choice& c : inputs)
      in.push_back(c.is_var ? vars_[c.index].ref : items_[c.index].out);
    const Scope s = Placed(root).WithOpName(NextName()).WithControlDependencies(deps);
    Item item;
    item.updates_before = before;
    item.out = MakeOp(kind, s, in);
    items_.push_back(item);
  }

  std::mt19937 rng_;
  const int num_devices_;
  const bool pin_;
  const bool with_variables_;
  int next_name_ = 0;
  std::vector<Item> items_;
  std::vector<Var> vars_;
  int num_updates_ = 0;
  std::vector<Node*> update_nodes_;
  std::vector<uint64_t> update_before_;
};

// Bitwise equal, else within 1e-6 relative (NaNs equal NaNs).
bool SameValues(const Tensor& a, const Tensor& b, std::string* why) {
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) {
    *why = absl::StrCat("shapes ", a.shape().DebugString(), " vs ", b.shape().DebugString());
    return false;
  }
  if (std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0) return true;
  absl::Span<const float> x = a.flat<float>(), y = b.flat<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (x[i] == y[i]) continue;
    if (std::abs(x[i] - y[i]) <= 1e-6f * std::max(std::abs(x[i]), std::abs(y[i]))) continue;
    *why = absl::StrCat("element ", i, ": ", x[i], " vs ", y[i]);
    return false;
  }
  return true;
}

std::unique_ptr<Session> MakeSession(const Scope& s, int num_virtual_cpus) {
  SessionConfig opts = BuiltinSessionConfig();
  opts.devices.cpu_threads = 2;
  opts.devices.num_virtual_cpus = num_virtual_cpus;
  opts.devices.virtual_cpu_threads = 1;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(opts, *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? *std::move(sess) : nullptr;
}

// Values seen across all graphs, to check the comparisons are not vacuous.
struct Tally {
  int64_t values = 0;
  int64_t finite = 0;
  void Add(const Tensor& t) {
    for (float x : t.flat<float>()) {
      ++values;
      finite += std::isfinite(x) ? 1 : 0;
    }
  }
};

// Runs the graph of `seed` on one device and spread over 2-4 devices for
// `steps` steps; returns false (with the failures reported) on a mismatch.
void CheckSeed(uint32_t seed, bool with_variables, int steps, Tally* tally) {
  const int num_devices = 2 + static_cast<int>(seed % 3);
  SCOPED_TRACE(absl::StrCat("seed ", seed, ", ", num_devices, " devices",
                            with_variables ? ", with variables" : ""));
  Scope one_scope = Scope::NewRootScope(BuiltinOps());
  RunSpec spec = RandomGraphBuilder(seed, num_devices, false, with_variables).Build(one_scope);
  Scope many_scope = Scope::NewRootScope(BuiltinOps());
  RunSpec many_spec = RandomGraphBuilder(seed, num_devices, true, with_variables).Build(many_scope);
  ASSERT_TRUE(one_scope.ok()) << one_scope.status();
  ASSERT_TRUE(many_scope.ok()) << many_scope.status();
  ASSERT_EQ(spec.fetches, many_spec.fetches);
  ASSERT_EQ(one_scope.graph()->num_nodes(), many_scope.graph()->num_nodes());

  std::unique_ptr<Session> one = MakeSession(one_scope, 0);
  std::unique_ptr<Session> many = MakeSession(many_scope, num_devices - 1);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(many, nullptr);
  if (!spec.init.empty()) {
    ASSERT_TRUE(one->Run({}, {}, {spec.init}).ok());
    absl::StatusOr<std::vector<Tensor>> init = many->Run({}, {}, {spec.init});
    ASSERT_TRUE(init.ok()) << init.status();
  }
  RunOptions run_opts;
  run_opts.output_partition_graphs = true;
  for (int step = 0; step < steps; ++step) {
    absl::StatusOr<std::vector<Tensor>> want = one->Run(spec.feeds, spec.fetches, spec.targets);
    ASSERT_TRUE(want.ok()) << want.status();
    RunMetadata meta;
    absl::StatusOr<std::vector<Tensor>> got =
        many->Run(spec.feeds, spec.fetches, spec.targets, run_opts, &meta);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_GE(meta.partition_graphs.size(), 2u) << "the graph should span several devices";
    for (size_t i = 0; i < spec.fetches.size(); ++i) {
      std::string why;
      EXPECT_TRUE(SameValues((*got)[i], (*want)[i], &why))
          << "step " << step << ", fetch " << spec.fetches[i] << ": " << why;
      tally->Add((*want)[i]);
    }
  }
  if (!spec.variables.empty()) {
    absl::StatusOr<std::vector<Tensor>> want = one->Run({}, spec.variables, {});
    absl::StatusOr<std::vector<Tensor>> got = many->Run({}, spec.variables, {});
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    for (size_t i = 0; i < spec.variables.size(); ++i) {
      std::string why;
      EXPECT_TRUE(SameValues((*got)[i], (*want)[i], &why))
          << "variable " << spec.variables[i] << " after " << steps << " steps: " << why;
      tally->Add((*want)[i]);
    }
  }
}

TEST(PartitionPropertyTest, RandomPlacementsComputeWhatOneDeviceComputes) {
  Tally tally;
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    CheckSeed(seed, /*with_variables=*/false, /*steps=*/2, &tally);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Most compared values are ordinary numbers, not infinities or NaNs.
  EXPECT_GT(tally.finite, tally.values / 2) << tally.finite << " of " << tally.values;
}

TEST(PartitionPropertyTest, RandomlyPlacedVariablesEndTheSame) {
  Tally tally;
  for (uint32_t seed = 1001; seed <= 1080; ++seed) {
    CheckSeed(seed, /*with_variables=*/true, /*steps=*/3, &tally);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(tally.finite, tally.values / 2) << tally.finite << " of " << tally.values;
}

}  // namespace
}  // namespace sluice
