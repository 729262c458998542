// Built with NCCL: the local (ncclCommInitAll) and cross-process
// (ncclCommInitRank, internal/nccl_peer_comm.h) all-reduce for GPUs.
#include "runtime/gpu/nccl_collectives.h"

#include <nccl.h>

#include <map>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "runtime/gpu/internal/nccl_peer_comm.h"
#include "runtime/gpu/internal/nccl_util.h"
#include "runtime/collective/collective_executor.h"
#include "runtime/gpu/gpu_device.h"

namespace sluice {
namespace {

// The process's single-process communicators, by ordered GPU ordinals, and
// the lock every local launch holds (so that all GPUs see the launches of
// different groups in one order). Never destroyed.
class LocalComms {
 public:
  // By the members' (ordinal, logical GPU): two logical GPUs of one card
  // launch on streams of their own, so they never share a communicator.
  absl::StatusOr<std::vector<ncclComm_t>> Get(const std::vector<std::pair<int, int>>& members,
                                              absl::string_view what) {
    absl::MutexLock lock(&mu_);
    auto it = comms_.find(members);
    if (it != comms_.end()) return it->second;
    std::vector<int> ordinals;
    for (const auto& [ordinal, logical] : members) ordinals.push_back(ordinal);
    std::vector<ncclComm_t> comms(ordinals.size(), nullptr);
    ncclResult_t r =
        ncclCommInitAll(comms.data(), static_cast<int>(ordinals.size()), ordinals.data());
    if (r != ncclSuccess) {
      return NcclStatusOf(
          r, absl::StrCat(what, ": ncclCommInitAll over GPUs ", absl::StrJoin(ordinals, ",")));
    }
    comms_.emplace(members, comms);
    return comms;
  }
  absl::Mutex* launch_mu() { return &launch_mu_; }

 private:
  static absl::Status NcclStatusOf(ncclResult_t r, absl::string_view what) {
    return internal::NcclStatus(r, nullptr, what);
  }

