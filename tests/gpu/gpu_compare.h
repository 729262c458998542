// The GPU conformance harness: runs the same small graph on CPU:0 and on
// GPU:0 over fresh random inputs and compares the outputs with relative-error
// bounds, checking that the nodes under test really ran on the GPU.
//
//   class MyTest : public GpuTest {};          // skips without a GPU
//   TEST_F(MyTest, Exp) {
//     Tensor x = RandomTensor(rng(), DT_FLOAT, TensorShape({4, 5}), -3, 3);
//     EXPECT_TRUE(GpuMatchesCpu({.label = "Exp", .build = [](const Scope& s, const Inputs& in) {
//       return Outputs{ops::Exp(s, in[0])};
//     }, .inputs = {x}, .bound = 1e-5}));
//   }
//
// `build` gets a scope pinned to the device under test and one fed
// Placeholder per input; every output it returns is fetched, and the node
// producing each one must be placed on that device. Shape-like int32
// arguments should come from Unplaced(s) constants, so the placer puts them
// wherever the kernel wants its host-memory arguments.
//
// Sessions run with allow_soft_placement off and GPU allocations poisoned
// (0xFF: NaN for floats), so an output element a kernel never writes shows up
// as NaN, which never passes unless the CPU gives NaN there too. Fetched
// tensors are deep-copied into ordinary host memory before their session
// (and its GPU device) goes away.
//
// Dry run: with SLUICE_GPU_TEST_ON_CPU=1 in the environment the GPU tests
// run without a GPU, GPU:k standing for the virtual device CPU:k+1 (requests
// rewritten, placements mapped back, unrequested nodes default to CPU:1;
// a GPU session's updates are grouped on the CPUs as on a GPU).
// That checks the cases themselves (graphs, shapes, CPU reference runs)
// where no GPU is at hand. The CPU has no half/bfloat16 arithmetic
// kernels, so GpuMatchesCpu/GpuMatchesHost pass over 16-bit cases there.
//
// Thread-compatible (gtest runs tests one at a time). Ownership: everything
// is returned by value.
#ifndef SLUICE_TESTS_GPU_GPU_COMPARE_H_
#define SLUICE_TESTS_GPU_GPU_COMPARE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "sluice.h"

namespace sluice::gpu_test {

inline constexpr char kCpu0[] = "/device:CPU:0";
inline constexpr char kGpu0[] = "/device:GPU:0";
inline constexpr char kGpu1[] = "/device:GPU:1";

using Inputs = std::vector<Output>;
using Outputs = std::vector<Output>;
using BuildFn = std::function<Outputs(const Scope& device_scope, const Inputs& placeholders)>;

// Whether SLUICE_GPU_TEST_ON_CPU=1 (see above).
bool DryRunOnCpu();

// A file of the repository a test reads (say
// "ops/functional/testdata/x.pbtxt"): that path when it exists (a Bazel
// test's runfiles, the repository root), else the file of that name in
// $SLUICE_TESTDATA (the GPU bundle's testdata/ folder, for runs elsewhere).
std::string TestDataPath(const std::string& repo_path);

// "" when CUDA sees at least `count` GPUs (always in a dry run, for count <= 2); else why not ("built without
// CUDA", the CUDA error, "1 GPU visible, 2 needed").
std::string NoGpuReason(int count = 1);

// The base of every GPU test: skips with "no GPU: <reason>" when no GPU is
// visible, and seeds a fresh generator per test (from std::random_device, or
// $SLUICE_GPU_TEST_SEED to replay), printing the seed when the test fails.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  std::mt19937& rng() { return rng_; }
  uint32_t seed() const { return seed_; }

 private:
  uint32_t seed_ = 0;
  std::mt19937 rng_;
};

// The session options of the harness: built-in registries, no soft
// placement, poisoned GPU allocations, a 2 GiB limit per GPU, `max_gpus`
// GPUs (0: a CPU-only session; -1: all).
SessionConfig TestSessionOptions(int max_gpus);

// The same scope with no device request.
inline Scope Unplaced(const Scope& s) { return s.WithDevice(""); }

