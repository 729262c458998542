#include "runtime/gpu/internal/nccl_peer_comm.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "runtime/gpu/internal/nccl_util.h"
#include "runtime/gpu/cuda_status.h"

namespace sluice {
namespace internal {
namespace {

constexpr absl::Duration kWatchdogPeriod = absl::Milliseconds(100);
constexpr absl::Duration kInitPoll = absl::Milliseconds(1);
constexpr absl::Duration kInProgressPoll = absl::Microseconds(20);

// The process's communicators by key, and the watchdog thread polling them.
// Never destroyed (communicators live until the process ends).
class PeerCommRegistry {
 public:
  std::shared_ptr<NcclPeerComm> Get(const std::string& key, const CollectiveParams& params,
                                    CollectiveTransport* transport) {
    absl::MutexLock lock(&mu_);
    std::shared_ptr<NcclPeerComm>& comm = comms_[key];
    if (comm == nullptr) {
      comm = std::make_shared<NcclPeerComm>(params, transport);
      if (!watching_) {
        watching_ = true;
        std::thread([this] { Watch(); }).detach();
      }
    }
    return comm;
  }

 private:
  void Watch() {
    for (;;) {
      absl::SleepFor(kWatchdogPeriod);
      std::vector<std::shared_ptr<NcclPeerComm>> comms;
      {
        absl::MutexLock lock(&mu_);
        for (const auto& [key, comm] : comms_) comms.push_back(comm);
      }
      const absl::Time now = absl::Now();
      for (const auto& comm : comms) comm->Poll(now);
    }
  }

  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<NcclPeerComm>> comms_ ABSL_GUARDED_BY(mu_);
  bool watching_ ABSL_GUARDED_BY(mu_) = false;
};

PeerCommRegistry& Registry() {
  static PeerCommRegistry* registry = new PeerCommRegistry();  // never destroyed
  return *registry;
}

absl::Status WithContext(const absl::Status& s, const CollectiveParams& p) {
  if (s.ok() || absl::StartsWith(s.message(), "node '")) return s;
  return AddContext(s, p.DebugString());
}

int64_t TimeoutMs(const CollectiveParams& p) {
  return p.timeout_ms > 0 ? p.timeout_ms : kDefaultCollectiveTimeoutMs;
}

// A host tensor of `n` bytes (DT_UINT8) holding `data`.
Tensor BytesTensor(const void* data, size_t n) {
  Tensor t(DT_UINT8, TensorShape({static_cast<int64_t>(n)}));
  if (n > 0) std::memcpy(t.raw_data(), data, n);
  return t;
}

// The 16 bytes of GPU `ordinal`'s UUID (unique across hosts, unlike a PCI
// bus id).
absl::StatusOr<std::string> GpuUuid(int ordinal) {
  cudaDeviceProp prop;
  if (cudaError_t e = cudaGetDeviceProperties(&prop, ordinal); e != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaStatus(e, absl::StrCat("reading the UUID of GPU ", ordinal));
  }
  return std::string(prop.uuid.bytes, sizeof(prop.uuid.bytes));
}

// What rank 0 sends under the id key when the members share a GPU.
constexpr char kDeclineByte = 0;

// "<execution>\n<dtype>\n<count>": what rank 0 announces.
std::string EncodeOrder(const std::string& execution, DataType dtype, int64_t count) {
  return absl::StrCat(execution, "\n", static_cast<int>(dtype), "\n", count);
}

bool DecodeOrder(const Tensor& t, std::string* execution, DataType* dtype, int64_t* count) {
  if (!t.IsInitialized() || t.on_device() || t.dtype() != DT_UINT8) return false;
  absl::string_view text(static_cast<const char*>(t.raw_data()), t.TotalBytes());
  std::vector<absl::string_view> parts = absl::StrSplit(text, '\n');
  int type = 0;
  if (parts.size() != 3 || parts[0].empty() || !absl::SimpleAtoi(parts[1], &type) ||
      !absl::SimpleAtoi(parts[2], count) || *count < 0) {
    return false;
  }
  *execution = std::string(parts[0]);
  *dtype = static_cast<DataType>(type);
  return true;
}

}  // namespace

absl::StatusOr<std::shared_ptr<NcclPeerComm>> NcclPeerComm::Get(const CollectiveParams& params,
                                                                GpuDevice* gpu,
                                                                CollectiveTransport* transport) {
  const std::string key =
      absl::StrCat(reinterpret_cast<uintptr_t>(transport), "|", params.group_key, "|",
                   absl::StrJoin(params.group_devices, ","), "|", params.rank, "|", gpu->ordinal());
  return Registry().Get(key, params, transport);
}

NcclPeerComm::NcclPeerComm(const CollectiveParams& params, CollectiveTransport* transport)
    : group_key_(params.group_key),
      devices_(params.group_devices),
      rank_(params.rank),
      transport_(transport) {}

NcclPeerComm::~NcclPeerComm() {
  absl::MutexLock lock(&mu_);
  if (comm_ != nullptr) (void)ncclCommAbort(comm_);
}

void NcclPeerComm::RunActions(Actions& actions) {
  for (auto& action : actions) action();
  actions.clear();
}

std::string NcclPeerComm::Describe() const {
  return absl::StrCat("NCCL communicator of group ", group_key_, " (rank ", rank_, " of ",
                      devices_.size(), ", ", devices_[rank_], ")");
}

std::string NcclPeerComm::IdKey() const { return absl::StrCat("g", group_key_, "/nccl_id"); }

std::string NcclPeerComm::UuidKey(int rank) const {
  return absl::StrCat("g", group_key_, "/nccl_uuid/", rank);
}

std::string NcclPeerComm::OrderKey(int64_t seq) const {
  return absl::StrCat("g", group_key_, "/nccl_order/", seq);
}

void NcclPeerComm::Enqueue(NcclMember member) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kFailed) {
      actions.push_back(
          [done = std::move(member.done), s = WithContext(failed_, member.params)] { done(s); });
    } else if (state_ == State::kDeclined) {
      actions.push_back([done = std::move(member.done), s = Declined()] { done(s); });
    } else if (!leader() && waiting_.contains(member.execution)) {
      actions.push_back(
          [done = std::move(member.done), s = absl::FailedPreconditionError(absl::StrCat(
                                              member.params.DebugString(), ": execution '",
                                              member.execution, "' joined twice"))] { done(s); });
    } else {
      const int ordinal = member.device->ordinal();
      const int64_t timeout_ms = TimeoutMs(member.params);
      Waiting w{std::move(member), absl::Now() + absl::Milliseconds(timeout_ms)};
      if (leader()) {
        arrivals_.push_back(std::move(w));
      } else {
        std::string execution = w.member.execution;
        waiting_.emplace(std::move(execution), std::move(w));
      }
      if (state_ == State::kNew) StartLocked(ordinal, timeout_ms, actions);
      PumpLocked(actions);
    }
  }
  RunActions(actions);
}

