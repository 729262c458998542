#include "training/checkpoint/saved_model.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "graph/text_proto.h"
#include "runtime/atomic_file.h"
#include "session/direct_session.h"
#include "training/checkpoint/object_graph.h"

namespace sluice {
namespace {

constexpr char kSavedModelFile[] = "saved_model.pb";
constexpr char kSavedModelTextFile[] = "saved_model.pbtxt";

absl::StatusOr<::tensorflow::SavedModel> ReadSavedModel(const std::string& dir) {
  ::tensorflow::SavedModel model;
  const std::string binary = absl::StrCat(dir, "/", kSavedModelFile);
  absl::StatusOr<std::string> bytes = ReadFileToString(binary);
  if (bytes.ok()) {
    if (!model.ParseFromString(*bytes)) {
      return absl::DataLossError(absl::StrCat("'", binary, "' does not parse as a SavedModel"));
    }
    return model;
  }
  if (!absl::IsNotFound(bytes.status())) return bytes.status();
  const std::string text = absl::StrCat(dir, "/", kSavedModelTextFile);
  bytes = ReadFileToString(text);
  if (absl::IsNotFound(bytes.status())) {
    return absl::NotFoundError(absl::StrCat("no SavedModel in '", dir, "': neither ",
                                            kSavedModelFile, " nor ", kSavedModelTextFile));
  }
  RETURN_IF_ERROR(bytes.status());
  absl::Status parsed = ParseTextProto(*bytes, &model);
  if (!parsed.ok()) {
    return absl::DataLossError(
        absl::StrCat("'", text, "' does not parse as a SavedModel: ", parsed.message()));
  }
  return model;
}

std::string TagSet(const std::vector<std::string>& tags) {
  std::set<std::string> sorted(tags.begin(), tags.end());
  return absl::StrCat("{", absl::StrJoin(sorted, ", "), "}");
}

// Each asset's tensor fed the path of its file under DIR/assets/.
std::vector<std::pair<std::string, Tensor>> AssetFeeds(const std::string& dir,
                                                       const MetaGraphDef& meta) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  auto add = [&](const ::tensorflow::AssetFileDef& a) {
    feeds.emplace_back(a.tensor_info().name(),
                       Tensor::Scalar<std::string>(absl::StrCat(dir, "/assets/", a.filename())));
  };
  for (const ::tensorflow::AssetFileDef& a : meta.asset_file_def()) add(a);
  // TF1's SavedModelBuilder keeps them in a collection instead.
  auto legacy = meta.collection_def().find("saved_model_assets");
  if (meta.asset_file_def_size() == 0 && legacy != meta.collection_def().end()) {
    for (const google::protobuf::Any& any : legacy->second.any_list().value()) {
      ::tensorflow::AssetFileDef a;
      if (any.UnpackTo(&a)) add(a);
    }
  }
  return feeds;
}

// The main op's nodes: "saved_model_main_op", else "legacy_init_op", else
// the "table_initializer" collection.
std::vector<std::string> MainOp(const MetaGraphDef& meta) {
  for (const char* key : {"saved_model_main_op", "legacy_init_op", "table_initializer"}) {
    auto it = meta.collection_def().find(key);
    if (it == meta.collection_def().end() || !it->second.has_node_list()) continue;
    std::vector<std::string> nodes;
    for (const std::string& n : it->second.node_list().value()) {
      nodes.push_back(absl::StartsWith(n, "^") ? n.substr(1) : n);
    }
    if (!nodes.empty()) return nodes;
  }
  return {};
}

// Adds to `graph` the restore of the variables its calls capture, from the
// checkpoint at `prefix` (nothing for a checkpoint without an object graph).
absl::StatusOr<CapturedVariableRestore> AddCapturedVariables(
    const ::tensorflow::SavedObjectGraph& objects, const std::string& prefix, GraphDef* graph) {
  ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> checkpoint, BundleReader::Open(prefix));
  absl::StatusOr<::tensorflow::TrackableObjectGraph> saved = ReadCheckpointObjectGraph(*checkpoint);
  if (absl::IsNotFound(saved.status())) return CapturedVariableRestore();
  RETURN_IF_ERROR(saved.status());
  return AddCapturedVariableRestore(objects, *saved, graph);
}

::tensorflow::TensorInfo InfoOf(const Output& o) {
  ::tensorflow::TensorInfo info;
  info.set_name(o.name());
  info.set_dtype(static_cast<::tensorflow::DataType>(BaseType(o.dtype())));
  o.shape().ToProto(info.mutable_tensor_shape());
  return info;
}

}  // namespace

