// Kernels of the collective ops (ops/collective/collective_ops.h): each reads its attrs
// once at Init into CollectiveParams (finding this device's rank in
// group_devices) and hands every execution to the step's CollectiveExecutor,
// holding no thread while peers are awaited. The same classes serve CPU and
// GPU: the executor moves device tensors itself.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "ops/collective/collective_ops.h"
#include "runtime/collective/collective_executor.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// The parts of a device name ("/job:J/replica:R/task:T/device:TYPE:ID");
// empty where the name omits them. nullopt-like `ok == false` for a part
// that is none of these.
struct DeviceParts {
  std::string job, replica, task, device;
  bool ok = true;
};

DeviceParts SplitDevice(absl::string_view name) {
  DeviceParts p;
  for (absl::string_view part : absl::StrSplit(name, '/', absl::SkipEmpty())) {
    size_t colon = part.find(':');
    absl::string_view key = part.substr(0, colon);
    std::string value = colon == absl::string_view::npos ? "" : std::string(part.substr(colon + 1));
    if (key == "job") {
      p.job = value;
    } else if (key == "replica") {
      p.replica = value;
    } else if (key == "task") {
      p.task = value;
    } else if (key == "device") {
      p.device = value;
    } else {
      p.ok = false;
    }
  }
  return p;
}

// `entry` of group_devices as a full name: a name without "/job:" takes the
// job, replica and task it omits from `own` (this member's device).
std::string CompleteDevice(const std::string& entry, const std::string& own) {
  if (entry.find("/job:") != std::string::npos) return entry;
  DeviceParts e = SplitDevice(entry);
  DeviceParts o = SplitDevice(own);
  if (!e.ok || e.device.empty()) return entry;
  if (e.job.empty()) e.job = o.job;
  if (e.replica.empty()) e.replica = o.replica;
  if (e.task.empty()) e.task = o.task;
  return absl::StrCat("/job:", e.job, "/replica:", e.replica, "/task:", e.task,
                      "/device:", e.device);
}

// The attrs every collective op carries, as CollectiveParams for the member
// on ctx.device().
absl::StatusOr<CollectiveParams> ReadParams(const OpKernelConstruction& ctx, CollectiveKind kind) {
  CollectiveParams p;
  p.kind = kind;
  p.node_name = ctx.node().name();
  ASSIGN_OR_RETURN(int64_t group_size, ctx.GetAttr<int64_t>("group_size"));
  ASSIGN_OR_RETURN(p.group_key, ctx.GetAttr<int64_t>("group_key"));
  ASSIGN_OR_RETURN(p.instance_key, ctx.GetAttr<int64_t>("instance_key"));
  ASSIGN_OR_RETURN(std::vector<std::string> devices,
                   ctx.GetAttr<std::vector<std::string>>("group_devices"));
  ASSIGN_OR_RETURN(p.communication_hint, ctx.GetAttr<std::string>("communication_hint"));
  ASSIGN_OR_RETURN(float timeout_seconds, ctx.GetAttr<float>("timeout_seconds"));
  if (devices.empty()) {
    return absl::InvalidArgumentError("attr group_devices is empty; name every member's device");
  }
  if (group_size != static_cast<int64_t>(devices.size())) {
    return absl::InvalidArgumentError(absl::StrCat("attr group_size is ", group_size,
                                                   " but group_devices names ", devices.size(),
                                                   " devices"));
  }
  if (!(timeout_seconds >= 0) || std::isinf(timeout_seconds)) {
    return absl::InvalidArgumentError(
        absl::StrCat("attr timeout_seconds must be finite and >= 0, got ", timeout_seconds));
  }
  // 0 keeps the executor's default; a positive timeout is at least 1 ms.
  p.timeout_ms =
      timeout_seconds > 0
          ? std::max<int64_t>(1, std::llround(static_cast<double>(timeout_seconds) * 1e3))
          : 0;
  const std::string& own = ctx.device()->name();
  p.rank = -1;
  for (const std::string& d : devices) {
    p.group_devices.push_back(CompleteDevice(d, own));
    if (p.group_devices.back() == own) p.rank = static_cast<int>(p.group_devices.size()) - 1;
  }
  if (p.rank < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("device ", own, " is not in attr group_devices [",
                     absl::StrJoin(p.group_devices, ", "), "] (group ", p.group_key, ")"));
  }
  RETURN_IF_ERROR(p.Validate());
  return p;
}

// Runs one execution of `params` on the step's collective executor and sets
// output 0 from its result.
class CollectiveOpBase : public AsyncOpKernel {
 public:
  // A group of one hands its input on (runtime/collective): nothing to
  // keep from run to run, so a recorded step may contain it.
  bool ReplaysRight() const override { return params_.group_size() == 1; }

 protected:
  void Launch(OpKernelContext* ctx, const Tensor& input, DoneCallback done) const {
    CollectiveExecutor* collectives = ctx->collective_executor();
    if (collectives == nullptr) {
      done(absl::FailedPreconditionError(
          "no collective executor: run collectives through a session or cluster worker"));
      return;
    }
    collectives->Run(params_, ctx->device(), input,
                     [ctx, done = std::move(done)](absl::StatusOr<Tensor> out) {
                       if (!out.ok()) {
                         done(out.status());
                         return;
                       }
                       ctx->set_output(0, *std::move(out));
                       done(absl::OkStatus());
                     });
  }

