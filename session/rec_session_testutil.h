// The base of the step capture tests' fixtures (session/step_replay_test,
// session/loop_replay_test): registries holding the fake recording device
// "REC" and its ops (runtime/recording_device_testutil.h), and local
// sessions on it. A fixture adds its own ops and kernels in SetUp, before
// calling Finish().
//
//   class MyTest : public RecSessionTest {
//    protected:
//     void SetUp() override {
//       RecSessionTest::SetUp();
//       ASSERT_TRUE(RegisterMyOps(&ops_).ok());
//       Finish();
//     }
//   };
//   std::unique_ptr<Session> s = NewRecSession(def, /*capture=*/true);
//
// Test-only; thread-compatible.
#ifndef SLUICE_SESSION_REC_SESSION_TESTUTIL_H_
#define SLUICE_SESSION_REC_SESSION_TESTUTIL_H_

#include <memory>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/backend.h"
#include "runtime/recording_device_testutil.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {

class RecSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(backends_.Add(std::make_unique<testing_rec::RecBackend>()).ok());
    ASSERT_TRUE(testing_rec::RegisterRecOps(&ops_).ok());
  }
  // Registers REC's own kernels (after the fixture's ops).
  void Finish() { backends_.RegisterKernels(&kernels_); }

  // A session on REC:0 whose steps are recorded and replayed when `capture`.
  std::unique_ptr<Session> NewRecSession(const GraphDef& def, bool capture) {
    SessionConfig options;
    options.ops = &ops_;
    options.kernels = &kernels_;
    options.backends = &backends_;
    options.default_device = "/device:REC:0";
    options.capture_steps = capture;
    absl::StatusOr<std::unique_ptr<Session>> session = NewSession(options, def);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? *std::move(session) : nullptr;
  }

  static Tensor Floats(const std::vector<float>& v) {
    return Tensor::FromVector<float>(v, TensorShape({static_cast<int64_t>(v.size())}));
  }

  BackendRegistry backends_;
  OpRegistry ops_;
  KernelRegistry kernels_;
};

}  // namespace sluice

#endif  // SLUICE_SESSION_REC_SESSION_TESTUTIL_H_
