// The main job's model leaves as a SavedModel: a serving graph of its own
// (images -> probabilities, classes; no optimizer, no input pipeline) holding
// the trained weights, under TensorFlow Serving's layout BASE/<version>
// (the next integer), with the test set beside it as .npy files so that
//
//   bazel run //tools:runner -- --saved_model=BASE/1 --input=images=BASE/test_images.npy
//
// classifies it. Signature "serving_default" (predict): input "images"
// (float [n, 28, 28, 1] in [0, 1]), outputs "probabilities" (float
// [n, 10]) and "classes" (int64 [n]).
//
//   ASSIGN_OR_RETURN(std::string dir, ExportCnnSavedModel(config, weights, "/tmp/model", &test));
//
// `weights` are CnnModel::weights' values, in that order. Errors: the
// graph's, the Saver's and the files'. Thread-compatible.
#ifndef SLUICE_EXAMPLES_CNN_EXPORT_H_
#define SLUICE_EXAMPLES_CNN_EXPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "examples/cnn_model.h"
#include "examples/fashion_mnist_input.h"

namespace sluice {

// `test`, when given, is written as BASE/test_images.npy and
// BASE/test_labels.npy. Returns the version directory written.
absl::StatusOr<std::string> ExportCnnSavedModel(const CnnConfig& config,
                                                const std::vector<Tensor>& weights,
                                                const std::string& base_dir,
                                                const std::vector<ImageBatch>* test = nullptr);

}  // namespace sluice

#endif  // SLUICE_EXAMPLES_CNN_EXPORT_H_
