#include "training/hook_values.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {
namespace internal {
namespace {

absl::Status NotA(const Tensor& t, absl::string_view name, absl::string_view want) {
  return absl::InvalidArgumentError(absl::StrCat("hook tensor '", name, "' is ",
                                                 DataTypeName(t.dtype()), " ",
                                                 t.shape().DebugString(), "; want ", want));
}

}  // namespace

absl::StatusOr<int64_t> ScalarInt64(const Tensor& t, absl::string_view name) {
  if (t.NumElements() == 1) {
    if (t.dtype() == DT_INT64) return t.scalar<int64_t>();
    if (t.dtype() == DT_INT32) return t.scalar<int32_t>();
  }
  return NotA(t, name, "an int32 or int64 scalar");
}

absl::StatusOr<double> ScalarDouble(const Tensor& t, absl::string_view name) {
  if (t.NumElements() == 1) {
    if (t.dtype() == DT_FLOAT) return t.scalar<float>();
    if (t.dtype() == DT_DOUBLE) return t.scalar<double>();
  }
  return NotA(t, name, "a float or double scalar");
}

absl::StatusOr<int64_t> ReadScalarInt64(Session* session, const std::string& name) {
  absl::StatusOr<std::vector<Tensor>> values = session->Run({}, {name}, {});
  if (!values.ok()) return AddContext(values.status(), absl::StrCat("reading '", name, "'"));
  return ScalarInt64((*values)[0], name);
}

}  // namespace internal
}  // namespace sluice
