#include "tests/gpu/gpu_compare.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "session/direct_session.h"
#include "runtime/gpu/gpu_devices.h"

namespace sluice::gpu_test {
namespace {

bool IsFloatLike(DataType t) {
  return t == DT_FLOAT || t == DT_DOUBLE || t == DT_HALF || t == DT_BFLOAT16;
}

std::string ShapeString(const Tensor& t) { return t.shape().DebugString(); }

// The CPU has no half/bfloat16 arithmetic: a dry run passes over such cases.
bool AnySixteenBit(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) {
    if (t.dtype() == DT_HALF || t.dtype() == DT_BFLOAT16) return true;
  }
  return false;
}

constexpr int kDryRunGpus = 2;

// GPU:k -> CPU:k+1 in a dry run.
std::string DryRunDevice(const std::string& device) {
  const size_t at = device.rfind("GPU:");
  if (at == std::string::npos) return device;
  int k = 0;
  if (!absl::SimpleAtoi(absl::string_view(device).substr(at + 4), &k)) return device;
  return absl::StrCat(device.substr(0, at), "CPU:", k + 1);
}

}  // namespace

std::string TestDataPath(const std::string& repo_path) {
  if (std::ifstream(repo_path).good()) return repo_path;
  const char* dir = std::getenv("SLUICE_TESTDATA");
  if (dir == nullptr || *dir == '\0') return repo_path;
  return absl::StrCat(dir, "/", repo_path.substr(repo_path.rfind('/') + 1));
}

bool DryRunOnCpu() {
  static const bool dry = [] {
    const char* env = std::getenv("SLUICE_GPU_TEST_ON_CPU");
    return env != nullptr && std::string(env) == "1";
  }();
  return dry;
}

std::string NoGpuReason(int count) {
  if (DryRunOnCpu() && count <= kDryRunGpus) return "";
  std::string why;
  const int n = VisibleGpuCount(&why);
  if (n >= count) return "";
  if (n == 0) return why.empty() ? "no GPU visible" : why;
  return absl::StrCat(n, " GPU(s) visible, ", count, " needed");
}

void GpuTest::SetUp() {
  const std::string why = NoGpuReason();
  if (!why.empty()) GTEST_SKIP() << "no GPU: " << why;
  uint32_t seed = std::random_device{}();
  if (const char* env = std::getenv("SLUICE_GPU_TEST_SEED"); env != nullptr) {
    uint32_t s;
    if (absl::SimpleAtoi(env, &s)) seed = s;
  }
  seed_ = seed;
  rng_.seed(seed_);
}

void GpuTest::TearDown() {
  if (HasFailure()) {
    std::cerr << "random seed of this test: " << seed_ << " (replay: SLUICE_GPU_TEST_SEED=" << seed_
              << ")\n";
  }
}

SessionConfig TestSessionOptions(int max_gpus) {
  SessionConfig o = BuiltinSessionConfig();
  o.allow_soft_placement = false;
  o.devices.gpu_poison_allocations = true;
  o.devices.gpu_memory_limit = int64_t{2} << 30;
  o.devices.max_gpus = max_gpus;
  if (DryRunOnCpu()) {
    o.devices.max_gpus = 0;
    o.devices.num_virtual_cpus = kDryRunGpus;
    if (max_gpus != 0) {
      o.default_device = "/device:CPU:1";
      // Rewritten as on a GPU: the multi-tensor updates too (on every CPU
      // device of the session, CPU:0 included, where a GPU run has none).
      o.group_updates_on.push_back("CPU");
    }
  }
  return o;
}

