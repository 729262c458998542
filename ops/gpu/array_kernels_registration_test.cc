// RegisterGpuArrayKernels without a GPU: which KernelDef serves each node on
// "GPU" and where its arguments live, plus the kernels that never launch
// (shape ops, int32 host kernels) run on a stand-in "GPU" device whose
// memory is host memory.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/math/math_ops.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace sluice {
namespace {

using Flags = std::vector<uint8_t>;

// A device of type "GPU" over host memory: enough to build kernels and run
// the ones that launch nothing.
class HostBackedGpuDevice : public Device {
 public:
  HostBackedGpuDevice() : Device("/job:localhost/replica:0/task:0/device:GPU:0", kDeviceTypeGpu) {}
  Allocator* allocator() override { return DefaultCpuAllocator(); }
  ThreadPool* thread_pool() override { return &pool_; }

 private:
  ThreadPool pool_{"fake_gpu", 1};
};

class GpuArrayKernelsTest : public ::testing::Test {
 protected:
  GpuArrayKernelsTest() {
    RegisterBuiltinKernels(&kernels_);
    RegisterGpuArrayKernels(&kernels_);
  }

  const KernelDef* Gpu(const Output& o) {
    EXPECT_TRUE(s_.ok()) << s_.status();
    return o.valid() ? kernels_.FindKernelDef(*o.node, kDeviceTypeGpu) : nullptr;
  }

  // Runs the GPU kernel of `node` on the stand-in device with `inputs`.
  std::vector<Tensor> Run(Node* node, std::vector<Tensor> inputs) {
    EXPECT_TRUE(s_.ok()) << s_.status();
    const KernelDef* def = kernels_.FindKernelDef(*node, kDeviceTypeGpu);
    EXPECT_NE(def, nullptr) << node->DebugName();
    if (def == nullptr) return {};
    const ArgMemoryTypes memory = HostMemoryArgs(*def, *node);
    absl::StatusOr<std::unique_ptr<OpKernel>> kernel = kernels_.CreateKernel(*node, &device_);
    EXPECT_TRUE(kernel.ok()) << kernel.status();
    if (!kernel.ok()) return {};
    std::vector<TensorValue> in(inputs.size()), out(node->num_outputs());
    for (size_t i = 0; i < inputs.size(); ++i) in[i].tensor = inputs[i];
    OpKernelContext::Params params;
    params.node = node;
    params.device = &device_;
    params.inputs = absl::MakeSpan(in);
    params.outputs = absl::MakeSpan(out);
    params.output_on_host = memory.output_on_host.data();
    OpKernelContext ctx(params);
    absl::Status s = (*kernel)->Compute(&ctx);
    EXPECT_TRUE(s.ok()) << s;
    std::vector<Tensor> result;
    for (const TensorValue& v : out) result.push_back(v.tensor);
    return result;
  }

  Output X(DataType dtype, const TensorShape& shape = TensorShape({2, 2})) {
    return ops::Placeholder(s_, dtype, {.shape = shape});
  }

