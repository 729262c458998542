// Reading the small tensors hooks fetch: global steps and losses. Internal
// to the hooks of training/ (the *_hook.cc files beside it).
//
//   ASSIGN_OR_RETURN(int64_t step, internal::ScalarInt64(values[0], "global_step:0"));
//   ASSIGN_OR_RETURN(int64_t now, internal::ReadScalarInt64(session, "global_step:0"));
//
// Thread-safe (no state). Ownership: nothing is kept.
#ifndef SLUICE_TRAINING_HOOK_VALUES_H_
#define SLUICE_TRAINING_HOOK_VALUES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// The value of an int32 / int64 scalar fetched as `name`; InvalidArgument
// naming it for another dtype or shape.
absl::StatusOr<int64_t> ScalarInt64(const Tensor& t, absl::string_view name);
// The value of a float / double scalar fetched as `name`; InvalidArgument
// naming it otherwise.
absl::StatusOr<double> ScalarDouble(const Tensor& t, absl::string_view name);
// Fetches `name` (an int32 / int64 scalar) through `session`.
absl::StatusOr<int64_t> ReadScalarInt64(Session* session, const std::string& name);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_TRAINING_HOOK_VALUES_H_
