// A shared library opened on first use (dlopen), as TensorFlow's stream
// executor opens cuBLAS and NCCL: a process that never asks for a GPU never
// maps them, and one on a machine without them gets a clear error instead of
// failing to start.
//
//   static LazyLibrary cublas("libcublas.so.13");
//   auto* create = cublas.Symbol<decltype(cublasCreate_v2)>("cublasCreate_v2");
//   if (create == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
//
// The library is looked for by its soname (LD_LIBRARY_PATH, the caller's
// RUNPATH, the system's cache) and then in `fallback_dir`, the toolkit's
// library folder found at configure time. Thread-safe; never unloaded.
#ifndef SLUICE_RUNTIME_GPU_INTERNAL_LAZY_LIBRARY_H_
#define SLUICE_RUNTIME_GPU_INTERNAL_LAZY_LIBRARY_H_

#include <atomic>
#include <string>

#include "absl/base/call_once.h"
#include "absl/status/status.h"

namespace sluice {
namespace gpu_internal {

class LazyLibrary {
 public:
  LazyLibrary(std::string soname, std::string fallback_dir);

  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  // Opens the library the first time; OK, or Unavailable naming the library,
  // the places tried and dlerror(). The same answer on every later call.
  absl::Status Load();

  // Whether Load() was called and succeeded.
  bool loaded() const;

  // The named function, or nullptr when the library is missing or lacks it.
  template <typename Fn>
  Fn* Symbol(const char* name) {
    return reinterpret_cast<Fn*>(RawSymbol(name));
  }

  const std::string& soname() const { return soname_; }

 private:
  void* RawSymbol(const char* name);

  const std::string soname_;
  const std::string fallback_dir_;
  absl::once_flag once_;
  void* handle_ = nullptr;  // written once under once_
  std::atomic<bool> loaded_{false};
  absl::Status status_;     // written once under once_
};

}  // namespace gpu_internal
}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_INTERNAL_LAZY_LIBRARY_H_