  KernelRegistry kernels_;
  Scope s_ = Scope::NewRootScope(BuiltinOps());
  HostBackedGpuDevice device_;
};

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

TEST_F(GpuArrayKernelsTest, ReshapeShapeArgIsHostMemory) {
  Output y = ops::Reshape(s_, X(DT_FLOAT), {-1});
  const KernelDef* def = Gpu(y);
  ASSERT_NE(def, nullptr);
  EXPECT_FALSE(def->all_host_memory());
  const ArgMemoryTypes m = HostMemoryArgs(*def, *y.node);
  EXPECT_EQ(m.input_on_host, (Flags{0, 1}));
  EXPECT_EQ(m.output_on_host, (Flags{0}));
}

TEST_F(GpuArrayKernelsTest, ShapeSizeRankOutputsAreHostMemory) {
  for (Output y :
       {ops::Shape(s_, X(DT_FLOAT)), ops::Size(s_, X(DT_HALF)), ops::Rank(s_, X(DT_BFLOAT16)),
        ops::Shape(s_, X(DT_DOUBLE), {.out_type = DT_INT64})}) {
    const KernelDef* def = Gpu(y);
    ASSERT_NE(def, nullptr) << y.node->DebugName();
    EXPECT_FALSE(def->all_host_memory());
    const ArgMemoryTypes m = HostMemoryArgs(*def, *y.node);
    EXPECT_EQ(m.input_on_host, (Flags{0})) << y.node->DebugName();
    EXPECT_EQ(m.output_on_host, (Flags{1})) << y.node->DebugName();
  }
}

TEST_F(GpuArrayKernelsTest, DataInputsStayOnDeviceIndexInputsOnHost) {
  struct Case {
    Output y;
    Flags inputs;
  };
  Output x = X(DT_FLOAT);
  std::vector<Case> cases = {
      {ops::Fill(s_, {2, 3}, X(DT_FLOAT, TensorShape())), {1, 0}},
      {ops::ExpandDims(s_, x, 0), {0, 1}},
      {ops::Transpose(s_, x, {1, 0}), {0, 1}},
      {ops::Tile(s_, x, {1, 2}), {0, 1}},
      {ops::ConcatV2(s_, {x, x, x}, 1), {0, 0, 0, 1}},
      {ops::Split(s_, 0, x, 2)[0], {1, 0}},
      {s_.Op("Concat").Input(1).InputList(std::vector<Output>{x, x}).Finalize1(), {1, 0, 0}},
      {ops::Pack(s_, {x, x}), {0, 0}},
      {ops::Slice(s_, x, {0, 0}, {1, 2}), {0, 1, 1}},
      {ops::StridedSlice(s_, x, {0}, {1}, {1}), {0, 1, 1, 1}},
      {ops::StridedSliceGrad(s_, {2, 2}, {0}, {1}, {1}, X(DT_FLOAT, TensorShape({1, 2}))),
       {1, 1, 1, 1, 0}},
      {ops::GatherV2(s_, x, X(DT_INT64, TensorShape({3})), 0), {0, 0, 1}},
      {ops::UnsortedSegmentSum(s_, x, X(DT_INT32, TensorShape({2})), 4), {0, 0, 1}},
      {ops::ZerosLike(s_, x), {0}},
      {ops::OnesLike(s_, x), {0}},
  };
  for (const Case& c : cases) {
    const KernelDef* def = Gpu(c.y);
    ASSERT_NE(def, nullptr) << c.y.node->DebugName();
    EXPECT_FALSE(def->all_host_memory()) << c.y.node->DebugName();
    const ArgMemoryTypes m = HostMemoryArgs(*def, *c.y.node);
    EXPECT_EQ(m.input_on_host, c.inputs) << c.y.node->DebugName();
    for (uint8_t on_host : m.output_on_host) EXPECT_EQ(on_host, 0) << c.y.node->DebugName();
  }
}

TEST_F(GpuArrayKernelsTest, ConstInt32OnHostOthersOnDevice) {
  Output i = ops::Const(s_, {1, 2, 3});
  Output f = ops::Const(s_, {1.f, 2.f});
  const KernelDef* di = Gpu(i);
  const KernelDef* df = Gpu(f);
  ASSERT_NE(di, nullptr);
  ASSERT_NE(df, nullptr);
  EXPECT_EQ(HostMemoryArgs(*di, *i.node).output_on_host, (Flags{1}));
  EXPECT_EQ(HostMemoryArgs(*df, *f.node).output_on_host, (Flags{0}));
  // The int32 one runs here: the same host buffer every step.
  std::vector<Tensor> a = Run(i.node, {});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(Values<int32_t>(a[0]), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_FALSE(a[0].on_device());
}

TEST_F(GpuArrayKernelsTest, ShapeArithmeticIsHostKernels) {
  Output a = X(DT_INT32, TensorShape({2}));
  std::vector<Output> int32_nodes = {
      ops::Add(s_, a, a),
      ops::AddV2(s_, a, a),
      ops::Sub(s_, a, a),
      ops::Mul(s_, a, a),
      ops::FloorDiv(s_, a, a),
      ops::Maximum(s_, a, a),
      ops::Minimum(s_, a, a),
      ops::Neg(s_, a),
      ops::Cast(s_, a, DT_INT32),
      ops::Prod(s_, a, 0),
      ops::Sum(s_, a, 0),
      ops::InvertPermutation(s_, a),
      ops::ConcatOffset(s_, 0, {a, a})[0],
      ops::BroadcastGradientArgs(s_, a, a).r0,
  };
  for (const Output& y : int32_nodes) {
    const KernelDef* def = Gpu(y);
    ASSERT_NE(def, nullptr) << y.node->DebugName();
    EXPECT_TRUE(def->all_host_memory()) << y.node->DebugName();
  }
  // Only int32 -> int32 Casts and int32 math run on the host: other types
  // have device kernels (the cwise and reduction families).
  for (const Output& y : {ops::Cast(s_, a, DT_FLOAT), ops::Cast(s_, X(DT_INT64), DT_INT32),
                          ops::Add(s_, X(DT_FLOAT), X(DT_FLOAT)), ops::Sum(s_, X(DT_FLOAT), 0)}) {
    const KernelDef* def = Gpu(y);
    ASSERT_NE(def, nullptr) << y.node->DebugName();
    EXPECT_FALSE(def->all_host_memory()) << y.node->DebugName();
  }
}

// Each array op, for every dtype: a device kernel for the GPU types, the
// CPU kernel on the host for int32, nothing for strings.
TEST_F(GpuArrayKernelsTest, EveryTypeHasTheRightKind) {
  using Builder = std::function<Output(DataType)>;
  const std::vector<std::pair<std::string, Builder>> builders = {
      {"Identity", [&](DataType t) { return ops::Identity(s_, X(t)); }},
      {"StopGradient", [&](DataType t) { return ops::StopGradient(s_, X(t)); }},
      {"PreventGradient", [&](DataType t) { return ops::PreventGradient(s_, X(t)); }},
      {"PlaceholderWithDefault",
       [&](DataType t) {
         return ops::PlaceholderWithDefault(s_, X(t), TensorShape({2, 2}));
       }},
      {"Reshape", [&](DataType t) { return ops::Reshape(s_, X(t), {-1}); }},
      {"ExpandDims", [&](DataType t) { return ops::ExpandDims(s_, X(t), 1); }},
      {"Squeeze", [&](DataType t) { return ops::Squeeze(s_, X(t)); }},
      {"Shape", [&](DataType t) { return ops::Shape(s_, X(t)); }},
      {"Size", [&](DataType t) { return ops::Size(s_, X(t)); }},
      {"Rank", [&](DataType t) { return ops::Rank(s_, X(t)); }},
      {"Fill", [&](DataType t) { return ops::Fill(s_, {3}, X(t, TensorShape())); }},
      {"ZerosLike", [&](DataType t) { return ops::ZerosLike(s_, X(t)); }},
      {"OnesLike", [&](DataType t) { return ops::OnesLike(s_, X(t)); }},
      {"Transpose",
       [&](DataType t) {
         return ops::Transpose(s_, X(t), {1, 0});
       }},
      {"Tile",
       [&](DataType t) {
         return ops::Tile(s_, X(t), {2, 1});
       }},
      {"ConcatV2",
       [&](DataType t) {
         return ops::ConcatV2(s_, {X(t), X(t)}, 0);
       }},
      {"Concat",
       [&](DataType t) {
         const std::vector<Output> values = {X(t), X(t)};
         return s_.Op("Concat").Input(0).InputList(values).Finalize1();
       }},
      {"Split", [&](DataType t) { return ops::Split(s_, 1, X(t), 2)[1]; }},
      {"Pack",
       [&](DataType t) {
         return ops::Pack(s_, {X(t), X(t)}, {.axis = 1});
       }},
      {"Unpack", [&](DataType t) { return ops::Unpack(s_, X(t), 2)[0]; }},
      {"Slice",
       [&](DataType t) {
         return ops::Slice(s_, X(t), {1, 0}, {1, -1});
       }},
      {"StridedSlice", [&](DataType t) { return ops::StridedSlice(s_, X(t), {1}, {2}, {1}); }},
      {"StridedSliceGrad",
       [&](DataType t) {
         return ops::StridedSliceGrad(s_, {2, 2}, {1}, {2}, {1}, X(t, TensorShape({1, 2})));
       }},
      {"GatherV2",
       [&](DataType t) {
         return ops::GatherV2(s_, X(t), {1, 0}, 1);
       }},
      {"Gather",
       [&](DataType t) {
         return s_.Op("Gather").Input(X(t)).Input({1, 0}).Finalize1();
       }},
  };
  const std::vector<DataType> device_types = {DT_FLOAT, DT_DOUBLE, DT_HALF,   DT_BFLOAT16, DT_INT64,
                                              DT_INT16, DT_INT8,   DT_UINT16, DT_UINT8,    DT_BOOL};
  for (const auto& [name, build] : builders) {
    for (DataType t : device_types) {
      const KernelDef* def = Gpu(build(t));
      ASSERT_NE(def, nullptr) << name << " " << DataTypeName(t);
      EXPECT_FALSE(def->all_host_memory()) << name << " " << DataTypeName(t);
    }
    const KernelDef* def = Gpu(build(DT_INT32));
    ASSERT_NE(def, nullptr) << name << " int32";
    EXPECT_TRUE(def->all_host_memory()) << name << " int32";
  }
  for (const char* name : {"Identity", "Reshape", "Shape", "Transpose", "ConcatV2"}) {
    for (const auto& [n, build] : builders) {
      if (n == name) {
        EXPECT_EQ(Gpu(build(DT_STRING)), nullptr) << name << " string";
      }
    }
  }
  // UnsortedSegmentSum: atomics for float, double, int64; int32 on the host;
  // no half (the CPU has none either).
  auto segment_sum = [&](DataType t) {
    return ops::UnsortedSegmentSum(s_, X(t), X(DT_INT32, TensorShape({2})), 3);
  };
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_INT64}) {
    const KernelDef* def = Gpu(segment_sum(t));
    ASSERT_NE(def, nullptr) << DataTypeName(t);
    EXPECT_FALSE(def->all_host_memory());
  }
  ASSERT_NE(Gpu(segment_sum(DT_INT32)), nullptr);
  EXPECT_TRUE(Gpu(segment_sum(DT_INT32))->all_host_memory());
  EXPECT_EQ(Gpu(segment_sum(DT_HALF)), nullptr);
}

