// Devices that compute at once: the GEMM of ops/internal/blas.h on a
// device's share of the cores, against OpenBLAS called directly.
//
//   bazel run //bench:gemm_share [-- --m=256 --n=1024 --k=1024 --reps=21]
//
// Figures (median ms over --reps):
//   gemm_share_openblas_all_cores: cblas_sgemm with OpenBLAS's own threads
//       (one per core), the library's best on one GEMM;
//   gemm_share_one_device_all_cores: internal::Gemm on a pool of one thread
//       per core (one device owning the machine);
//   gemm_share_one_core: internal::Gemm on a one-thread pool;
//   gemm_share_two_devices_at_once: two threads, each a device of one core,
//       each multiplying once; and _speedup: two GEMMs' time on one core over
//       this (2.0 is perfect).
#include <cblas.h>

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
ABSL_FLAG(int, reps, 21, "timed repetitions per figure");

namespace sluice {
namespace {

int Main() {
  const int m = absl::GetFlag(FLAGS_m), n = absl::GetFlag(FLAGS_n), k = absl::GetFlag(FLAGS_k);
  const int reps = absl::GetFlag(FLAGS_reps);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<float> a(size_t{1} * m * k, 0.5f), b(size_t{1} * k * n, 0.25f);
  std::vector<float> c1(size_t{1} * m * n), c2(size_t{1} * m * n);
  auto gemm = [&](std::vector<float>* c) {
    internal::Gemm(false, false, m, n, k, a.data(), k, b.data(), n, c->data(), n);
  };

  openblas_set_num_threads(cores);
  const double raw = bench::Median(bench::TimeRepeated(reps, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(),
                n, 0.0f, c1.data(), n);
  }));
  std::printf("gemm_share_openblas_all_cores: %.3f ms\n", raw);

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
  const double all = on_device(cores, [&] { gemm(&c1); });
  std::printf("gemm_share_one_device_all_cores: %.3f ms\n", all);
  const double one = on_device(1, [&] { gemm(&c1); });
  std::printf("gemm_share_one_core: %.3f ms\n", one);

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
  std::printf("gemm_share_two_devices_at_once: %.3f ms\n", both);
  std::printf("gemm_share_two_devices_at_once_speedup: %.2f x\n", 2 * one / both);
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return sluice::Main();
}
