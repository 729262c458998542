// The convolutional classifier of the main job (Fashion-MNIST): two
// convolution + max-pool stages and two dense layers, in TensorFlow's
// layouts (NHWC images, HWIO filters), initialised as tf.layers does
// (Glorot-uniform kernels, zero biases).
//
//   CnnConfig config;                       // 28x28x1 images, 10 classes
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   Output images = ...;                    // float [batch, 28, 28, 1]
//   Output labels = ...;                    // int64 [batch]
//   ASSIGN_OR_RETURN(CnnModel m, BuildCnnTower(s, config, images, labels));
//   ... m.loss, m.accuracy, m.weights (for an optimizer) ...
//
// Thread-compatible.
#ifndef SLUICE_EXAMPLES_CNN_MODEL_H_
#define SLUICE_EXAMPLES_CNN_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sluice.h"

namespace sluice {

struct CnnConfig {
  int64_t height = 28, width = 28, channels = 1, classes = 10;
  int64_t kernel = 3;    // square convolution windows, SAME padding, stride 1
  int64_t conv1 = 16;    // filters of the first convolution
  int64_t conv2 = 32;    // filters of the second
  int64_t dense = 128;   // units of the hidden dense layer
  int64_t seed = 1;      // of the initial weights
};

struct CnnModel {
  Scope scope;
  Output images;      // float [batch, height, width, channels]
  Output labels;      // int64 [batch]
  Output logits;      // float [batch, classes]
  Output prediction;  // int64 [batch]               (node "prediction" under the scope)
  Output loss;        // float scalar, mean cross-entropy ("loss")
  Output accuracy;    // float scalar                ("accuracy")
  // conv1/kernel, conv1/bias, conv2/kernel, conv2/bias, dense/kernel,
  // dense/bias, logits/kernel, logits/bias.
  std::vector<Output> weights;
};

// Builds the model in `scope` over `images` and `labels`. InvalidArgument
// when a size is not positive or the image is too small for two 2x2 pools.
absl::StatusOr<CnnModel> BuildCnnTower(const Scope& scope, const CnnConfig& config, Output images,
                                       Output labels);

}  // namespace sluice

#endif  // SLUICE_EXAMPLES_CNN_MODEL_H_