TEST_F(GpuArrayKernelsTest, ShapeOnlyKernelsShareBuffers) {
  Output x = X(DT_FLOAT, TensorShape({2, 3}));
  Output r = ops::Reshape(s_, x, {3, -1});
  Output e = ops::ExpandDims(s_, x, -1);
  Output q = ops::Squeeze(s_, X(DT_FLOAT, TensorShape({2, 1, 3})));
  Output shape = ops::Shape(s_, x);
  Output size = ops::Size(s_, x, {.out_type = DT_INT64});
  Output id = ops::Identity(s_, x);
  Tensor v = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));

  std::vector<Tensor> out = Run(r.node, {v, Tensor::FromVector<int32_t>({3, -1})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), TensorShape({3, 2}));
  EXPECT_TRUE(out[0].SharesBufferWith(v));

  out = Run(e.node, {v, Tensor::Scalar<int32_t>(-1)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), TensorShape({2, 3, 1}));
  EXPECT_TRUE(out[0].SharesBufferWith(v));

  Tensor v3 = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 1, 3}));
  out = Run(q.node, {v3});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), TensorShape({2, 3}));

  out = Run(id.node, {v});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].SharesBufferWith(v));

  out = Run(shape.node, {v});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<int32_t>(out[0]), (std::vector<int32_t>{2, 3}));
  out = Run(size.node, {v});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<int64_t>(out[0]), (std::vector<int64_t>{6}));
}