Tensor RandomTensor(std::mt19937& rng, DataType dtype, const TensorShape& shape, double lo,
                    double hi) {
  Tensor t(dtype, shape);
  const int64_t n = t.NumElements();
  if (dtype == DT_INT32 || dtype == DT_INT64) {
    std::uniform_int_distribution<int64_t> u(static_cast<int64_t>(lo),
                                             static_cast<int64_t>(hi) - 1);
    for (int64_t i = 0; i < n; ++i) {
      if (dtype == DT_INT32) {
        t.data<int32_t>()[i] = static_cast<int32_t>(u(rng));
      } else {
        t.data<int64_t>()[i] = u(rng);
      }
    }
    return t;
  }
  if (dtype == DT_BOOL) {
    std::bernoulli_distribution coin(0.5);
    for (int64_t i = 0; i < n; ++i) t.data<bool>()[i] = coin(rng);
    return t;
  }
  std::uniform_real_distribution<double> u(lo, hi);
  Tensor f(DT_DOUBLE, shape);
  for (int64_t i = 0; i < n; ++i) f.data<double>()[i] = u(rng);
  return ConvertTo(f, dtype);
}

Tensor RandomSmallInts(std::mt19937& rng, DataType dtype, const TensorShape& shape, int lo,
                       int hi) {
  std::uniform_int_distribution<int> u(lo, hi);
  Tensor f(DT_DOUBLE, shape);
  for (int64_t i = 0; i < f.NumElements(); ++i) f.data<double>()[i] = u(rng);
  return ConvertTo(f, dtype);
}

std::vector<double> ToDoubles(const Tensor& t) {
  const int64_t n = t.NumElements();
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
      case DT_FLOAT: v[i] = t.data<float>()[i]; break;
      case DT_DOUBLE: v[i] = t.data<double>()[i]; break;
      case DT_HALF: v[i] = t.data<Half>()[i].ToFloat(); break;
      case DT_BFLOAT16: v[i] = t.data<BFloat16>()[i].ToFloat(); break;
      case DT_INT32: v[i] = t.data<int32_t>()[i]; break;
      case DT_INT64: v[i] = static_cast<double>(t.data<int64_t>()[i]); break;
      case DT_UINT8: v[i] = t.data<uint8_t>()[i]; break;
      case DT_INT8: v[i] = t.data<int8_t>()[i]; break;
      case DT_BOOL: v[i] = static_cast<const uint8_t*>(t.raw_data())[i]; break;
      default: v[i] = std::numeric_limits<double>::quiet_NaN(); break;
    }
  }
  return v;
}

Tensor ConvertTo(const Tensor& t, DataType dtype) {
  const std::vector<double> v = ToDoubles(t);
  Tensor out(dtype, t.shape());
  for (size_t i = 0; i < v.size(); ++i) {
    switch (dtype) {
      case DT_FLOAT: out.data<float>()[i] = static_cast<float>(v[i]); break;
      case DT_DOUBLE: out.data<double>()[i] = v[i]; break;
      case DT_HALF: out.data<Half>()[i] = Half::FromFloat(static_cast<float>(v[i])); break;
      case DT_BFLOAT16:
        out.data<BFloat16>()[i] = BFloat16::FromFloat(static_cast<float>(v[i]));
        break;
      case DT_INT32: out.data<int32_t>()[i] = static_cast<int32_t>(v[i]); break;
      case DT_INT64: out.data<int64_t>()[i] = static_cast<int64_t>(v[i]); break;
      case DT_BOOL: out.data<bool>()[i] = v[i] != 0; break;
      default: break;
    }
  }
  return out;
}

std::string DeviceTail(absl::string_view device) {
  const size_t at = device.rfind("device:");
  if (at == absl::string_view::npos) return std::string(device);
  return std::string(device.substr(at + 7));
}

absl::StatusOr<std::unique_ptr<TestSession>> TestSession::Create(const Scope& root,
                                                                 const SessionConfig& options) {
  RETURN_IF_ERROR(root.status());
  auto s = std::unique_ptr<TestSession>(new TestSession());
  if (DryRunOnCpu()) {
    ASSIGN_OR_RETURN(GraphDef def, root.ToGraphDef());
    for (NodeDef& n : *def.mutable_node()) n.set_device(DryRunDevice(n.device()));
    ASSIGN_OR_RETURN(s->session_, NewSession(options, def));
    return s;
  }
  ASSIGN_OR_RETURN(s->session_, NewSession(options, *root.graph()));
  return s;
}