absl::StatusOr<SavedModelBundle> LoadSavedModel(const SessionConfig& config, const std::string& dir,
                                                const std::vector<std::string>& tags) {
  ASSIGN_OR_RETURN(::tensorflow::SavedModel model, ReadSavedModel(dir));
  const std::string wanted = TagSet(tags);
  std::vector<std::string> there;
  SavedModelBundle bundle;
  bundle.dir = dir;
  bool found = false;
  for (const MetaGraphDef& meta : model.meta_graphs()) {
    const std::vector<std::string> meta_tags(meta.meta_info_def().tags().begin(),
                                             meta.meta_info_def().tags().end());
    there.push_back(TagSet(meta_tags));
    if (!found && there.back() == wanted) {
      bundle.meta_graph = meta;
      found = true;
    }
  }
  if (!found) {
    return absl::NotFoundError(absl::StrCat("the SavedModel in '", dir,
                                            "' has no MetaGraph tagged ", wanted, "; it has ",
                                            there.empty() ? "none" : absl::StrJoin(there, ", ")));
  }
  const MetaGraphDef& meta = bundle.meta_graph;
  const std::string variables = absl::StrCat(dir, "/variables/variables");
  const bool has_variables = std::filesystem::exists(variables + ".index");
  // TF2: the variables the signatures' functions capture, bound through
  // the object graph (training/checkpoint/object_graph.h).
  CapturedVariableRestore captured;
  std::optional<GraphDef> with_captures;
  if (meta.has_object_graph_def() && has_variables) {
    with_captures = meta.graph_def();
    absl::StatusOr<CapturedVariableRestore> added =
        AddCapturedVariables(meta.object_graph_def(), variables, &*with_captures);
    if (!added.ok()) {
      return AddContext(added.status(),
                        absl::StrCat("binding the variables of the SavedModel in '", dir, "'"));
    }
    captured = *std::move(added);
  }
  absl::StatusOr<std::unique_ptr<Session>> session =
      NewSession(config, with_captures ? *with_captures : meta.graph_def());
  if (!session.ok()) {
    return AddContext(session.status(), absl::StrCat("loading the SavedModel in '", dir, "'"));
  }
  bundle.session = *std::move(session);
  const std::vector<std::pair<std::string, Tensor>> assets = AssetFeeds(dir, meta);
  if (captured.variables > 0) {
    absl::Status s = bundle.session
                         ->Run({{captured.prefix_tensor, Tensor::Scalar<std::string>(variables)}},
                               {}, {captured.target})
                         .status();
    if (!s.ok()) {
      return AddContext(s,
                        absl::StrCat("restoring the variables of the SavedModel in '", dir, "'"));
    }
  }
  if (meta.has_saver_def() && has_variables) {
    std::vector<std::pair<std::string, Tensor>> feeds = assets;
    feeds.emplace_back(meta.saver_def().filename_tensor_name(),
                       Tensor::Scalar<std::string>(variables));
    std::string restore = meta.saver_def().restore_op_name();
    if (absl::StartsWith(restore, "^")) restore = restore.substr(1);
    absl::Status s = bundle.session->Run(feeds, {}, {restore}).status();
    if (!s.ok()) {
      return AddContext(s,
                        absl::StrCat("restoring the variables of the SavedModel in '", dir, "'"));
    }
  }
  const std::vector<std::string> main_op = MainOp(meta);
  if (!main_op.empty()) {
    absl::Status s = bundle.session->Run(assets, {}, main_op).status();
    if (!s.ok()) {
      return AddContext(s, absl::StrCat("running the main op of the SavedModel in '", dir, "'"));
    }
  }
  return bundle;
}