TEST_F(GpuArrayKernelsTest, Int32HostKernelsCompute) {
  Output a = X(DT_INT32, TensorShape({3}));
  Output b = X(DT_INT32, TensorShape({3}));
  Output sum = ops::Add(s_, a, b);
  Output bga = ops::BroadcastGradientArgs(s_, a, b).r0;
  Output t = ops::Transpose(s_, X(DT_INT32, TensorShape({2, 3})), {1, 0});
  Output c = ops::ConcatV2(s_, {a, b}, 0);

  std::vector<Tensor> out = Run(sum.node, {Tensor::FromVector<int32_t>({1, 2, 3}),
                                           Tensor::FromVector<int32_t>({10, 20, 30})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<int32_t>(out[0]), (std::vector<int32_t>{11, 22, 33}));

  out = Run(bga.node, {Tensor::FromVector<int32_t>({2, 3}), Tensor::FromVector<int32_t>({3})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Values<int32_t>(out[0]), (std::vector<int32_t>{}));
  EXPECT_EQ(Values<int32_t>(out[1]), (std::vector<int32_t>{0}));

  out = Run(t.node, {Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})),
                     Tensor::FromVector<int32_t>({1, 0})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<int32_t>(out[0]), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));

  out = Run(c.node, {Tensor::FromVector<int32_t>({1, 2, 3}), Tensor::FromVector<int32_t>({4, 5, 6}),
                     Tensor::Scalar<int32_t>(0)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<int32_t>(out[0]), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST_F(GpuArrayKernelsTest, NoOpHasAGpuKernel) {
  Node* n = ops::NoOp(s_);
  ASSERT_NE(n, nullptr);
  EXPECT_NE(kernels_.FindKernelDef(*n, kDeviceTypeGpu), nullptr);
}

}  // namespace
}  // namespace sluice