// A tensor of `dtype` (float, double, half, bfloat16: uniform in [lo, hi);
// int32, int64: uniform integers in [lo, hi); bool: fair coin).
Tensor RandomTensor(std::mt19937& rng, DataType dtype, const TensorShape& shape, double lo,
                    double hi);
// Floats drawn from the small integers in [lo, hi] (ties for comparisons).
Tensor RandomSmallInts(std::mt19937& rng, DataType dtype, const TensorShape& shape, int lo,
                       int hi);
// Host conversion between float, double, half, bfloat16, int32 and int64
// (rounding to nearest even into half/bfloat16).
Tensor ConvertTo(const Tensor& t, DataType dtype);
// Every element as a double (any numeric dtype or bool).
std::vector<double> ToDoubles(const Tensor& t);

// "GPU:0" from "/job:localhost/replica:0/task:0/device:GPU:0" or "/device:GPU:0".
std::string DeviceTail(absl::string_view device);

// A session over a graph built in `root`, remembering where the nodes of
// every run were placed (from the partition graphs).
class TestSession {
 public:
  static absl::StatusOr<std::unique_ptr<TestSession>> Create(const Scope& root,
                                                             const SessionConfig& options);
  // Fetched tensors come back deep-copied into plain host memory.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<Output, Tensor>>& feeds,
                                          const std::vector<Output>& fetches,
                                          const std::vector<Node*>& targets = {});
  absl::StatusOr<std::vector<Tensor>> Run(
      const std::vector<std::pair<std::string, Tensor>>& feeds,
      const std::vector<std::string>& fetches, const std::vector<std::string>& targets);
  // Node name -> full device name, over every run so far.
  const std::map<std::string, std::string>& placed() const { return placed_; }
  // Whether the last run replayed a recorded step (runtime/step_replay.h).
  bool replayed() const { return replayed_; }
  // Success when `node` ran on `device` (e.g. kGpu0) in some run.
  ::testing::AssertionResult PlacedOn(const std::string& node, absl::string_view device) const;
  Session* session() { return session_.get(); }

 private:
  absl::StatusOr<std::vector<Tensor>> Finish(const RunMetadata& metadata,
                                             absl::StatusOr<std::vector<Tensor>> out);
  std::unique_ptr<Session> session_;
  std::map<std::string, std::string> placed_;
  bool replayed_ = false;
};

struct DeviceRun {
  std::vector<Tensor> outputs;
  std::map<std::string, std::string> placed;
};

// Builds `build` pinned to `device` with Placeholders "in0", "in1", ... fed
// `inputs`, runs it once and fetches its outputs; the producing nodes must
// sit on `device` (FailedPrecondition otherwise). max_gpus: see
// TestSessionOptions.
absl::StatusOr<DeviceRun> RunOn(absl::string_view device, const BuildFn& build,
                                const std::vector<Tensor>& inputs, int max_gpus);

struct KernelCase {
  std::string label;             // names the case in failure messages
  BuildFn build;                 // the graph on the CPU
  std::vector<Tensor> inputs;    // fed on the CPU
  double bound = 1e-5;           // relative L2 error allowed per output
  BuildFn gpu_build;             // default: build
  std::vector<Tensor> gpu_inputs;  // default: inputs (e.g. the half copies)
};

// Runs the case on CPU:0 and GPU:0 and compares every output with Close().
::testing::AssertionResult GpuMatchesCpu(const KernelCase& c);
// Runs `build` on GPU:0 over `inputs` and compares with host-computed values.
::testing::AssertionResult GpuMatchesHost(const std::string& label, const BuildFn& build,
                                          const std::vector<Tensor>& inputs,
                                          const std::vector<Tensor>& expected, double bound);

// got vs want: same shape; floating types (any of float, double, half,
// bfloat16 on either side): ||got - want|| / ||want|| <= bound over the
// finite elements, NaN exactly where want has NaN, equal infinities;
// integer and bool tensors: same dtype and equal bytes-as-values.
::testing::AssertionResult Close(const Tensor& got, const Tensor& want, double bound);

}  // namespace sluice::gpu_test

#endif  // SLUICE_TESTS_GPU_GPU_COMPARE_H_
