// Host-side checks of the GPU kernels of MatMul, the random ops, the training
// ops and the state ops: which (op, type) pairs have a GPU kernel, which
// arguments are HostMemory, and the MatMul node attr `_gpu_precision`. Runs
// without a GPU: kernels are only looked up and constructed, never run.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/math/math_ops.h"
#include "ops/random/random_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/state/state_ops.h"
#include "ops/training/training_ops.h"

namespace sluice {
namespace {

// A device of type GPU that is never run on: kernels are only built.
class FakeGpuDevice : public Device {
 public:
  FakeGpuDevice() : Device("/job:localhost/replica:0/task:0/device:GPU:0", kDeviceTypeGpu) {}
  Allocator* allocator() override { return nullptr; }
  ThreadPool* thread_pool() override { return nullptr; }
  bool has_device_memory() const override { return true; }
};

class GpuKernelRegistrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterArrayOps(&ops_).ok());
    ASSERT_TRUE(RegisterMathOps(&ops_).ok());
    ASSERT_TRUE(RegisterRandomOps(&ops_).ok());
    ASSERT_TRUE(RegisterStateOps(&ops_).ok());
    ASSERT_TRUE(RegisterTrainingOps(&ops_).ok());
    ASSERT_TRUE(RegisterResourceVariableOps(&ops_).ok());
    RegisterResourceVariableKernels(&kernels_);
    RegisterGpuMatMulKernels(&kernels_);
    RegisterGpuRandomKernels(&kernels_);
    RegisterGpuTrainingKernels(&kernels_);
    RegisterStateKernels(&kernels_);
  }

  bool HasGpuKernel(const Output& out) const {
    return kernels_.FindKernelDef(*out.node, kDeviceTypeGpu) != nullptr;
  }
  ArgMemoryTypes MemoryTypes(const Output& out) const {
    const KernelDef* def = kernels_.FindKernelDef(*out.node, kDeviceTypeGpu);
    EXPECT_NE(def, nullptr) << out.node->name();
    return def == nullptr ? ArgMemoryTypes{} : HostMemoryArgs(*def, *out.node);
  }

  OpRegistry ops_;
  KernelRegistry kernels_;
};

TEST_F(GpuKernelRegistrationTest, MatMulTypes) {
  Scope s = Scope::NewRootScope(&ops_);
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    Output mm = ops::MatMul(s, ops::Placeholder(s, t), ops::Placeholder(s, t));
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_TRUE(HasGpuKernel(mm)) << DataTypeName(t);
    const ArgMemoryTypes m = MemoryTypes(mm);
    EXPECT_EQ(m.input_on_host, std::vector<uint8_t>({0, 0}));
  }
  Output mm = ops::MatMul(s, ops::Placeholder(s, DT_INT32), ops::Placeholder(s, DT_INT32));
  EXPECT_FALSE(HasGpuKernel(mm));
}

TEST_F(GpuKernelRegistrationTest, MatMulPrecisionAttrIsCheckedAtConstruction) {
  Scope s = Scope::NewRootScope(&ops_);
  Output mm = ops::MatMul(s.WithOpName("dense/mm"), ops::Placeholder(s, DT_FLOAT),
                          ops::Placeholder(s, DT_FLOAT));
  ASSERT_TRUE(s.ok()) << s.status();
  FakeGpuDevice gpu;
  EXPECT_TRUE(kernels_.CreateKernel(*mm.node, &gpu).ok());  // no attr: the process-wide value
  for (const char* good : {"fp32", "tf32", "bf16"}) {
    mm.node->SetAttr("_gpu_precision", MakeAttr(good));
    absl::StatusOr<std::unique_ptr<OpKernel>> k = kernels_.CreateKernel(*mm.node, &gpu);
    EXPECT_TRUE(k.ok()) << good << ": " << k.status();
  }
  mm.node->SetAttr("_gpu_precision", MakeAttr("fp16"));
  absl::StatusOr<std::unique_ptr<OpKernel>> k = kernels_.CreateKernel(*mm.node, &gpu);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(k.status().message());
  EXPECT_NE(msg.find("dense/mm"), std::string::npos) << msg;
  EXPECT_NE(msg.find("_gpu_precision"), std::string::npos) << msg;
  EXPECT_NE(msg.find("fp16"), std::string::npos) << msg;
}

