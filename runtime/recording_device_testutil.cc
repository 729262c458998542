#include "runtime/recording_device_testutil.h"

#include <cstring>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "runtime/frame_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace testing_rec {

RecCounters &RecStats() {
  static RecCounters *counters = new RecCounters;
  return *counters;
}

namespace {

RecordingDevice *Rec(OpKernelContext *ctx) {
  return static_cast<RecordingDevice *>(ctx->device());
}

// y = a * b, element-wise (same shapes), into a's buffer when no one else
// holds it (as a GPU's element-wise kernels do).
class MulOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    ++RecStats().mul_computes;
    const Tensor &a = ctx->input(0);
    const Tensor &b = ctx->input(1);
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, a.shape()));
    const float *pa = a.data<float>();
    const float *pb = b.data<float>();
    float *py = y->data<float>();
    const int64_t n = a.NumElements();
    Rec(ctx)->Enqueue([=] {
      for (int64_t i = 0; i < n; ++i)
        py[i] = pa[i] * pb[i];
    });
    return absl::OkStatus();
  }
};

// y = x * s, s a scalar.
class ScaleOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    const Tensor &x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    const float *px = x.data<float>();
    const float *ps = ctx->input(1).data<float>();
    float *py = y->data<float>();
    const int64_t n = x.NumElements();
    Rec(ctx)->Enqueue([=] {
      for (int64_t i = 0; i < n; ++i)
        py[i] = px[i] * ps[0];
    });
    return absl::OkStatus();
  }
};

// A scalar: the sum of x.
class SumOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    const Tensor &x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape({})));
    const float *px = x.data<float>();
    float *py = y->data<float>();
    const int64_t n = x.NumElements();
    Rec(ctx)->Enqueue([=] {
      float s = 0;
      for (int64_t i = 0; i < n; ++i)
        s += px[i];
      py[0] = s;
    });
    return absl::OkStatus();
  }
};

// The element count of x as a float scalar in host memory (reads only the
// shape, as a GPU's Shape kernel does).
class SizeOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape({})));
    y->data<float>()[0] = static_cast<float>(ctx->input(0).NumElements());
    return absl::OkStatus();
  }
};

// y = [1, ..., 1] of n elements; n read in host memory (as a GPU's Fill
// reads its dims).
class OnesOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    const int64_t n = ctx->input(0).scalar<int32_t>();
    if (n < 0)
      return absl::InvalidArgumentError("Ones: a negative count");
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape({n})));
    float *py = y->data<float>();
    Rec(ctx)->Enqueue([=] {
      for (int64_t i = 0; i < n; ++i)
        py[i] = 1.0f;
    });
    return absl::OkStatus();
  }
};

// A variable of the device.
class VarOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    ASSIGN_OR_RETURN(Var * v,
                     ctx->resource_manager()->LookupOrCreateVar(
                         "", ctx->node().name(), DT_FLOAT, TensorShape({-1})));
    ctx->set_output(0, Tensor());
    ctx->set_output_ref(0, v);
    return absl::OkStatus();
  }
};

// ref = value, taking the value's buffer (as Assign does when it can).
class AssignOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    Var *v = ctx->input_ref(0);
    absl::MutexLock lock(&v->mu);
    v->tensor = ctx->input(1);
    v->initialized = true;
    ctx->set_output(0, Tensor());
    ctx->set_output_ref(0, v);
    return absl::OkStatus();
  }
};

