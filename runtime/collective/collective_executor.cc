#include "runtime/collective/collective_executor.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "runtime/collective/deadline_timer.h"
#include "runtime/collective/local_join.h"
#include "runtime/collective/reduce_kernels.h"
#include "runtime/collective/host_pool.h"
#include "runtime/collective/ring.h"

namespace sluice {
namespace {

using Done = std::function<void(absl::StatusOr<Tensor>)>;

// The most host memory the ring's pool keeps (results in use included);
// past it results come from the device's host allocator.
constexpr int64_t kHostPoolBytes = int64_t{1} << 30;

// "/job:w/replica:0/task:1" of "/job:w/replica:0/task:1/device:CPU:0".
absl::string_view TaskOf(absl::string_view device) {
  size_t at = device.find("/device:");
  return at == absl::string_view::npos ? device : device.substr(0, at);
}

// "CPU" of ".../device:CPU:0"; empty when the name has no device part.
absl::string_view TypeOf(absl::string_view device) {
  size_t at = device.find("/device:");
  if (at == absl::string_view::npos) return {};
  absl::string_view rest = device.substr(at + 8);
  return rest.substr(0, rest.find(':'));
}

// Every member is a device of this member's task.
bool AllLocal(const CollectiveParams& p) {
  absl::string_view task = TaskOf(p.group_devices[p.rank]);
  for (const std::string& d : p.group_devices) {
    if (TaskOf(d) != task) return false;
  }
  return true;
}

bool AllOfType(const CollectiveParams& p, absl::string_view type) {
  for (const std::string& d : p.group_devices) {
    if (TypeOf(d) != type) return false;
  }
  return true;
}

absl::Status CheckInput(const CollectiveParams& p, Device* device, const Tensor& input) {
  if (device == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(p.DebugString(), ": no device"));
  }
  if (!input.IsInitialized()) {
    return absl::InvalidArgumentError(absl::StrCat(p.DebugString(), ": uninitialized input"));
  }
  if (DataTypeSize(input.dtype()) == 0) {
    return absl::UnimplementedError(absl::StrCat(
        p.DebugString(), ": collectives of ", DataTypeName(input.dtype()), " are not implemented"));
  }
  if (p.kind == CollectiveKind::kAllReduce) {
    absl::StatusOr<const internal::ReduceKernels*> k = internal::ReduceKernelsFor(input.dtype());
    if (!k.ok()) return AddContext(k.status(), p.DebugString());
  }
  if (p.kind == CollectiveKind::kAllGather && input.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(p.DebugString(), ": all-gather needs inputs of rank >= 1, got a scalar"));
  }
  return absl::OkStatus();
}

// The input is where the device computes: its own memory on a device that
// has some (a GPU's int32 lives on the host and takes the host path).
bool InDeviceMemory(Device* d, const Tensor& input) {
  return input.on_device() || !d->has_device_memory();
}

Allocator* HostAllocatorOf(Device* d) {
  return d->has_device_memory() ? d->host_allocator() : d->allocator();
}

}  // namespace

CollectiveExecutor::CollectiveExecutor(CollectiveTransport* transport,
                                       const AllReduceProvider* all_reduce,
                                       int64_t default_chunk_bytes)
    : transport_(transport),
      all_reduce_(all_reduce),
      default_chunk_bytes_(default_chunk_bytes > 0 ? default_chunk_bytes : 1 << 20),
      host_pool_(internal::NewCollectiveHostPool(kHostPoolBytes)),
      timer_(std::make_unique<internal::CollectiveTimer>()) {}

CollectiveExecutor::~CollectiveExecutor() {
  timer_.reset();  // no timeout runs past here
  std::vector<internal::JoinMember> waiting;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [prefix, join] : joins_) {
      for (auto& m : join->TakeMembers()) waiting.push_back(std::move(m));
    }
    joins_.clear();
  }
  internal::FailMembers(std::move(waiting),
                        absl::CancelledError("collective: the executor was destroyed"));
}

