// CPU kernels of the data-flow ops (ops/data_flow/data_flow_ops.h): thin adapters over
// the GradientAccumulator and SyncTokenQueue resources.
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "ops/data_flow/data_flow_ops.h"
#include "ops/data_flow/internal/async_wait.h"
#include "ops/data_flow/internal/gradient_accumulator.h"
#include "ops/data_flow/internal/sparse_gradient_accumulator.h"
#include "ops/data_flow/internal/sync_token_queue.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::GradientAccumulator;
using internal::SparseGradientAccumulator;
using internal::SyncTokenQueue;

// The accumulator an op names, read from its attrs at Init: dense
// (GradientAccumulator) or sparse (SparseGradientAccumulator).
template <typename Acc>
class AccumulatorRefOf {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) {
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
    ASSIGN_OR_RETURN(shape_, ctx.GetAttr<TensorShape>("shape"));
    ASSIGN_OR_RETURN(container_, ctx.GetAttr<std::string>("container"));
    ASSIGN_OR_RETURN(name_, ctx.GetAttr<std::string>("shared_name"));
    if (name_.empty()) {
      return absl::InvalidArgumentError("attr shared_name must name the accumulator");
    }
    return absl::OkStatus();
  }

  // Creates it on first use; InvalidArgument when it exists with another
  // dtype or an incompatible shape.
  absl::StatusOr<Acc*> Get(OpKernelContext* ctx) const {
    ResourceMgr* rm = ctx->resource_manager();
    Acc* acc = rm->Find<Acc>(container_, name_);
    if (acc == nullptr) {
      // Fetched first: `create` runs under the ResourceMgr's lock.
      ASSIGN_OR_RETURN(std::shared_ptr<internal::DeadlineTimer> timer, internal::DeviceTimer(rm));
      ASSIGN_OR_RETURN(acc, rm->LookupOrCreate<Acc>(
                                container_, name_,
                                [&]() -> absl::StatusOr<std::unique_ptr<Acc>> {
                                  return std::make_unique<Acc>(name_, dtype_, shape_,
                                                               std::move(timer));
                                }));
    }
    if (acc->dtype() != dtype_ || !acc->shape().IsCompatibleWith(shape_)) {
      return absl::InvalidArgumentError(
          absl::StrCat("accumulator '", name_, "' exists as ", DataTypeName(acc->dtype()), " ",
                       acc->shape().DebugString(), ", this op asks for ", DataTypeName(dtype_), " ",
                       shape_.DebugString()));
    }
    return acc;
  }

 private:
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  std::string container_;
  std::string name_;
};

using AccumulatorRef = AccumulatorRefOf<GradientAccumulator>;
using SparseAccumulatorRef = AccumulatorRefOf<SparseGradientAccumulator>;

absl::StatusOr<int64_t> ScalarInt64(const Tensor& t, absl::string_view what) {
  if (t.shape().rank() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a scalar, got shape ", t.shape().DebugString()));
  }
  return t.scalar<int64_t>();
}

absl::Status CheckNumRequired(const Tensor& n) {
  if (n.shape().rank() != 0 || n.scalar<int32_t>() < 1) {
    return absl::InvalidArgumentError(absl::StrCat("num_required must be a positive scalar, got ",
                                                   n.shape().rank() != 0
                                                       ? "shape " + n.shape().DebugString()
                                                       : std::to_string(n.scalar<int32_t>())));
  }
  return absl::OkStatus();
}

absl::Duration Timeout(int64_t ms) {
  return ms > 0 ? absl::Milliseconds(ms) : absl::ZeroDuration();
}

class AccumulatorApplyGradientOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return acc_.Init(ctx); }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(int64_t local_step, ScalarInt64(ctx->input(0), "local_step"));
    ASSIGN_OR_RETURN(GradientAccumulator * acc, acc_.Get(ctx));
    return acc->Apply(local_step, ctx->input(1), ctx->allocator());
  }
  bool IsExpensive() const override { return false; }

 private:
  AccumulatorRef acc_;
};

class SparseAccumulatorApplyGradientOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return acc_.Init(ctx); }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(int64_t local_step, ScalarInt64(ctx->input(0), "local_step"));
    ASSIGN_OR_RETURN(SparseGradientAccumulator * acc, acc_.Get(ctx));
    return acc->Apply(local_step, ctx->input(1), ctx->input(2), ctx->input(3));
  }
  bool IsExpensive() const override { return false; }

 private:
  SparseAccumulatorRef acc_;
};

// The outputs of a take: the average (dense), or indices, values and dense
// shape (sparse).
void SetTakeOutputs(OpKernelContext* ctx, Tensor average) {
  ctx->set_output(0, std::move(average));
}
void SetTakeOutputs(OpKernelContext* ctx, internal::SparseGradient average) {
  ctx->set_output(0, std::move(average.indices));
  ctx->set_output(1, std::move(average.values));
  ctx->set_output(2, std::move(average.dense_shape));
}

// AccumulatorTakeGradient (Acc: GradientAccumulator) and
// SparseAccumulatorTakeGradient (SparseGradientAccumulator).
template <typename Acc>
class TakeGradientOp : public AsyncOpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    RETURN_IF_ERROR(acc_.Init(ctx));
    ASSIGN_OR_RETURN(timeout_ms_, ctx.GetAttr<int64_t>("timeout_ms"));
    return absl::OkStatus();
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    const Tensor& n = ctx->input(0);
    if (absl::Status ok = CheckNumRequired(n); !ok.ok()) {
      done(ok);
      return;
    }
    absl::StatusOr<Acc*> acc = acc_.Get(ctx);
    if (!acc.ok()) {
      done(acc.status());
      return;
    }
    (*acc)->Take(n.scalar<int32_t>(), Timeout(timeout_ms_),
                 [ctx, done = std::move(done)](absl::StatusOr<typename Acc::Result> average) {
                   if (!average.ok()) {
                     done(average.status());
                     return;
                   }
                   SetTakeOutputs(ctx, *std::move(average));
                   done(absl::OkStatus());
                 });
  }

 private:
  AccumulatorRefOf<Acc> acc_;
  int64_t timeout_ms_ = 0;
};

// The step and count ops serve either kind: attr `sparse` says which.
class EitherAccumulator {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) {
    ASSIGN_OR_RETURN(sparse_, ctx.GetAttr<bool>("sparse"));
    return sparse_ ? sparse_acc_.Init(ctx) : dense_acc_.Init(ctx);
  }
  absl::Status SetGlobalStep(OpKernelContext* ctx, int64_t step) const {
    if (sparse_) {
      ASSIGN_OR_RETURN(SparseGradientAccumulator * acc, sparse_acc_.Get(ctx));
      acc->SetGlobalStep(step);
    } else {
      ASSIGN_OR_RETURN(GradientAccumulator * acc, dense_acc_.Get(ctx));
      acc->SetGlobalStep(step);
    }
    return absl::OkStatus();
  }
  // (num_accumulated, num_stale)
  absl::StatusOr<std::pair<int64_t, int64_t>> Counts(OpKernelContext* ctx) const {
    if (sparse_) {
      ASSIGN_OR_RETURN(SparseGradientAccumulator * acc, sparse_acc_.Get(ctx));
      const SparseGradientAccumulator::Stats s = acc->stats();
      return std::make_pair(int64_t{s.num_accumulated}, s.num_stale);
    }
    ASSIGN_OR_RETURN(GradientAccumulator * acc, dense_acc_.Get(ctx));
    const GradientAccumulator::Stats s = acc->stats();
    return std::make_pair(int64_t{s.num_accumulated}, s.num_stale);
  }

 private:
  bool sparse_ = false;
  AccumulatorRef dense_acc_;
  SparseAccumulatorRef sparse_acc_;
};

class AccumulatorSetGlobalStepOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return acc_.Init(ctx); }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(int64_t step, ScalarInt64(ctx->input(0), "new_global_step"));
    return acc_.SetGlobalStep(ctx, step);
  }
  bool IsExpensive() const override { return false; }

 private:
  EitherAccumulator acc_;
};

template <typename T, bool kStale>
class AccumulatorCountOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return acc_.Init(ctx); }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(auto counts, acc_.Counts(ctx));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<T>() = static_cast<T>(kStale ? counts.second : counts.first);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  EitherAccumulator acc_;
};

