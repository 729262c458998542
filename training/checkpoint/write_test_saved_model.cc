// Writes a SavedModel with Sluice, for the TensorFlow conformance suite to
// load with TensorFlow itself (tf.compat.v1.saved_model.loader.load) and
// serve:
//
//   write_test_saved_model DIR
//
// DIR/model: a classifier of 4 features into 3 classes (a dense layer,
// softmax, argmax) whose class names come from a vocabulary asset through a
// hash table filled by the main op; signature "serving_default" (predict):
// input "images", outputs "probabilities", "classes", "names".
// DIR/images.npy: a batch; DIR/expected.<key>.npy: Sluice's outputs on it.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/lookup/lookup_ops.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/state/state_ops.h"
#include "runtime/atomic_file.h"
#include "runtime/npy.h"
#include "session/direct_session.h"
#include "training/checkpoint/saved_model.h"

namespace sluice {
namespace {

absl::Status Write(const std::string& dir) {
  RETURN_IF_ERROR(CreateDirectories(dir));
  const std::string vocab = dir + "/classes.txt";
  RETURN_IF_ERROR(WriteFileAtomically(vocab, "cat\ndog\nbird\n"));
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("images"), DT_FLOAT);
  std::vector<float> w(12);
  for (int i = 0; i < 12; ++i) w[i] = 0.25f * static_cast<float>((i * 7) % 5) - 0.5f;
  ops::VariableAndInit kernel =
      ops::VariableWithInit(s.WithOpName("dense/kernel"),
                            ops::Const(s, Tensor::FromVector<float>(w, TensorShape({4, 3}))));
  ops::VariableAndInit bias =
      ops::VariableWithInit(s.WithOpName("dense/bias"), {0.1f, -0.1f, 0.0f});
  Output logits = ops::Add(s, ops::MatMul(s, x, kernel.var), bias.var);
  Output probabilities = ops::Softmax(s.WithOpName("probabilities"), logits);
  Output classes = ops::ArgMax(s.WithOpName("classes"), logits, 1);
  Output table = ops::HashTable(s.WithOpName("class_names"), DT_INT64, DT_STRING);
  Output path = ops::Const(s.WithOpName("vocab_path"), Input(vocab));
  Node* table_init = ops::InitializeTableFromTextFile(s.WithOpName("class_names/init"), table, path,
                                                      /*key_index=*/-1,
                                                      /*value_index=*/-2);
  Output names = ops::LookupTableFind(s.WithOpName("names"), table, classes, Input("?"));
  Node* init = ops::GlobalVariablesInitializer(s);
  ASSIGN_OR_RETURN(std::unique_ptr<Saver> saver, Saver::Build(s, {}));
  RETURN_IF_ERROR(s.status());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> sess, NewSession(BuiltinSessionConfig(), *s.graph()));
  RETURN_IF_ERROR(sess->Run({}, {}, std::vector<Node*>{init, table_init}).status());

  const Tensor images = Tensor::FromVector<float>(
      {1, 0, 2, -1, 0.5f, 3, -2, 1, -1, -1, 0, 4, 2, 2, 2, 2}, TensorShape({4, 4}));
  ASSIGN_OR_RETURN(
      std::vector<Tensor> out,
      sess->Run({{"images", images}}, {probabilities.name(), classes.name(), names.name()}, {}));
  RETURN_IF_ERROR(WriteNpyFile(images, dir + "/images.npy"));
  RETURN_IF_ERROR(WriteNpyFile(out[0], dir + "/expected.probabilities.npy"));
  RETURN_IF_ERROR(WriteNpyFile(out[1], dir + "/expected.classes.npy"));
  RETURN_IF_ERROR(WriteNpyFile(out[2], dir + "/expected.names.npy"));

  SaveModelOptions opts;
  opts.signatures[kDefaultServingSignature] = PredictSignature(
      {{"images", x}}, {{"probabilities", probabilities}, {"classes", classes}, {"names", names}});
  opts.main_op = table_init->name();
  opts.assets = {{path.name(), vocab}};
  return SaveModel(sess.get(), *s.graph(), *saver, dir + "/model", opts);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_test_saved_model DIR\n");
    return 2;
  }
  absl::Status s = sluice::Write(argv[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "write_test_saved_model: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
