#include "examples/cnn_export.h"

#include <cstring>
#include <filesystem>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/atomic_file.h"
#include "runtime/npy.h"
#include "training/checkpoint/saved_model.h"

namespace sluice {
namespace {

// BASE/<1 + the largest integer directory there>.
std::string NextVersion(const std::string& base) {
  int64_t last = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
    int64_t v = 0;
    if (e.is_directory() && absl::SimpleAtoi(e.path().filename().string(), &v)) {
      last = std::max(last, v);
    }
  }
  return absl::StrCat(base, "/", last + 1);
}

// The batches one after another along the first dimension.
Tensor Concat(const std::vector<Tensor>& parts) {
  int64_t rows = 0;
  for (const Tensor& p : parts) rows += p.dim_size(0);
  std::vector<int64_t> dims = parts[0].shape().dims();
  dims[0] = rows;
  Tensor out(parts[0].dtype(), TensorShape(dims));
  char* dst = static_cast<char*>(out.raw_data());
  for (const Tensor& p : parts) {
    const size_t bytes = static_cast<size_t>(p.NumElements()) * DataTypeSize(p.dtype());
    std::memcpy(dst, p.raw_data(), bytes);
    dst += bytes;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ExportCnnSavedModel(const CnnConfig& config,
                                                const std::vector<Tensor>& weights,
                                                const std::string& base_dir,
                                                const std::vector<ImageBatch>* test) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output images =
      ops::Placeholder(s.WithOpName("images"), DT_FLOAT,
                       {.shape = TensorShape({-1, config.height, config.width, config.channels})});
  Output labels = ops::Placeholder(s.WithOpName("labels"), DT_INT64, {.shape = TensorShape({-1})});
  ASSIGN_OR_RETURN(CnnModel model, BuildCnnTower(s, config, images, labels));
  if (weights.size() != model.weights.size()) {
    return absl::InvalidArgumentError(absl::StrCat("exporting the CNN: ", weights.size(),
                                                   " weights given, the model has ",
                                                   model.weights.size()));
  }
  Output probabilities = ops::Softmax(s.WithOpName("probabilities"), model.logits);
  // The trained values, assigned once into a fresh session; then saved.
  std::vector<Node*> set;
  for (size_t i = 0; i < weights.size(); ++i) {
    set.push_back(ops::Assign(s.WithOpName(absl::StrCat("set_", i)), model.weights[i],
                              ops::Const(s, weights[i]))
                      .node);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Saver> saver, Saver::Build(s, {}));
  RETURN_IF_ERROR(s.status());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                   NewSession(BuiltinSessionConfig(), *s.graph()));
  RETURN_IF_ERROR(session->Run({}, {}, set).status());

  SaveModelOptions options;
  options.signatures[kDefaultServingSignature] = PredictSignature(
      {{"images", images}}, {{"probabilities", probabilities}, {"classes", model.prediction}});
  RETURN_IF_ERROR(CreateDirectories(base_dir));
  const std::string dir = NextVersion(base_dir);
  RETURN_IF_ERROR(SaveModel(session.get(), *s.graph(), *saver, dir, options));
  if (test != nullptr && !test->empty()) {
    std::vector<Tensor> x, y;
    for (const ImageBatch& b : *test) {
      x.push_back(b.images);
      y.push_back(b.labels);
    }
    RETURN_IF_ERROR(WriteNpyFile(Concat(x), base_dir + "/test_images.npy"));
    RETURN_IF_ERROR(WriteNpyFile(Concat(y), base_dir + "/test_labels.npy"));
  }
  return dir;
}

}  // namespace sluice
