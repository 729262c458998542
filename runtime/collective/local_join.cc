#include "runtime/collective/local_join.h"

#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "runtime/collective/reduce_kernels.h"

namespace sluice {
namespace internal {
namespace {

const char* KindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all-reduce";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kAllGather:
      return "all-gather";
  }
  return "collective";
}

std::string Describe(const JoinMember& m) {
  std::string s = absl::StrCat(KindName(m.params.kind), " of ", DataTypeName(m.input.dtype()), " ",
                               m.input.shape().DebugString());
  if (m.params.kind == CollectiveKind::kBroadcast) {
    absl::StrAppend(&s, " from rank ", m.params.source_rank);
  }
  if (m.params.kind == CollectiveKind::kAllReduce && m.params.reduce_op == ReduceOp::kMean) {
    absl::StrAppend(&s, " (mean)");
  }
  return s;
}

bool SameAfterDim0(const TensorShape& a, const TensorShape& b) {
  if (a.rank() < 1 || a.rank() != b.rank()) return false;
  for (int i = 1; i < a.rank(); ++i) {
    if (a.dim(i) != b.dim(i)) return false;
  }
  return true;
}

absl::Status CheckAgreement(const std::vector<JoinMember>& m) {
  const JoinMember& a = m[0];
  for (size_t i = 1; i < m.size(); ++i) {
    const JoinMember& b = m[i];
    bool same = a.params.kind == b.params.kind && a.input.dtype() == b.input.dtype();
    if (same && a.params.kind == CollectiveKind::kAllGather) {
      same = SameAfterDim0(a.input.shape(), b.input.shape());
    } else if (same) {
      same = a.input.shape() == b.input.shape();
    }
    if (a.params.kind == CollectiveKind::kBroadcast) {
      same = same && a.params.source_rank == b.params.source_rank;
    }
    if (a.params.kind == CollectiveKind::kAllReduce) {
      same = same && a.params.reduce_op == b.params.reduce_op;
    }
    if (!same) {
      return absl::InvalidArgumentError(
          absl::StrCat(a.params.DebugString(), ": members disagree: rank ", a.params.rank, " (",
                       a.device->name(), ") runs ", Describe(a), " but rank ", b.params.rank, " (",
                       b.device->name(), ") runs ", Describe(b)));
    }
  }
  return absl::OkStatus();
}

Allocator* HostAllocatorOf(Device* d) {
  return d->has_device_memory() ? d->host_allocator() : d->allocator();
}

absl::StatusOr<Tensor> CopyFor(const JoinMember& m, const Tensor& host) {
  ASSIGN_OR_RETURN(Tensor t,
                   Tensor::Allocate(HostAllocatorOf(m.device), host.dtype(), host.shape()));
  if (host.TotalBytes() > 0) std::memcpy(t.raw_data(), host.raw_data(), host.TotalBytes());
  return t;
}

// The result (host memory, from member 0's allocator) for all-reduce and
// all-gather; the source's input for broadcast.
absl::StatusOr<Tensor> Compute(const std::vector<JoinMember>& m) {
  const CollectiveParams& p = m[0].params;
  const Tensor& first = m[0].input;
  Allocator* alloc = HostAllocatorOf(m[0].device);
  switch (p.kind) {
    case CollectiveKind::kBroadcast:
      return m[p.source_rank].input;
    case CollectiveKind::kAllGather: {
      TensorShape shape = first.shape();
      int64_t rows = 0;
      for (const JoinMember& x : m) rows += x.input.dim_size(0);
      shape.set_dim(0, rows);
      ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(alloc, first.dtype(), shape));
      char* dst = static_cast<char*>(out.raw_data());
      for (const JoinMember& x : m) {
        const size_t bytes = x.input.TotalBytes();
        if (bytes > 0) std::memcpy(dst, x.input.raw_data(), bytes);
        dst += bytes;
      }
      return out;
    }
    case CollectiveKind::kAllReduce:
      break;
  }
  ASSIGN_OR_RETURN(const ReduceKernels* k, ReduceKernelsFor(first.dtype()));
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(alloc, first.dtype(), first.shape()));
  const int64_t n = first.NumElements();
  if (n == 0) return out;
  if (m.size() == 1) {
    std::memcpy(out.raw_data(), first.raw_data(), first.TotalBytes());
  } else {
    k->sum(out.raw_data(), first.raw_data(), m[1].input.raw_data(), n);
    for (size_t i = 2; i < m.size(); ++i) k->add(out.raw_data(), m[i].input.raw_data(), n);
  }
  if (p.reduce_op == ReduceOp::kMean && m.size() > 1) {
    k->divide(out.raw_data(), n, static_cast<int64_t>(m.size()));
  }
  return out;
}