std::string CollectiveExecutor::NextExecution(const CollectiveParams& params) {
  std::string counter =
      absl::StrCat("g", params.group_key, "/i", params.instance_key, "/r", params.rank);
  absl::MutexLock lock(&mu_);
  int64_t n = executions_[counter]++;
  return absl::StrCat("g", params.group_key, "/i", params.instance_key, "/n", n);
}

void CollectiveExecutor::Run(const CollectiveParams& params_in, Device* device, const Tensor& input,
                             Done done) {
  if (absl::Status s = params_in.Validate(); !s.ok()) return done(s);
  CollectiveParams params = params_in;
  if (params.timeout_ms == 0) params.timeout_ms = kDefaultCollectiveTimeoutMs;
  if (params.chunk_bytes == 0) params.chunk_bytes = default_chunk_bytes_;
  // Counted even when the input is refused, so later executions still meet.
  std::string prefix = NextExecution(params);
  auto fail = [&](const absl::Status& s) {
    transport_->Abort(prefix + "/", s);
    done(s);
  };
  if (absl::Status s = CheckInput(params, device, input); !s.ok()) return fail(s);
  // A group of one: the sum, mean, gather or broadcast is the input itself.
  // No implementation is asked: NCCL before 2.29.7 leaves the tail of a
  // one-rank ncclAvg unwritten (NVIDIA/nccl#1950), which made one-GPU
  // mirrored training with fused gradient buckets diverge.
  if (params.group_size() == 1) return done(input);

  if (AllLocal(params)) {
    LocalAllReduceImpl impl;
    if (params.kind == CollectiveKind::kAllReduce && params.communication_hint != "ring" &&
        InDeviceMemory(device, input) && AllOfType(params, device->device_type())) {
      if (all_reduce_ != nullptr) impl = all_reduce_->LocalAllReduceFor(device->device_type());
    }
    internal::JoinMember m;
    m.params = params;
    m.device = device;
    m.original = input;
    m.input = input;
    if (!impl && input.on_device()) {
      absl::StatusOr<Tensor> host = device->CopyToHost(input);
      if (!host.ok()) return fail(AddContext(host.status(), params.DebugString()));
      m.input = *std::move(host);
      m.copy_back = true;
    }
    m.done = std::move(done);
    return Join(prefix, std::move(impl), std::move(m));
  }

  if (params.kind == CollectiveKind::kAllReduce && params.communication_hint != "ring" &&
      InDeviceMemory(device, input) && AllOfType(params, device->device_type())) {
    CrossProcessAllReduceImpl cross;
    if (all_reduce_ != nullptr) cross = all_reduce_->CrossProcessAllReduceFor(device->device_type());
    if (cross) {
      // Handed back with Unimplemented after it took the member: the ring.
      auto on_done = [this, params, prefix, device, input,
                      done](absl::StatusOr<Tensor> out) mutable {
        if (!out.ok() && absl::IsUnimplemented(out.status())) {
          return RunOnRing(std::move(params), prefix, device, input, std::move(done));
        }
        done(std::move(out));
      };
      absl::Status taken = cross(params, prefix, device, input, transport_, std::move(on_done));
      if (taken.ok()) return;
      if (!absl::IsUnimplemented(taken)) {
        return fail(absl::StartsWith(taken.message(), "node '")
                        ? taken
                        : AddContext(taken, params.DebugString()));
      }
    }  // else the ring below
  }
  RunOnRing(std::move(params), prefix, device, input, std::move(done));
}

