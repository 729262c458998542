// Host<->device copy bandwidth of GPU:0 through Sluice's GpuDevice against a
// bare cudaMemcpy, for 1 MiB .. 256 MiB.
//
//   bazel run //bench:gpu_copy_bandwidth [-- --sizes_mib=1,4,16,64,256]
//
// Sluice host->device: GpuDevice::CopyFromHost of a host tensor then Sync(),
// from pinned memory (the device's host allocator) and from pageable memory
// (an ordinary Tensor); device->host: GpuDevice::CopyToHost (blocking, into
// pinned memory). Bare: cudaMemcpy between cudaMalloc memory and
// cudaHostAlloc (pinned) or malloc (pageable) memory. Each figure is the
// median over repetitions, in GB/s (1e9 bytes per second):
//   gpu_copy_h2d_pinned_16MiB_sluice: X GB/s, ..._cuda: Y GB/s, ..._ratio: X/Y
// Without a GPU it prints `gpu: none (<reason>)` and exits 0.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/bench_util.h"
#include "base/status_macros.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/gpu_devices.h"
#include "runtime/tensor.h"

ABSL_FLAG(std::string, sizes_mib, "1,4,16,64,256", "copy sizes in MiB, comma separated");

namespace sluice {
namespace {

absl::Status Cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorName(e), " (",
                                          cudaGetErrorString(e), ")"));
}

// Bare CUDA buffers of one size; freed on destruction.
struct BareBuffers {
  ~BareBuffers() {
    if (device != nullptr) cudaFree(device);
    if (pinned != nullptr) cudaFreeHost(pinned);
  }
  void* device = nullptr;
  void* pinned = nullptr;
  std::vector<uint8_t> pageable;
};

void Report(const std::string& key, int64_t bytes, const std::vector<double>& sluice_ms,
            const std::vector<double>& cuda_ms) {
  const double s = bytes / (bench::Median(sluice_ms) * 1e-3) * 1e-9;
  const double c = bytes / (bench::Median(cuda_ms) * 1e-3) * 1e-9;
  std::printf("%s_sluice: %.2f GB/s\n", key.c_str(), s);
  std::printf("%s_cuda: %.2f GB/s\n", key.c_str(), c);
  std::printf("%s_ratio: %.3f\n", key.c_str(), s / c);
  std::fflush(stdout);
}

absl::Status BenchSize(GpuDevice* gpu, int64_t mib) {
  const int64_t bytes = mib << 20;
  const int reps = static_cast<int>(std::clamp<int64_t>(2048 / mib, 10, 100));
  const TensorShape shape({bytes});

  ASSIGN_OR_RETURN(Tensor pinned, Tensor::Allocate(gpu->host_allocator(), DT_UINT8, shape));
  Tensor pageable(DT_UINT8, shape);
  std::memset(pinned.raw_data(), 0x5A, bytes);
  std::memset(pageable.raw_data(), 0xA5, bytes);
  BareBuffers bare;
  RETURN_IF_ERROR(Cuda(cudaSetDevice(gpu->ordinal()), "cudaSetDevice"));
  RETURN_IF_ERROR(Cuda(cudaMalloc(&bare.device, bytes), "cudaMalloc"));
  RETURN_IF_ERROR(Cuda(cudaHostAlloc(&bare.pinned, bytes, cudaHostAllocDefault), "cudaHostAlloc"));
  bare.pageable.assign(bytes, 0x3C);
  std::memset(bare.pinned, 0xC3, bytes);

  absl::Status status;
  auto keep = [&status](const absl::Status& s) {
    if (!s.ok() && status.ok()) status = s;
  };
  auto sluice_h2d = [gpu, &keep](const Tensor* host) -> std::function<void()> {
    return [gpu, &keep, host] {
      absl::StatusOr<Tensor> d = gpu->CopyFromHost(*host);
      keep(d.status());
      keep(gpu->Sync());
    };
  };
  auto bare_copy = [bytes, &keep](void* dst, const void* src,
                                  cudaMemcpyKind kind) -> std::function<void()> {
    return [bytes, &keep, dst, src, kind] {
      keep(Cuda(cudaMemcpy(dst, src, bytes, kind), "cudaMemcpy"));
    };
  };
  ASSIGN_OR_RETURN(Tensor on_device, gpu->CopyFromHost(pinned));
  RETURN_IF_ERROR(gpu->Sync());
  auto sluice_d2h = [&] { keep(gpu->CopyToHost(on_device).status()); };

  struct Variant {
    std::string name;
    std::function<void()> sluice, cuda;
  };
  std::vector<Variant> variants = {
      {"h2d_pinned", sluice_h2d(&pinned), bare_copy(bare.device, bare.pinned, cudaMemcpyHostToDevice)},
      {"h2d_pageable", sluice_h2d(&pageable),
       bare_copy(bare.device, bare.pageable.data(), cudaMemcpyHostToDevice)},
      {"d2h_pinned", sluice_d2h, bare_copy(bare.pinned, bare.device, cudaMemcpyDeviceToHost)},
  };
  for (const Variant& v : variants) {
    for (int i = 0; i < 2; ++i) {  // warm up: first touches, allocator growth
      v.sluice();
      v.cuda();
    }
    RETURN_IF_ERROR(status);
    std::vector<double> s_ms, c_ms;
    for (int round = 0; round < 2; ++round) {
      for (double ms : bench::TimeRepeated((reps + 1) / 2, v.sluice)) s_ms.push_back(ms);
      for (double ms : bench::TimeRepeated((reps + 1) / 2, v.cuda)) c_ms.push_back(ms);
    }
    RETURN_IF_ERROR(status);
    Report(absl::StrCat("gpu_copy_", v.name, "_", mib, "MiB"), bytes, s_ms, c_ms);
  }
  return absl::OkStatus();
}

absl::Status Main() {
  std::string why;
  if (VisibleGpuCount(&why) == 0) {
    std::printf("gpu: none (%s)\n", why.c_str());
    return absl::OkStatus();
  }
  std::vector<int64_t> sizes;
  for (absl::string_view v : absl::StrSplit(absl::GetFlag(FLAGS_sizes_mib), ',', absl::SkipEmpty())) {
    int64_t mib;
    if (!absl::SimpleAtoi(v, &mib) || mib <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("--sizes_mib: bad size '", v, "'"));
    }
    sizes.push_back(mib);
  }
  GpuDeviceOptions options;
  options.memory_limit = int64_t{4} << 30;
  ASSIGN_OR_RETURN(std::unique_ptr<GpuDevice> gpu, GpuDevice::Create(options));
  std::printf("# device: %s\n", gpu->gpu_name().c_str());
  for (int64_t mib : sizes) RETURN_IF_ERROR(BenchSize(gpu.get(), mib));
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "gpu_copy_bandwidth", sluice::Main);
}
