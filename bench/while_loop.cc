// Control-flow overhead: a tf.while_loop of small ops, built with
// ops::WhileLoop, run through Session::Run.
//
//   bazel run //bench:while_loop [-- --iterations=1000 --reps=50]
//
// The loop carries an int32 counter and a float scalar:
//   while i < n:  x = x * 0.999 + 0.001;  i = i + 1
// four ops per iteration (Less, Mul, Add, Add) plus the loop's own nodes
// (Merge, Switch, LoopCond, Identity, NextIteration). Printed: the median
// step time divided by the iteration count, with parallel_iterations 1 (each
// iteration after the last) and 10 (TensorFlow's default). Its peer is
// bench/torch_loop.py, the same loop as a Python loop of PyTorch eager ops.
// A third figure splits the loop over two CPU devices: the float arithmetic
// on CPU:1, the rest on CPU:0, so that every iteration crosses devices twice
// (and CPU:1 runs a control loop driven by the LoopCond it receives). A
// fourth writes the same loop as TensorFlow 2 does, a functional While whose
// condition and body are library functions (ops::While), which the session
// lowers and inlines: what a TF2-written loop costs against a TF1 one. The
// last two append x to a TensorList every iteration, at n and 10 n
// iterations.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "absl/flags/flag.h"
#include "bench/bench_util.h"
#include "graph/function_builder.h"
#include "ops/control_flow/control_flow_builders.h"
#include "ops/functional/functional_control_flow.h"
#include "session/direct_session.h"
#include "sluice.h"

ABSL_FLAG(int, iterations, 1000, "loop iterations per step");
ABSL_FLAG(int, reps, 50, "timed steps");

namespace sluice {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

// The loop as a functional While: cond(i, x, n) = i < n, body(i, x, n) =
// (i + 1, x * 0.999 + 0.001, n). With `push`, the body also appends x to a
// TensorList, as TF2's TensorArray of per-step outputs (and its loop
// gradients' accumulators) do; the last output is then the list's length.
absl::StatusOr<std::vector<Output>> FunctionalLoop(const Scope& s, int n, int64_t parallel,
                                                   bool push) {
  std::vector<DataType> types = {DT_INT32, DT_FLOAT, DT_INT32};
  if (push) types.push_back(::tensorflow::DT_VARIANT);
  ASSIGN_OR_RETURN(NameAttrList cond,
                   DefineFunction(s, "below_n", types,
                                  [](Scope& c, std::vector<Output> v)
                                      -> absl::StatusOr<std::vector<Output>> {
                                    return std::vector<Output>{ops::Less(c, v[0], v[2])};
                                  }));
  ASSIGN_OR_RETURN(NameAttrList body,
                   DefineFunction(s, "step", types,
                                  [push](Scope& b, std::vector<Output> v)
                                      -> absl::StatusOr<std::vector<Output>> {
                                    std::vector<Output> next = {
                                        ops::Add(b, v[0], 1),
                                        ops::Add(b, ops::Mul(b, v[1], 0.999f), 0.001f), v[2]};
                                    if (push) {
                                      next.push_back(b.Op("TensorListPushBack")
                                                         .Input(v[3]).Input(v[1]).Finalize1());
                                    }
                                    return next;
                                  }));
  std::vector<Output> init = {ops::Const(s, 0), ops::Const(s, 1.0f), ops::Const(s, n)};
  if (push) {
    init.push_back(s.Op("EmptyTensorList")
                       .Input(ops::Const(s, std::vector<int32_t>{}))
                       .Input(ops::Const(s, -1))
                       .Attr("element_dtype", DT_FLOAT)
                       .Finalize1());
  }
  std::vector<Output> out = ops::While(s, init, cond, body, {.parallel_iterations = parallel});
  if (push) {
    out.back() = s.Op("TensorListLength").Input(out.back()).Finalize1();
  }
  RETURN_IF_ERROR(s.status());
  return out;
}

absl::StatusOr<double> MicrosPerIteration(int n, int reps, int64_t parallel, bool split,
                                          bool functional = false, bool push = false) {
  Scope s = Scope::NewRootScope(BuiltinOps()).WithDevice(kCpu0);
  Output limit = ops::Const(s, n);
  std::vector<Output> out;
  if (functional) {
    ASSIGN_OR_RETURN(out, FunctionalLoop(s, n, parallel, push));
  } else {
    ASSIGN_OR_RETURN(
      out,
      ops::WhileLoop(
          s, {ops::Const(s, 0), ops::Const(s, 1.0f)},
          [&](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], limit); },
          [split](const Scope& b, absl::Span<const Output> v) {
            const Scope f = split ? b.WithDevice(kCpu1) : b;
            return std::vector<Output>{ops::Add(b, v[0], 1),
                                       ops::Add(f, ops::Mul(f, v[1], 0.999f), 0.001f)};
          },
          {.parallel_iterations = parallel}));
  }
  RETURN_IF_ERROR(s.status());
  SessionConfig options = BuiltinSessionConfig();
  options.devices.num_virtual_cpus = split ? 1 : 0;
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options, *s.graph()));
  for (int i = 0; i < 3; ++i) {
    ASSIGN_OR_RETURN(std::vector<Tensor> r, session->Run({}, out, {}));
    if (r[0].scalar<int32_t>() != n) return absl::InternalError("the loop miscounted");
    if (push && r.back().scalar<int32_t>() != n) {
      return absl::InternalError("the list missed elements");
    }
  }
  absl::Status status;
  std::vector<double> ms = bench::TimeRepeated(reps, [&] {
    absl::StatusOr<std::vector<Tensor>> r = session->Run({}, out, {});
    if (!r.ok()) status = r.status();
  });
  RETURN_IF_ERROR(status);
  return bench::Median(ms) * 1000.0 / n;
}

absl::Status Main() {
  const int n = absl::GetFlag(FLAGS_iterations);
  const int reps = absl::GetFlag(FLAGS_reps);
  for (int64_t parallel : {1, 10}) {
    ASSIGN_OR_RETURN(double us, MicrosPerIteration(n, reps, parallel, /*split=*/false));
    std::printf("while_loop_%d_parallel%lld: %.3f us/iteration\n", n,
                static_cast<long long>(parallel), us);
  }
  ASSIGN_OR_RETURN(double split_us, MicrosPerIteration(n, reps, 10, /*split=*/true));
  std::printf("while_loop_%d_split_two_devices: %.3f us/iteration\n", n, split_us);
  ASSIGN_OR_RETURN(double functional_us,
                   MicrosPerIteration(n, reps, 10, /*split=*/false, /*functional=*/true));
  std::printf("while_loop_%d_functional_parallel10: %.3f us/iteration\n", n, functional_us);
  // Appending to a TensorList each iteration, at n and 10 n iterations: the
  // same figure at both when an append costs the same however long the list.
  for (int iterations : {n, 10 * n}) {
    ASSIGN_OR_RETURN(double push_us, MicrosPerIteration(iterations, std::max(reps / 10, 3), 10,
                                                        /*split=*/false, /*functional=*/true,
                                                        /*push=*/true));
    std::printf("while_loop_%d_functional_list_push: %.3f us/iteration\n", iterations, push_us);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "while_loop", sluice::Main);
}
