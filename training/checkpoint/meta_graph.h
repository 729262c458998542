// MetaGraphs (TensorFlow's MetaGraphDef, the ".meta" file tf.train.Saver
// writes beside each checkpoint): a graph with its saver, its collections
// and its signatures, so another program (Sluice or TensorFlow) can resume
// training from a checkpoint or serve the model without the code that built
// it.
//
//   // Export, as tf.train.export_meta_graph:
//   MetaGraphExportOptions opts;
//   opts.saver = saver.get();
//   opts.collections["train_op"] = {"train"};
//   opts.collections["losses"] = {"loss:0"};
//   ASSIGN_OR_RETURN(MetaGraphDef meta, ExportMetaGraph(*scope.graph(), opts));
//   RETURN_IF_ERROR(WriteMetaGraph(prefix + ".meta", meta));
//
//   // Import, as tf.train.import_meta_graph, then resume:
//   ASSIGN_OR_RETURN(MetaGraphDef meta, ReadMetaGraph("/ckpt/model.ckpt-10.meta"));
//   ASSIGN_OR_RETURN(ImportedMetaGraph imported, ImportMetaGraph(meta));
//   ASSIGN_OR_RETURN(auto sess, NewSession(config, imported.graph_def));
//   RETURN_IF_ERROR(imported.saver->Restore(sess.get(), "/ckpt/model.ckpt-10"));
//   sess->Run({}, {}, imported.collections["train_op"]);
//
// Export writes graph_def, meta_info_def (tags, and the stripped_op_list:
// each op graph_def and its functions use, from the graph's registry),
// saver_def (the Saver's nodes; sharded V2), the given node_list
// collections and signatures, and the "variables", "trainable_variables"
// and "global_step" collections TensorFlow keeps: a VariableDef per
// VariableV2/Variable node (its "v/Assign" initializer, "v/initial_value"
// and "v/read" when present, and a partitioned part's SaveSliceInfoDef).
// A variable is trainable unless it is named "global_step" or listed in
// options.non_trainable, or it is not of a floating-point type.
//
// Import reads the saver_def back into a Saver driving the graph's own save
// and restore nodes (Saver::FromNames) and every collection; fields Sluice
// does not interpret (context collections, a TF2 object graph) stay in the
// proto. ReadMetaGraph takes the binary form (".meta") or, for a path
// ending in ".pbtxt" or ".txt", the text form; WriteMetaGraph likewise.
//
// Errors: NotFound for a missing file; DataLoss naming the file when it does
// not parse; InvalidArgument naming the collection, signature or variable
// for a name the graph lacks, or a VariableDef that does not parse;
// Unimplemented for a saver_def of the V1 format (its Save/Restore ops
// write TensorFlow's old table format, which Sluice does not read).
// Thread-compatible.
#ifndef SLUICE_TRAINING_CHECKPOINT_META_GRAPH_H_
#define SLUICE_TRAINING_CHECKPOINT_META_GRAPH_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/proto/meta_graph.pb.h"
#include "graph/proto/variable.pb.h"
#include "training/checkpoint/saver.h"

namespace sluice {

using MetaGraphDef = ::tensorflow::MetaGraphDef;

absl::StatusOr<MetaGraphDef> ReadMetaGraph(const std::string& path);
// Written atomically; text for a path ending in ".pbtxt" or ".txt".
absl::Status WriteMetaGraph(const std::string& path, const MetaGraphDef& meta);

struct MetaGraphExportOptions {
  const Saver* saver = nullptr;  // recorded as saver_def when set
  std::vector<std::string> tags;
  // node_list collections: name -> node names ("train") or tensor names
  // ("loss:0"), e.g. "train_op", "losses", "summaries".
  std::map<std::string, std::vector<std::string>> collections;
  // Variables (node names) left out of "trainable_variables".
  std::vector<std::string> non_trainable;
  std::map<std::string, ::tensorflow::SignatureDef> signatures;
};

absl::StatusOr<MetaGraphDef> ExportMetaGraph(const Graph& graph,
                                             const MetaGraphExportOptions& options = {});

struct ImportedMetaGraph {
  GraphDef graph_def;
  std::unique_ptr<Saver> saver;  // null when the MetaGraph has no saver_def
  // node_list collections by name.
  std::map<std::string, std::vector<std::string>> collections;
  std::vector<::tensorflow::VariableDef> variables;            // "variables"
  std::vector<::tensorflow::VariableDef> trainable_variables;  // "trainable_variables"
};

absl::StatusOr<ImportedMetaGraph> ImportMetaGraph(const MetaGraphDef& meta);

// The Saver's SaverDef (TensorFlow's names: the fed prefix, the tensor
// fetched to save, the op run to restore).
::tensorflow::SaverDef SaverDefOf(const Saver& saver, int max_to_keep);

}  // namespace sluice

#endif  // SLUICE_TRAINING_CHECKPOINT_META_GRAPH_H_
