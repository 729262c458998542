// An embedding table's training step, sparse against dense gradients, and
// its size from 2^18 to 2^22 rows (2^24 with --max_log2_rows=24): the table
// (rows x 32 floats) on CPU:1 as a parameter server's device, the lookups and
// the loss on CPU:0 as a worker's, plain SGD. The PyTorch peer is
// bench/torch_embedding.py (nn.EmbeddingBag, sparse=True, the same sizes).
//
//   bazel run -c opt //bench:sparse_embedding [-- --steps=20 --max_log2_rows=22]
//
// The step: a batch of --batch examples, each the sum of the rows of
// --features ids drawn uniformly (a fixed set per step), loss = mean over the
// batch of the squared norm of the sum. Figures, per table size 2^k:
//   embedding_sparse_step_2^k: ms        Minimize's sparse update (ScatterSub of the rows)
//   embedding_dense_step_2^k: ms         the gradient made dense first (IndexedSlicesToDense
//                                        on the worker, ApplyGradientDescent on the ps)
//   embedding_sparse_steps_per_s_2^k: steps/s
//   embedding_sparse_speedup_2^k: x      dense / sparse
//   embedding_bytes_to_ps_sparse_2^k: bytes   what the step sends to the table's device
//   embedding_bytes_to_ps_dense_2^k: bytes    (the gradient tensors' sizes)
// The dense step is skipped (and said so) above --max_dense_log2_rows.
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "session/direct_session.h"
#include "sluice.h"

ABSL_FLAG(int, steps, 20, "timed steps per configuration");
ABSL_FLAG(int, warmup, 3, "untimed steps first");
ABSL_FLAG(int, batch, 256, "examples per step");
ABSL_FLAG(int, features, 26, "ids per example (categorical features)");
ABSL_FLAG(int, dim, 32, "embedding width");
ABSL_FLAG(int, min_log2_rows, 18, "smallest table: 2^k rows");
ABSL_FLAG(int, max_log2_rows, 22, "largest table: 2^k rows");
ABSL_FLAG(int, max_dense_log2_rows, 22, "dense steps up to 2^k rows");
ABSL_FLAG(std::string, optimizer, "sgd", "sgd, adagrad or ftrl");

