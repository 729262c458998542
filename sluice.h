// Sluice's public API in one header: build graphs (Scope and the ops::
// wrappers), differentiate and train them (AddGradients, optimizers), run
// them (Session), replicate training over devices (ReplicateTraining), and
// exchange graphs and tensors as files.
//
//   #include "sluice.h"
//   using namespace sluice;
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
//   Output y = ops::Square(s.WithOpName("y"), x);
//   auto session = NewSession(BuiltinSessionConfig(), *s.graph());
//   auto out = (*session)->Run({{x, Tensor::Scalar<float>(3)}}, {y});   // 9
//
// Depend on the Bazel target @sluice//:sluice (see README.md).
#ifndef SLUICE_SLUICE_H_
#define SLUICE_SLUICE_H_

#include "builtin_session.h"
#include "graph/function_builder.h"
#include "graph/gradients.h"
#include "graph/graph_def_io.h"
#include "graph/scope.h"
#include "base/status_macros.h"
#include "ops/nn/activation_ops.h"
#include "ops/array/array_layout_ops.h"
#include "ops/array/array_rearrange_ops.h"
#include "ops/array/array_ops.h"
#include "ops/math/batch_matmul_ops.h"
#include "ops/nn/fused_ops.h"
#include "ops/nn/batch_norm_ops.h"
#include "ops/builtins.h"
#include "ops/math/check_ops.h"
#include "ops/array/index_ops.h"
#include "ops/control_flow/control_flow_builders.h"
#include "ops/control_flow/control_flow_ops.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/training/optimizers.h"
#include "ops/random/random_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/math/scan_ops.h"
#include "ops/control_flow/stack_ops.h"
#include "ops/state/state_ops.h"
#include "ops/nn/activation_grad_ops.h"
#include "ops/nn/batch_norm_grad_ops.h"
#include "ops/nn/depthwise_conv_ops.h"
#include "ops/nn/nn3d_ops.h"
#include "ops/nn/lrn_ops.h"
#include "ops/nn/rnn_block_ops.h"
#include "ops/control_flow/tensor_array_ops.h"
#include "ops/state/scatter_ops.h"
#include "ops/io/sharded_checkpoint_ops.h"
#include "ops/data/dataset_builder.h"
#include "ops/data_flow/queue_ops.h"
#include "ops/functional/functional_ops.h"
#include "ops/image/image_codec_ops.h"
#include "ops/image/image_ops.h"
#include "ops/io/reader_ops.h"
#include "ops/parsing/decode_ops.h"
#include "ops/parsing/parsing_ops.h"
#include "ops/random/random_shuffle_ops.h"
#include "ops/training/training_ops.h"
#include "placement/auto_placer.h"
#include "placement/pipeline.h"
#include "placement/replicate.h"
#include "session/direct_session.h"
#include "runtime/freeze_graph.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "runtime/tensor.h"
#include "training/sweep_report.h"

#endif  // SLUICE_SLUICE_H_