void NcclPeerComm::StartLocked(int ordinal, int64_t timeout_ms, Actions& actions) {
  state_ = State::kStarting;
  const absl::Time deadline = absl::Now() + absl::Milliseconds(timeout_ms);
  std::shared_ptr<NcclPeerComm> self = shared_from_this();
  absl::StatusOr<std::string> uuid = GpuUuid(ordinal);
  if (!uuid.ok()) return FailLocked(AddContext(uuid.status(), Describe()), actions);
  if (leader()) {
    uuids_.assign(devices_.size(), "");
    uuids_[0] = *uuid;
    uuids_missing_ = static_cast<int>(devices_.size()) - 1;
    for (int r = 1; r < static_cast<int>(devices_.size()); ++r) {
      actions.push_back([self, r, ordinal, deadline, timeout_ms] {
        self->transport_->Recv(self->devices_[r], self->devices_[0], self->UuidKey(r), timeout_ms,
                               [self, r, ordinal, deadline](absl::StatusOr<Tensor> t) {
                                 self->OnUuid(r, std::move(t), ordinal, deadline);
                               });
      });
    }
    return;
  }
  const Tensor mine = BytesTensor(uuid->data(), uuid->size());
  actions.push_back([self, mine, ordinal, deadline, timeout_ms] {
    self->transport_->Send(self->devices_[0], self->UuidKey(self->rank_), mine, timeout_ms,
                           [self](absl::Status s) {
                             if (s.ok()) return;
                             self->Fail(AddContext(
                                 s, absl::StrCat(self->Describe(),
                                                 ": sending this GPU's UUID to rank 0 (",
                                                 self->devices_[0], ")")));
                           });
    self->transport_->Recv(self->devices_[0], self->devices_[self->rank_], self->IdKey(),
                           timeout_ms, [self, ordinal, deadline](absl::StatusOr<Tensor> id) {
                             self->OnId(std::move(id), ordinal, deadline);
                           });
  });
}