// The queue an op names, read from its attrs at Init.
class QueueRef {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) {
    ASSIGN_OR_RETURN(container_, ctx.GetAttr<std::string>("container"));
    ASSIGN_OR_RETURN(name_, ctx.GetAttr<std::string>("shared_name"));
    if (name_.empty()) return absl::InvalidArgumentError("attr shared_name must name the queue");
    return absl::OkStatus();
  }
  absl::StatusOr<SyncTokenQueue*> Get(OpKernelContext* ctx) const {
    ResourceMgr* rm = ctx->resource_manager();
    if (SyncTokenQueue* q = rm->Find<SyncTokenQueue>(container_, name_)) return q;
    // Fetched first: `create` runs under the ResourceMgr's lock.
    ASSIGN_OR_RETURN(std::shared_ptr<internal::DeadlineTimer> timer, internal::DeviceTimer(rm));
    return rm->LookupOrCreate<SyncTokenQueue>(
        container_, name_, [&]() -> absl::StatusOr<std::unique_ptr<SyncTokenQueue>> {
          return std::make_unique<SyncTokenQueue>(name_, std::move(timer));
        });
  }

 private:
  std::string container_;
  std::string name_;
};

class SyncTokenEnqueueOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return queue_.Init(ctx); }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& tokens = ctx->input(0);
    if (tokens.shape().rank() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("tokens must be a vector, got shape ", tokens.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(SyncTokenQueue * q, queue_.Get(ctx));
    q->Enqueue(tokens.flat<int64_t>());
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  QueueRef queue_;
};

class SyncTokenDequeueOp : public AsyncOpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    RETURN_IF_ERROR(queue_.Init(ctx));
    ASSIGN_OR_RETURN(timeout_ms_, ctx.GetAttr<int64_t>("timeout_ms"));
    return absl::OkStatus();
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<SyncTokenQueue*> q = queue_.Get(ctx);
    if (!q.ok()) {
      done(q.status());
      return;
    }
    (*q)->Dequeue(Timeout(timeout_ms_), [ctx, done = std::move(done)](absl::StatusOr<int64_t> t) {
      if (!t.ok()) {
        done(t.status());
        return;
      }
      absl::StatusOr<Tensor*> out = ctx->allocate_output(0, TensorShape());
      if (!out.ok()) {
        done(out.status());
        return;
      }
      (*out)->scalar<int64_t>() = *t;
      done(absl::OkStatus());
    });
  }

 private:
  QueueRef queue_;
  int64_t timeout_ms_ = 0;
};

}  // namespace

void RegisterDataFlowKernels(KernelRegistry* kernels) {
  const std::vector<DataType> types = {DT_FLOAT, DT_DOUBLE};
  kernels->Register<AccumulatorApplyGradientOp>(
      KernelDef("AccumulatorApplyGradient", kDeviceTypeCpu).TypeConstraint("dtype", types));
  kernels->Register<TakeGradientOp<GradientAccumulator>>(
      KernelDef("AccumulatorTakeGradient", kDeviceTypeCpu).TypeConstraint("dtype", types));
  kernels->Register<SparseAccumulatorApplyGradientOp>(
      KernelDef("SparseAccumulatorApplyGradient", kDeviceTypeCpu).TypeConstraint("dtype", types));
  kernels->Register<TakeGradientOp<SparseGradientAccumulator>>(
      KernelDef("SparseAccumulatorTakeGradient", kDeviceTypeCpu).TypeConstraint("dtype", types));
  kernels->Register<AccumulatorSetGlobalStepOp>(
      KernelDef("AccumulatorSetGlobalStep", kDeviceTypeCpu).TypeConstraint("dtype", types));
  kernels->Register<AccumulatorCountOp<int32_t, false>>(
      KernelDef("AccumulatorNumAccumulated", kDeviceTypeCpu).TypeConstraint("dtype", types));
  kernels->Register<AccumulatorCountOp<int64_t, true>>(
      KernelDef("AccumulatorNumStale", kDeviceTypeCpu).TypeConstraint("dtype", types));
  kernels->Register<SyncTokenEnqueueOp>(KernelDef("SyncTokenEnqueue", kDeviceTypeCpu));
  kernels->Register<SyncTokenDequeueOp>(KernelDef("SyncTokenDequeue", kDeviceTypeCpu));
}

}  // namespace sluice
