// Every built-in op has a CPU kernel, a shape function (when it has outputs)
// and a gradient decision where it is differentiable (STYLE.md §5).
#include "ops/builtins.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/op_families.h"

namespace sluice {
namespace {

// The one family list: unique names, the runtime's ops first, and each
// family's op definitions registered before any family's gradients.
TEST(BuiltinsTest, FamilyListRegistersIntoAPrivateRegistry) {
  absl::flat_hash_set<std::string> names;
  for (const OpFamily& family : BuiltinOpFamilies()) {
    EXPECT_TRUE(names.insert(family.name).second) << family.name;
    EXPECT_NE(family.register_ops, nullptr) << family.name;
    EXPECT_NE(family.register_cpu_kernels, nullptr) << family.name;
  }
  ASSERT_FALSE(BuiltinOpFamilies().empty());
  EXPECT_STREQ(BuiltinOpFamilies()[0].name, "runtime");

  OpRegistry ops;
  ASSERT_TRUE(RegisterOpFamilies(BuiltinOpFamilies(), &ops).ok());
  EXPECT_EQ(ops.ListOps(), BuiltinOps()->ListOps());
  // A second pass names the family whose op is already there.
  absl::Status again = RegisterOpFamilies(BuiltinOpFamilies(), &ops);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(absl::StrContains(again.message(), "op family 'runtime'")) << again;

  KernelRegistry kernels;
  RegisterOpFamilyCpuKernels(BuiltinOpFamilies(), &kernels);
  EXPECT_EQ(kernels.OpsWithKernels(kDeviceTypeCpu), BuiltinKernels()->OpsWithKernels(kDeviceTypeCpu));
}

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
    // An op with a lowering (If, While: ops/functional) never runs as a
    // kernel: sessions rewrite it into ops that have kernels.
    if (BuiltinOps()->Find(op)->lower_fn) continue;
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
    // An op with a lowering is differentiated as what it lowers into.
    if (def->grad_fn || def->sparse_grad_fn || def->no_gradient || def->lower_fn ||
        def->inputs.empty()) {
      continue;
    }
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

// The ops of real TensorFlow 1.x graph files that Sluice runs (control
// flow, stacks, TensorArrays, and the common math, array, nn, state and
// training ops); each has its own tests beside its kernels.
TEST(BuiltinsTest, TensorFlowGraphOpsAreRegistered) {
  for (const char* op :
       {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "RefSwitch", "RefMerge",
        "RefEnter", "ControlTrigger", "StackV2", "StackPushV2", "StackPopV2", "StackCloseV2",
        "TensorArrayV3", "TensorArrayReadV3", "TensorArrayWriteV3", "TensorArrayGatherV3",
        "TensorArrayScatterV3", "TensorArraySizeV3", "TensorArrayCloseV3", "TensorArrayConcatV3",
        "TensorArraySplitV3", "TensorArrayGradV3", "Range", "Where", "LogicalNot", "LogicalAnd",
        "LogicalOr", "All", "Any", "ShapeN", "FloorMod", "Floor", "Ceil", "Round", "Div",
        "TruncateDiv", "DivNoNan", "Inv", "SquaredDifference", "Log1p", "Expm1", "Softplus",
        "Softsign", "Relu6", "Elu", "Selu", "LeakyRelu", "Erf", "Erfc", "IsNan", "IsInf",
        "IsFinite", "L2Loss", "Cumsum", "Cumprod", "ClipByValue", "OneHot", "ReverseV2", "SplitV",
        "Pad", "PadV2", "Assert", "CheckNumerics", "AvgPool", "FusedBatchNorm", "FusedBatchNormV3",
        "BatchMatMul", "BatchMatMulV2", "SpaceToDepth", "DepthToSpace", "MatrixDiag",
        "MatrixDiagPart", "Bucketize", "Unique", "ListDiff", "DynamicStitch",
        "ParallelDynamicStitch", "DynamicPartition", "GatherNd", "ScatterNd", "TopKV2", "InTopKV2",
        "MirrorPad", "MirrorPadGrad", "SpaceToBatchND", "BatchToSpaceND", "ReverseSequence",
        "ParallelConcat", "VarHandleOp", "ReadVariableOp", "AssignVariableOp", "VarIsInitializedOp",
        "ResourceGather", "ResourceApplyGradientDescent", "ResourceApplyMomentum",
        "ResourceApplyAdam", "Relu6Grad", "EluGrad", "SeluGrad", "LeakyReluGrad", "SoftplusGrad",
        "SoftsignGrad", "FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3",
        "TensorArrayGradWithShape", "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
        "DepthwiseConv2dNativeBackpropFilter", "Conv3D", "Conv3DBackpropInputV2",
        "Conv3DBackpropFilterV2", "MaxPool3D", "AvgPool3D", "MaxPool3DGrad", "AvgPool3DGrad", "LRN",
        "LRNGrad", "ApplyAdagrad", "ResourceApplyAdagrad", "SparseApplyAdagrad",
        "ResourceSparseApplyAdagrad", "ApplyProximalAdagrad", "ResourceApplyProximalAdagrad",
        "SparseApplyProximalAdagrad", "ResourceSparseApplyProximalAdagrad", "ApplyAdadelta",
        "ResourceApplyAdadelta", "SparseApplyAdadelta", "ResourceSparseApplyAdadelta",
        "ApplyRMSProp", "ResourceApplyRMSProp", "SparseApplyRMSProp", "ResourceSparseApplyRMSProp",
        "ApplyCenteredRMSProp", "ResourceApplyCenteredRMSProp", "SparseApplyCenteredRMSProp",
        "ResourceSparseApplyCenteredRMSProp", "ApplyFtrl", "ResourceApplyFtrl", "SparseApplyFtrl",
        "ResourceSparseApplyFtrl", "ApplyFtrlV2", "ResourceApplyFtrlV2", "SparseApplyFtrlV2",
        "ResourceSparseApplyFtrlV2", "ScatterUpdate", "ScatterAdd", "ScatterSub",
        "ResourceScatterUpdate", "ResourceScatterAdd", "ResourceScatterSub", "ShardedFilename",
        "ShardedFilespec", "MergeV2Checkpoints", "LSTMBlockCell", "LSTMBlockCellGrad", "BlockLSTM",
        "BlockLSTMGrad", "GRUBlockCell", "GRUBlockCellGrad", "FIFOQueueV2", "RandomShuffleQueueV2",
        "QueueEnqueueV2", "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
        "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2", "_FusedMatMul",
        "ResourceApplyKerasMomentum", "ResourceSparseApplyKerasMomentum",
        "ResourceApplyAdamWithAmsgrad", "ApplyAdaMax", "ResourceApplyAdaMax", "ApplyAddSign",
        "ResourceApplyAddSign", "ApplyPowerSign", "ResourceApplyPowerSign"}) {
    EXPECT_NE(BuiltinOps()->Find(op), nullptr) << op;
  }
}

}  // namespace
}  // namespace sluice