void NcclPeerComm::OnUuid(int r, absl::StatusOr<Tensor> uuid, int ordinal, absl::Time deadline) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != State::kStarting) return;  // failed meanwhile
    if (!uuid.ok()) {
      FailLocked(AddContext(uuid.status(), absl::StrCat(Describe(), ": receiving the GPU UUID of rank ",
                                                        r, " (", devices_[r], ")")),
                 actions);
    } else if (!uuid->IsInitialized() || uuid->on_device() || uuid->dtype() != DT_UINT8) {
      FailLocked(absl::InvalidArgumentError(absl::StrCat(Describe(), ": rank ", r,
                                                         " sent a GPU UUID of ",
                                                         DataTypeName(uuid->dtype()))),
                 actions);
    } else {
      uuids_[r] = std::string(static_cast<const char*>(uuid->raw_data()), uuid->TotalBytes());
      if (--uuids_missing_ == 0) {
        const bool shared = MembersShareAGpu(uuids_);
        std::shared_ptr<NcclPeerComm> self = shared_from_this();
        if (shared) {
          const int64_t timeout_ms =
              std::max<int64_t>(1, absl::ToInt64Milliseconds(deadline - absl::Now()));
          const Tensor no = BytesTensor(&kDeclineByte, 1);
          actions.push_back([self, no, timeout_ms] {
            for (size_t k = 1; k < self->devices_.size(); ++k) {
              self->transport_->Send(self->devices_[k], self->IdKey(), no, timeout_ms,
                                     [](absl::Status) {});  // a dead peer fails its own way
            }
          });
          DeclineLocked(actions);
        } else {
          actions.push_back([self, ordinal, deadline] {
            std::thread([self, ordinal, deadline] {
              self->InitThread(ordinal, nullptr, deadline);
            }).detach();
          });
        }
      }
    }
  }
  RunActions(actions);
}

absl::Status NcclPeerComm::Declined() const {
  return absl::UnimplementedError(
      absl::StrCat(Describe(), ": members of [", absl::StrJoin(devices_, ", "),
                   "] share a GPU, which NCCL cannot span; the CPU ring takes the group"));
}

void NcclPeerComm::DeclineLocked(Actions& actions) {
  if (state_ == State::kFailed || state_ == State::kDeclined) return;
  state_ = State::kDeclined;
  const absl::Status no = Declined();
  for (Waiting& w : arrivals_) {
    actions.push_back([done = std::move(w.member.done), no] { done(no); });
  }
  arrivals_.clear();
  for (auto& [execution, w] : waiting_) {
    actions.push_back([done = std::move(w.member.done), no] { done(no); });
  }
  waiting_.clear();
}

void NcclPeerComm::OnId(absl::StatusOr<Tensor> id, int ordinal, absl::Time deadline) {
  if (!id.ok()) {
    return Fail(AddContext(
        id.status(),
        absl::StrCat(Describe(), ": receiving the NCCL id from rank 0 (", devices_[0], ")")));
  }
  if (id->IsInitialized() && !id->on_device() && id->dtype() == DT_UINT8 &&
      id->TotalBytes() == 1) {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      DeclineLocked(actions);
    }
    return RunActions(actions);
  }
  if (!id->IsInitialized() || id->on_device() || id->dtype() != DT_UINT8 ||
      id->TotalBytes() != sizeof(ncclUniqueId)) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        Describe(), ": rank 0 (", devices_[0], ") sent an NCCL id of ", DataTypeName(id->dtype()),
        " ", id->shape().DebugString(), ", not ", NCCL_UNIQUE_ID_BYTES, " bytes")));
  }
  ncclUniqueId value;
  std::memcpy(&value, id->raw_data(), sizeof(value));
  std::shared_ptr<NcclPeerComm> self = shared_from_this();
  std::thread([self, ordinal, value, deadline] {
    self->InitThread(ordinal, &value, deadline);
  }).detach();
}