// ref -= delta: in place when nobody else holds the variable's buffer, else
// into a fresh copy that the variable takes (copy-on-write, as the real
// update kernels do).
class SubOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    Var *v = ctx->input_ref(0);
    absl::MutexLock lock(&v->mu);
    if (!v->tensor.RefCountIsOne() || RecStats().always_copy) {
      ASSIGN_OR_RETURN(Tensor fresh,
                       Tensor::Allocate(ctx->device()->allocator(), DT_FLOAT,
                                        v->tensor.shape()));
      RETURN_IF_ERROR(ctx->device()->CopyWithinDevice(v->tensor, &fresh));
      v->tensor = fresh;
      ++RecStats().copies_on_write;
    }
    float *pv = v->tensor.data<float>();
    const int64_t n = v->tensor.NumElements();
    const float *pd = ctx->input(1).data<float>();
    Rec(ctx)->Enqueue([=] {
      for (int64_t i = 0; i < n; ++i)
        pv[i] -= pd[i];
    });
    ctx->set_output(0, Tensor());
    ctx->set_output_ref(0, v);
    return absl::OkStatus();
  }
};

// Reads its input on the host (a step that cannot be recorded).
class PeekOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    ASSIGN_OR_RETURN(Tensor host, ctx->device()->CopyToHost(ctx->input(0)));
    ctx->set_output(0, ctx->input(0));
    return absl::OkStatus();
  }
};

// Stateful: a counter on the host.
class TickOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape({})));
    const float value = static_cast<float>(++ticks_);
    float *py = y->data<float>();
    Rec(ctx)->Enqueue([=] { py[0] = value; });
    return absl::OkStatus();
  }

private:
  int ticks_ = 0;
};

// Stateful like Tick, but its counter lives in the device's memory and
// advances in the work it queues (as a GPU random op's Philox counter), so
// a recording replays it right.
class DeviceTickOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    absl::MutexLock lock(&mu_);
    if (!counter_.IsInitialized()) {
      ASSIGN_OR_RETURN(counter_, Tensor::Allocate(ctx->device()->allocator(),
                                                  DT_FLOAT, TensorShape({})));
      // The fake device memory is host memory: zeroed here, outside any
      // recording (a recorded zeroing would restart the count every replay).
      if (dynamic_cast<CaptureArena *>(counter_.buffer_allocator()) !=
          nullptr) {
        return absl::FailedPreconditionError(
            "DeviceTick's first run cannot be recorded");
      }
      counter_.data<float>()[0] = 0;
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape({})));
    float *pc = counter_.data<float>();
    float *py = y->data<float>();
    Rec(ctx)->Enqueue([=] { py[0] = ++pc[0]; });
    return absl::OkStatus();
  }
  bool ReplaysRight() const override { return true; }

private:
  absl::Mutex mu_;
  Tensor counter_ ABSL_GUARDED_BY(mu_);
};

// y = x, any type (a while loop's Identity).
class IdentityOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    ctx->set_output(0, ctx->input(0));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// Host kernels on int32 scalars, as a GPU computes a loop's counter.
class IntConstOp : public OpKernel {
public:
  absl::Status Init(const OpKernelConstruction &ctx) override {
    ASSIGN_OR_RETURN(value_, ctx.GetAttr<int64_t>("value"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext *ctx) override {
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape({})));
    y->scalar<int32_t>() = static_cast<int32_t>(value_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

private:
  int64_t value_ = 0;
};

template <typename Out, typename Fn>
absl::Status IntBinary(OpKernelContext *ctx, Fn fn) {
  ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape({})));
  y->scalar<Out>() =
      fn(ctx->input(0).scalar<int32_t>(), ctx->input(1).scalar<int32_t>());
  return absl::OkStatus();
}

class IntAddOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    return IntBinary<int32_t>(ctx, [](int32_t a, int32_t b) { return a + b; });
  }
  bool IsExpensive() const override { return false; }
};

class IntLessOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    return IntBinary<bool>(ctx, [](int32_t a, int32_t b) { return a < b; });
  }
  bool IsExpensive() const override { return false; }
};

// The first element of x (in host memory: the executor copies a device
// value there first) as an int32.
class ToIntOp : public OpKernel {
public:
  absl::Status Compute(OpKernelContext *ctx) override {
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape({})));
    y->scalar<int32_t>() = static_cast<int32_t>(ctx->input(0).data<float>()[0]);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

} // namespace