absl::StatusOr<std::map<std::string, Tensor>> RunSignature(
    const SavedModelBundle& bundle, const std::string& key,
    const std::map<std::string, Tensor>& inputs, const std::vector<std::string>& outputs) {
  const auto& signatures = bundle.meta_graph.signature_def();
  auto it = signatures.find(key);
  if (it == signatures.end()) {
    std::vector<std::string> keys;
    for (const auto& [k, unused] : signatures) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    return absl::NotFoundError(
        absl::StrCat("the SavedModel in '", bundle.dir, "' has no signature '", key,
                     "'; it has: ", keys.empty() ? "none" : absl::StrJoin(keys, ", ")));
  }
  const ::tensorflow::SignatureDef& sig = it->second;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [k, t] : inputs) {
    auto in = sig.inputs().find(k);
    if (in == sig.inputs().end()) {
      std::vector<std::string> keys;
      for (const auto& [name, unused] : sig.inputs()) keys.push_back(name);
      std::sort(keys.begin(), keys.end());
      return absl::NotFoundError(absl::StrCat("signature '", key, "' has no input '", k,
                                              "'; its inputs: ", absl::StrJoin(keys, ", ")));
    }
    if (in->second.name().empty()) {
      return absl::UnimplementedError(
          absl::StrCat("signature '", key, "' input '", k, "' is not a dense tensor"));
    }
    const DataType want = static_cast<DataType>(in->second.dtype());
    if (want != DT_INVALID && t.dtype() != want) {
      return absl::InvalidArgumentError(absl::StrCat("signature '", key, "' input '", k, "' is ",
                                                     DataTypeName(want), ", given ",
                                                     DataTypeName(t.dtype())));
    }
    feeds.emplace_back(in->second.name(), t);
  }
  for (const auto& [k, unused] : sig.inputs()) {
    if (inputs.count(k) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("signature '", key, "' needs input '", k, "'"));
    }
  }
  std::vector<std::string> keys = outputs;
  if (keys.empty()) {
    for (const auto& [k, unused] : sig.outputs()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
  }
  std::vector<std::string> fetches;
  for (const std::string& k : keys) {
    auto out = sig.outputs().find(k);
    if (out == sig.outputs().end() || out->second.name().empty()) {
      return absl::NotFoundError(
          absl::StrCat("signature '", key, "' has no dense output '", k, "'"));
    }
    fetches.push_back(out->second.name());
  }
  absl::StatusOr<std::vector<Tensor>> got = bundle.session->Run(feeds, fetches, {});
  if (!got.ok()) return AddContext(got.status(), absl::StrCat("running signature '", key, "'"));
  std::map<std::string, Tensor> result;
  for (size_t i = 0; i < keys.size(); ++i) result.emplace(keys[i], std::move((*got)[i]));
  return result;
}

absl::Status SaveModel(Session* session, const Graph& graph, const Saver& saver,
                       const std::string& dir, const SaveModelOptions& options) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_empty(dir, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write a SavedModel into '", dir, "': it is not empty"));
  }
  RETURN_IF_ERROR(CreateDirectories(absl::StrCat(dir, "/variables")));
  RETURN_IF_ERROR(saver.SaveTo(session, absl::StrCat(dir, "/variables/variables")));

  MetaGraphExportOptions meta_options;
  meta_options.saver = &saver;
  meta_options.tags = options.tags;
  meta_options.signatures = options.signatures;
  if (!options.main_op.empty()) meta_options.collections["saved_model_main_op"] = {options.main_op};
  for (const auto& [tensor, unused] : options.assets) {
    meta_options.collections["asset_filepaths"].push_back(tensor);
  }
  ASSIGN_OR_RETURN(MetaGraphDef meta, ExportMetaGraph(graph, meta_options));
  if (!options.assets.empty()) RETURN_IF_ERROR(CreateDirectories(absl::StrCat(dir, "/assets")));
  for (const auto& [tensor, file] : options.assets) {
    const std::string name = std::filesystem::path(file).filename().string();
    std::filesystem::copy_file(file, absl::StrCat(dir, "/assets/", name),
                               std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) {
      return absl::NotFoundError(
          absl::StrCat("cannot copy asset '", file, "' into '", dir, "/assets': ", ec.message()));
    }
    ::tensorflow::AssetFileDef* asset = meta.add_asset_file_def();
    asset->mutable_tensor_info()->set_name(tensor);
    asset->mutable_tensor_info()->set_dtype(::tensorflow::DT_STRING);
    asset->set_filename(name);
  }
  ::tensorflow::SavedModel model;
  model.set_saved_model_schema_version(1);
  *model.add_meta_graphs() = std::move(meta);
  return WriteFileAtomically(absl::StrCat(dir, "/", kSavedModelFile), model.SerializeAsString());
}

::tensorflow::SignatureDef PredictSignature(const std::map<std::string, Output>& inputs,
                                            const std::map<std::string, Output>& outputs) {
  ::tensorflow::SignatureDef sig;
  sig.set_method_name(kPredictMethodName);
  for (const auto& [k, o] : inputs) (*sig.mutable_inputs())[k] = InfoOf(o);
  for (const auto& [k, o] : outputs) (*sig.mutable_outputs())[k] = InfoOf(o);
  return sig;
}

}  // namespace sluice
