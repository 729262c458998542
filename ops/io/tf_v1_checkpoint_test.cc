// TensorFlow's V1 checkpoint files through the graph ops: RestoreV2 falls
// back to them as TensorFlow's does (a single file at the prefix, or a
// sharded save's files matched by a glob prefix) and RestoreSlice reads
// them, on files TensorFlow 2.21 wrote (runtime/io/testdata); SaveSlices
// writes them (the table format TensorFlow reads), and a dtype V1 cannot
// hold or a missing file is a clear error.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/io/io_ops.h"
#include "ops/io/legacy_checkpoint_ops.h"
#include "runtime/atomic_file.h"
#include "runtime/io/tensor_slice_file.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

std::string Testdata(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                      "/runtime/io/testdata/", name);
}

absl::StatusOr<std::vector<Tensor>> RunGraph(Scope& s, const std::vector<Output>& fetch,
                                             const std::vector<Node*>& targets = {}) {
  RETURN_IF_ERROR(s.status());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> sess, NewSession(BuiltinSessionConfig(), *s.graph()));
  return sess->Run({}, fetch, targets);
}

absl::StatusOr<std::vector<Tensor>> RestoreV2(const std::string& prefix,
                                              const std::vector<std::string>& names,
                                              const std::vector<std::string>& specs,
                                              const std::vector<DataType>& dtypes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> out =
      ops::RestoreV2(s, ops::Const(s, prefix), ops::Const(s, names), ops::Const(s, specs), dtypes);
  return RunGraph(s, out);
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

TEST(TfV1CheckpointTest, RestoreV2ReadsAV1FileAtItsPrefix) {
  absl::StatusOr<std::vector<Tensor>> out =
      RestoreV2(Testdata("tf_v1_model.ckpt"), {"a", "s", "h", "emb", "emb", "i8"},
                {"", "", "", "", "5 3 2,2:1,2", ""},
                {DT_FLOAT, DT_STRING, DT_HALF, DT_FLOAT, DT_FLOAT, DT_INT8});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{1.5, 2.5, 3.5, 4, 5, 6}));
  EXPECT_EQ((*out)[1].data<std::string>()[2], "world!");
  EXPECT_EQ((*out)[2].data<Half>()[1].ToFloat(), -2.0f);
  // emb was saved as two row slices (rows 0..2, 3..4) of np.arange(15):
  // whole, and a slice across both.
  std::vector<float> arange(15);
  for (int i = 0; i < 15; ++i) arange[i] = static_cast<float>(i);
  EXPECT_EQ((*out)[3].shape(), TensorShape({5, 3}));
  EXPECT_EQ(Values<float>((*out)[3]), arange);
  EXPECT_EQ(Values<float>((*out)[4]), (std::vector<float>{7, 8, 10, 11}));
  EXPECT_EQ(Values<int8_t>((*out)[5]), (std::vector<int8_t>{-128, 0, 127}));
}

TEST(TfV1CheckpointTest, RestoreV2ReadsAShardedV1SaveThroughAGlob) {
  absl::StatusOr<std::vector<Tensor>> out =
      RestoreV2(Testdata("tf_v1_sharded.ckpt-?????-of-00002"), {"part", "w", "bias"},
                {"", "", ""}, {DT_FLOAT, DT_FLOAT, DT_FLOAT});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(Values<float>((*out)[2]), (std::vector<float>{0.25, -0.5}));

  absl::StatusOr<std::vector<Tensor>> wrong =
      RestoreV2(Testdata("tf_v1_sharded.ckpt-?????-of-00002"), {"w"}, {""}, {DT_INT32});
  EXPECT_TRUE(absl::IsInvalidArgument(wrong.status())) << wrong.status();
  absl::StatusOr<std::vector<Tensor>> none =
      RestoreV2(Testdata("no_such.ckpt-?????-of-00002"), {"w"}, {""}, {DT_FLOAT});
  EXPECT_TRUE(absl::IsNotFound(none.status())) << none.status();
  EXPECT_TRUE(absl::StrContains(none.status().message(), "no_such.ckpt")) << none.status();
}

TEST(TfV1CheckpointTest, RestoreSliceReadsTensorFlowsShards) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output pattern = ops::Const(s, Testdata("tf_v1_sharded.ckpt-*"));
  Output part = ops::RestoreSlice(s, pattern, ops::Const(s, std::string("part")),
                                  ops::Const(s, std::string("4 2 1,2:-")), DT_FLOAT);
  Output bias = ops::RestoreSlice(s, pattern, ops::Const(s, std::string("bias")),
                                  ops::Const(s, std::string("")), DT_FLOAT);
  absl::StatusOr<std::vector<Tensor>> out = RunGraph(s, {part, bias});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{0.25, -0.5}));
}

TEST(TfV1CheckpointTest, SaveSlicesWritesAV1FileThatRestores) {
  const std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/dir/legacy.ckpt");
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Node* save = ops::SaveSlices(
        s, ops::Const(s, path), ops::Const(s, std::vector<std::string>{"x", "part"}),
        ops::Const(s, std::vector<std::string>{"", "4 2 2,2:-"}),
        {ops::Const(s, Tensor::FromVector<int64_t>({5, -6})),
         ops::Const(s, Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})))});
    absl::StatusOr<std::vector<Tensor>> ran = RunGraph(s, {}, {save});
    ASSERT_TRUE(ran.ok()) << ran.status();
  }
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ASSERT_TRUE(IsTableFile(*bytes));
  absl::StatusOr<std::vector<TensorSliceRecord>> records = ParseTensorSliceFile(*bytes, path);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[1].full_shape, TensorShape({4, 2}));
  EXPECT_EQ((*records)[1].slice.start, (std::vector<int64_t>{2, 0}));

  absl::StatusOr<std::vector<Tensor>> out =
      RestoreV2(path, {"x", "part"}, {"", "4 2 2,1:-"}, {DT_INT64, DT_FLOAT});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{5, -6}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{1, 2}));
  // Rows 0..1 were never saved.
  absl::StatusOr<std::vector<Tensor>> uncovered =
      RestoreV2(path, {"part"}, {"4 2 0,3:-"}, {DT_FLOAT});
  EXPECT_TRUE(absl::IsNotFound(uncovered.status())) << uncovered.status();
}

TEST(TfV1CheckpointTest, SaveRefusesWhatV1CannotHold) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/bf16.ckpt");
  Node* save = ops::SaveSlices(s, ops::Const(s, path),
                               ops::Const(s, std::vector<std::string>{"b"}),
                               ops::Const(s, std::vector<std::string>{""}),
                               {ops::Const(s, Tensor(DT_BFLOAT16, TensorShape({2})))});
  absl::StatusOr<std::vector<Tensor>> ran = RunGraph(s, {}, {save});
  EXPECT_TRUE(absl::IsInvalidArgument(ran.status())) << ran.status();
  EXPECT_TRUE(absl::StrContains(ran.status().message(), "bfloat16")) << ran.status();
  EXPECT_FALSE(ReadFileToString(path).ok());  // nothing written
}

}  // namespace
}  // namespace sluice