TEST_F(GpuKernelRegistrationTest, RandomShapeIsHostMemory) {
  Scope s = Scope::NewRootScope(&ops_);
  Output shape32 = ops::Const<int32_t>(s, {2, 3});
  Output shape64 = ops::Const<int64_t>(s, {2, 3});
  for (DataType t : {DT_FLOAT, DT_HALF, DT_BFLOAT16}) {
    for (Output shape : {shape32, shape64}) {
      for (Output r : {ops::RandomUniform(s, shape, t), ops::RandomStandardNormal(s, shape, t),
                       ops::TruncatedNormal(s, shape, t)}) {
        ASSERT_TRUE(s.ok()) << s.status();
        const ArgMemoryTypes m = MemoryTypes(r);
        EXPECT_EQ(m.input_on_host, std::vector<uint8_t>({1})) << r.node->op();
        EXPECT_EQ(m.output_on_host, std::vector<uint8_t>({0})) << r.node->op();
      }
    }
  }
  EXPECT_FALSE(HasGpuKernel(ops::RandomUniform(s, shape32, DT_DOUBLE)));

  Output ri = ops::RandomUniformInt(s, shape32, ops::Const<int64_t>(s, {0}, TensorShape()),
                                    ops::Const<int64_t>(s, {10}, TensorShape()));
  ASSERT_TRUE(s.ok()) << s.status();
  const ArgMemoryTypes m = MemoryTypes(ri);
  EXPECT_EQ(m.input_on_host, std::vector<uint8_t>({1, 1, 1}));
  EXPECT_EQ(m.output_on_host, std::vector<uint8_t>({0}));
}

TEST_F(GpuKernelRegistrationTest, TrainingAndAssignUpdateTypes) {
  Scope s = Scope::NewRootScope(&ops_);
  for (DataType t : {DT_FLOAT, DT_DOUBLE}) {
    Output var = ops::Variable(s, TensorShape({4}), t);
    Output m = ops::Variable(s, TensorShape({4}), t);
    Output v = ops::Variable(s, TensorShape({4}), t);
    Output scalar = ops::Placeholder(s, t);
    Output grad = ops::Placeholder(s, t);
    Output gd = ops::ApplyGradientDescent(s, var, scalar, grad);
    Output mom = ops::ApplyMomentum(s, var, m, scalar, grad, scalar, {.use_nesterov = true});
    Output adam = ops::ApplyAdam(s, var, m, v, scalar, scalar, scalar, scalar, scalar, scalar,
                                 grad);
    ASSERT_TRUE(s.ok()) << s.status();
    for (const Output& o : {gd, mom, adam}) {
      EXPECT_TRUE(HasGpuKernel(o)) << o.node->op() << " " << DataTypeName(t);
      // Every scalar stays in device memory.
      for (uint8_t on_host : MemoryTypes(o).input_on_host) EXPECT_EQ(on_host, 0);
    }
  }
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_INT64, DT_INT32}) {
    Output var = ops::Variable(s, TensorShape({4}), t);
    Output add = ops::AssignAdd(s, var, ops::Placeholder(s, t));
    Output sub = ops::AssignSub(s, var, ops::Placeholder(s, t));
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(HasGpuKernel(add), t != DT_INT32) << DataTypeName(t);
    EXPECT_EQ(HasGpuKernel(sub), t != DT_INT32) << DataTypeName(t);
  }
}

TEST_F(GpuKernelRegistrationTest, StateOpsOnGpu) {
  Scope s = Scope::NewRootScope(&ops_);
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT64, DT_INT32}) {
    Output var = ops::Variable(s, TensorShape({2}), t);
    Output assign = ops::Assign(s, var, ops::Placeholder(s, t));
    Output init = ops::IsVariableInitialized(s, var);
    ASSERT_TRUE(s.ok()) << s.status();
    const bool expected = t != DT_INT32;  // int32 variables stay on the CPU
    EXPECT_EQ(HasGpuKernel(var), expected) << DataTypeName(t);
    EXPECT_EQ(HasGpuKernel(assign), expected) << DataTypeName(t);
    EXPECT_EQ(HasGpuKernel(init), expected) << DataTypeName(t);
    if (expected) {
      EXPECT_EQ(MemoryTypes(init).output_on_host, std::vector<uint8_t>({1}));
      EXPECT_EQ(MemoryTypes(assign).output_on_host, std::vector<uint8_t>({0}));
    }
  }
}

