// SavedModels (TensorFlow's serving format): a directory holding
//
//   saved_model.pb        a SavedModel proto: MetaGraphs, each found by tags
//   variables/variables.index, variables/variables.data-<k>-of-<n>
//                         the variables, a V2 checkpoint
//   assets/               files the graph reads (vocabularies)
//
// loaded to serve or fine-tune, and written so that TensorFlow Serving and
// tf.compat.v1.saved_model.loader.load accept it.
//
//   ASSIGN_OR_RETURN(SavedModelBundle model, LoadSavedModel(config, "/models/cnn/1", {"serve"}));
//   ASSIGN_OR_RETURN(auto out, RunSignature(model, "serving_default", {{"images", batch}}));
//   Tensor classes = out["classes"];
//
//   SaveModelOptions opts;
//   opts.signatures["serving_default"] =
//       PredictSignature({{"images", images}}, {{"classes", classes}, {"probabilities", probs}});
//   RETURN_IF_ERROR(SaveModel(session.get(), *scope.graph(), *saver, "/models/cnn/1", opts));
//
// Loading (TensorFlow's loader): the MetaGraph whose tag set equals `tags`;
// a session over its graph; the variables restored through its saver_def
// from variables/variables when that checkpoint exists; then the main op:
// the "saved_model_main_op" collection, else "legacy_init_op", else the
// "table_initializer" collection. Restore and main op are fed each asset's
// path (asset_file_def, or the "saved_model_assets" collection TF1's
// builder writes: the tensor fed, the file under assets/).
// RunSignature feeds a signature's inputs by key and fetches its outputs by
// key (TensorInfo names; sparse tensors are not taken).
//
// Writing: `dir` must not exist or be empty. The graph is exported as one
// MetaGraph (training/checkpoint/meta_graph.h) with the given tags,
// signatures and saver; the variables are saved by the Saver at
// variables/variables (sharded over the devices holding them, merged);
// assets are copied into assets/ and recorded in asset_file_def and the
// "asset_filepaths" collection; a main op is recorded as
// "saved_model_main_op". saved_model.pb is written last, atomically: a
// directory without it is not a SavedModel.
//
// Errors: NotFound for a directory without saved_model.pb, or no MetaGraph
// with the tags (the message lists the tag sets there); DataLoss for a file
// that does not parse; NotFound naming the signature (and listing those
// there) or an input key; InvalidArgument for an input of another dtype,
// a missing input, or a SaveModel directory that is not empty. Restore and
// main-op errors as the session reports them, with the directory named.
// Thread-safety: a bundle's session is thread-safe; RunSignature may be
// called concurrently.
#ifndef SLUICE_TRAINING_CHECKPOINT_SAVED_MODEL_H_
#define SLUICE_TRAINING_CHECKPOINT_SAVED_MODEL_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/proto/saved_model.pb.h"
#include "graph/scope.h"
#include "runtime/session.h"
#include "session/session_config.h"
#include "training/checkpoint/meta_graph.h"
#include "training/checkpoint/saver.h"

namespace sluice {

inline constexpr char kSavedModelServeTag[] = "serve";
inline constexpr char kSavedModelTrainTag[] = "train";
inline constexpr char kDefaultServingSignature[] = "serving_default";
inline constexpr char kPredictMethodName[] = "tensorflow/serving/predict";
inline constexpr char kClassifyMethodName[] = "tensorflow/serving/classify";
inline constexpr char kRegressMethodName[] = "tensorflow/serving/regress";

struct SavedModelBundle {
  std::string dir;
  MetaGraphDef meta_graph;
  std::unique_ptr<Session> session;
};

absl::StatusOr<SavedModelBundle> LoadSavedModel(const SessionConfig& config, const std::string& dir,
                                                const std::vector<std::string>& tags);

// Every output of signature `key` (or those in `outputs`) by its key.
absl::StatusOr<std::map<std::string, Tensor>> RunSignature(
    const SavedModelBundle& bundle, const std::string& key,
    const std::map<std::string, Tensor>& inputs, const std::vector<std::string>& outputs = {});

struct SaveModelOptions {
  std::vector<std::string> tags = {kSavedModelServeTag};
  std::map<std::string, ::tensorflow::SignatureDef> signatures;
  std::string main_op;  // a node run after the variables are restored; optional
  // Asset files: the string tensor (a Const or Placeholder) fed the file's
  // path when loaded, and the file to copy into assets/.
  std::vector<std::pair<std::string, std::string>> assets;
};

absl::Status SaveModel(Session* session, const Graph& graph, const Saver& saver,
                       const std::string& dir, const SaveModelOptions& options);

// A "tensorflow/serving/predict" signature over graph tensors.
::tensorflow::SignatureDef PredictSignature(const std::map<std::string, Output>& inputs,
                                            const std::map<std::string, Output>& outputs);

}  // namespace sluice

#endif  // SLUICE_TRAINING_CHECKPOINT_SAVED_MODEL_H_
