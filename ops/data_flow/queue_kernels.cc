// CPU kernels of the queue ops (ops/data_flow/queue_ops.h). The blocking ones are
// asynchronous: they hand a callback to the Queue (ops/data_flow/queue.h) and watch
// the step's rendezvous, so a step abort (a RunOptions deadline, a failed
// partition) completes them with the abort's status.
#include <atomic>
#include <memory>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "ops/data_flow/internal/abort_watch.h"
#include "ops/data_flow/queue.h"
#include "ops/data_flow/queue_ops.h"
#include "runtime/rendezvous.h"
#include "runtime/resource_handle.h"

namespace sluice {
namespace {

using internal::AbortWatch;

// Finds the queue the handle on input 0 names.
absl::StatusOr<Queue*> QueueInput(OpKernelContext* ctx) {
  return LookupQueue(ctx->resource_manager(), ctx->input(0), ctx->device()->name());
}

// Copies `rows` rows (of `row_elems` elements) from src at `from` to dst at `to`.
void CopyRows(const Tensor& src, int64_t from, Tensor* dst, int64_t to, int64_t rows,
              int64_t row_elems) {
  if (src.dtype() == DT_STRING) {
    const std::string* s = src.data<std::string>() + from * row_elems;
    std::string* d = dst->data<std::string>() + to * row_elems;
    for (int64_t i = 0; i < rows * row_elems; ++i) d[i] = s[i];
    return;
  }
  const size_t bytes = static_cast<size_t>(row_elems) * DataTypeSize(src.dtype());
  if (bytes == 0 || rows == 0) return;
  std::memcpy(static_cast<char*>(dst->raw_data()) + to * bytes,
              static_cast<const char*>(src.raw_data()) + from * bytes, rows * bytes);
}

// The names of a device's private queues (no shared_name): "_<k>_<node>",
// k counting them in order of first use, as TensorFlow names them ("_0_q").
// Kept in the ResourceMgr so that every kernel of one node (each signature
// a session runs builds its own) finds the same queue.
class PrivateQueueNames : public ResourceBase {
 public:
  std::string DebugString() const override { return "private queue names"; }
  std::string NameFor(const std::string& node) {
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = names_.emplace(node, "");
    if (inserted) it->second = absl::StrCat("_", names_.size() - 1, "_", node);
    return it->second;
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::string> names_ ABSL_GUARDED_BY(mu_);
};

class QueueHandleOp : public OpKernel {
 public:
  explicit QueueHandleOp(Queue::Kind kind) { options_.kind = kind; }

  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(options_.types, ctx.GetAttr<std::vector<DataType>>("component_types"));
    ASSIGN_OR_RETURN(options_.shapes, ctx.GetAttr<std::vector<TensorShape>>("shapes"));
    ASSIGN_OR_RETURN(options_.capacity, ctx.GetAttr<int64_t>("capacity"));
    ASSIGN_OR_RETURN(container_, ctx.GetAttr<std::string>("container"));
    ASSIGN_OR_RETURN(std::string shared, ctx.GetAttr<std::string>("shared_name"));
    if (!options_.shapes.empty() && options_.shapes.size() != options_.types.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shapes has ", options_.shapes.size(), " entries but component_types has ",
          options_.types.size()));
    }
    if (options_.kind == Queue::Kind::kRandomShuffle) {
      ASSIGN_OR_RETURN(options_.min_after_dequeue, ctx.GetAttr<int64_t>("min_after_dequeue"));
      ASSIGN_OR_RETURN(int64_t seed, ctx.GetAttr<int64_t>("seed"));
      ASSIGN_OR_RETURN(int64_t seed2, ctx.GetAttr<int64_t>("seed2"));
      options_.seed = static_cast<uint64_t>(seed);
      options_.seed2 = static_cast<uint64_t>(seed2);
    }
    options_.name = shared;
    node_ = ctx.node().name();
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    Queue::Options options = options_;
    if (options.name.empty()) {
      ASSIGN_OR_RETURN(PrivateQueueNames * names,
                       ctx->resource_manager()->LookupOrCreate<PrivateQueueNames>(
                           "", "_private_queue_names",
                           []() -> absl::StatusOr<std::unique_ptr<PrivateQueueNames>> {
                             return std::make_unique<PrivateQueueNames>();
                           }));
      options.name = names->NameFor(node_);
    }
    RETURN_IF_ERROR(ctx->resource_manager()
                        ->LookupOrCreate<Queue>(container_, options.name,
                                                [&]() -> absl::StatusOr<std::unique_ptr<Queue>> {
                                                  return std::make_unique<Queue>(options);
                                                })
                        .status());
    ASSIGN_OR_RETURN(Tensor * handle, ctx->allocate_output(0, TensorShape()));
    handle->scalar<std::string>() = MakeResourceHandle(container_, options.name);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  Queue::Options options_;  // name empty for a private queue (named per device)
  std::string container_;
  std::string node_;
};

// QueueEnqueueV2 (one tuple) or, with kMany, QueueEnqueueManyV2 (the
// components split along their first dimension).
template <bool kMany>
class EnqueueOp : public AsyncOpKernel {
 public:
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<Queue*> q = QueueInput(ctx);
    absl::StatusOr<std::vector<Queue::Tuple>> tuples =
        q.ok() ? Tuples(ctx, **q) : absl::StatusOr<std::vector<Queue::Tuple>>(q.status());
    if (!tuples.ok()) {
      done(tuples.status());
      return;
    }
    std::shared_ptr<AbortWatch> watch = AbortWatch::Watch(ctx);
    watch->Arm((*q)->Enqueue(*std::move(tuples), std::move(done)));
  }