// Resource variables on a GPU: values in device memory, VarIsInitializedOp's
// flag in host memory; int32 variables stay on the CPU. (Handles hold
// objects, which the executor never moves between memories.)
TEST_F(GpuKernelRegistrationTest, ResourceVariableOpsOnGpu) {
  Scope s = Scope::NewRootScope(&ops_);
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT64, DT_INT32}) {
    SCOPED_TRACE(DataTypeName(t));
    Output handle = ops::VarHandleOp(s, t, TensorShape({4}));
    Output read = ops::ReadVariableOp(s, handle, t);
    Output assign(ops::AssignVariableOp(s, handle, ops::Placeholder(s, t)), 0);
    Output ready = ops::VarIsInitializedOp(s, handle);
    ASSERT_TRUE(s.ok()) << s.status();
    const bool on_gpu = t != DT_INT32;
    EXPECT_EQ(HasGpuKernel(handle), on_gpu);
    EXPECT_EQ(HasGpuKernel(read), on_gpu);
    EXPECT_EQ(HasGpuKernel(assign), on_gpu);
    EXPECT_TRUE(HasGpuKernel(ready));
    if (!on_gpu) continue;
    EXPECT_EQ(MemoryTypes(read).output_on_host, std::vector<uint8_t>({0}));
    EXPECT_EQ(MemoryTypes(assign).input_on_host[1], 0);
    EXPECT_EQ(MemoryTypes(ready).output_on_host, std::vector<uint8_t>({1}));
  }
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_INT64}) {
    SCOPED_TRACE(DataTypeName(t));
    Output handle = ops::VarHandleOp(s, t, TensorShape({4}));
    Output add(ops::AssignAddVariableOp(s, handle, ops::Placeholder(s, t)), 0);
    Output sub(ops::AssignSubVariableOp(s, handle, ops::Placeholder(s, t)), 0);
    ASSERT_TRUE(s.ok()) << s.status();
    for (const Output& o : {add, sub}) {
      EXPECT_TRUE(HasGpuKernel(o)) << o.node->op();
      EXPECT_EQ(MemoryTypes(o).input_on_host[1], 0) << o.node->op();
    }
  }
  for (DataType t : {DT_FLOAT, DT_DOUBLE}) {
    SCOPED_TRACE(DataTypeName(t));
    Output var = ops::VarHandleOp(s, t, TensorShape({4}));
    Output m = ops::VarHandleOp(s, t, TensorShape({4}));
    Output v = ops::VarHandleOp(s, t, TensorShape({4}));
    Output x = ops::Placeholder(s, t);
    Output gd(ops::ResourceApplyGradientDescent(s, var, x, x), 0);
    Output mom(s.Op("ResourceApplyMomentum").Input(var).Input(m).Input(x).Input(x).Input(x)
                   .Finalize(), 0);
    Output adam(s.Op("ResourceApplyAdam").Input(var).Input(m).Input(v).Input(x).Input(x)
                    .Input(x).Input(x).Input(x).Input(x).Input(x).Finalize(), 0);
    Output keras(s.Op("ResourceApplyKerasMomentum").Input(var).Input(m).Input(x).Input(x)
                     .Input(x).Finalize(), 0);
    ASSERT_TRUE(s.ok()) << s.status();
    for (const auto& [o, handles] :
         {std::pair{gd, 1}, std::pair{mom, 2}, std::pair{adam, 3}, std::pair{keras, 2}}) {
      EXPECT_TRUE(HasGpuKernel(o)) << o.node->op();
      // The scalars and the gradient, after the handles.
      const std::vector<uint8_t> on_host = MemoryTypes(o).input_on_host;
      for (size_t i = handles; i < on_host.size(); ++i) EXPECT_EQ(on_host[i], 0) << o.node->op();
    }
  }
}

}  // namespace
}  // namespace sluice
