// cuBLAS and NCCL are opened on first use: a process that makes only CPU
// devices never maps them, and a missing library is a clear error.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "runtime/gpu/gpu_devices.h"
#include "runtime/gpu/internal/lazy_library.h"
#include "runtime/local_devices.h"
#ifdef SLUICE_WITH_CUDA
#include "runtime/gpu/cublas_library.h"
#include "runtime/gpu/cublaslt_library.h"
#endif
#ifdef SLUICE_WITH_NCCL
#include "runtime/gpu/nccl_library.h"
#endif

namespace sluice {
namespace {

using gpu_internal::LazyLibrary;

std::string MappedFiles() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str();
}

TEST(LazyLibraryTest, AMissingLibraryIsAnErrorNamingItEveryTime) {
  LazyLibrary library("libsluice_no_such_library.so.7", "/nonexistent/lib64");
  const absl::Status first = library.Load();
  EXPECT_EQ(first.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(first.message(), "libsluice_no_such_library.so.7")) << first;
  EXPECT_TRUE(absl::StrContains(first.message(), "/nonexistent/lib64")) << first;
  EXPECT_TRUE(absl::StrContains(first.message(), "LD_LIBRARY_PATH")) << first;
  EXPECT_EQ(library.Load(), first);
  EXPECT_FALSE(library.loaded());
  EXPECT_EQ(library.Symbol<int()>("anything"), nullptr);
}

TEST(LazyLibraryTest, FindsFunctionsOfALibraryOpenedOnFirstUse) {
  LazyLibrary library("libm.so.6", "");
  EXPECT_FALSE(library.loaded());
  auto* cosine = library.Symbol<double(double)>("cos");
  ASSERT_NE(cosine, nullptr) << library.Load();
  EXPECT_TRUE(library.loaded());
  EXPECT_DOUBLE_EQ(cosine(0.0), 1.0);
  EXPECT_EQ(library.Symbol<int()>("sluice_no_such_function"), nullptr);
}

TEST(LazyLibraryTest, FallsBackToTheConfiguredFolder) {
  // A name no search path has, present only in the fallback folder (as a
  // link to libm).
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(static_cast<double (*)(double)>(&cbrt)), &info), 0);
  const std::string folder = ::testing::TempDir() + "/lazy_library_fallback";
  mkdir(folder.c_str(), 0700);
  const std::string link = folder + "/libsluice_fallback_m.so";
  unlink(link.c_str());
  ASSERT_EQ(symlink(info.dli_fname, link.c_str()), 0) << info.dli_fname;

  LazyLibrary by_name_only("libsluice_fallback_m.so", "");
  EXPECT_FALSE(by_name_only.Load().ok());
  LazyLibrary with_fallback("libsluice_fallback_m.so", folder);
  ASSERT_TRUE(with_fallback.Load().ok()) << with_fallback.Load();
  auto* cube_root = with_fallback.Symbol<double(double)>("cbrt");
  ASSERT_NE(cube_root, nullptr);
  EXPECT_DOUBLE_EQ(cube_root(27.0), 3.0);
}

#ifdef SLUICE_WITH_CUDA
TEST(CudaLibrariesTest, CpuDevicesAloneMapNoCublasOrNccl) {
  std::string why;
  if (VisibleGpuCount(&why) > 0) {
    GTEST_SKIP() << "a GPU is visible: making its devices opens cuBLAS, as it should";
  }
  LocalDevicesOptions options;
  auto gpus = CreateGpuDevices(options);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_TRUE(gpus->empty());
  auto cpus = CreateLocalDevices(options);
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_FALSE(CublasLoaded());
  const std::string maps = MappedFiles();
  EXPECT_FALSE(absl::StrContains(maps, "libcublas.so.")) << maps;
  EXPECT_FALSE(absl::StrContains(maps, "libcublasLt.so.")) << maps;
  EXPECT_FALSE(absl::StrContains(maps, "libnccl.so.")) << maps;
}

TEST(CudaLibrariesTest, CublasIsOpenedWhenAsked) {
  const absl::Status loaded = LoadCublas();
  if (!loaded.ok()) {
    EXPECT_EQ(loaded.code(), absl::StatusCode::kUnavailable);
    EXPECT_TRUE(absl::StrContains(loaded.message(), "libcublas.so.")) << loaded;
    GTEST_SKIP() << "no cuBLAS library on this machine: " << loaded;
  }
  EXPECT_TRUE(CublasLoaded());
  EXPECT_TRUE(absl::StrContains(MappedFiles(), "libcublas.so.")) << "LoadCublas said OK";
}

TEST(CudaLibrariesTest, CublasLtIsOpenedWhenAskedWithEveryFunctionFound) {
  const absl::StatusOr<const CublasLtApi*> lt = LoadCublasLt();
  if (!lt.ok()) {
    EXPECT_EQ(lt.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_TRUE(absl::StrContains(lt.status().message(), "libcublasLt.so.")) << lt.status();
    GTEST_SKIP() << "no cuBLASLt library on this machine: " << lt.status();
  }
  const CublasLtApi& api = **lt;
  for (const void* fn :
       {reinterpret_cast<const void*>(api.create), reinterpret_cast<const void*>(api.destroy),
        reinterpret_cast<const void*>(api.status_string),
        reinterpret_cast<const void*>(api.matmul_desc_create),
        reinterpret_cast<const void*>(api.matmul_desc_destroy),
        reinterpret_cast<const void*>(api.matmul_desc_set_attribute),
        reinterpret_cast<const void*>(api.matrix_layout_create),
        reinterpret_cast<const void*>(api.matrix_layout_destroy),
        reinterpret_cast<const void*>(api.preference_create),
        reinterpret_cast<const void*>(api.preference_destroy),
        reinterpret_cast<const void*>(api.preference_set_attribute),
        reinterpret_cast<const void*>(api.algo_get_heuristic),
        reinterpret_cast<const void*>(api.matmul)}) {
    EXPECT_NE(fn, nullptr);
  }
  EXPECT_TRUE(absl::StrContains(MappedFiles(), "libcublasLt.so.")) << "LoadCublasLt said OK";
  // The library answers without a GPU: a status's text.
  EXPECT_NE(std::string(api.status_string(CUBLAS_STATUS_NOT_SUPPORTED)), "");
  EXPECT_EQ(*LoadCublasLt(), *lt);  // opened once
}
#endif

#ifdef SLUICE_WITH_NCCL
TEST(CudaLibrariesTest, NcclIsOpenedWhenAsked) {
  const absl::Status loaded = LoadNccl();
  if (!loaded.ok()) {
    EXPECT_TRUE(absl::StrContains(loaded.message(), "libnccl.so.")) << loaded;
    GTEST_SKIP() << "no NCCL library on this machine: " << loaded;
  }
  EXPECT_TRUE(NcclLoaded());
  EXPECT_TRUE(absl::StrContains(MappedFiles(), "libnccl.so.")) << "LoadNccl said OK";
}
#endif

}  // namespace
}  // namespace sluice
