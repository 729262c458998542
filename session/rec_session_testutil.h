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
//   auto [replaying, plain] = NewSessionPair(def, /*w0=*/{1, 2, 3});
//
// Test-only; thread-compatible.
#ifndef SLUICE_SESSION_REC_SESSION_TESTUTIL_H_
#define SLUICE_SESSION_REC_SESSION_TESTUTIL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <cstring>

#include "gtest/gtest.h"
#include "ops/control_flow/tensor_array.h"
#include "runtime/backend.h"
#include "runtime/recording_device_testutil.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace testing_rec {

// A TensorArray's or TensorList's element moves on REC: queued like its
// kernels' work (what a GPU's copies are).
inline absl::Status RecCopyRows(Device* device, const Tensor& src, int64_t src_row, Tensor* dst,
                                int64_t dst_row, int64_t rows, int64_t row_elements) {
  const size_t element = DataTypeSize(src.dtype());
  const char* from = static_cast<const char*>(src.raw_data()) + src_row * row_elements * element;
  char* to = static_cast<char*>(dst->raw_data()) + dst_row * row_elements * element;
  const size_t bytes = rows * row_elements * element;
  static_cast<RecordingDevice*>(device)->Enqueue([=] { std::memcpy(to, from, bytes); });
  return absl::OkStatus();
}

inline absl::Status RecZero(Device* device, Tensor* t) {
  void* to = t->raw_data();
  const size_t bytes = t->TotalBytes();
  static_cast<RecordingDevice*>(device)->Enqueue([=] { std::memset(to, 0, bytes); });
  return absl::OkStatus();
}

inline constexpr TensorArrayDeviceOps kRecArrayOps{.copy_rows = RecCopyRows, .zero = RecZero};

}  // namespace testing_rec

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

  // A session that records and replays and one that never does, over
  // `def`, both initialized by running `init` with "w0" fed `w0` (null
  // sessions on failure).
  std::pair<std::unique_ptr<Session>, std::unique_ptr<Session>> NewSessionPair(
      const GraphDef& def, const std::vector<float>& w0,
      const std::vector<std::string>& init = {"init"}) {
    std::unique_ptr<Session> replaying = NewRecSession(def, true);
    std::unique_ptr<Session> plain = NewRecSession(def, false);
    if (replaying == nullptr || plain == nullptr) return {};
    for (Session* s : {replaying.get(), plain.get()}) {
      absl::Status ran = s->Run({{"w0", Floats(w0)}}, {}, init).status();
      EXPECT_TRUE(ran.ok()) << ran;
      if (!ran.ok()) return {};
    }
    return {std::move(replaying), std::move(plain)};
  }

  // One step of a loop test (session/loop_replay_test,
  // session/list_loop_replay_test): x and y fed, the fetches (x_out, all,
  // p_out) as float vectors, and whether it was a replay.
  struct Fetched {
    std::vector<std::vector<float>> values;
    bool replayed = false;
  };
  static Fetched Step(Session* s, const Tensor& x, const Tensor& y) {
    RunMetadata md;
    absl::StatusOr<std::vector<Tensor>> out =
        s->Run({{"x", x}, {"y", y}}, {"x_out", "all", "p_out"}, {}, {}, &md);
    EXPECT_TRUE(out.ok()) << out.status();
    Fetched f;
    if (!out.ok()) return f;
    for (const Tensor& t : *out) {
      f.values.emplace_back(t.data<float>(), t.data<float>() + t.NumElements());
    }
    f.replayed = md.step_replayed;
    return f;
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
