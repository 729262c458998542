#include "runtime/gpu/internal/lazy_library.h"

#include <dlfcn.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace gpu_internal {

LazyLibrary::LazyLibrary(std::string soname, std::string fallback_dir)
    : soname_(std::move(soname)), fallback_dir_(std::move(fallback_dir)) {}

absl::Status LazyLibrary::Load() {
  absl::call_once(once_, [this] {
    // RTLD_LOCAL: the library's symbols stay out of the global namespace,
    // where they would shadow the forwarding functions of the same names.
    handle_ = dlopen(soname_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) {
      loaded_.store(true, std::memory_order_release);
      return;
    }
    std::string first_error = dlerror();
    if (!fallback_dir_.empty()) {
      const std::string path = absl::StrCat(fallback_dir_, "/", soname_);
      handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle_ != nullptr) {
        loaded_.store(true, std::memory_order_release);
        return;
      }
      status_ = absl::UnavailableError(absl::StrCat(
          "cannot load ", soname_, " (needed for GPU work; looked for by name and in ",
          fallback_dir_, "): ", first_error, "; ", dlerror(),
          ". Put the CUDA libraries' folder on LD_LIBRARY_PATH."));
      return;
    }
    status_ = absl::UnavailableError(absl::StrCat(
        "cannot load ", soname_, " (needed for GPU work): ", first_error,
        ". Put the CUDA libraries' folder on LD_LIBRARY_PATH."));
  });
  return status_;
}

bool LazyLibrary::loaded() const { return loaded_.load(std::memory_order_acquire); }

void* LazyLibrary::RawSymbol(const char* name) {
  if (!Load().ok()) return nullptr;
  return dlsym(handle_, name);
}

}  // namespace gpu_internal
}  // namespace sluice
