// Test helper (testonly, header only): runs an input pipeline built with the
// dataset builder in a local session and collects its elements.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   data::Iterator it = data::Range(s, 0, 3).MakeInitializableIterator();
//   SessionDrain drain(s, it);
//   ASSERT_OK(drain.Start());
//   std::vector<std::vector<Tensor>> all = drain.All();   // till "End of sequence"
#ifndef SLUICE_OPS_DATA_INTERNAL_SESSION_DRAIN_H_
#define SLUICE_OPS_DATA_INTERNAL_SESSION_DRAIN_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/data/dataset_builder.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace data {

class SessionDrain {
 public:
  SessionDrain(const Scope& scope, const Iterator& it) : scope_(scope), it_(it) {
    next_ = it.GetNext();
  }

  // Makes the session (after every node is built) and runs the initializer.
  absl::Status Start() {
    if (!scope_.ok()) return scope_.status();
    absl::StatusOr<std::unique_ptr<Session>> s = NewSession(BuiltinSessionConfig(), *scope_.graph());
    if (!s.ok()) return s.status();
    session_ = *std::move(s);
    return Init();
  }
  absl::Status Init() { return session_->Run({}, {}, {it_.initializer()}).status(); }

  absl::StatusOr<std::vector<Tensor>> Next() { return session_->Run({}, next_, {}); }

  // Elements until the end (checked to be OutOfRange "End of sequence"), at
  // most `max`.
  std::vector<std::vector<Tensor>> All(int64_t max = 1 << 20) {
    std::vector<std::vector<Tensor>> all;
    for (int64_t i = 0; i < max; ++i) {
      absl::StatusOr<std::vector<Tensor>> e = Next();
      if (!e.ok()) {
        EXPECT_TRUE(absl::IsOutOfRange(e.status())) << e.status();
        EXPECT_NE(e.status().message().find("End of sequence"), absl::string_view::npos)
            << e.status();
        break;
      }
      all.push_back(*std::move(e));
    }
    return all;
  }
  // Component `c` of every element, as int64 scalars.
  std::vector<int64_t> Ints(int c = 0, int64_t max = 1 << 20) {
    std::vector<int64_t> v;
    for (const auto& e : All(max)) {
      for (int64_t x : e[c].flat<int64_t>()) v.push_back(x);
    }
    return v;
  }

  Session* session() { return session_.get(); }
  const std::vector<Output>& next() const { return next_; }

 private:
  Scope scope_;
  Iterator it_;
  std::vector<Output> next_;
  std::unique_ptr<Session> session_;
};

}  // namespace data
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_INTERNAL_SESSION_DRAIN_H_
