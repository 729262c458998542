// RestoreV2 on a V2 checkpoint TensorFlow wrote (runtime/io/testdata): the
// values TensorFlow saved, whatever the order of the names; a dtype the
// graph does not expect, an unknown name and a bad slice spec each a clear
// error naming the tensor; slices of whole and of partitioned tensors.
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
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

std::string TfPrefix(const std::string& name = "tf_model.ckpt-7") {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                      "/runtime/io/testdata/", name);
}

absl::StatusOr<std::vector<Tensor>> Restore(const std::vector<std::string>& names,
                                            const std::vector<std::string>& specs,
                                            const std::vector<DataType>& dtypes,
                                            const std::string& prefix = TfPrefix()) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> out =
      ops::RestoreV2(s, ops::Const(s, prefix), ops::Const(s, names), ops::Const(s, specs), dtypes);
  RETURN_IF_ERROR(s.status());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> sess, NewSession(BuiltinSessionConfig(), *s.graph()));
  return sess->Run({}, out, {});
}

TEST(TfCheckpointRestoreTest, RestoresWhatTensorFlowSaved) {
  absl::StatusOr<std::vector<Tensor>> out = Restore({"s", "scope/b", "a", "d"}, {"", "", "", ""},
                                                    {DT_STRING, DT_INT64, DT_FLOAT, DT_DOUBLE});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<std::string>()[2], "world!");
  EXPECT_EQ((*out)[1].data<int64_t>()[0], 7);
  EXPECT_EQ((*out)[2].shape(), TensorShape({2, 3}));
  EXPECT_EQ((*out)[2].data<float>()[5], 6.0f);
  EXPECT_EQ((*out)[3].data<double>()[0], 3.25);
}

TEST(TfCheckpointRestoreTest, BadRequestsNameTheTensor) {
  absl::StatusOr<std::vector<Tensor>> wrong_type = Restore({"a"}, {""}, {DT_INT32});
  EXPECT_TRUE(absl::IsInvalidArgument(wrong_type.status())) << wrong_type.status();
  EXPECT_TRUE(absl::StrContains(wrong_type.status().message(), "'a'")) << wrong_type.status();

  absl::StatusOr<std::vector<Tensor>> missing = Restore({"nope"}, {""}, {DT_FLOAT});
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "'nope'")) << missing.status();

  absl::StatusOr<std::vector<Tensor>> other_shape = Restore({"a"}, {"3 3 0,1:-"}, {DT_FLOAT});
  EXPECT_TRUE(absl::IsInvalidArgument(other_shape.status())) << other_shape.status();
  EXPECT_TRUE(absl::StrContains(other_shape.status().message(), "[2,3]")) << other_shape.status();

  absl::StatusOr<std::vector<Tensor>> bad_spec = Restore({"a"}, {"2 3 0,9:-"}, {DT_FLOAT});
  EXPECT_TRUE(absl::IsInvalidArgument(bad_spec.status())) << bad_spec.status();
  EXPECT_TRUE(absl::StrContains(bad_spec.status().message(), "'a'")) << bad_spec.status();
}

// A slice of a tensor TensorFlow saved whole: a variable partitioned now
// that was not when TensorFlow trained it.
TEST(TfCheckpointRestoreTest, RestoresASliceOfAWholeTensor) {
  absl::StatusOr<std::vector<Tensor>> out = Restore(
      {"a", "a", "s"}, {"2 3 1,1:-", "2 3 -:1,2", "3 0,2"}, {DT_FLOAT, DT_FLOAT, DT_STRING});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({1, 3}));
  EXPECT_EQ((*out)[0].data<float>()[0], 4.0f);
  EXPECT_EQ((*out)[1].shape(), TensorShape({2, 2}));
  EXPECT_EQ((*out)[1].data<float>()[0], 2.5f);
  EXPECT_EQ((*out)[1].data<float>()[3], 6.0f);
  EXPECT_EQ((*out)[2].data<std::string>()[0], "hello");
}

// TF's partitioned checkpoint (emb [5, 3] saved in 2 row slices, cols [2, 4]
// in 3 column slices; each holds arange) restored into other parts: N saved
// parts into M.
TEST(TfCheckpointRestoreTest, PartsTensorFlowSavedRestoreIntoOtherParts) {
  const std::string prefix = TfPrefix("tf_partitioned.ckpt-1");
  absl::StatusOr<std::vector<Tensor>> out =
      Restore({"emb", "emb", "emb", "cols", "cols"},
              {"5 3 0,2:-", "5 3 2,2:-", "5 3 4,1:-", "2 4 -:0,1", "2 4 -:1,3"},
              {DT_FLOAT, DT_FLOAT, DT_FLOAT, DT_INT64, DT_INT64}, prefix);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> emb;
  for (int i = 0; i < 3; ++i) {
    const Tensor& t = (*out)[i];
    emb.insert(emb.end(), t.data<float>(), t.data<float>() + t.NumElements());
  }
  for (int i = 0; i < 15; ++i) EXPECT_EQ(emb[i], i);
  EXPECT_EQ((*out)[3].shape(), TensorShape({2, 1}));
  EXPECT_EQ((*out)[3].data<int64_t>()[1], 4);
  EXPECT_EQ((*out)[4].data<int64_t>()[0], 1);
  EXPECT_EQ((*out)[4].data<int64_t>()[5], 7);
  // Whole, and uncovered: a full shape other than the one saved.
  absl::StatusOr<std::vector<Tensor>> whole = Restore({"emb"}, {""}, {DT_FLOAT}, prefix);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ((*whole)[0].shape(), TensorShape({5, 3}));
  absl::StatusOr<std::vector<Tensor>> other = Restore({"emb"}, {"6 3 0,2:-"}, {DT_FLOAT}, prefix);
  EXPECT_TRUE(absl::IsInvalidArgument(other.status())) << other.status();
}

}  // namespace
}  // namespace sluice
