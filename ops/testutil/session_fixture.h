// A test fixture for ops that change state across runs (variables,
// scatters): build in s_, Start() opens one session and runs the
// initializers, then Fetch and RunTarget run steps in that same session.
//
//   class ScatterTest : public testing_util::SessionFixture {};
//   TEST_F(ScatterTest, Adds) {
//     ops::VariableAndInit v = ops::VariableWithInit(s_.WithOpName("v"), init);
//     Output out = ops::ScatterAdd(s_, v.var, {0}, {1.0f});
//     Start({v.initializer});
//     EXPECT_EQ(Fetch<float>(out), ...);
//   }
#ifndef SLUICE_OPS_TESTUTIL_SESSION_FIXTURE_H_
#define SLUICE_OPS_TESTUTIL_SESSION_FIXTURE_H_

#include <memory>
#include <utility>
#include <vector>

#include "builtin_session.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/builtins.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace testing_util {

class SessionFixture : public ::testing::Test {
 protected:
  void Start(std::vector<Node*> inits) {
    ASSERT_TRUE(s_.ok()) << s_.status();
    absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s_.graph());
    ASSERT_TRUE(sess.ok()) << sess.status();
    sess_ = std::move(*sess);
    ASSERT_TRUE(sess_->Run({}, {}, inits).ok());
  }

  // One output's values, flattened (empty on error, which is reported).
  template <typename T>
  std::vector<T> Fetch(const Output& out) {
    absl::StatusOr<std::vector<Tensor>> r = sess_->Run({}, {out}, {});
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {};
    absl::Span<T> v = (*r)[0].flat<T>();
    return std::vector<T>(v.begin(), v.end());
  }

  absl::Status RunTarget(Node* n) { return sess_->Run({}, {}, {n}).status(); }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
  std::unique_ptr<Session> sess_;
};

}  // namespace testing_util
}  // namespace sluice

#endif  // SLUICE_OPS_TESTUTIL_SESSION_FIXTURE_H_