absl::StatusOr<std::vector<Tensor>> TestSession::Finish(const RunMetadata& metadata,
                                                        absl::StatusOr<std::vector<Tensor>> out) {
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) placed_[n.name()] = n.device();
  }
  replayed_ = metadata.step_replayed;
  if (!out.ok()) return out.status();
  std::vector<Tensor> copies;
  for (const Tensor& t : *out) {
    if (t.on_device()) {
      return absl::InternalError(absl::StrCat("a fetched tensor ", ShapeString(t),
                                              " is still in device memory"));
    }
    copies.push_back(t.DeepCopy());
  }
  return copies;
}

absl::StatusOr<std::vector<Tensor>> TestSession::Run(
    const std::vector<std::pair<Output, Tensor>>& feeds, const std::vector<Output>& fetches,
    const std::vector<Node*>& targets) {
  RunOptions ro;
  ro.output_partition_graphs = true;
  RunMetadata md;
  absl::StatusOr<std::vector<Tensor>> out = session_->Run(feeds, fetches, targets, ro, &md);
  return Finish(md, std::move(out));
}

absl::StatusOr<std::vector<Tensor>> TestSession::Run(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  RunOptions ro;
  ro.output_partition_graphs = true;
  RunMetadata md;
  absl::StatusOr<std::vector<Tensor>> out = session_->Run(feeds, fetches, targets, ro, &md);
  return Finish(md, std::move(out));
}

::testing::AssertionResult TestSession::PlacedOn(const std::string& node,
                                                 absl::string_view device) const {
  auto it = placed_.find(node);
  if (it == placed_.end()) {
    return ::testing::AssertionFailure() << "node '" << node << "' is in no partition graph";
  }
  const std::string want = DryRunOnCpu() ? DryRunDevice(std::string(device)) : std::string(device);
  if (DeviceTail(it->second) != DeviceTail(want)) {
    return ::testing::AssertionFailure()
           << "node '" << node << "' ran on " << it->second << ", not on " << device;
  }
  return ::testing::AssertionSuccess();
}

absl::StatusOr<DeviceRun> RunOn(absl::string_view device, const BuildFn& build,
                                const std::vector<Tensor>& inputs, int max_gpus) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  Scope d = root.WithDevice(device);
  Inputs placeholders;
  for (size_t i = 0; i < inputs.size(); ++i) {
    placeholders.push_back(
        ops::Placeholder(d.WithOpName(absl::StrCat("in", i)), inputs[i].dtype()));
  }
  Outputs outs = build(d, placeholders);
  RETURN_IF_ERROR(root.status());
  for (const Output& o : outs) {
    if (!o.valid()) return absl::InternalError("the case built an invalid output");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<TestSession> session,
                   TestSession::Create(root, TestSessionOptions(max_gpus)));
  std::vector<std::pair<Output, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds.push_back({placeholders[i], inputs[i]});
  DeviceRun run;
  ASSIGN_OR_RETURN(run.outputs, session->Run(feeds, outs));
  run.placed = session->placed();
  for (const Output& o : outs) {
    ::testing::AssertionResult on = session->PlacedOn(o.node->name(), device);
    if (!on) return absl::FailedPreconditionError(on.message());
  }
  return run;
}