namespace sluice::bench {
namespace {

constexpr char kPs[] = "/job:localhost/replica:0/task:0/device:CPU:1";
constexpr char kWorker[] = "/job:localhost/replica:0/task:0/device:CPU:0";

struct Built {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output ids, loss;
  ops::VariableAndInit table;
  Node* train = nullptr;
  Node* init = nullptr;
  std::vector<Output> sent;  // the gradient tensors the ps receives
};

absl::StatusOr<std::unique_ptr<Optimizer>> MakeOptimizer() {
  const std::string name = absl::GetFlag(FLAGS_optimizer);
  if (name == "sgd") return std::make_unique<GradientDescentOptimizer>(0.01);
  if (name == "adagrad") return std::make_unique<AdagradOptimizer>(0.01);
  if (name == "ftrl") return std::make_unique<FtrlOptimizer>(0.01);
  return absl::InvalidArgumentError(absl::StrCat("--optimizer: sgd, adagrad or ftrl, not ", name));
}

absl::Status Build(Built* b, int64_t rows, bool sparse) {
  const int dim = absl::GetFlag(FLAGS_dim);
  const Scope ps = b->s.WithDevice(kPs);
  const Scope w = b->s.WithDevice(kWorker);
  b->table = ops::VariableWithInit(
      ps.WithOpName("table"),
      ops::RandomUniform(ps, ops::Const(ps, {rows, int64_t{dim}}), DT_FLOAT, {.seed = 1}));
  b->ids = ops::Placeholder(w.WithOpName("ids"), DT_INT64, {.shape = {-1, -1}});
  Output rows_read = ops::GatherV2(w, b->table.var, b->ids, int32_t{0});  // [batch, features, dim]
  Output pooled = ops::Sum(w, rows_read, {1});
  b->loss = ops::Mean(w, ops::Sum(w, ops::Square(w, pooled), {1}), {0});
  ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> opt, MakeOptimizer());
  ASSIGN_OR_RETURN(std::vector<GradAndVar> gvs, opt->ComputeGradients(w, b->loss, {b->table.var}));
  if (!gvs[0].sparse_grad.values.valid()) return absl::InternalError("the gradient is not sparse");
  if (sparse) {
    b->sent = {gvs[0].sparse_grad.values, gvs[0].sparse_grad.indices};
  } else {
    gvs = DenseGradients(w, gvs);
    b->sent = {gvs[0].grad};
  }
  ASSIGN_OR_RETURN(b->train, opt->ApplyGradients(b->s, gvs));
  b->init = ops::GlobalVariablesInitializer(b->s);
  return b->s.status();
}

Tensor Ids(std::mt19937_64* rng, int64_t rows) {
  const int batch = absl::GetFlag(FLAGS_batch);
  const int features = absl::GetFlag(FLAGS_features);
  std::uniform_int_distribution<int64_t> pick(0, rows - 1);
  std::vector<int64_t> v(static_cast<size_t>(batch) * features);
  for (int64_t& id : v) id = pick(*rng);
  return Tensor::FromVector<int64_t>(v, TensorShape({batch, features}));
}

// Median step time (ms) and the bytes of the tensors sent to the ps.
absl::StatusOr<std::pair<double, int64_t>> Measure(int64_t rows, bool sparse) {
  Built b;
  RETURN_IF_ERROR(Build(&b, rows, sparse));
  SessionConfig config = BuiltinSessionConfig();
  config.devices.num_virtual_cpus = 1;
  ASSIGN_OR_RETURN(std::unique_ptr<Session> sess, NewSession(config, *b.s.graph()));
  RETURN_IF_ERROR(sess->Run({}, {}, {b.init}).status());
  std::mt19937_64 rng(7);
  ASSIGN_OR_RETURN(std::vector<Tensor> sent, sess->Run({{b.ids, Ids(&rng, rows)}}, b.sent, {}));
  int64_t bytes = 0;
  for (const Tensor& t : sent) bytes += t.TotalBytes();
  for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) {
    RETURN_IF_ERROR(sess->Run({{b.ids, Ids(&rng, rows)}}, {}, {b.train}).status());
  }
  std::vector<Tensor> batches;
  for (int i = 0; i < absl::GetFlag(FLAGS_steps); ++i) batches.push_back(Ids(&rng, rows));
  size_t next = 0;
  absl::Status failed;
  std::vector<double> ms = TimeRepeated(absl::GetFlag(FLAGS_steps), [&] {
    absl::Status s = sess->Run({{b.ids, batches[next++]}}, {}, {b.train}).status();
    if (!s.ok()) failed = s;
  });
  RETURN_IF_ERROR(failed);
  return std::make_pair(Median(ms), bytes);
}

absl::Status Main() {
  for (int k = absl::GetFlag(FLAGS_min_log2_rows); k <= absl::GetFlag(FLAGS_max_log2_rows);
       k += 2) {
    const int64_t rows = int64_t{1} << k;
    ASSIGN_OR_RETURN(auto sparse, Measure(rows, /*sparse=*/true));
    std::printf("embedding_sparse_step_2^%d: %.3f ms\n", k, sparse.first);
    std::printf("embedding_sparse_steps_per_s_2^%d: %.1f steps/s\n", k, 1000.0 / sparse.first);
    std::printf("embedding_bytes_to_ps_sparse_2^%d: %lld bytes\n", k,
                static_cast<long long>(sparse.second));
    if (k > absl::GetFlag(FLAGS_max_dense_log2_rows)) {
      std::printf("# dense step skipped at 2^%d rows (--max_dense_log2_rows)\n", k);
      continue;
    }
    ASSIGN_OR_RETURN(auto dense, Measure(rows, /*sparse=*/false));
    std::printf("embedding_dense_step_2^%d: %.3f ms\n", k, dense.first);
    std::printf("embedding_bytes_to_ps_dense_2^%d: %lld bytes\n", k,
                static_cast<long long>(dense.second));
    std::printf("embedding_sparse_speedup_2^%d: %.2f x\n", k, dense.first / sparse.first);
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "sparse_embedding", sluice::bench::Main);
}
