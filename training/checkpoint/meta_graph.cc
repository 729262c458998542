#include "training/checkpoint/meta_graph.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "google/protobuf/text_format.h"
#include "graph/op_def_proto.h"
#include "graph/text_proto.h"
#include "ops/io/internal/tensor_slice.h"
#include "runtime/atomic_file.h"

namespace sluice {
namespace {

bool IsText(const std::string& path) {
  return absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".txt");
}

// "w:0" -> "w"; "^w" -> "w".
std::string NodeOf(absl::string_view name) {
  if (absl::StartsWith(name, "^")) name.remove_prefix(1);
  const size_t colon = name.rfind(':');
  return std::string(colon == absl::string_view::npos ? name : name.substr(0, colon));
}

bool IsFloating(DataType t) {
  t = BaseType(t);
  return t == DT_FLOAT || t == DT_DOUBLE || t == DT_HALF || t == DT_BFLOAT16;
}

// The VariableDef TensorFlow records for variable node `v`.
absl::StatusOr<::tensorflow::VariableDef> VariableDefOf(const Graph& graph, const Node& v,
                                                        bool trainable) {
  ::tensorflow::VariableDef def;
  def.set_variable_name(absl::StrCat(v.name(), ":0"));
  if (const Node* assign = graph.FindNode(absl::StrCat(v.name(), "/Assign"))) {
    def.set_initializer_name(assign->name());
  }
  if (graph.FindNode(absl::StrCat(v.name(), "/initial_value")) != nullptr) {
    def.set_initial_value_name(absl::StrCat(v.name(), "/initial_value:0"));
  }
  // TensorFlow reads a variable through its snapshot; without a "v/read"
  // node the variable's own tensor serves (TensorFlow's loader needs one).
  def.set_snapshot_name(graph.FindNode(absl::StrCat(v.name(), "/read")) != nullptr
                            ? absl::StrCat(v.name(), "/read:0")
                            : def.variable_name());
  def.set_is_resource(v.op() == "VarHandleOp");
  def.set_trainable(trainable);
  absl::StatusOr<std::string> full = v.GetAttr<std::string>(kSaveSliceNameAttr);
  absl::StatusOr<std::string> spec = v.GetAttr<std::string>(kSaveSliceSpecAttr);
  if (full.ok() && spec.ok()) {
    // "7 3 4,3:0,3", parsed as SaveV2 parses it.
    absl::StatusOr<internal::ShapeAndSlice> slice = internal::ParseShapeAndSlice(*spec);
    if (!slice.ok()) return AddContext(slice.status(), absl::StrCat("variable '", v.name(), "'"));
    ::tensorflow::SaveSliceInfoDef* info = def.mutable_save_slice_info_def();
    info->set_full_name(*full);
    for (int64_t d : slice->full_shape.dims()) info->add_full_shape(d);
    for (int64_t d : slice->start) info->add_var_offset(d);
    for (int64_t d : slice->length) info->add_var_shape(d);
  }
  return def;
}

// Every op graph_def and its function library use, sorted.
std::set<std::string> OpsUsed(const GraphDef& def) {
  std::set<std::string> ops;
  for (const NodeDef& n : def.node()) ops.insert(n.op());
  absl::flat_hash_set<std::string> functions;
  for (const auto& f : def.library().function()) functions.insert(f.signature().name());
  for (const auto& f : def.library().function()) {
    for (const NodeDef& n : f.node_def()) ops.insert(n.op());
  }
  for (const std::string& f : functions) ops.erase(f);  // calls of the library's own functions
  return ops;
}

absl::Status CheckNames(const GraphDef& def, const std::string& what,
                        const std::vector<std::string>& names) {
  absl::flat_hash_set<std::string> nodes;
  for (const NodeDef& n : def.node()) nodes.insert(n.name());
  for (const std::string& name : names) {
    if (!nodes.contains(NodeOf(name))) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " names '", name, "', which the graph does not have"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MetaGraphDef> ReadMetaGraph(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) {
    if (absl::IsNotFound(bytes.status())) {
      return absl::NotFoundError(absl::StrCat("no MetaGraph at '", path, "'"));
    }
    return bytes.status();
  }
  MetaGraphDef meta;
  if (IsText(path)) {
    absl::Status parsed = ParseTextProto(*bytes, &meta);
    if (!parsed.ok()) {
      return absl::DataLossError(
          absl::StrCat("'", path, "' does not parse as a MetaGraphDef (", parsed.message(), ")"));
    }
  } else if (!meta.ParseFromString(*bytes)) {
    return absl::DataLossError(
        absl::StrCat("'", path, "' does not parse as a MetaGraphDef (binary)"));
  }
  return meta;
}

absl::Status WriteMetaGraph(const std::string& path, const MetaGraphDef& meta) {
  std::string bytes;
  const bool ok = IsText(path) ? google::protobuf::TextFormat::PrintToString(meta, &bytes)
                               : meta.SerializeToString(&bytes);
  if (!ok) return absl::InternalError(absl::StrCat("cannot serialize the MetaGraph for ", path));
  return WriteFileAtomically(path, bytes);
}

::tensorflow::SaverDef SaverDefOf(const Saver& saver, int max_to_keep) {
  const SaverNodeNames& names = saver.node_names();
  ::tensorflow::SaverDef def;
  def.set_filename_tensor_name(names.prefix_feed);
  def.set_save_tensor_name(names.save_tensor);
  def.set_restore_op_name(names.restore_target);
  def.set_max_to_keep(max_to_keep);
  def.set_sharded(true);
  def.set_keep_checkpoint_every_n_hours(10000.0f);  // TensorFlow's default: never
  def.set_version(::tensorflow::SaverDef::V2);
  return def;
}

absl::StatusOr<MetaGraphDef> ExportMetaGraph(const Graph& graph,
                                             const MetaGraphExportOptions& options) {
  MetaGraphDef meta;
  GraphDef* def = meta.mutable_graph_def();
  graph.ToGraphDef(def);
  MetaGraphDef::MetaInfoDef* info = meta.mutable_meta_info_def();
  for (const std::string& tag : options.tags) info->add_tags(tag);
  for (const std::string& op : OpsUsed(*def)) {
    const OpDef* op_def = graph.registry()->Find(op);
    if (op_def == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("the graph uses op '", op, "', which its registry does not have"));
    }
    *info->mutable_stripped_op_list()->add_op() = OpDefToProto(*op_def);
  }
  if (options.saver != nullptr) {
    *meta.mutable_saver_def() = SaverDefOf(*options.saver, options.saver->options().max_to_keep);
    RETURN_IF_ERROR(
        CheckNames(*def, "saver_def",
                   {meta.saver_def().filename_tensor_name(), meta.saver_def().save_tensor_name(),
                    meta.saver_def().restore_op_name()}));
  }
  for (const auto& [name, values] : options.collections) {
    RETURN_IF_ERROR(CheckNames(*def, absl::StrCat("collection '", name, "'"), values));
    auto* list = (*meta.mutable_collection_def())[name].mutable_node_list();
    for (const std::string& v : values) list->add_value(v);
  }
  const absl::flat_hash_set<std::string> non_trainable(options.non_trainable.begin(),
                                                       options.non_trainable.end());
  std::vector<const Node*> variables;
  for (const Node* n : graph.nodes()) {
    if (n->op_def().is_variable) variables.push_back(n);
  }
  std::sort(variables.begin(), variables.end(),
            [](const Node* a, const Node* b) { return a->id() < b->id(); });
  for (const Node* v : variables) {
    const bool trainable = IsFloating(v->output_type(0)) && v->name() != "global_step" &&
                           !non_trainable.contains(v->name());
    ASSIGN_OR_RETURN(::tensorflow::VariableDef vd, VariableDefOf(graph, *v, trainable));
    const std::string bytes = vd.SerializeAsString();
    (*meta.mutable_collection_def())["variables"].mutable_bytes_list()->add_value(bytes);
    if (trainable) {
      (*meta.mutable_collection_def())["trainable_variables"].mutable_bytes_list()->add_value(
          bytes);
    }
    if (v->name() == "global_step") {
      (*meta.mutable_collection_def())["global_step"].mutable_bytes_list()->add_value(bytes);
    }
  }
  for (const auto& [key, signature] : options.signatures) {
    for (const auto* map : {&signature.inputs(), &signature.outputs()}) {
      for (const auto& [k, info_proto] : *map) {
        if (info_proto.has_coo_sparse()) continue;
        RETURN_IF_ERROR(
            CheckNames(*def, absl::StrCat("signature '", key, "' (", k, ")"), {info_proto.name()}));
      }
    }
    (*meta.mutable_signature_def())[key] = signature;
  }
  return meta;
}

absl::StatusOr<ImportedMetaGraph> ImportMetaGraph(const MetaGraphDef& meta) {
  ImportedMetaGraph out;
  out.graph_def = meta.graph_def();
  if (meta.has_saver_def()) {
    const ::tensorflow::SaverDef& sd = meta.saver_def();
    if (sd.version() == ::tensorflow::SaverDef::V1 ||
        sd.version() == ::tensorflow::SaverDef::LEGACY) {
      // TensorFlow's V1 Save/Restore ops: their file format is not read.
      bool has_v2 = false;
      for (const NodeDef& n : out.graph_def.node()) has_v2 |= n.op() == "RestoreV2";
      if (!has_v2) {
        return absl::UnimplementedError(
            "the MetaGraph's saver writes TensorFlow's V1 checkpoint format, which Sluice does "
            "not read (save with tf.train.Saver(write_version=tf.train.SaverDef.V2))");
      }
    }
    RETURN_IF_ERROR(
        CheckNames(out.graph_def, "saver_def",
                   {sd.filename_tensor_name(), sd.save_tensor_name(), sd.restore_op_name()}));
    SaverNodeNames names;
    names.prefix_feed = sd.filename_tensor_name();
    names.save_tensor = sd.save_tensor_name();
    names.save_target = NodeOf(sd.save_tensor_name());
    names.restore_target = NodeOf(sd.restore_op_name());
    SaverOptions options;
    options.max_to_keep = sd.max_to_keep();
    out.saver = Saver::FromNames(std::move(names), options);
  }
  for (const auto& [name, collection] : meta.collection_def()) {
    if (collection.has_node_list()) {
      out.collections[name].assign(collection.node_list().value().begin(),
                                   collection.node_list().value().end());
      continue;
    }
    if (name != "variables" && name != "trainable_variables") continue;
    auto* into = name == "variables" ? &out.variables : &out.trainable_variables;
    for (const std::string& bytes : collection.bytes_list().value()) {
      ::tensorflow::VariableDef vd;
      if (!vd.ParseFromString(bytes)) {
        return absl::InvalidArgumentError(
            absl::StrCat("collection '", name, "' holds a VariableDef that does not parse"));
      }
      into->push_back(std::move(vd));
    }
  }
  return out;
}

}  // namespace sluice