void NcclPeerComm::InitThread(int ordinal, const ncclUniqueId* given_id, absl::Time deadline) {
  ncclUniqueId id;
  if (given_id != nullptr) {
    id = *given_id;
  } else {
    ncclResult_t made = ncclGetUniqueId(&id);
    if (made != ncclSuccess) {
      return Fail(NcclStatus(made, nullptr, absl::StrCat(Describe(), ": ncclGetUniqueId")));
    }
    const Tensor bytes = BytesTensor(&id, sizeof(id));
    const int64_t timeout_ms =
        std::max<int64_t>(1, absl::ToInt64Milliseconds(deadline - absl::Now()));
    std::shared_ptr<NcclPeerComm> self = shared_from_this();
    for (size_t r = 1; r < devices_.size(); ++r) {
      transport_->Send(devices_[r], IdKey(), bytes, timeout_ms, [self, r](absl::Status s) {
        if (s.ok()) return;
        self->Fail(AddContext(s, absl::StrCat(self->Describe(), ": sending the NCCL id to rank ", r,
                                              " (", self->devices_[r], ")")));
      });
    }
  }
  if (cudaError_t e = cudaSetDevice(ordinal); e != cudaSuccess) {
    (void)cudaGetLastError();
    return Fail(CudaStatus(e, absl::StrCat(Describe(), ": cudaSetDevice(", ordinal, ")")));
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // the wait below keeps a deadline; ncclCommAbort can stop it
  ncclComm_t comm = nullptr;
  ncclResult_t started =
      ncclCommInitRankConfig(&comm, static_cast<int>(devices_.size()), id, rank_, &config);
  if (started != ncclSuccess && started != ncclInProgress) {
    absl::Status s =
        NcclStatus(started, comm, absl::StrCat(Describe(), ": ncclCommInitRankConfig"));
    if (comm != nullptr) (void)ncclCommAbort(comm);
    return Fail(s);
  }
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kFailed) {
      (void)ncclCommAbort(comm);
      return;
    }
    comm_ = comm;
  }
  for (;;) {
    Actions actions;
    bool finished = true;
    {
      absl::MutexLock lock(&mu_);
      if (state_ == State::kFailed) return;  // FailLocked aborted comm_
      ncclResult_t state = ncclSuccess;
      ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
      if (query == ncclSuccess) query = state;
      if (query == ncclSuccess) {
        state_ = State::kReady;
        PumpLocked(actions);
      } else if (query != ncclInProgress) {
        FailLocked(
            NcclStatus(query, comm_, absl::StrCat(Describe(), ": creating the communicator")),
            actions);
      } else if (absl::Now() > deadline) {
        FailLocked(absl::DeadlineExceededError(absl::StrCat(Describe(), ": not every member of [",
                                                            absl::StrJoin(devices_, ", "),
                                                            "] joined the communicator in time")),
                   actions);
      } else {
        finished = false;
      }
    }
    RunActions(actions);
    if (finished) return;
    absl::SleepFor(kInitPoll);
  }
}

