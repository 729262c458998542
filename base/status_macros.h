// The two control-flow macros Sluice allows (STYLE.md §4). Abseil 20220623
// ships none, so they are defined once here.
//
//   absl::Status Foo() {
//     RETURN_IF_ERROR(Bar());
//     ASSIGN_OR_RETURN(int n, CountThings());
//     ...
//   }
#ifndef SLUICE_BASE_STATUS_MACROS_H_
#define SLUICE_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#define SLUICE_CONCAT_INNER_(a, b) a##b
#define SLUICE_CONCAT_(a, b) SLUICE_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                 \
  do {                                        \
    ::absl::Status sluice_status_ = (expr);   \
    if (!sluice_status_.ok()) return sluice_status_; \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, expr) \
  SLUICE_ASSIGN_OR_RETURN_IMPL_(SLUICE_CONCAT_(sluice_statusor_, __LINE__), lhs, expr)

#define SLUICE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

namespace sluice {

// Returns `status` with `context` prepended to its message ("context: msg"),
// keeping the code. OK stays OK.
absl::Status AddContext(const absl::Status& status, absl::string_view context);

}  // namespace sluice

#endif  // SLUICE_BASE_STATUS_MACROS_H_
