// Every built-in op has a CPU kernel, a shape function (when it has outputs)
// and a gradient decision where it is differentiable (STYLE.md §5).
#include "ops/builtins.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

// Code asks an op's traits, not its name (placement, checkpoints, feeds).
TEST(BuiltinsTest, VariablesAndPlaceholdersCarryTheirTraits) {
  for (const std::string& op : BuiltinOps()->ListOps()) {
    const OpDef* def = BuiltinOps()->Find(op);
    ASSERT_NE(def, nullptr);
    EXPECT_EQ(def->is_variable, op == "Variable" || op == "VariableV2") << op;
    EXPECT_EQ(def->is_placeholder, op == "Placeholder" || op == "PlaceholderWithDefault") << op;
  }
}

TEST(BuiltinsTest, EveryOpHasACpuKernel) {
  std::vector<std::string> missing;
  for (const std::string& op : BuiltinOps()->ListOps()) {
    if (!BuiltinKernels()->HasKernelsFor(op, kDeviceTypeCpu)) missing.push_back(op);
  }
  EXPECT_TRUE(missing.empty()) << "ops without a CPU kernel: " << testing::PrintToString(missing);
}

TEST(BuiltinsTest, EveryOpWithOutputsHasAShapeFunction) {
  std::vector<std::string> missing;
  for (const std::string& op : BuiltinOps()->ListOps()) {
    const OpDef* def = BuiltinOps()->Find(op);
    if (!def->outputs.empty() && !def->shape_fn) missing.push_back(op);
  }
  EXPECT_TRUE(missing.empty()) << "ops without a shape function: "
                               << testing::PrintToString(missing);
}

TEST(BuiltinsTest, FloatOpsDecideAboutGradients) {
  // Ops with a float-typed input either have a gradient function or are
  // declared non-differentiable, so AddGradients never meets a surprise.
  std::vector<std::string> undecided;
  for (const std::string& op : BuiltinOps()->ListOps()) {
    const OpDef* def = BuiltinOps()->Find(op);
    if (def->grad_fn || def->no_gradient || def->inputs.empty()) continue;
    // Gradient helper ops (ReluGrad, Conv2DBackpropInput, ...): second-order
    // gradients are not supported and fail with a clear FailedPrecondition.
    if (absl::EndsWith(op, "Grad") || absl::StrContains(op, "Backprop")) continue;
    undecided.push_back(op);
  }
  EXPECT_TRUE(undecided.empty()) << "ops with neither a gradient nor a no-gradient mark: "
                                 << testing::PrintToString(undecided);
}

TEST(BuiltinsTest, TheIssueOpListIsRegistered) {
  for (const char* op :
       {"Const", "Placeholder", "PlaceholderWithDefault", "Identity", "NoOp", "VariableV2",
        "Assign", "AssignAdd", "AssignSub", "RandomUniform", "RandomStandardNormal",
        "TruncatedNormal", "Fill", "ZerosLike", "OnesLike", "Add", "AddV2", "Sub", "Mul",
        "RealDiv", "Neg", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Tanh", "Sigmoid", "Relu",
        "Maximum", "Minimum", "MatMul", "BiasAdd", "Reshape", "Transpose", "ConcatV2", "Split",
        "Slice", "Pack", "Unpack", "Sum", "Mean", "Max", "Prod", "Softmax", "LogSoftmax",
        "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", "ArgMax",
        "Equal", "Cast", "Shape", "Size", "Conv2D", "MaxPool", "ApplyGradientDescent",
        "ApplyMomentum", "ApplyAdam", "AddN", "Pow", "Reciprocal", "Tile", "StridedSlice",
        "ExpandDims", "Squeeze", "GatherV2", "BroadcastGradientArgs", "FloorDiv"}) {
    EXPECT_NE(BuiltinOps()->Find(op), nullptr) << op;
  }
}

}  // namespace
}  // namespace sluice