void NcclPeerComm::PumpLocked(Actions& actions) {
  if (state_ != State::kReady) return;
  std::shared_ptr<NcclPeerComm> self = shared_from_this();
  if (leader()) {
    while (!arrivals_.empty() && state_ == State::kReady) {
      NcclMember m = std::move(arrivals_.front().member);
      arrivals_.pop_front();
      const int64_t seq = next_seq_++;
      const std::string text = EncodeOrder(m.execution, m.input.dtype(), m.input.NumElements());
      const Tensor order = BytesTensor(text.data(), text.size());
      const int64_t timeout_ms = TimeoutMs(m.params);
      actions.push_back([self, seq, order, timeout_ms] {
        for (size_t r = 1; r < self->devices_.size(); ++r) {
          self->transport_->Send(
              self->devices_[r], self->OrderKey(seq), order, timeout_ms,
              [self, seq, r](absl::Status s) {
                if (s.ok()) return;
                self->Fail(
                    AddContext(s, absl::StrCat(self->Describe(), ": announcing all-reduce ", seq,
                                               " to rank ", r, " (", self->devices_[r], ")")));
              });
        }
      });
      LaunchLocked(std::move(m), actions);
    }
    return;
  }
  // Followers launch in rank 0's order, each member when it has arrived.
  while (!orders_.empty() && state_ == State::kReady) {
    auto it = waiting_.find(orders_.front().execution);
    if (it == waiting_.end()) return;  // its member has not arrived yet
    const Order order = std::move(orders_.front());
    orders_.pop_front();
    NcclMember m = std::move(it->second.member);
    waiting_.erase(it);
    if (m.input.dtype() != order.dtype || m.input.NumElements() != order.count) {
      absl::Status s = absl::InvalidArgumentError(absl::StrCat(
          m.params.DebugString(), ": members disagree: rank 0 (", devices_[0], ") all-reduces ",
          order.count, " elements of ", DataTypeName(order.dtype), " but rank ", rank_, " (",
          devices_[rank_], ") ", m.input.NumElements(), " of ", DataTypeName(m.input.dtype())));
      actions.push_back([done = std::move(m.done), s] { done(s); });
      FailLocked(s, actions);
      return;
    }
    LaunchLocked(std::move(m), actions);
  }
  if (state_ != State::kReady || receiving_ || waiting_.empty()) return;
  // A member waits and no order is pending: receive the next one.
  receiving_ = true;
  const int64_t seq = next_seq_;
  const int64_t timeout_ms = TimeoutMs(waiting_.begin()->second.member.params);
  actions.push_back([self, seq, timeout_ms] {
    self->transport_->Recv(
        self->devices_[0], self->devices_[self->rank_], self->OrderKey(seq), timeout_ms,
        [self, seq](absl::StatusOr<Tensor> order) { self->OnOrder(seq, std::move(order)); });
  });
}

void NcclPeerComm::OnOrder(int64_t seq, absl::StatusOr<Tensor> order) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    receiving_ = false;
    if (state_ == State::kFailed) {
      // nothing: the members were failed already
    } else if (!order.ok()) {
      FailLocked(
          AddContext(order.status(), absl::StrCat(Describe(), ": waiting for rank 0 (", devices_[0],
                                                  ") to announce all-reduce ", seq)),
          actions);
    } else {
      Order o;
      if (!DecodeOrder(*order, &o.execution, &o.dtype, &o.count)) {
        FailLocked(absl::InternalError(absl::StrCat(Describe(), ": rank 0 (", devices_[0],
                                                    ") announced all-reduce ", seq,
                                                    " in a form this process cannot read")),
                   actions);
      } else {
        orders_.push_back(std::move(o));
        next_seq_ = seq + 1;
        PumpLocked(actions);
      }
    }
  }
  RunActions(actions);
}

absl::Status NcclPeerComm::WaitLocked(absl::Time deadline, absl::string_view what) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
    if (query == ncclSuccess) query = state;
    if (query != ncclInProgress) return NcclStatus(query, comm_, what);
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(what, ": NCCL still busy setting it up at the deadline"));
    }
    absl::SleepFor(kInProgressPoll);
  }
}

void NcclPeerComm::LaunchLocked(NcclMember m, Actions& actions) {
  const std::string what =
      absl::StrCat(m.params.DebugString(), ": NCCL all-reduce on ", m.device->name());
  auto fail = [&](const absl::Status& s) {
    actions.push_back([done = std::move(m.done), s = WithContext(s, m.params)] { done(s); });
    FailLocked(s, actions);  // this rank is out of step with the others now
  };
  absl::StatusOr<ncclDataType_t> type = NcclDataType(m.input.dtype());
  if (!type.ok()) return fail(AddContext(type.status(), what));
  absl::StatusOr<ncclRedOp_t> op = NcclReduceOp(m.params.reduce_op);
  if (!op.ok()) return fail(AddContext(op.status(), what));
  if (absl::Status s = m.device->Activate(); !s.ok()) return fail(AddContext(s, what));
  absl::StatusOr<Tensor> out =
      Tensor::Allocate(m.device->allocator(), m.input.dtype(), m.input.shape());
  if (!out.ok()) return fail(AddContext(out.status(), what));
  const int64_t count = m.input.NumElements();
  if (count == 0) {  // every rank has 0 (orders carry the count): nothing to launch
    actions.push_back([done = std::move(m.done), out = *std::move(out)] { done(out); });
    return;
  }
  const absl::Time deadline = absl::Now() + absl::Milliseconds(TimeoutMs(m.params));
  ncclResult_t r = ncclAllReduce(m.input.raw_data(), out->raw_data(), static_cast<size_t>(count),
                                 *type, *op, comm_, m.device->compute_stream());
  absl::Status launched = NcclStatus(r, comm_, what);
  if (r == ncclInProgress) launched = WaitLocked(deadline, what);
  if (!launched.ok()) return fail(launched);
  const uint64_t id = next_op_++;
  in_flight_[id] = InFlight{deadline, m.execution};
  std::shared_ptr<NcclPeerComm> self = shared_from_this();
  actions.push_back([self, id, device = m.device, out = *std::move(out), params = m.params,
                     done = std::move(m.done)] {
    device->ThenExecute([self, id, out, params, done](absl::Status s) {
      self->Finished(id, std::move(s), out, params, done);
    });
  });
}