absl::Status WithContext(const absl::Status& s, const CollectiveParams& p) {
  if (s.ok() || absl::StartsWith(s.message(), "node '")) return s;
  return AddContext(s, p.DebugString());
}

// Passes a host result to the member, through its device when copy_back.
void Give(JoinMember& m, absl::StatusOr<Tensor> host) {
  if (host.ok() && m.copy_back) host = m.device->CopyFromHost(*host);
  if (!host.ok()) host = WithContext(host.status(), m.params);
  auto done = std::move(m.done);
  done(std::move(host));
}

}  // namespace

LocalJoin::LocalJoin(std::string prefix, int group_size, LocalAllReduceImpl impl)
    : prefix_(std::move(prefix)), impl_(std::move(impl)), members_(group_size) {}

absl::Status LocalJoin::Add(JoinMember&& member) {
  JoinMember& slot = members_[member.params.rank];
  if (slot.done) {
    return absl::FailedPreconditionError(absl::StrCat(member.params.DebugString(), ": rank ",
                                                      member.params.rank, " joined execution '",
                                                      prefix_, "' twice"));
  }
  slot = std::move(member);
  ++arrived_;
  return absl::OkStatus();
}

std::vector<std::string> LocalJoin::Missing() const {
  std::vector<std::string> missing;
  const JoinMember* any = nullptr;
  for (const JoinMember& m : members_) {
    if (m.done) any = &m;
  }
  for (size_t r = 0; r < members_.size(); ++r) {
    if (members_[r].done) continue;
    missing.push_back(any == nullptr
                          ? absl::StrCat("rank ", r)
                          : absl::StrCat("rank ", r, " (", any->params.group_devices[r], ")"));
  }
  return missing;
}

std::vector<JoinMember> LocalJoin::TakeMembers() {
  std::vector<JoinMember> out;
  for (JoinMember& m : members_) {
    if (m.done) out.push_back(std::move(m));
    m = JoinMember();
  }
  arrived_ = 0;
  return out;
}

void FailMembers(std::vector<JoinMember> members, const absl::Status& status) {
  for (JoinMember& m : members) {
    auto done = std::move(m.done);
    done(WithContext(status, m.params));
  }
}

namespace {

// What RunImplJoin does when its implementation declines the members: their
// device inputs go to the host, the host join computes, the results go back.
void RunOnHost(std::vector<JoinMember> m) {
  for (JoinMember& x : m) {
    if (!x.input.on_device()) continue;
    absl::StatusOr<Tensor> host = x.device->CopyToHost(x.input);
    if (!host.ok()) return FailMembers(std::move(m), host.status());
    x.input = *std::move(host);
    x.copy_back = true;
  }
  RunHostJoin(std::move(m));
}

}  // namespace

void RunHostJoin(std::vector<JoinMember> m) {
  if (absl::Status s = CheckAgreement(m); !s.ok()) return FailMembers(std::move(m), s);
  absl::StatusOr<Tensor> result = Compute(m);
  if (!result.ok()) return FailMembers(std::move(m), result.status());
  const CollectiveParams& p = m[0].params;
  const bool broadcast = p.kind == CollectiveKind::kBroadcast;
  // Member 0 last: the others copy from its result.
  for (size_t i = m.size(); i-- > 0;) {
    if (broadcast && static_cast<int>(i) == p.source_rank) {
      auto done = std::move(m[i].done);
      done(m[i].original);
    } else if (!broadcast && i == 0) {
      Give(m[i], *result);  // computed in member 0's memory
    } else {
      Give(m[i], CopyFor(m[i], *result));
    }
  }
}

void RunImplJoin(const LocalAllReduceImpl& impl, std::vector<JoinMember> m) {
  if (absl::Status s = CheckAgreement(m); !s.ok()) return FailMembers(std::move(m), s);
  std::vector<Device*> devices;
  std::vector<Tensor> inputs;
  for (const JoinMember& x : m) {
    devices.push_back(x.device);
    inputs.push_back(x.input);
  }
  CollectiveParams params = m[0].params;
  auto members = std::make_shared<std::vector<JoinMember>>(std::move(m));
  impl(params, devices, inputs, [members](absl::StatusOr<std::vector<Tensor>> outs) {
    if (outs.ok() && outs->size() != members->size()) {
      outs = absl::InternalError(absl::StrCat("the local all-reduce returned ", outs->size(),
                                              " outputs for ", members->size(), " members"));
    }
    if (absl::IsUnimplemented(outs.status())) return RunOnHost(std::move(*members));
    if (!outs.ok()) return FailMembers(std::move(*members), outs.status());
    for (size_t i = 0; i < members->size(); ++i) {
      auto done = std::move((*members)[i].done);
      done(std::move((*outs)[i]));
    }
  });
}

}  // namespace internal
}  // namespace sluice