  absl::Mutex mu_;
  std::map<std::vector<std::pair<int, int>>, std::vector<ncclComm_t>> comms_ ABSL_GUARDED_BY(mu_);
  absl::Mutex launch_mu_;
};

LocalComms& Comms() {
  static LocalComms* comms = new LocalComms();  // never destroyed
  return *comms;
}

std::string Describe(const Tensor& t) {
  return absl::StrCat(DataTypeName(t.dtype()), " ", t.shape().DebugString());
}

absl::StatusOr<std::vector<Tensor>> RunLocal(const CollectiveParams& params,
                                             const std::vector<Device*>& devices,
                                             const std::vector<Tensor>& inputs) {
  const std::string what = absl::StrCat(params.DebugString(), ": NCCL all-reduce");
  if (devices.empty() || devices.size() != inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", devices.size(), " devices and ", inputs.size(), " inputs"));
  }
  const Tensor& first = inputs[0];
  absl::StatusOr<ncclDataType_t> type = internal::NcclDataType(first.dtype());
  if (!type.ok()) return AddContext(type.status(), what);
  absl::StatusOr<ncclRedOp_t> op = internal::NcclReduceOp(params.reduce_op);
  if (!op.ok()) return AddContext(op.status(), what);

  std::vector<GpuDevice*> gpus;
  std::vector<int> ordinals;
  for (size_t i = 0; i < devices.size(); ++i) {
    auto* gpu = dynamic_cast<GpuDevice*>(devices[i]);
    if (gpu == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": member ", i, " (",
                       devices[i] == nullptr ? std::string("no device") : devices[i]->name(),
                       ") is not a GPU device"));
    }
    const Tensor& x = inputs[i];
    if (x.dtype() != first.dtype() || !(x.shape() == first.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": members disagree: member 0 has ",
                                                     Describe(first), ", member ", i, " has ",
                                                     Describe(x)));
    }
    if (!x.on_device() || x.buffer_allocator()->device_ordinal() != gpu->ordinal()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": member ", i, "'s input is not in the memory of ", gpu->name()));
    }
    for (size_t j = 0; j < i; ++j) {
      if (ordinals[j] == gpu->ordinal()) {
        // Logical GPUs of one card: NCCL refuses a GPU twice, so the
        // collective executor's in-process path takes them.
        return absl::UnimplementedError(
            absl::StrCat(what, ": members ", j, " (", gpus[j]->name(), ") and ", i, " (",
                         gpu->name(), ") share GPU ", gpu->ordinal()));
      }
    }
    gpus.push_back(gpu);
    ordinals.push_back(gpu->ordinal());
  }

  std::vector<Tensor> outputs;
  outputs.reserve(gpus.size());
  for (GpuDevice* gpu : gpus) {
    RETURN_IF_ERROR(AddContext(gpu->Activate(), what));
    absl::StatusOr<Tensor> out = Tensor::Allocate(gpu->allocator(), first.dtype(), first.shape());
    if (!out.ok()) return AddContext(out.status(), absl::StrCat(what, " on ", gpu->name()));
    outputs.push_back(*std::move(out));
  }
  const int64_t count = first.NumElements();
  if (count == 0) return outputs;

  std::vector<std::pair<int, int>> members;
  for (GpuDevice* gpu : gpus) members.emplace_back(gpu->ordinal(), gpu->logical());
  ASSIGN_OR_RETURN(std::vector<ncclComm_t> comms, Comms().Get(members, what));
  absl::MutexLock lock(Comms().launch_mu());
  RETURN_IF_ERROR(internal::NcclStatus(ncclGroupStart(), nullptr, what));
  absl::Status status;
  for (size_t i = 0; i < gpus.size(); ++i) {
    status = AddContext(gpus[i]->Activate(), what);
    if (!status.ok()) break;
    ncclResult_t r =
        ncclAllReduce(inputs[i].raw_data(), outputs[i].raw_data(), static_cast<size_t>(count),
                      *type, *op, comms[i], gpus[i]->compute_stream());
    if (r != ncclSuccess) {
      status = internal::NcclStatus(r, comms[i], absl::StrCat(what, " on ", gpus[i]->name()));
      break;
    }
  }
  // Always closes the group; NCCL drops a group whose calls failed.
  ncclResult_t end = ncclGroupEnd();
  if (status.ok()) status = internal::NcclStatus(end, nullptr, what);
  RETURN_IF_ERROR(status);
  return outputs;
}

}  // namespace

bool NcclAvailable() { return true; }

void NcclLocalAllReduce(const CollectiveParams& params, const std::vector<Device*>& devices,
                        const std::vector<Tensor>& inputs,
                        std::function<void(absl::StatusOr<std::vector<Tensor>>)> done) {
  done(RunLocal(params, devices, inputs));
}

absl::Status NcclCrossProcessAllReduce(const CollectiveParams& params, const std::string& execution,
                                       Device* device, const Tensor& input,
                                       CollectiveTransport* transport,
                                       std::function<void(absl::StatusOr<Tensor>)> done) {
  // Unimplemented leaves the collective to the CPU ring; every member
  // decides alike (from params, the device type and the dtype).
  auto* gpu = dynamic_cast<GpuDevice*>(device);
  if (gpu == nullptr || params.kind != CollectiveKind::kAllReduce) {
    return absl::UnimplementedError("NCCL: only all-reduces of GPU devices");
  }
  if (absl::StatusOr<ncclDataType_t> t = internal::NcclDataType(input.dtype()); !t.ok()) {
    return t.status();
  }
  if (absl::StatusOr<ncclRedOp_t> o = internal::NcclReduceOp(params.reduce_op); !o.ok()) {
    return o.status();
  }
  if (transport == nullptr) {
    return absl::InvalidArgumentError("NCCL all-reduce across processes: no transport");
  }
  if (!input.on_device() || input.buffer_allocator()->device_ordinal() != gpu->ordinal()) {
    return absl::InvalidArgumentError(
        absl::StrCat("NCCL all-reduce: the input is not in the memory of ", gpu->name()));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<internal::NcclPeerComm> comm,
                   internal::NcclPeerComm::Get(params, gpu, transport));
  comm->Enqueue(internal::NcclMember{.execution = execution,
                                     .params = params,
                                     .device = gpu,
                                     .input = input,
                                     .done = std::move(done)});
  return absl::OkStatus();
}

}  // namespace sluice