void NcclPeerComm::Finished(uint64_t op, absl::Status status, Tensor output,
                            const CollectiveParams& params,
                            std::function<void(absl::StatusOr<Tensor>)> done) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    in_flight_.erase(op);
    if (!status.ok()) {
      status = AddContext(status, absl::StrCat(Describe(), ": the all-reduce's stream"));
      FailLocked(status, actions);
    } else if (state_ == State::kFailed) {
      status = failed_;  // aborted while it ran: the output may be partial
    } else if (comm_ != nullptr) {
      ncclResult_t state = ncclSuccess;
      ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
      if (query == ncclSuccess) query = state;
      if (query != ncclSuccess && query != ncclInProgress) {
        status = NcclStatus(query, comm_, Describe());
        FailLocked(status, actions);
      }
    }
  }
  RunActions(actions);
  if (!status.ok()) return done(WithContext(status, params));
  done(std::move(output));
}

void NcclPeerComm::Poll(absl::Time now) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kFailed) return;
    absl::Status failure;
    if (!in_flight_.empty() && comm_ != nullptr) {
      ncclResult_t state = ncclSuccess;
      ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
      if (query == ncclSuccess) query = state;
      if (query != ncclSuccess && query != ncclInProgress) {
        failure = NcclStatus(query, comm_, Describe());
      }
    }
    for (const auto& [op, f] : in_flight_) {
      if (!failure.ok() || now <= f.deadline) continue;
      failure = absl::DeadlineExceededError(absl::StrCat(
          Describe(), ": all-reduce '", f.execution, "' did not complete in time; a member of [",
          absl::StrJoin(devices_, ", "), "] is not taking part (the communicator was aborted)"));
    }
    for (const Waiting& w : arrivals_) {
      if (!failure.ok() || now <= w.deadline) continue;
      failure = absl::DeadlineExceededError(
          absl::StrCat(Describe(), ": '", w.member.execution,
                       "' waited too long for the communicator (members [",
                       absl::StrJoin(devices_, ", "), "])"));
    }
    for (const auto& [execution, w] : waiting_) {
      if (!failure.ok() || now <= w.deadline) continue;
      const std::string blocking =
          orders_.empty() ? absl::StrCat("its turn from rank 0 (", devices_[0], ")")
                          : absl::StrCat("'", orders_.front().execution,
                                         "', which rank 0 launched before it, to reach this rank");
      failure = absl::DeadlineExceededError(
          absl::StrCat(Describe(), ": '", execution, "' waited too long for ", blocking));
    }
    if (!failure.ok()) FailLocked(failure, actions);
  }
  RunActions(actions);
}

void NcclPeerComm::FailLocked(const absl::Status& status, Actions& actions) {
  if (state_ == State::kFailed) return;
  state_ = State::kFailed;
  failed_ = status;
  if (comm_ != nullptr) {
    (void)ncclCommAbort(comm_);  // stops kernels in flight; their callbacks see failed_
    comm_ = nullptr;
  }
  for (Waiting& w : arrivals_) {
    actions.push_back(
        [done = std::move(w.member.done), s = WithContext(status, w.member.params)] { done(s); });
  }
  arrivals_.clear();
  for (auto& [execution, w] : waiting_) {
    actions.push_back(
        [done = std::move(w.member.done), s = WithContext(status, w.member.params)] { done(s); });
  }
  waiting_.clear();
  orders_.clear();
}

void NcclPeerComm::Fail(const absl::Status& status) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    FailLocked(status, actions);
  }
  RunActions(actions);
}

}  // namespace internal
}  // namespace sluice
