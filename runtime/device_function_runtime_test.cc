#include "runtime/device_function_runtime.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "base/status_macros.h"
#include "graph/function_testutil.h"
#include "gtest/gtest.h"
#include "runtime/executor.h"
#include "runtime/frame_ops.h"
#include "runtime/step_partitions.h"

namespace sluice {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";

constexpr char kAddMul[] = R"pb(
  signature {
    name: "AddMul"
    input_arg { name: "x" type_attr: "T" }
    input_arg { name: "y" type_attr: "T" }
    output_arg { name: "sum" type_attr: "T" }
    output_arg { name: "prod" type_attr: "T" }
    attr { name: "T" type: "type" }
  }
  node_def { name: "add" op: "Add" input: "x" input: "y" attr { key: "T" value { placeholder: "T" } } }
  node_def {
    name: "mul" op: "Mul" input: "add:z:0" input: "y"
    attr { key: "T" value { placeholder: "T" } }
  }
  ret { key: "sum" value: "add:z:0" }
  ret { key: "prod" value: "mul:z:0" }
)pb";

// Square(a) = AddMul(a, a).prod through PartitionedCall: (a + a) * a.
constexpr char kSquareish[] = R"pb(
  signature {
    name: "Squareish"
    input_arg { name: "a" type: DT_FLOAT }
    output_arg { name: "out" type: DT_FLOAT }
  }
  node_def {
    name: "call" op: "PartitionedCall" input: "a" input: "a"
    attr { key: "Tin" value { list { type: DT_FLOAT type: DT_FLOAT } } }
    attr { key: "Tout" value { list { type: DT_FLOAT type: DT_FLOAT } } }
    attr { key: "f" value { func { name: "AddMul" attr { key: "T" value { type: DT_FLOAT } } } } }
  }
  ret { key: "out" value: "call:output:1" }
)pb";

template <bool kMul>
class BinaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    ASSIGN_OR_RETURN(Tensor * z, ctx->allocate_output(0, x.shape()));
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      z->data<float>()[i] =
          kMul ? x.data<float>()[i] * y.data<float>()[i] : x.data<float>()[i] + y.data<float>()[i];
    }
    return absl::OkStatus();
  }
};

class ForwardOp : public OpKernel {  // Identity, IdentityN
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) ctx->set_output(i, ctx->input(i));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// Calls its "f" attr's function through the executor's FunctionRuntime, as
// a dataset kernel does: instantiated at Init, run in Compute.
class CallThroughRuntimeOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    if (ctx.function_runtime() == nullptr) {
      return absl::FailedPreconditionError("no function runtime at Init");
    }
    ASSIGN_OR_RETURN(NameAttrList f, ctx.GetAttr<NameAttrList>("f"));
    ASSIGN_OR_RETURN(handle_, ctx.function_runtime()->Instantiate(f));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    std::vector<Tensor> rets;
    RETURN_IF_ERROR(ctx->function_runtime()->Run(handle_, {ctx->input(0)}, &rets));
    ctx->set_output(0, rets[0]);
    return absl::OkStatus();
  }

 private:
  FunctionRuntime::Handle handle_ = -1;
};

Tensor Scalar(float v) {
  Tensor t(DT_FLOAT, TensorShape({}));
  t.data<float>()[0] = v;
  return t;
}

class DeviceFunctionRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterFrameOps(&ops_).ok());
    ASSERT_TRUE(RegisterFunctionTestOps(&ops_, /*with_frame_ops=*/false).ok());
    ASSERT_TRUE(ops_.Register(OpDefBuilder("CallThroughRuntime")
                                  .Input("x: float").Output("y: float").Attr("f: func"))
                    .ok());
    RegisterFrameKernels(&kernels_);
    kernels_.Register<BinaryOp<false>>(KernelDef("Add", kDeviceTypeCpu).TypeConstraint("T", {DT_FLOAT}));
    kernels_.Register<BinaryOp<true>>(KernelDef("Mul", kDeviceTypeCpu).TypeConstraint("T", {DT_FLOAT}));
    kernels_.Register<ForwardOp>(KernelDef("Identity", kDeviceTypeCpu));
    kernels_.Register<ForwardOp>(KernelDef("IdentityN", kDeviceTypeCpu));
    kernels_.Register<ForwardOp>(KernelDef("NoOp", kDeviceTypeCpu));
    kernels_.Register<CallThroughRuntimeOp>(KernelDef("CallThroughRuntime", kDeviceTypeCpu));
    cpu_ = NewCpuDevice({.name = kCpu0, .num_threads = 2});
    *library_.add_function() = ParseFunctionDefOrDie(kAddMul);
    *library_.add_function() = ParseFunctionDefOrDie(kSquareish);
  }
  std::shared_ptr<FunctionRuntime> NewRuntime() {
    FunctionRuntimeOptions o;
    o.device = cpu_.get();
    o.ops = &ops_;
    o.kernels = &kernels_;
    o.library = library_;
    absl::StatusOr<std::shared_ptr<FunctionRuntime>> fr = NewFunctionRuntime(std::move(o));
    EXPECT_TRUE(fr.ok()) << fr.status();
    return fr.ok() ? *fr : nullptr;
  }
  static NameAttrList Func(const std::string& name, DataType t = DT_INVALID) {
    NameAttrList f;
    f.set_name(name);
    if (t != DT_INVALID) (*f.mutable_attr())["T"] = MakeAttr(t);
    return f;
  }

  OpRegistry ops_;
  KernelRegistry kernels_;
  std::unique_ptr<Device> cpu_;
  FunctionDefLibrary library_;
};