::testing::AssertionResult Close(const Tensor& got, const Tensor& want, double bound) {
  if (got.shape() != want.shape()) {
    return ::testing::AssertionFailure()
           << "shape " << got.shape().DebugString() << ", expected " << want.shape().DebugString();
  }
  const std::vector<double> g = ToDoubles(got), w = ToDoubles(want);
  if (!IsFloatLike(got.dtype()) || !IsFloatLike(want.dtype())) {
    if (got.dtype() != want.dtype()) {
      return ::testing::AssertionFailure() << "dtype " << DataTypeName(got.dtype())
                                           << ", expected " << DataTypeName(want.dtype());
    }
    for (size_t i = 0; i < g.size(); ++i) {
      if (g[i] != w[i]) {
        return ::testing::AssertionFailure()
               << "element " << i << " is " << g[i] << ", expected " << w[i] << " ("
               << DataTypeName(got.dtype()) << " " << got.shape().DebugString() << ")";
      }
    }
    return ::testing::AssertionSuccess();
  }
  double diff2 = 0, norm2 = 0, worst = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool gn = std::isnan(g[i]), wn = std::isnan(w[i]);
    if (gn || wn) {
      if (gn && wn) continue;
      return ::testing::AssertionFailure()
             << "element " << i << " is " << g[i] << ", expected " << w[i]
             << (gn ? " (NaN: unwritten poisoned output or a wrong result)" : "");
    }
    if (std::isinf(g[i]) || std::isinf(w[i])) {
      if (g[i] == w[i]) continue;
      return ::testing::AssertionFailure() << "element " << i << " is " << g[i] << ", expected "
                                           << w[i];
    }
    const double d = g[i] - w[i];
    diff2 += d * d;
    norm2 += w[i] * w[i];
    if (std::abs(d) > worst) {
      worst = std::abs(d);
      worst_at = i;
    }
  }
  const double rel = norm2 > 0 ? std::sqrt(diff2 / norm2) : std::sqrt(diff2);
  if (!(rel <= bound)) {
    return ::testing::AssertionFailure()
           << "relative error " << rel << " > " << bound << " over " << g.size()
           << " elements; worst element " << worst_at << ": " << g[worst_at] << " vs "
           << w[worst_at];
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult GpuMatchesCpu(const KernelCase& c) {
  if (DryRunOnCpu() && AnySixteenBit(c.gpu_inputs)) return ::testing::AssertionSuccess();
  absl::StatusOr<DeviceRun> cpu = RunOn(kCpu0, c.build, c.inputs, /*max_gpus=*/0);
  if (!cpu.ok()) {
    return ::testing::AssertionFailure() << c.label << " on the CPU: " << cpu.status();
  }
  const BuildFn& gpu_build = c.gpu_build ? c.gpu_build : c.build;
  const std::vector<Tensor>& gpu_inputs = c.gpu_inputs.empty() ? c.inputs : c.gpu_inputs;
  absl::StatusOr<DeviceRun> gpu = RunOn(kGpu0, gpu_build, gpu_inputs, /*max_gpus=*/1);
  if (!gpu.ok()) {
    return ::testing::AssertionFailure() << c.label << " on the GPU: " << gpu.status();
  }
  if (gpu->outputs.size() != cpu->outputs.size()) {
    return ::testing::AssertionFailure() << c.label << ": output counts differ";
  }
  for (size_t i = 0; i < cpu->outputs.size(); ++i) {
    ::testing::AssertionResult r = Close(gpu->outputs[i], cpu->outputs[i], c.bound);
    if (!r) return ::testing::AssertionFailure() << c.label << ", output " << i << ": " << r.message();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult GpuMatchesHost(const std::string& label, const BuildFn& build,
                                          const std::vector<Tensor>& inputs,
                                          const std::vector<Tensor>& expected, double bound) {
  if (DryRunOnCpu() && (AnySixteenBit(inputs) || AnySixteenBit(expected))) {
    return ::testing::AssertionSuccess();
  }
  absl::StatusOr<DeviceRun> gpu = RunOn(kGpu0, build, inputs, /*max_gpus=*/1);
  if (!gpu.ok()) return ::testing::AssertionFailure() << label << " on the GPU: " << gpu.status();
  if (gpu->outputs.size() != expected.size()) {
    return ::testing::AssertionFailure() << label << ": output counts differ";
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    ::testing::AssertionResult r = Close(gpu->outputs[i], expected[i], bound);
    if (!r) return ::testing::AssertionFailure() << label << ", output " << i << ": " << r.message();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace sluice::gpu_test