void CollectiveExecutor::RunOnRing(CollectiveParams params, const std::string& prefix,
                                   Device* device, const Tensor& input, Done done) {
  Tensor host = input;
  const bool copy_back = input.on_device();
  if (copy_back) {
    absl::StatusOr<Tensor> h = device->CopyToHost(input);
    if (!h.ok()) {
      absl::Status s = AddContext(h.status(), params.DebugString());
      transport_->Abort(prefix + "/", s);
      return done(s);
    }
    host = *std::move(h);
  }
  const bool source =
      params.kind == CollectiveKind::kBroadcast && params.rank == params.source_rank;
  std::string debug = params.DebugString();
  // A GPU's results go through its (pinned) host allocator to be copied
  // back; a CPU's come from the caching pool.
  Allocator* scratch = device->has_device_memory() ? nullptr : host_pool_.get();
  internal::RingOptions options{std::move(params), prefix, transport_, HostAllocatorOf(device),
                                scratch};
  internal::RunRing(std::move(options), std::move(host),
                    [done = std::move(done), device, copy_back, source, input,
                     debug = std::move(debug)](absl::StatusOr<Tensor> out) {
                      if (!out.ok()) return done(out.status());
                      if (source) return done(input);
                      if (copy_back) {
                        out = device->CopyFromHost(*out);
                        if (!out.ok()) return done(AddContext(out.status(), debug));
                      }
                      done(std::move(out));
                    });
}

void CollectiveExecutor::Join(const std::string& prefix, LocalAllReduceImpl impl,
                              internal::JoinMember member) {
  std::shared_ptr<internal::LocalJoin> ready;
  absl::Status refused;
  {
    absl::MutexLock lock(&mu_);
    if (auto failed = failed_joins_.find(prefix); failed != failed_joins_.end()) {
      refused = failed->second;
    } else {
      std::shared_ptr<internal::LocalJoin>& join = joins_[prefix];
      if (join == nullptr) {
        join = std::make_shared<internal::LocalJoin>(prefix, member.params.group_size(),
                                                     std::move(impl));
        std::weak_ptr<internal::LocalJoin> weak = join;
        join->timer_id = timer_->Schedule(
            absl::Now() + absl::Milliseconds(member.params.timeout_ms), [this, prefix, weak] {
              if (auto j = weak.lock()) OnJoinTimeout(prefix, j);
            });
      }
      refused = join->Add(std::move(member));  // keeps the member only when OK
      if (refused.ok() && join->complete()) {
        ready = std::move(join);
        joins_.erase(prefix);
        timer_->Cancel(ready->timer_id);
      }
    }
  }
  if (!refused.ok()) {
    auto d = std::move(member.done);
    return d(absl::StartsWith(refused.message(), "node '")
                 ? refused
                 : AddContext(refused, member.params.DebugString()));
  }
  if (ready == nullptr) return;
  if (ready->impl()) {
    internal::RunImplJoin(ready->impl(), ready->TakeMembers());
  } else {
    internal::RunHostJoin(ready->TakeMembers());
  }
}

void CollectiveExecutor::OnJoinTimeout(const std::string& prefix,
                                       const std::shared_ptr<internal::LocalJoin>& join) {
  std::vector<internal::JoinMember> waiting;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    auto it = joins_.find(prefix);
    if (it == joins_.end() || it->second != join) return;
    std::vector<std::string> missing = join->Missing();
    waiting = join->TakeMembers();
    joins_.erase(it);
    if (waiting.empty()) return;
    status = absl::DeadlineExceededError(absl::StrCat(
        "collective: ", absl::StrJoin(missing, ", "), missing.size() == 1 ? " has" : " have",
        " not joined within ", waiting[0].params.timeout_ms, " ms"));
    failed_joins_[prefix] = status;
  }
  internal::FailMembers(std::move(waiting), status);
}

void CollectiveExecutor::ResetGroup(int64_t group_key, const absl::Status& status) {
  const std::string group = absl::StrCat("g", group_key, "/");
  std::vector<internal::JoinMember> waiting;
  {
    absl::MutexLock lock(&mu_);
    absl::erase_if(executions_, [&](const auto& e) { return absl::StartsWith(e.first, group); });
    absl::erase_if(failed_joins_, [&](const auto& e) { return absl::StartsWith(e.first, group); });
    for (auto it = joins_.begin(); it != joins_.end();) {
      if (absl::StartsWith(it->first, group)) {
        timer_->Cancel(it->second->timer_id);
        for (auto& m : it->second->TakeMembers()) waiting.push_back(std::move(m));
        joins_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  internal::FailMembers(std::move(waiting), status);
  transport_->Abort(group, status);
}

}  // namespace sluice
