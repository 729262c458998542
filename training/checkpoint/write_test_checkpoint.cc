// Writes two checkpoints with Sluice's Saver, for the TensorFlow conformance
// suite to read with TensorFlow itself (tf.train.latest_checkpoint,
// load_checkpoint, and a TF Saver restoring into other partitions):
//
//   write_test_checkpoint DIR
//
// Variables over two devices (so two shards, merged): emb [7, 3] in three
// parts (element (r, c) = 10 r + c) on CPU:0, CPU:1, CPU:0; dense/kernel
// [2, 2] {1, 2, 3, 4} on CPU:1; global_step int64 on CPU:0, saved at step 5
// as 41 and at step 10 as 42.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/state/state_ops.h"
#include "runtime/session.h"
#include "session/direct_session.h"
#include "training/checkpoint/saver.h"
#include "training/partitioned_variables.h"

namespace sluice {
namespace {

std::string Cpu(int id) { return absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", id); }

absl::Status Write(const std::string& dir) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  PartInitializer pattern = [](const Scope& scope, const TensorShape& shape,
                               const std::vector<int64_t>& offset) {
    std::vector<float> v;
    for (int64_t r = 0; r < shape.dim(0); ++r) {
      for (int64_t c = 0; c < shape.dim(1); ++c) v.push_back(10.0f * (offset[0] + r) + c);
    }
    return ops::Const(scope, Tensor::FromVector<float>(v, shape));
  };
  ASSIGN_OR_RETURN(PartitionedVariable emb,
                   CreatePartitionedVariable(s, "emb", TensorShape({7, 3}), DT_FLOAT,
                                             FixedSizePartitioner(3), pattern));
  for (size_t i = 0; i < emb.parts.size(); ++i) {
    emb.parts[i].var.node->set_requested_device(Cpu(static_cast<int>(i % 2)));
    emb.parts[i].initializer->set_requested_device(Cpu(static_cast<int>(i % 2)));
  }
  ops::VariableWithInit(
      s.WithOpName("dense/kernel").WithDevice(Cpu(1)),
      ops::Const(s, Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))));
  ops::VariableAndInit step =
      ops::VariableWithInit(s.WithOpName("global_step").WithDevice(Cpu(0)), Input(int64_t{41}));
  Output bump = ops::AssignAdd(s.WithDevice(Cpu(0)), step.var, Input(int64_t{1}));
  Node* init = ops::GlobalVariablesInitializer(s);
  ASSIGN_OR_RETURN(std::unique_ptr<Saver> saver, Saver::Build(s, {}));
  RETURN_IF_ERROR(s.status());
  SessionConfig config = BuiltinSessionConfig();
  config.devices.num_virtual_cpus = 2;
  ASSIGN_OR_RETURN(std::unique_ptr<Session> sess, NewSession(config, *s.graph()));
  RETURN_IF_ERROR(sess->Run({}, {}, {init}).status());
  RETURN_IF_ERROR(saver->Save(sess.get(), dir, 5).status());
  RETURN_IF_ERROR(sess->Run({}, {}, {bump.node}).status());
  return saver->Save(sess.get(), dir, 10).status();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_test_checkpoint DIR\n");
    return 2;
  }
  absl::Status s = sluice::Write(argv[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "write_test_checkpoint: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
