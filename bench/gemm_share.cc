// Devices that compute at once: the GEMM of ops/internal/blas.h on a
// device's share of the cores, against OpenBLAS called directly.
//
//   bazel run //bench:gemm_share [-- --m=256 --n=1024 --k=1024 --trans_a --reps=21]
//
// Figures (median ms over --reps), the internal::Gemm ones once per float
// GEMM library (suffix _onednn, _openblas; internal::SetSgemmLibrary):
//   gemm_share_openblas_all_cores: cblas_sgemm with OpenBLAS's own threads
//       (one per core), the library's best on one GEMM;
//   gemm_share_one_device_all_cores_<lib>: internal::Gemm on a pool of one
//       thread per core (one device owning the machine);
//   gemm_share_one_core_<lib>: internal::Gemm on a one-thread pool;
//   gemm_share_two_devices_at_once_<lib>: two threads, each a device of one
//       core, each multiplying once; and _speedup: two GEMMs' time on one
//       core over this (2.0 is perfect).
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/synchronization/notification.h"
#include "bench/bench_util.h"
#include "ops/internal/blas.h"
#include "runtime/compute_pool.h"
#include "runtime/thread_pool.h"

extern "C" void openblas_set_num_threads(int num_threads);

ABSL_FLAG(int, m, 256, "rows of A and C");
ABSL_FLAG(int, n, 1024, "columns of B and C");
ABSL_FLAG(int, k, 1024, "columns of A, rows of B");
ABSL_FLAG(bool, trans_a, false, "A is stored k x m (a weight gradient's X^T)");
ABSL_FLAG(int, reps, 21, "timed repetitions per figure");

namespace sluice {
namespace {

int Main() {
  const int m = absl::GetFlag(FLAGS_m), n = absl::GetFlag(FLAGS_n), k = absl::GetFlag(FLAGS_k);
  const int reps = absl::GetFlag(FLAGS_reps);
  const bool ta = absl::GetFlag(FLAGS_trans_a);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<float> a(size_t{1} * m * k, 0.5f), b(size_t{1} * k * n, 0.25f);
  std::vector<float> c1(size_t{1} * m * n), c2(size_t{1} * m * n);
  auto gemm = [&](std::vector<float>* c) {
    internal::Gemm(ta, false, m, n, k, a.data(), ta ? m : k, b.data(), n, c->data(), n);
  };

  openblas_set_num_threads(cores);
  const double raw = bench::Median(bench::TimeRepeated(reps, [&] {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                a.data(), ta ? m : k, b.data(), n, 0.0f, c1.data(), n);
  }));
  std::printf("gemm_share_openblas_all_cores: %.3f ms\n", raw);
  // OpenBLAS's idle threads keep polling for about 0.1 s after a threaded
  // call (measured: the next figure ran at half speed without this pause).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  // A device's kernel runs on one of its pool's threads.
  auto on_device = [&](int threads, auto&& body) {
    ThreadPool pool("device", threads);
    double ms = 0;
    absl::Notification done;
    pool.Schedule([&] {
      ScopedComputePool scoped(&pool);
      ms = bench::Median(bench::TimeRepeated(reps, body));
      done.Notify();
    });
    done.WaitForNotification();
    return ms;
  };
  for (internal::SgemmLibrary library :
       {internal::SgemmLibrary::kOneDnn, internal::SgemmLibrary::kOpenBlas}) {
    internal::SetSgemmLibrary(library);
    const char* lib = internal::SgemmLibraryName(library);
    const double all = on_device(cores, [&] { gemm(&c1); });
    std::printf("gemm_share_one_device_all_cores_%s: %.3f ms\n", lib, all);
    const double one = on_device(1, [&] { gemm(&c1); });
    std::printf("gemm_share_one_core_%s: %.3f ms\n", lib, one);

    ThreadPool dev0("dev0", 1), dev1("dev1", 1);
    const double both = bench::Median(bench::TimeRepeated(reps, [&] {
      absl::Notification d0, d1;
      dev0.Schedule([&] {
        ScopedComputePool scoped(&dev0);
        gemm(&c1);
        d0.Notify();
      });
      dev1.Schedule([&] {
        ScopedComputePool scoped(&dev1);
        gemm(&c2);
        d1.Notify();
      });
      d0.WaitForNotification();
      d1.WaitForNotification();
    }));
    std::printf("gemm_share_two_devices_at_once_%s: %.3f ms\n", lib, both);
    std::printf("gemm_share_two_devices_at_once_speedup_%s: %.2f x\n", lib, 2 * one / both);
  }
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return sluice::Main();
}
