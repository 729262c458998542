// The element-wise GPU kernels without a GPU: the broadcast layouts handed
// to the CUDA code and the path each takes, which (op, type) pairs have a
// GPU kernel, and the host-side behaviour that never reaches CUDA — shape
// errors identical to the CPU kernels', zero-element outputs, pass-throughs.
// (GPU-vs-CPU values are checked by the GPU suite on a machine with a GPU.)
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/gpu/cwise.cu.h"
#include "ops/gpu/cwise_layout.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/math/internal/broadcast.h"
#include "ops/math/math_ops.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace sluice {
namespace {

using gpu::BinaryPath;
using gpu::ClassifyBinaryLayout;
using gpu::CwiseLayout;

// ---------------------------------------------------------------------------
// Layouts.

template <int N>
CwiseLayout<N> LayoutOf(const std::array<TensorShape, N>& shapes) {
  std::array<const TensorShape*, N> ptrs;
  for (int j = 0; j < N; ++j) ptrs[j] = &shapes[j];
  absl::StatusOr<internal::BroadcastPlan<N>> plan = internal::MakeBroadcastPlan<N>(ptrs);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  absl::StatusOr<CwiseLayout<N>> layout = CwiseLayoutOf(*plan);
  EXPECT_TRUE(layout.ok()) << layout.status();
  return layout.ok() ? *layout : CwiseLayout<N>{};
}

std::vector<int64_t> Dims(const CwiseLayout<2>& l) { return {l.dims, l.dims + l.rank}; }
std::vector<int64_t> Strides(const CwiseLayout<2>& l, int operand) {
  std::vector<int64_t> s;
  for (int k = 0; k < l.rank; ++k) s.push_back(l.strides[k][operand]);
  return s;
}

TEST(CwiseLayoutTest, FlatLayout) {
  const CwiseLayout<2> l = gpu::FlatCwiseLayout<2>(1000);
  EXPECT_EQ(l.num_elements(), 1000);
  EXPECT_EQ(ClassifyBinaryLayout(l), BinaryPath::kFlat);
}

TEST(CwiseLayoutTest, BiasRowsAreTwoDimensional) {
  const CwiseLayout<2> l = LayoutOf<2>({TensorShape({256, 1024}), TensorShape({1024})});
  EXPECT_EQ(Dims(l), (std::vector<int64_t>{256, 1024}));
  EXPECT_EQ(Strides(l, 0), (std::vector<int64_t>{1024, 1}));
  EXPECT_EQ(Strides(l, 1), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ClassifyBinaryLayout(l), BinaryPath::k2D);
}

TEST(CwiseLayoutTest, ColumnVectorIsTwoDimensional) {
  const CwiseLayout<2> l = LayoutOf<2>({TensorShape({3, 1}), TensorShape({3, 4})});
  EXPECT_EQ(Dims(l), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(Strides(l, 0), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(Strides(l, 1), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(ClassifyBinaryLayout(l), BinaryPath::k2D);
}

TEST(CwiseLayoutTest, ScalarOperands) {
  const CwiseLayout<2> y_scalar = LayoutOf<2>({TensorShape({4, 5}), TensorShape()});
  EXPECT_EQ(Dims(y_scalar), (std::vector<int64_t>{20}));
  EXPECT_EQ(ClassifyBinaryLayout(y_scalar), BinaryPath::kScalarY);
  const CwiseLayout<2> x_scalar = LayoutOf<2>({TensorShape({1, 1}), TensorShape({3, 4})});
  EXPECT_EQ(Dims(x_scalar), (std::vector<int64_t>{12}));
  EXPECT_EQ(ClassifyBinaryLayout(x_scalar), BinaryPath::kScalarX);
  const CwiseLayout<2> both = LayoutOf<2>({TensorShape({1}), TensorShape({1, 1})});
  EXPECT_EQ(both.num_elements(), 1);
  EXPECT_EQ(ClassifyBinaryLayout(both), BinaryPath::kFlat);
}

TEST(CwiseLayoutTest, ThreeDimensionalBroadcastIsGeneral) {
  const CwiseLayout<2> l = LayoutOf<2>({TensorShape({8, 1, 5}), TensorShape({8, 3, 1})});
  EXPECT_EQ(Dims(l), (std::vector<int64_t>{8, 3, 5}));
  EXPECT_EQ(Strides(l, 0), (std::vector<int64_t>{5, 0, 1}));
  EXPECT_EQ(Strides(l, 1), (std::vector<int64_t>{3, 1, 0}));
  EXPECT_EQ(ClassifyBinaryLayout(l), BinaryPath::kGeneral);
}

TEST(CwiseLayoutTest, ThreeOperands) {
  const CwiseLayout<3> l =
      LayoutOf<3>({TensorShape({3, 1}), TensorShape({3, 4}), TensorShape({4})});
  ASSERT_EQ(l.rank, 2);
  EXPECT_EQ(l.dims[0], 3);
  EXPECT_EQ(l.dims[1], 4);
  EXPECT_EQ((std::vector<int64_t>{l.strides[0][0], l.strides[1][0]}), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ((std::vector<int64_t>{l.strides[0][1], l.strides[1][1]}), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ((std::vector<int64_t>{l.strides[0][2], l.strides[1][2]}), (std::vector<int64_t>{0, 1}));
}

TEST(CwiseLayoutTest, TooManyMergedDimensionsIsUnimplemented) {
  // Broadcast patterns alternate along all ten dimensions: nothing merges.
  const TensorShape x({2, 1, 2, 1, 2, 1, 2, 1, 2, 1});
  const TensorShape y({1, 2, 1, 2, 1, 2, 1, 2, 1, 2});
  absl::StatusOr<internal::BroadcastPlan<2>> plan = internal::MakeBroadcastPlan<2>({&x, &y});
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<CwiseLayout<2>> layout = CwiseLayoutOf(*plan);
  EXPECT_EQ(layout.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(layout.status().message().find("10 dimensions"), std::string::npos) << layout.status();
}

// ---------------------------------------------------------------------------
// Registration and host-side behaviour.

// A device of `type` over host memory: enough to build kernels and to run
// the paths that launch nothing.
class HostBackedDevice : public Device {
 public:
  explicit HostBackedDevice(const char* type)
      : Device(absl::StrCat("/job:localhost/replica:0/task:0/device:", type, ":0"), type) {}
  Allocator* allocator() override { return DefaultCpuAllocator(); }
  ThreadPool* thread_pool() override { return &pool_; }

 private:
  ThreadPool pool_{"host_backed", 1};
};

class GpuCwiseKernelsTest : public ::testing::Test {
 protected:
  GpuCwiseKernelsTest() {
    RegisterBuiltinKernels(&kernels_);
    RegisterGpuCwiseKernels(&kernels_);
  }

  const KernelDef* Gpu(const Output& o) {
    EXPECT_TRUE(s_.ok()) << s_.status();
    return o.valid() ? kernels_.FindKernelDef(*o.node, kDeviceTypeGpu) : nullptr;
  }

  // Runs the kernel of `o`'s node for `device` on `inputs` (host memory).
  absl::StatusOr<std::vector<Tensor>> Run(const Output& o, Device* device,
                                          std::vector<Tensor> inputs) {
    EXPECT_TRUE(s_.ok()) << s_.status();
    ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, kernels_.CreateKernel(*o.node, device));
    std::vector<TensorValue> in(inputs.size()), out(o.node->num_outputs());
    for (size_t i = 0; i < inputs.size(); ++i) in[i].tensor = inputs[i];
    OpKernelContext::Params params;
    params.node = o.node;
    params.device = device;
    params.inputs = absl::MakeSpan(in);
    params.outputs = absl::MakeSpan(out);
    OpKernelContext ctx(params);
    RETURN_IF_ERROR(kernel->Compute(&ctx));
    std::vector<Tensor> result;
    for (const TensorValue& v : out) result.push_back(v.tensor);
    return result;
  }

  // The GPU kernel fails like the CPU kernel, before touching CUDA.
  void ExpectSameError(const Output& o, const std::vector<Tensor>& inputs) {
    absl::StatusOr<std::vector<Tensor>> cpu = Run(o, &cpu_, inputs);
    absl::StatusOr<std::vector<Tensor>> gpu = Run(o, &gpu_, inputs);
    ASSERT_FALSE(cpu.ok()) << o.node->DebugName();
    ASSERT_FALSE(gpu.ok()) << o.node->DebugName();
    EXPECT_EQ(gpu.status(), cpu.status()) << o.node->DebugName();
  }

  Output X(DataType dtype) { return ops::Placeholder(s_, dtype); }

  KernelRegistry kernels_;
  Scope s_ = Scope::NewRootScope(BuiltinOps());
  HostBackedDevice cpu_{kDeviceTypeCpu};
  HostBackedDevice gpu_{kDeviceTypeGpu};
};

TEST_F(GpuCwiseKernelsTest, TypesOfEachOp) {
  const std::vector<DataType> floats = {DT_FLOAT, DT_HALF, DT_BFLOAT16, DT_DOUBLE};
  struct Family {
    std::vector<std::string> ops;
    bool int64;
  };
  const std::vector<Family> unary = {
      {{"Neg", "Square", "Abs", "Sign"}, true},
      {{"Sqrt", "Rsqrt", "Exp", "Log", "Tanh", "Sigmoid", "Reciprocal", "Sin", "Cos"}, false}};
  const std::vector<Family> binary = {
      {{"Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum", "Pow", "Equal", "NotEqual", "Greater",
        "GreaterEqual", "Less", "LessEqual"},
       true},
      {{"RealDiv", "FloorDiv", "TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad",
        "ReciprocalGrad"},
       false}};
  auto check = [&](const Family& family, int arity) {
    for (const std::string& op : family.ops) {
      for (DataType t : {DT_FLOAT, DT_HALF, DT_BFLOAT16, DT_DOUBLE, DT_INT64, DT_INT32}) {
        // A scope per node: the OpDef may refuse the type (Sqrt of int64).
        Scope s = Scope::NewRootScope(BuiltinOps());
        OpBuilder b = s.Op(op);
        for (int i = 0; i < arity; ++i) b.Input(ops::Placeholder(s, t));
        const Output y = b.Finalize1();
        const bool want = t == DT_INT64 ? family.int64 : t != DT_INT32;
        if (!s.ok()) {
          EXPECT_FALSE(want) << op << " " << DataTypeName(t) << ": " << s.status();
          continue;
        }
        const KernelDef* def = kernels_.FindKernelDef(*y.node, kDeviceTypeGpu);
        if (t == DT_INT32) {
          // int32 is shape arithmetic: at most a host kernel (ops/gpu array family).
          if (def != nullptr) {
            EXPECT_TRUE(def->all_host_memory()) << op;
          }
          continue;
        }
        EXPECT_EQ(def != nullptr, want) << op << " " << DataTypeName(t);
        if (def == nullptr) continue;
        const ArgMemoryTypes m = HostMemoryArgs(*def, *y.node);
        EXPECT_EQ(m.input_on_host, std::vector<uint8_t>(arity, 0)) << op;
        EXPECT_EQ(m.output_on_host, std::vector<uint8_t>{0}) << op;
      }
    }
  };
  for (const Family& f : unary) check(f, 1);
  for (const Family& f : binary) check(f, 2);
  EXPECT_NE(Gpu(ops::Equal(s_, X(DT_BOOL), X(DT_BOOL))), nullptr);
  for (DataType t : {DT_FLOAT, DT_HALF, DT_BFLOAT16, DT_DOUBLE, DT_INT64}) {
    EXPECT_NE(Gpu(ops::AddN(s_, {X(t), X(t), X(t)})), nullptr) << DataTypeName(t);
  }
  EXPECT_EQ(Gpu(ops::AddN(s_, {X(DT_INT32), X(DT_INT32)})), nullptr);
  for (DataType t : {DT_FLOAT, DT_HALF, DT_BFLOAT16, DT_DOUBLE, DT_INT64, DT_BOOL}) {
    EXPECT_NE(Gpu(ops::Select(s_, X(DT_BOOL), X(t), X(t))), nullptr) << DataTypeName(t);
    EXPECT_NE(Gpu(ops::SelectV2(s_, X(DT_BOOL), X(t), X(t))), nullptr) << DataTypeName(t);
  }
}

TEST_F(GpuCwiseKernelsTest, CastPairs) {
  const std::vector<DataType> types = {DT_FLOAT, DT_HALF,  DT_BFLOAT16, DT_DOUBLE,
                                       DT_INT32, DT_INT64, DT_BOOL};
  for (DataType src : types) {
    for (DataType dst : types) {
      const KernelDef* def = Gpu(ops::Cast(s_, X(src), dst));
      ASSERT_NE(def, nullptr) << DataTypeName(src) << " -> " << DataTypeName(dst);
      // int32 -> int32 is the array family's host kernel; the rest are ours.
      EXPECT_EQ(def->all_host_memory(), src == DT_INT32 && dst == DT_INT32)
          << DataTypeName(src) << " -> " << DataTypeName(dst);
    }
  }
  EXPECT_EQ(Gpu(ops::Cast(s_, X(DT_UINT8), DT_FLOAT)), nullptr);
}

TEST_F(GpuCwiseKernelsTest, ShapeErrorsAreTheCpuKernels) {
  const Tensor a(DT_FLOAT, TensorShape({2, 3}));
  const Tensor b(DT_FLOAT, TensorShape({4}));
  const Tensor c(DT_FLOAT, TensorShape({3, 2}));
  ExpectSameError(ops::Add(s_, X(DT_FLOAT), X(DT_FLOAT)), {a, b});
  ExpectSameError(ops::Less(s_, X(DT_FLOAT), X(DT_FLOAT)), {a, b});
  ExpectSameError(ops::TanhGrad(s_, X(DT_FLOAT), X(DT_FLOAT)), {a, c});
  ExpectSameError(ops::AddN(s_, {X(DT_FLOAT), X(DT_FLOAT), X(DT_FLOAT)}), {a, a, c});
  const Tensor cond_2x3(DT_BOOL, TensorShape({2, 3}));
  const Tensor cond_3(DT_BOOL, TensorShape({3}));
  ExpectSameError(ops::Select(s_, X(DT_BOOL), X(DT_FLOAT), X(DT_FLOAT)), {cond_2x3, a, c});
  ExpectSameError(ops::Select(s_, X(DT_BOOL), X(DT_FLOAT), X(DT_FLOAT)), {cond_3, a, a});
  ExpectSameError(ops::SelectV2(s_, X(DT_BOOL), X(DT_FLOAT), X(DT_FLOAT)), {cond_3, a, b});
}

TEST_F(GpuCwiseKernelsTest, EmptyOutputsLaunchNothing) {
  const Tensor empty(DT_FLOAT, TensorShape({0, 3}));
  const Tensor row(DT_FLOAT, TensorShape({3}));
  struct Case {
    Output y;
    std::vector<Tensor> inputs;
    TensorShape want;
  };
  const std::vector<Case> cases = {
      {ops::Exp(s_, X(DT_FLOAT)), {empty}, TensorShape({0, 3})},
      {ops::Add(s_, X(DT_FLOAT), X(DT_FLOAT)), {empty, row}, TensorShape({0, 3})},
      {ops::Greater(s_, X(DT_FLOAT), X(DT_FLOAT)), {row, empty}, TensorShape({0, 3})},
      {ops::Cast(s_, X(DT_FLOAT), DT_HALF), {empty}, TensorShape({0, 3})},
      {ops::AddN(s_, {X(DT_FLOAT), X(DT_FLOAT)}), {empty, empty}, TensorShape({0, 3})},
      {ops::Select(s_, X(DT_BOOL), X(DT_FLOAT), X(DT_FLOAT)),
       {Tensor(DT_BOOL, TensorShape({0})), empty, empty},
       TensorShape({0, 3})},
      {ops::SelectV2(s_, X(DT_BOOL), X(DT_FLOAT), X(DT_FLOAT)),
       {Tensor(DT_BOOL, TensorShape({3})), empty, row},
       TensorShape({0, 3})},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<Tensor>> out = Run(c.y, &gpu_, c.inputs);
    ASSERT_TRUE(out.ok()) << c.y.node->DebugName() << ": " << out.status();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ((*out)[0].shape(), c.want) << c.y.node->DebugName();
    EXPECT_EQ((*out)[0].dtype(), c.y.node->output_type(0)) << c.y.node->DebugName();
  }
}

TEST_F(GpuCwiseKernelsTest, PassThroughs) {
  const Tensor a = Tensor::Scalar<float>(2.5f);
  absl::StatusOr<std::vector<Tensor>> addn = Run(ops::AddN(s_, {X(DT_FLOAT)}), &gpu_, {a});
  ASSERT_TRUE(addn.ok()) << addn.status();
  EXPECT_EQ((*addn)[0].raw_data(), a.raw_data());
  absl::StatusOr<std::vector<Tensor>> cast = Run(ops::Cast(s_, X(DT_FLOAT), DT_FLOAT), &gpu_, {a});
  ASSERT_TRUE(cast.ok()) << cast.status();
  EXPECT_EQ((*cast)[0].raw_data(), a.raw_data());
}

}  // namespace
}  // namespace sluice
