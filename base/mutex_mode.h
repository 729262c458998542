// Whether absl::Mutex checks lock order (deadlock detection) in this process.
//
//   if (MutexDeadlockDetectionEnabled()) ...   // true under `bazel test`
//
// Abseil checks the order of every lock acquisition against a process-wide
// graph of held locks unless its library was built with NDEBUG, and Debian's
// is not: measured here, two nested lock/unlock pairs cost 91 ns with the
// check and 34 ns without. Linking this library turns the check off at
// start-up (a static initializer), unless the environment says
// SLUICE_DEADLOCK_DETECTION=1, which .bazelrc sets for every test so that the
// test suite still catches lock-order inversions.
//
// Thread-safe.
#ifndef SLUICE_BASE_MUTEX_MODE_H_
#define SLUICE_BASE_MUTEX_MODE_H_

namespace sluice {

// What the start-up initializer chose.
bool MutexDeadlockDetectionEnabled();

}  // namespace sluice

#endif  // SLUICE_BASE_MUTEX_MODE_H_
