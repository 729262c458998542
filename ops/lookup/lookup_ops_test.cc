// The table ops against TensorFlow 2.21's behaviour for the same calls: a
// HashTable filled by its initializer (from tensors and from a text file),
// a MutableHashTable and a MutableDenseHashTable through Insert, Find,
// Size, Export and Import, and their errors.
#include "ops/lookup/lookup_ops.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::ExpectTensor;

Tensor Strings(const std::vector<std::string>& v, TensorShape shape) {
  Tensor t(DT_STRING, shape);
  for (size_t i = 0; i < v.size(); ++i) t.flat<std::string>()[i] = v[i];
  return t;
}

class LookupOpsTest : public ::testing::Test {
 protected:
  std::unique_ptr<Session> Start() {
    EXPECT_TRUE(s_.ok()) << s_.status();
    absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s_.graph());
    EXPECT_TRUE(sess.ok()) << sess.status();
    return sess.ok() ? *std::move(sess) : nullptr;
  }
  Tensor Run(Session* sess, Output y) {
    absl::StatusOr<std::vector<Tensor>> r = sess->Run({}, {y}, {});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? (*r)[0] : Tensor();
  }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(LookupOpsTest, HashTableFromTensors) {
  Output table = ops::HashTable(s_, DT_STRING, DT_INT64);
  Node* init = ops::InitializeTable(s_, table, ops::Const(s_, Strings({"a", "b"}, TensorShape({2}))),
                                    ops::Const(s_, std::vector<int64_t>{1, 2}));
  Output found = ops::LookupTableFind(s_, table, ops::Const(s_, Strings({"a", "z", "b"}, TensorShape({3}))),
                                      ops::Const(s_, int64_t{-1}));
  Output size = ops::LookupTableSize(s_, table);
  std::unique_ptr<Session> sess = Start();
  ASSERT_NE(sess, nullptr);
  // Before its initializer: TensorFlow's error.
  absl::StatusOr<std::vector<Tensor>> early = sess->Run({}, {found}, {});
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(early.status().message()), HasSubstr("Table not initialized."));
  ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
  ASSERT_TRUE(sess->Run({}, {}, {init}).ok());  // again: a no-op, as in TensorFlow
  ExpectTensor<int64_t>(Run(sess.get(), found), TensorShape({3}), {1, -1, 2});
  ExpectTensor<int64_t>(Run(sess.get(), size), TensorShape({}), {2});
  // An immutable table refuses inserts.
  Node* insert = ops::LookupTableInsert(s_, table, ops::Const(s_, Strings({"c"}, TensorShape({1}))),
                                        ops::Const(s_, std::vector<int64_t>{3}));
  ASSERT_TRUE(s_.ok());
  std::unique_ptr<Session> again = Start();
  ASSERT_TRUE(again->Run({}, {}, {init}).ok());
  EXPECT_FALSE(again->Run({}, {}, {insert}).ok());
}

TEST_F(LookupOpsTest, HashTableFromATextFile) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/vocab.tsv";
  std::ofstream(path) << "apple\t3\nbanana\t5\ncherry\t7\n";
  // Column 0 -> column 1 (TensorFlow: banana 5, kiwi -7); the whole line ->
  // its number (cherry\t7 is line 2).
  Output by_column = ops::HashTable(s_, DT_STRING, DT_INT64);
  Node* init1 = ops::InitializeTableFromTextFile(s_, by_column, ops::Const(s_, Strings({path}, TensorShape({}))),
                                                 0, 1);
  Output by_line = ops::HashTable(s_, DT_STRING, DT_INT64);
  Node* init2 = ops::InitializeTableFromTextFile(s_, by_line, ops::Const(s_, Strings({path}, TensorShape({}))),
                                                 -2, -1);
  Output f1 = ops::LookupTableFind(s_, by_column, ops::Const(s_, Strings({"banana", "kiwi"}, TensorShape({2}))),
                                   ops::Const(s_, int64_t{-7}));
  Output f2 = ops::LookupTableFind(s_, by_line,
                                   ops::Const(s_, Strings({"cherry\t7", "apple\t3"}, TensorShape({2}))),
                                   ops::Const(s_, int64_t{-7}));
  std::unique_ptr<Session> sess = Start();
  ASSERT_NE(sess, nullptr);
  ASSERT_TRUE(sess->Run({}, {}, {init1}).ok());
  ASSERT_TRUE(sess->Run({}, {}, {init2}).ok());
  ExpectTensor<int64_t>(Run(sess.get(), f1), TensorShape({2}), {5, -7});
  ExpectTensor<int64_t>(Run(sess.get(), f2), TensorShape({2}), {2, 0});

  // A column past a line's fields, and a field that is no number.
  std::ofstream(path) << "apple\t3\nbanana\n";
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output t = ops::HashTable(s, DT_STRING, DT_INT64);
  Node* bad = ops::InitializeTableFromTextFile(s, t, ops::Const(s, Strings({path}, TensorShape({}))), 0, 1);
  absl::StatusOr<std::unique_ptr<Session>> sess2 = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess2.ok());
  absl::Status r = (*sess2)->Run({}, {}, {bad}).status();
  EXPECT_THAT(std::string(r.message()), HasSubstr("line 2 (banana) for column index 1"));
}

