// NCCL all-reduce bus bandwidth over every GPU of this machine, through
// Sluice's local NCCL implementation (runtime/gpu/nccl_collectives.h: the one a
// session's collective executor calls), for 1 MiB .. 256 MiB of float32.
//
//   bazel run //bench:gpu_nccl_allreduce [-- --sizes_mib=1,4,16,64,256]
//
// Each figure: `iters` back-to-back sum all-reduces, then a Sync of every
// GPU; the median over rounds of the time per all-reduce t. Algorithm
// bandwidth = bytes / t; bus bandwidth = algbw * 2(n-1)/n (what each link
// carries in a ring, as nccl-tests reports it), in GB/s (1e9 bytes/s):
//   gpu_nccl_allreduce_2gpu_64MiB_busbw: X GB/s
//   gpu_nccl_allreduce_2gpu_64MiB_algbw: Y GB/s
//   gpu_nccl_allreduce_2gpu_64MiB_time: Z us
// Without a GPU it prints `gpu: none (<reason>)` and exits 0; with one GPU
// (or without NCCL) it says why there is no figure and exits 0.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/bench_util.h"
#include "base/status_macros.h"
#include "runtime/gpu/nccl_collectives.h"
#include "runtime/collective/collective.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/gpu_devices.h"
#include "runtime/tensor.h"

ABSL_FLAG(std::string, sizes_mib, "1,4,16,64,256", "all-reduce sizes in MiB, comma separated");
ABSL_FLAG(int, rounds, 5, "timed rounds per size (the median is reported)");

namespace sluice {
namespace {

// Enqueues one all-reduce of `inputs` (one per GPU); OK or its error.
absl::Status AllReduceOnce(const CollectiveParams& params, const std::vector<Device*>& devices,
                           const std::vector<Tensor>& inputs) {
  absl::Status status;
  NcclLocalAllReduce(params, devices, inputs,
                     [&status](absl::StatusOr<std::vector<Tensor>> out) { status = out.status(); });
  return status;  // the local implementation calls back before it returns
}

absl::Status SyncAll(const std::vector<std::unique_ptr<GpuDevice>>& gpus) {
  for (const auto& gpu : gpus) RETURN_IF_ERROR(gpu->Sync());
  return absl::OkStatus();
}

absl::Status BenchSize(const std::vector<std::unique_ptr<GpuDevice>>& gpus,
                       const CollectiveParams& params, int64_t mib, int rounds) {
  const int n = static_cast<int>(gpus.size());
  const int64_t bytes = mib << 20;
  const int64_t count = bytes / static_cast<int64_t>(sizeof(float));
  const int iters = static_cast<int>(std::clamp<int64_t>(1024 / mib, 5, 100));
  std::vector<Device*> devices;
  std::vector<Tensor> inputs;
  for (int k = 0; k < n; ++k) {
    Tensor host(DT_FLOAT, TensorShape({count}));
    float* v = host.data<float>();
    for (int64_t i = 0; i < count; ++i) v[i] = static_cast<float>((i + k) % 64);
    ASSIGN_OR_RETURN(Tensor input, gpus[k]->CopyFromHost(host));
    devices.push_back(gpus[k].get());
    inputs.push_back(std::move(input));
  }
  for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(AllReduceOnce(params, devices, inputs));  // warm up
  RETURN_IF_ERROR(SyncAll(gpus));
  absl::Status status;
  std::vector<double> ms = bench::TimeRepeated(rounds, [&] {
    for (int i = 0; i < iters && status.ok(); ++i) status = AllReduceOnce(params, devices, inputs);
    if (status.ok()) status = SyncAll(gpus);
  });
  RETURN_IF_ERROR(status);
  const double seconds = bench::Median(ms) * 1e-3 / iters;
  const double algbw = static_cast<double>(bytes) / seconds * 1e-9;
  const double busbw = algbw * 2.0 * (n - 1) / n;
  const std::string key = absl::StrCat("gpu_nccl_allreduce_", n, "gpu_", mib, "MiB");
  std::printf("%s_busbw: %.2f GB/s\n", key.c_str(), busbw);
  std::printf("%s_algbw: %.2f GB/s\n", key.c_str(), algbw);
  std::printf("%s_time: %.1f us\n", key.c_str(), seconds * 1e6);
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status Main() {
  std::string why;
  const int visible = VisibleGpuCount(&why);
  if (visible == 0) {
    std::printf("gpu: none (%s)\n", why.c_str());
    return absl::OkStatus();
  }
  if (!NcclAvailable()) {
    std::printf("# gpu_nccl_allreduce: built without NCCL; no figure\n");
    return absl::OkStatus();
  }
  if (visible < 2) {
    std::printf(
        "# gpu_nccl_allreduce: 1 GPU visible; NCCL needs at least 2 GPUs for a "
        "meaningful bus bandwidth (2(n-1)/n of the data crosses links); no figure\n");
    return absl::OkStatus();
  }
  std::vector<int64_t> sizes;
  for (absl::string_view v :
       absl::StrSplit(absl::GetFlag(FLAGS_sizes_mib), ',', absl::SkipEmpty())) {
    int64_t mib;
    if (!absl::SimpleAtoi(v, &mib) || mib <= 0 || mib > 4096) {
      return absl::InvalidArgumentError(absl::StrCat("--sizes_mib: bad size '", v, "'"));
    }
    sizes.push_back(mib);
  }
  const int rounds = std::max(1, absl::GetFlag(FLAGS_rounds));
  const int64_t largest = sizes.empty() ? 1 : *std::max_element(sizes.begin(), sizes.end());
  std::vector<std::unique_ptr<GpuDevice>> gpus;
  CollectiveParams params;
  params.kind = CollectiveKind::kAllReduce;
  params.reduce_op = ReduceOp::kSum;
  params.group_key = 1;
  params.node_name = "gpu_nccl_allreduce";
  for (int k = 0; k < visible; ++k) {
    GpuDeviceOptions options;
    options.name = absl::StrCat("/job:localhost/replica:0/task:0/device:GPU:", k);
    options.ordinal = k;
    options.memory_limit = (largest << 20) * 4 + (int64_t{256} << 20);  // in, out, staging
    ASSIGN_OR_RETURN(std::unique_ptr<GpuDevice> gpu, GpuDevice::Create(options));
    params.group_devices.push_back(gpu->name());
    gpus.push_back(std::move(gpu));
  }
  std::printf("# devices: %d x %s\n", visible, gpus[0]->gpu_name().c_str());
  for (int64_t mib : sizes) RETURN_IF_ERROR(BenchSize(gpus, params, mib, rounds));
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "gpu_nccl_allreduce", sluice::Main);
}