 private:
  static absl::StatusOr<std::vector<Queue::Tuple>> Tuples(OpKernelContext* ctx, const Queue& q) {
    const int n = ctx->num_inputs() - 1;
    Queue::Tuple all;
    for (int i = 0; i < n; ++i) all.push_back(ctx->input(i + 1));
    if (!kMany) {
      RETURN_IF_ERROR(q.CheckTuple(all));
      return std::vector<Queue::Tuple>{std::move(all)};
    }
    for (const Tensor& t : all) {
      if (t.dims() == 0 || t.dim_size(0) != all[0].dim_size(0)) {
        return absl::InvalidArgumentError(
            "EnqueueMany requires the components to have the same number of elements in the 0th "
            "dimension, and at least one dimension");
      }
    }
    const int64_t rows = all[0].dim_size(0);
    std::vector<Queue::Tuple> tuples(rows);
    for (const Tensor& t : all) {
      std::vector<int64_t> dims(t.shape().dims().begin() + 1, t.shape().dims().end());
      const TensorShape row_shape(dims);
      const int64_t row_elems = rows == 0 ? 0 : t.NumElements() / rows;
      for (int64_t r = 0; r < rows; ++r) {
        ASSIGN_OR_RETURN(Tensor row, Tensor::Allocate(ctx->allocator(), t.dtype(), row_shape));
        CopyRows(t, r, &row, 0, 1, row_elems);
        tuples[r].push_back(std::move(row));
      }
    }
    for (const Queue::Tuple& t : tuples) RETURN_IF_ERROR(q.CheckTuple(t));
    return tuples;
  }
};

// QueueDequeueV2 (one tuple) or, with kMany, QueueDequeueManyV2 (n tuples
// stacked along a new first dimension).
template <bool kMany>
class DequeueOp : public AsyncOpKernel {
 public:
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<Queue*> q = QueueInput(ctx);
    if (!q.ok()) {
      done(q.status());
      return;
    }
    int64_t n = 1;
    if (kMany) {
      const Tensor& nt = ctx->input(1);
      if (nt.dims() != 0 || nt.scalar<int32_t>() < 0) {
        done(absl::InvalidArgumentError("n must be a non-negative int32 scalar"));
        return;
      }
      n = nt.scalar<int32_t>();
    }
    const Queue* queue = *q;
    std::shared_ptr<AbortWatch> watch = AbortWatch::Watch(ctx);
    Queue::Cancel cancel = (*q)->Dequeue(
        n, [ctx, queue, n, done = std::move(done)](
               absl::StatusOr<std::vector<Queue::Tuple>> got) {
          done(got.ok() ? SetOutputs(ctx, *queue, n, *got) : got.status());
        });
    watch->Arm(std::move(cancel));
  }

 private:
  static absl::Status SetOutputs(OpKernelContext* ctx, const Queue& q, int64_t n,
                                 const std::vector<Queue::Tuple>& got) {
    for (int c = 0; c < ctx->num_outputs(); ++c) {
      if (!kMany) {
        ctx->set_output(c, got[0][c]);
        continue;
      }
      TensorShape elem = n > 0 ? got[0][c].shape()
                               : (q.options().shapes.empty() ? TensorShape()
                                                             : q.options().shapes[c]);
      if (!elem.IsFullyDefined()) {
        return absl::InvalidArgumentError(
            "DequeueMany of 0 elements needs the queue's component shapes");
      }
      std::vector<int64_t> dims = {n};
      dims.insert(dims.end(), elem.dims().begin(), elem.dims().end());
      ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(c, TensorShape(dims)));
      const int64_t row_elems = n == 0 ? 0 : out->NumElements() / n;
      for (int64_t i = 0; i < n; ++i) {
        if (got[i][c].shape() != elem) {
          return absl::InvalidArgumentError(absl::StrCat(
              "DequeueMany: component ", c, " has shape ", got[i][c].shape().DebugString(),
              " in one element and ", elem.DebugString(), " in another"));
        }
        CopyRows(got[i][c], 0, out, i, 1, row_elems);
      }
    }
    return absl::OkStatus();
  }
};

class QueueCloseOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(cancel_pending_, ctx.GetAttr<bool>("cancel_pending_enqueues"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Queue * q, QueueInput(ctx));
    q->Close(cancel_pending_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  bool cancel_pending_ = false;
};

class QueueSizeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Queue * q, QueueInput(ctx));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<int32_t>() = static_cast<int32_t>(q->size());
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class QueueIsClosedOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Queue * q, QueueInput(ctx));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<bool>() = q->is_closed();
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

}  // namespace

void RegisterQueueKernels(KernelRegistry* kernels) {
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  kernels->Register(cpu("FIFOQueueV2"),
                    [] { return std::make_unique<QueueHandleOp>(Queue::Kind::kFifo); });
  kernels->Register(cpu("RandomShuffleQueueV2"),
                    [] { return std::make_unique<QueueHandleOp>(Queue::Kind::kRandomShuffle); });
  kernels->Register<EnqueueOp<false>>(cpu("QueueEnqueueV2"));
  kernels->Register<EnqueueOp<true>>(cpu("QueueEnqueueManyV2"));
  kernels->Register<DequeueOp<false>>(cpu("QueueDequeueV2"));
  kernels->Register<DequeueOp<true>>(cpu("QueueDequeueManyV2"));
  kernels->Register<QueueCloseOp>(cpu("QueueCloseV2"));
  kernels->Register<QueueSizeOp>(cpu("QueueSizeV2"));
  kernels->Register<QueueIsClosedOp>(cpu("QueueIsClosedV2"));
}

}  // namespace sluice