TEST_F(LookupOpsTest, MutableHashTable) {
  Output table = ops::MutableHashTable(s_, DT_INT64, DT_FLOAT);
  Node* insert = ops::LookupTableInsert(s_, table, ops::Const(s_, std::vector<int64_t>{5, 9}),
                                        ops::Const(s_, {0.5f, 1.5f}));
  Output found = ops::LookupTableFind(
      s_, table, ops::Const(s_, Tensor::FromVector<int64_t>({9, 1}, TensorShape({1, 2}))),
      ops::Const(s_, -1.0f));
  Output size = ops::LookupTableSize(s_, table);
  ops::LookupTableExportOutputs exported = ops::LookupTableExport(s_, table, DT_INT64, DT_FLOAT);
  Node* import = ops::LookupTableImport(s_, table, ops::Const(s_, std::vector<int64_t>{7}),
                                        ops::Const(s_, {2.5f}));
  Output wrong = ops::LookupTableFind(s_, table, ops::Const(s_, {1}), ops::Const(s_, -1.0f));
  std::unique_ptr<Session> sess = Start();
  ASSERT_NE(sess, nullptr);
  ASSERT_TRUE(sess->Run({}, {}, {insert}).ok());
  ExpectTensor<float>(Run(sess.get(), found), TensorShape({1, 2}), {1.5f, -1.0f});
  ExpectTensor<int64_t>(Run(sess.get(), size), TensorShape({}), {2});
  absl::StatusOr<std::vector<Tensor>> e = sess->Run({}, {exported.keys, exported.values}, {});
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ((*e)[0].NumElements(), 2);
  for (int i = 0; i < 2; ++i) {
    const int64_t k = (*e)[0].flat<int64_t>()[i];
    EXPECT_EQ((*e)[1].flat<float>()[i], k == 5 ? 0.5f : 1.5f);
  }
  ASSERT_TRUE(sess->Run({}, {}, {import}).ok());
  ExpectTensor<int64_t>(Run(sess.get(), size), TensorShape({}), {1});
  absl::StatusOr<std::vector<Tensor>> w = sess->Run({}, {wrong}, {});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(std::string(w.status().message()), HasSubstr("Key must be type int64 but got int32"));
}

TEST_F(LookupOpsTest, MutableDenseHashTable) {
  Output table = ops::MutableDenseHashTable(s_, ops::Const(s_, int64_t{-1}), ops::Const(s_, int64_t{-2}),
                                            DT_FLOAT, TensorShape({2}));
  Node* insert = ops::LookupTableInsert(
      s_, table, ops::Const(s_, std::vector<int64_t>{3, 4}),
      ops::Const(s_, Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))));
  Output found = ops::LookupTableFind(s_, table, ops::Const(s_, std::vector<int64_t>{4, 7}),
                                      ops::Const(s_, {0.0f, -1.0f}));
  Node* bad = ops::LookupTableInsert(
      s_, table, ops::Const(s_, std::vector<int64_t>{-1}),
      ops::Const(s_, Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))));
  std::unique_ptr<Session> sess = Start();
  ASSERT_NE(sess, nullptr);
  ASSERT_TRUE(sess->Run({}, {}, {insert}).ok());
  ExpectTensor<float>(Run(sess.get(), found), TensorShape({2, 2}), {3, 4, 0, -1});
  absl::Status r = sess->Run({}, {}, {bad}).status();
  EXPECT_THAT(std::string(r.message()), HasSubstr("Using the empty_key as a table key is not allowed"));
}

}  // namespace
}  // namespace sluice