absl::Status RegisterRecOps(OpRegistry *ops) {
  RETURN_IF_ERROR(RegisterFrameOps(ops));
  for (const char *binary : {"Mul", "Scale"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(binary)
                                      .Input("a: float")
                                      .Input("b: float")
                                      .Output("y: float")));
  }
  for (const char *unary : {"Sum", "Size", "Peek"}) {
    RETURN_IF_ERROR(ops->Register(
        OpDefBuilder(unary).Input("x: float").Output("y: float")));
  }
  RETURN_IF_ERROR(
      ops->Register(OpDefBuilder("Input").Output("y: float"))); // always fed
  for (const char *stateful : {"Tick", "DeviceTick"}) {
    RETURN_IF_ERROR(ops->Register(
        OpDefBuilder(stateful).Output("y: float").SetIsStateful()));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Identity")
                                    .Input("input: T")
                                    .Output("output: T")
                                    .Attr("T: type")));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("IntConst").Output("y: int32").Attr("value: int")));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("IntAdd")
                                    .Input("a: int32")
                                    .Input("b: int32")
                                    .Output("y: int32")));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("IntLess")
                                    .Input("a: int32")
                                    .Input("b: int32")
                                    .Output("y: bool")));
  RETURN_IF_ERROR(
      ops->Register(OpDefBuilder("ToInt").Input("x: float").Output("y: int32")));
  RETURN_IF_ERROR(
      ops->Register(OpDefBuilder("Ones").Input("n: int32").Output("y: float")));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Var")
                                    .Output("ref: Ref(float)")
                                    .SetIsStateful()
                                    .SetIsVariable()));
  for (const char *update : {"Assign", "Sub"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(update)
                                      .Input("ref: Ref(float)")
                                      .Input("value: float")
                                      .Output("out: Ref(float)")));
  }
  return absl::OkStatus();
}

std::string RecBackend::device_type() const { return kRec; }

absl::StatusOr<std::vector<std::unique_ptr<Device>>>
RecBackend::CreateDevices(const LocalDevicesOptions &options) const {
  std::vector<std::unique_ptr<Device>> out;
  out.push_back(std::make_unique<RecordingDevice>(options.name_prefix));
  return out;
}

void RecBackend::RegisterKernels(KernelRegistry *kernels) const {
  kernels->Register<MulOp>(KernelDef("Mul", kRec));
  kernels->Register<ScaleOp>(KernelDef("Scale", kRec));
  kernels->Register<SumOp>(KernelDef("Sum", kRec));
  kernels->Register<SizeOp>(KernelDef("Size", kRec).HostMemory("y"));
  kernels->Register<VarOp>(KernelDef("Var", kRec));
  kernels->Register<AssignOp>(KernelDef("Assign", kRec));
  kernels->Register<SubOp>(KernelDef("Sub", kRec));
  kernels->Register<PeekOp>(KernelDef("Peek", kRec));
  kernels->Register<TickOp>(KernelDef("Tick", kRec));
  kernels->Register<DeviceTickOp>(KernelDef("DeviceTick", kRec));
  kernels->Register<IdentityOp>(
      KernelDef("Identity", kRec).TypeConstraint("T", DT_FLOAT));
  kernels->Register<IdentityOp>(
      KernelDef("Identity", kRec)
          .TypeConstraint("T", {DT_INT32, DT_BOOL, DT_RESOURCE, ::tensorflow::DT_VARIANT})
          .AllHostMemory());
  kernels->Register<IntConstOp>(KernelDef("IntConst", kRec).AllHostMemory());
  kernels->Register<IntAddOp>(KernelDef("IntAdd", kRec).AllHostMemory());
  kernels->Register<IntLessOp>(KernelDef("IntLess", kRec).AllHostMemory());
  kernels->Register<ToIntOp>(KernelDef("ToInt", kRec).AllHostMemory());
  kernels->Register<OnesOp>(KernelDef("Ones", kRec).HostMemory("n"));
  RegisterHostMemoryFrameKernels(kernels, kRec, {DT_FLOAT});
}

} // namespace testing_rec
} // namespace sluice
