// CPU kernels of the reader ops (ops/io/reader_ops.h). A reader is a
// ReaderResource in the device's ResourceMgr holding the shared
// ReaderState (ops/io/internal/reader.h).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/data_flow/internal/abort_watch.h"
#include "ops/data_flow/queue.h"
#include "ops/io/internal/reader.h"
#include "ops/io/reader_ops.h"
#include "runtime/kernel.h"
#include "runtime/resource_handle.h"

namespace sluice {
namespace {

class ReaderResource : public ResourceBase {
 public:
  explicit ReaderResource(std::shared_ptr<ReaderState> state) : state_(std::move(state)) {}
  std::string DebugString() const override { return "reader"; }
  const std::shared_ptr<ReaderState>& state() const { return state_; }

 private:
  std::shared_ptr<ReaderState> state_;
};

// TFRecordReaderV2 and FixedLengthRecordReaderV2: make the reader once,
// output its handle.
class ReaderHandleOp : public OpKernel {
 public:
  explicit ReaderHandleOp(bool fixed_length) : fixed_length_(fixed_length) {}

  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(container_, ctx.GetAttr<std::string>("container"));
    ASSIGN_OR_RETURN(name_, ctx.GetAttr<std::string>("shared_name"));
    if (name_.empty()) name_ = absl::StrCat("_reader_", ctx.node().name());
    if (!fixed_length_) {
      ASSIGN_OR_RETURN(std::string c, ctx.GetAttr<std::string>("compression_type"));
      ASSIGN_OR_RETURN(compression_, ParseRecordCompression(c));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(fixed_.header_bytes, ctx.GetAttr<int64_t>("header_bytes"));
    ASSIGN_OR_RETURN(fixed_.record_bytes, ctx.GetAttr<int64_t>("record_bytes"));
    ASSIGN_OR_RETURN(fixed_.footer_bytes, ctx.GetAttr<int64_t>("footer_bytes"));
    ASSIGN_OR_RETURN(fixed_.hop_bytes, ctx.GetAttr<int64_t>("hop_bytes"));
    ASSIGN_OR_RETURN(std::string encoding, ctx.GetAttr<std::string>("encoding"));
    ASSIGN_OR_RETURN(fixed_.encoding, ParseRecordCompression(encoding));
    if (fixed_.header_bytes < 0 || fixed_.footer_bytes < 0 || fixed_.hop_bytes < 0) {
      return absl::InvalidArgumentError(
          "header_bytes, footer_bytes and hop_bytes must be non-negative");
    }
    if (fixed_.record_bytes <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("record_bytes must be > 0, got ", fixed_.record_bytes));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(ctx->resource_manager()
                        ->LookupOrCreate<ReaderResource>(
                            container_, name_,
                            [&]() -> absl::StatusOr<std::unique_ptr<ReaderResource>> {
                              return std::make_unique<ReaderResource>(
                                  std::make_shared<ReaderState>(
                                      fixed_length_ ? MakeFixedLengthFormat(fixed_)
                                                    : MakeTFRecordFormat(compression_)));
                            })
                        .status());
    ASSIGN_OR_RETURN(Tensor * handle, ctx->allocate_output(0, TensorShape()));
    handle->scalar<std::string>() = MakeResourceHandle(container_, name_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  const bool fixed_length_;
  std::string container_, name_;
  RecordCompression compression_ = RecordCompression::kNone;
  FixedLengthOptions fixed_;
};

absl::StatusOr<std::shared_ptr<ReaderState>> ReaderInput(OpKernelContext* ctx) {
  ASSIGN_OR_RETURN(ReaderResource * r, LookupResourceInput<ReaderResource>(ctx, 0, "reader"));
  return r->state();
}

// ReaderReadV2 (one record, scalar outputs) and ReaderReadUpToV2.
template <bool kUpTo>
class ReaderReadOp : public AsyncOpKernel {
 public:
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<std::shared_ptr<ReaderState>> reader = ReaderInput(ctx);
    if (!reader.ok()) {
      done(reader.status());
      return;
    }
    absl::StatusOr<Queue*> queue =
        LookupQueue(ctx->resource_manager(), ctx->input(1), ctx->device()->name());
    if (!queue.ok()) {
      done(queue.status());
      return;
    }
    int64_t n = 1;
    if (kUpTo) {
      const Tensor& num = ctx->input(2);
      if (num.dims() != 0) {
        done(absl::InvalidArgumentError("num_records must be a scalar"));
        return;
      }
      n = num.scalar<int64_t>();
    }
    std::shared_ptr<internal::AbortWatch> watch = internal::AbortWatch::Watch(ctx);
    (*reader)->Read(
        *queue, n, kUpTo,
        [ctx, done = std::move(done)](absl::Status s, std::vector<std::string> keys,
                                      std::vector<std::string> values) {
          if (s.ok()) s = Emit(ctx, keys, values);
          done(s);
        },
        [watch](Queue::Cancel cancel) { watch->Arm(std::move(cancel)); });
  }

 private:
  static absl::Status Emit(OpKernelContext* ctx, std::vector<std::string>& keys,
                           std::vector<std::string>& values) {
    const TensorShape shape =
        kUpTo ? TensorShape({static_cast<int64_t>(keys.size())}) : TensorShape();
    ASSIGN_OR_RETURN(Tensor * k, ctx->allocate_output(0, shape));
    ASSIGN_OR_RETURN(Tensor * v, ctx->allocate_output(1, shape));
    for (size_t i = 0; i < keys.size(); ++i) {
      k->flat<std::string>()[i] = std::move(keys[i]);
      v->flat<std::string>()[i] = std::move(values[i]);
    }
    return absl::OkStatus();
  }
};

// ReaderNumRecordsProducedV2 / ReaderNumWorkUnitsCompletedV2.
template <bool kRecords>
class ReaderCountOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::shared_ptr<ReaderState> reader, ReaderInput(ctx));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<int64_t>() =
        kRecords ? reader->num_records_produced() : reader->num_work_units_completed();
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class ReaderResetOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::shared_ptr<ReaderState> reader, ReaderInput(ctx));
    return reader->Reset();
  }
  bool IsExpensive() const override { return false; }
};

}  // namespace

void RegisterReaderKernels(KernelRegistry* k) {
  k->Register(KernelDef("TFRecordReaderV2", kDeviceTypeCpu),
              [] { return std::make_unique<ReaderHandleOp>(false); });
  k->Register(KernelDef("FixedLengthRecordReaderV2", kDeviceTypeCpu),
              [] { return std::make_unique<ReaderHandleOp>(true); });
  k->Register<ReaderReadOp<false>>(KernelDef("ReaderReadV2", kDeviceTypeCpu));
  k->Register<ReaderReadOp<true>>(KernelDef("ReaderReadUpToV2", kDeviceTypeCpu));
  k->Register<ReaderCountOp<true>>(KernelDef("ReaderNumRecordsProducedV2", kDeviceTypeCpu));
  k->Register<ReaderCountOp<false>>(KernelDef("ReaderNumWorkUnitsCompletedV2", kDeviceTypeCpu));
  k->Register<ReaderResetOp>(KernelDef("ReaderResetV2", kDeviceTypeCpu));
}

}  // namespace sluice
