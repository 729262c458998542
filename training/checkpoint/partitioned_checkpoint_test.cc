// A partitioned variable through the Saver: its parts are saved as slices of
// one tensor (TensorFlow's save_slice_info), each on its own task's shard,
// and restore into another number of parts on other devices, or whole.
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/state/state_ops.h"
#include "runtime/atomic_file.h"
#include "runtime/session.h"
#include "session/direct_session.h"
#include "training/checkpoint/checkpoint_state.h"
#include "training/checkpoint/saver.h"
#include "training/partitioned_variables.h"

namespace sluice {
namespace {

constexpr int64_t kRows = 7;
constexpr int64_t kDim = 3;

std::string Cpu(int id) { return absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", id); }

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp ? tmp : "/tmp", "/partitioned_checkpoint_test_", getpid(), "/", name);
}

// Element (r, c) of the full table: 10 r + c (+ `shift` for the fresh graphs
// that restore, so a value that is not restored shows).
PartInitializer Pattern(float shift) {
  return [shift](const Scope& s, const TensorShape& shape, const std::vector<int64_t>& offset) {
    std::vector<float> v;
    for (int64_t r = 0; r < shape.dim(0); ++r) {
      for (int64_t c = 0; c < shape.dim(1); ++c) v.push_back(10.0f * (offset[0] + r) + c + shift);
    }
    return ops::Const(s, Tensor::FromVector<float>(v, shape));
  };
}

std::vector<float> Expected(int64_t first_row, int64_t rows) {
  std::vector<float> v;
  for (int64_t r = first_row; r < first_row + rows; ++r) {
    for (int64_t c = 0; c < kDim; ++c) v.push_back(10.0f * r + c);
  }
  return v;
}

std::unique_ptr<Session> NewSess(const Scope& s) {
  EXPECT_TRUE(s.ok()) << s.status();
  SessionConfig config = BuiltinSessionConfig();
  config.devices.num_virtual_cpus = 2;
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(config, *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

// A table of `parts` parts, part i on CPU:(i % 3).
absl::StatusOr<PartitionedVariable> Table(const Scope& s, int parts, float shift) {
  ASSIGN_OR_RETURN(PartitionedVariable v,
                   CreatePartitionedVariable(s, "emb", TensorShape({kRows, kDim}), DT_FLOAT,
                                             FixedSizePartitioner(parts), Pattern(shift)));
  for (size_t i = 0; i < v.parts.size(); ++i) {
    v.parts[i].var.node->set_requested_device(Cpu(static_cast<int>(i % 3)));
    v.parts[i].initializer->set_requested_device(Cpu(static_cast<int>(i % 3)));
  }
  return v;
}

// TensorFlow 2.21's V1 checkpoint file (runtime/io/testdata): "emb", a [5, 3]
// np.arange saved in 2 row slices, restores through the Saver into 3 parts.
TEST(PartitionedCheckpointTest, ATensorFlowV1CheckpointRestoresIntoThreeParts) {
  const std::string file = absl::StrCat(std::getenv("TEST_SRCDIR"), "/",
                                        std::getenv("TEST_WORKSPACE"),
                                        "/runtime/io/testdata/tf_v1_model.ckpt");
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<PartitionedVariable> table =
      CreatePartitionedVariable(s, "emb", TensorShape({5, 3}), DT_FLOAT, FixedSizePartitioner(3),
                                Pattern(1000));
  ASSERT_TRUE(table.ok()) << table.status();
  absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(s, {});
  ASSERT_TRUE(saver.ok()) << saver.status();
  std::unique_ptr<Session> sess = NewSess(s);
  absl::Status restored = (*saver)->Restore(sess.get(), file);
  ASSERT_TRUE(restored.ok()) << restored;
  float next = 0;
  for (const VariablePart& part : table->parts) {
    absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {part.var}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    for (float v : (*out)[0].flat<float>()) EXPECT_EQ(v, next++) << part.var.node->name();
  }
  EXPECT_EQ(next, 15);
}

TEST(PartitionedCheckpointTest, TwoPartsRestoreIntoThreeAndWhole) {
  const std::string dir = TestDir("n_to_m");
  ASSERT_TRUE(CreateDirectories(dir).ok());
  std::string saved;
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    absl::StatusOr<PartitionedVariable> table = Table(s, 2, 0);
    ASSERT_TRUE(table.ok()) << table.status();
    EXPECT_EQ(table->parts[1].var.node->GetAttr<std::string>(kSaveSliceSpecAttr).value(),
              "7 3 4,3:0,3");
    absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(s, {});
    ASSERT_TRUE(saver.ok()) << saver.status();
    Node* init = ops::GlobalVariablesInitializer(s);
    std::unique_ptr<Session> sess = NewSess(s);
    ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
    absl::StatusOr<std::string> prefix = (*saver)->Save(sess.get(), dir, 1);
    ASSERT_TRUE(prefix.ok()) << prefix.status();
    saved = *prefix;
    EXPECT_EQ((*saver)->node_names().num_shards, 2);  // one file per task's device
  }
  {  // three parts, on three devices: a checkpoint of two shards restored by three
    Scope s = Scope::NewRootScope(BuiltinOps());
    absl::StatusOr<PartitionedVariable> table = Table(s, 3, 1000);
    ASSERT_TRUE(table.ok()) << table.status();
    absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(s, {});
    ASSERT_TRUE(saver.ok()) << saver.status();
    std::unique_ptr<Session> sess = NewSess(s);
    absl::Status restored = (*saver)->Restore(sess.get(), saved);
    ASSERT_TRUE(restored.ok()) << restored;
    int64_t row = 0;
    for (const VariablePart& part : table->parts) {
      absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {part.var}, {});
      ASSERT_TRUE(out.ok()) << out.status();
      absl::Span<const float> got = (*out)[0].flat<float>();
      EXPECT_EQ(std::vector<float>(got.begin(), got.end()), Expected(row, part.shape.dim(0)))
          << part.var.node->name();
      row += part.shape.dim(0);
    }
    EXPECT_EQ(row, kRows);
  }
  {  // one unpartitioned variable of the full shape, named after the tensor
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::VariableAndInit whole = ops::VariableWithInit(
        s.WithOpName("emb"),
        ops::Const(s, Tensor::FromVector<float>(std::vector<float>(kRows * kDim, -1.0f),
                                                TensorShape({kRows, kDim}))));
    absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(s, {});
    ASSERT_TRUE(saver.ok()) << saver.status();
    std::unique_ptr<Session> sess = NewSess(s);
    absl::Status restored = (*saver)->Restore(sess.get(), saved);
    ASSERT_TRUE(restored.ok()) << restored;
    absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {whole.var}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    absl::Span<const float> got = (*out)[0].flat<float>();
    EXPECT_EQ(std::vector<float>(got.begin(), got.end()), Expected(0, kRows));
  }
}

}  // namespace
}  // namespace sluice
