#include "runtime/gpu/cublaslt_library.h"

#include <cublas_api.h>

#include <type_traits>

#include "absl/strings/str_cat.h"
#include "runtime/gpu/internal/lazy_library.h"

namespace sluice {
namespace {

absl::StatusOr<const CublasLtApi*> Open() {
  static auto* library = new gpu_internal::LazyLibrary(
      absl::StrCat("libcublasLt.so.", CUBLAS_VER_MAJOR), SLUICE_CUDA_LIB_DIR);
  absl::Status loaded = library->Load();
  if (!loaded.ok()) return loaded;
  auto* api = new CublasLtApi;
  absl::Status missing;
  auto find = [&](auto& slot, const char* name) {
    slot = library->Symbol<std::remove_pointer_t<std::remove_reference_t<decltype(slot)>>>(name);
    if (slot == nullptr && missing.ok()) {
      missing = absl::UnavailableError(
          absl::StrCat(library->soname(), " has no function ", name, " (an older cuBLASLt?)"));
    }
  };
  find(api->create, "cublasLtCreate");
  find(api->destroy, "cublasLtDestroy");
  find(api->status_string, "cublasLtGetStatusString");
  find(api->matmul_desc_create, "cublasLtMatmulDescCreate");
  find(api->matmul_desc_destroy, "cublasLtMatmulDescDestroy");
  find(api->matmul_desc_set_attribute, "cublasLtMatmulDescSetAttribute");
  find(api->matrix_layout_create, "cublasLtMatrixLayoutCreate");
  find(api->matrix_layout_destroy, "cublasLtMatrixLayoutDestroy");
  find(api->preference_create, "cublasLtMatmulPreferenceCreate");
  find(api->preference_destroy, "cublasLtMatmulPreferenceDestroy");
  find(api->preference_set_attribute, "cublasLtMatmulPreferenceSetAttribute");
  find(api->algo_get_heuristic, "cublasLtMatmulAlgoGetHeuristic");
  find(api->matmul, "cublasLtMatmul");
  if (!missing.ok()) {
    delete api;
    return missing;
  }
  return api;
}

}  // namespace

absl::StatusOr<const CublasLtApi*> LoadCublasLt() {
  static const absl::StatusOr<const CublasLtApi*>* const api =
      new absl::StatusOr<const CublasLtApi*>(Open());
  return *api;
}

}  // namespace sluice
