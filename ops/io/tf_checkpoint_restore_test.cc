// RestoreV2 on a V2 checkpoint TensorFlow wrote (runtime/io/testdata): the
// values TensorFlow saved, whatever the order of the names; a dtype the
// graph does not expect, an unknown name and a slice spec each a clear
// error naming the tensor.
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

std::string TfPrefix() {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                      "/runtime/io/testdata/tf_model.ckpt-7");
}

absl::StatusOr<std::vector<Tensor>> Restore(const std::vector<std::string>& names,
                                            const std::vector<std::string>& specs,
                                            const std::vector<DataType>& dtypes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> out = ops::RestoreV2(s, ops::Const(s, TfPrefix()), ops::Const(s, names),
                                           ops::Const(s, specs), dtypes);
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

  absl::StatusOr<std::vector<Tensor>> sliced = Restore({"a"}, {"2 3 0,1:-"}, {DT_FLOAT});
  EXPECT_TRUE(absl::IsUnimplemented(sliced.status())) << sliced.status();
}

}  // namespace
}  // namespace sluice