  CollectiveParams params_;
};

class CollectiveReduceOp : public CollectiveOpBase {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(params_, ReadParams(ctx, CollectiveKind::kAllReduce));
    ASSIGN_OR_RETURN(std::string merge_op, ctx.GetAttr<std::string>("merge_op"));
    ASSIGN_OR_RETURN(std::string final_op, ctx.GetAttr<std::string>("final_op"));
    if (merge_op != "Add") {
      return absl::UnimplementedError(
          absl::StrCat("attr merge_op '", merge_op, "': only 'Add' is implemented"));
    }
    if (final_op != "Id" && final_op != "Div") {
      return absl::UnimplementedError(
          absl::StrCat("attr final_op '", final_op, "': only 'Id' and 'Div' are implemented"));
    }
    params_.reduce_op = final_op == "Div" ? ReduceOp::kMean : ReduceOp::kSum;
    return absl::OkStatus();
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    Launch(ctx, ctx->input(0), std::move(done));
  }
};

class CollectiveBcastSendOp : public CollectiveOpBase {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(params_, ReadParams(ctx, CollectiveKind::kBroadcast));
    ASSIGN_OR_RETURN(shape_, ctx.GetAttr<TensorShape>("shape"));
    params_.source_rank = params_.rank;
    return absl::OkStatus();
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    const Tensor& input = ctx->input(0);
    if (!shape_.IsCompatibleWith(input.shape())) {
      done(absl::InvalidArgumentError(absl::StrCat("attr shape is ", shape_.DebugString(),
                                                   " but the input has shape ",
                                                   input.shape().DebugString())));
      return;
    }
    Launch(ctx, input, std::move(done));
  }

 private:
  TensorShape shape_;
};

class CollectiveBcastRecvOp : public CollectiveOpBase {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(params_, ReadParams(ctx, CollectiveKind::kBroadcast));
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("T"));
    ASSIGN_OR_RETURN(shape_, ctx.GetAttr<TensorShape>("shape"));
    ASSIGN_OR_RETURN(int64_t source, ctx.GetAttr<int64_t>("source_rank"));
    if (!shape_.IsFullyDefined()) {
      return absl::InvalidArgumentError(
          absl::StrCat("attr shape must be fully defined, got ", shape_.DebugString()));
    }
    if (source < 0 || source >= params_.group_size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attr source_rank ", source, " is out of range [0, ", params_.group_size(), ")"));
    }
    if (source == params_.rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attr source_rank ", source, " names this receiver's own device ",
          params_.group_devices[params_.rank], "; the source runs CollectiveBcastSend"));
    }
    params_.source_rank = static_cast<int>(source);
    return absl::OkStatus();
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    // Only its dtype and shape matter; it lives where the output must.
    absl::StatusOr<Tensor> placeholder =
        ctx->output_on_host(0) ? Tensor::Allocate(ctx->output_allocator(0), dtype_, shape_)
                               : ctx->allocate_temp(dtype_, shape_);
    if (!placeholder.ok()) {
      done(placeholder.status());
      return;
    }
    Launch(ctx, *placeholder, std::move(done));
  }

 private:
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
};

class CollectiveGatherOp : public CollectiveOpBase {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(params_, ReadParams(ctx, CollectiveKind::kAllGather));
    return absl::OkStatus();
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    Launch(ctx, ctx->input(0), std::move(done));
  }
};

template <typename K>
void RegisterOnDevices(KernelRegistry* kernels, const std::string& op, const char* host_arg) {
  const std::vector<DataType> cpu_types = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64};
  kernels->Register<K>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", cpu_types));
  kernels->Register<K>(
      KernelDef(op, kDeviceTypeGpu).TypeConstraint("T", {DT_FLOAT, DT_DOUBLE, DT_INT64}));
  // int32 stays in host memory on a GPU (TensorFlow's convention).
  KernelDef int32_on_gpu = KernelDef(op, kDeviceTypeGpu).TypeConstraint("T", DT_INT32);
  if (host_arg != nullptr) int32_on_gpu.HostMemory(host_arg);
  int32_on_gpu.HostMemory("data");
  kernels->Register<K>(std::move(int32_on_gpu));
}

}  // namespace

void RegisterCollectiveKernels(KernelRegistry* kernels) {
  RegisterOnDevices<CollectiveReduceOp>(kernels, "CollectiveReduce", "input");
  RegisterOnDevices<CollectiveBcastSendOp>(kernels, "CollectiveBcastSend", "input");
  RegisterOnDevices<CollectiveBcastRecvOp>(kernels, "CollectiveBcastRecv", nullptr);
  RegisterOnDevices<CollectiveGatherOp>(kernels, "CollectiveGather", "input");
}

void RegisterCollectiveKernelsOn(KernelRegistry* kernels, const std::string& device_type,
                                 const std::vector<DataType>& types) {
  auto on = [&](const char* op) { return KernelDef(op, device_type).TypeConstraint("T", types); };
  kernels->Register<CollectiveReduceOp>(on("CollectiveReduce"));
  kernels->Register<CollectiveBcastSendOp>(on("CollectiveBcastSend"));
  kernels->Register<CollectiveBcastRecvOp>(on("CollectiveBcastRecv"));
  kernels->Register<CollectiveGatherOp>(on("CollectiveGather"));
}

}  // namespace sluice