TEST_F(DeviceFunctionRuntimeTest, RunsAndCachesInstantiations) {
  std::shared_ptr<FunctionRuntime> fr = NewRuntime();
  absl::StatusOr<FunctionRuntime::Handle> h = fr->Instantiate(Func("AddMul", DT_FLOAT));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(fr->arg_types(*h), (std::vector<DataType>{DT_FLOAT, DT_FLOAT}));
  EXPECT_EQ(fr->ret_types(*h).size(), 2u);
  EXPECT_EQ(*fr->Instantiate(Func("AddMul", DT_FLOAT)), *h);
  EXPECT_EQ(fr->device(), cpu_.get());
  std::vector<Tensor> rets;
  absl::Status s = fr->Run(*h, {Scalar(2), Scalar(3)}, &rets);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(rets.size(), 2u);
  EXPECT_EQ(rets[0].data<float>()[0], 5);   // 2 + 3
  EXPECT_EQ(rets[1].data<float>()[0], 15);  // (2 + 3) * 3

  absl::Notification done;
  std::vector<Tensor> async_rets;
  absl::Status async_status;
  fr->RunAsync(*h, {Scalar(1), Scalar(4)}, &async_rets, [&](absl::Status st) {
    async_status = st;
    done.Notify();
  });
  done.WaitForNotification();
  ASSERT_TRUE(async_status.ok()) << async_status;
  EXPECT_EQ(async_rets[1].data<float>()[0], 20);  // (1 + 4) * 4
}

TEST_F(DeviceFunctionRuntimeTest, InlinesCallsInsideTheBody) {
  std::shared_ptr<FunctionRuntime> fr = NewRuntime();
  absl::StatusOr<FunctionRuntime::Handle> h = fr->Instantiate(Func("Squareish"));
  ASSERT_TRUE(h.ok()) << h.status();
  std::vector<Tensor> rets;
  ASSERT_TRUE(fr->Run(*h, {Scalar(3)}, &rets).ok());
  EXPECT_EQ(rets[0].data<float>()[0], 18);  // (3 + 3) * 3
}

TEST_F(DeviceFunctionRuntimeTest, Errors) {
  std::shared_ptr<FunctionRuntime> fr = NewRuntime();
  EXPECT_EQ(fr->Instantiate(Func("Nope")).status().code(), absl::StatusCode::kNotFound);
  // No int32 kernel: the error names the function and the node.
  absl::StatusOr<FunctionRuntime::Handle> bad = fr->Instantiate(Func("AddMul", DT_INT32));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "function 'AddMul'")) << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "'add'")) << bad.status();

  FunctionRuntime::Handle h = *fr->Instantiate(Func("AddMul", DT_FLOAT));
  std::vector<Tensor> rets;
  absl::Status s = fr->Run(h, {Scalar(1)}, &rets);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "takes 2 arguments, got 1")) << s;
  Tensor i(DT_INT32, TensorShape({}));
  s = fr->Run(h, {Scalar(1), i}, &rets);
  EXPECT_TRUE(absl::StrContains(s.message(), "argument 1 is int32")) << s;
  EXPECT_EQ(fr->Run(h + 100, {}, &rets).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(fr->arg_types(h + 100).empty());

  // A library with a bad function is refused up front.
  FunctionRuntimeOptions o;
  o.device = cpu_.get();
  o.ops = &ops_;
  o.kernels = &kernels_;
  FunctionDef f = ParseFunctionDefOrDie(kAddMul);
  f.mutable_ret()->clear();
  *o.library.add_function() = f;
  EXPECT_FALSE(NewFunctionRuntime(std::move(o)).ok());
}

// StepPartitions gives each partition a runtime over its library, which its
// kernels reach at Init and in Compute.
TEST_F(DeviceFunctionRuntimeTest, PartitionKernelsGetTheRuntime) {
  GraphDef def = ParseGraphDefOrDie(R"pb(
    node {
      name: "arg" op: "_Arg"
      attr { key: "T" value { type: DT_FLOAT } }
      attr { key: "index" value { i: 0 } }
    }
    node {
      name: "call" op: "CallThroughRuntime" input: "arg"
      attr { key: "f" value { func { name: "Squareish" } } }
    }
    node {
      name: "ret" op: "_Retval" input: "call"
      attr { key: "T" value { type: DT_FLOAT } }
      attr { key: "index" value { i: 0 } }
    }
  )pb");
  *def.mutable_library() = library_;
  std::vector<PartitionGraph> graphs(1);
  graphs[0].device = cpu_.get();
  graphs[0].def = def;
  absl::StatusOr<std::unique_ptr<StepPartitions>> parts =
      StepPartitions::Build(std::move(graphs), &ops_, kernels_);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_NE((*parts)->parts()[0].function_runtime, nullptr);
  CallFrame frame;
  frame.args = {Scalar(2)};
  frame.retvals.resize(1);
  Executor::Args args;
  args.step_id = 1;
  args.call_frame = &frame;
  absl::Status s = (*parts)->Run(args);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(frame.retvals[0].data<float>()[0], 8);  // (2 + 2) * 2
}

}  // namespace
}  // namespace sluice
