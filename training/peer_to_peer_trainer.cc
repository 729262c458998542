#include "training/peer_to_peer_trainer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "graph/types.h"

namespace sluice {
namespace {

Tensor Zeros(DataType dtype, const TensorShape& shape) {
  Tensor t(dtype, shape);
  if (t.TotalBytes() > 0) std::memset(t.raw_data(), 0, t.TotalBytes());
  return t;
}

}  // namespace

PeerToPeerTrainer::PeerToPeerTrainer(Session* session, PeerToPeerModel model,
                                     PeerToPeerTrainerOptions options)
    : session_(session), model_(std::move(model)), options_(options) {
  newest_.assign(model_.peers.size(), -1);
  for (const Output& v : model_.replica.variables) {
    zero_gradients_.push_back(Zeros(BaseType(v.dtype()), v.shape()));
  }
}

std::string PeerToPeerTrainer::PeerTask(int peer_position) const {
  const std::string& device = model_.peers[peer_position].device;
  const size_t at = device.find("/device:");
  return absl::StrCat("worker ", model_.peers[peer_position].worker, " (",
                      at == std::string::npos ? device : device.substr(0, at), ")");
}

absl::StatusOr<PeerToPeerTrainer::Probe> PeerToPeerTrainer::RunProbe() {
  std::vector<Output> fetches;
  for (const PeerQueue& p : model_.peers) {
    fetches.push_back(p.is_closed);
    fetches.push_back(p.size);
  }
  Probe probe;
  if (fetches.empty()) return probe;
  ASSIGN_OR_RETURN(std::vector<Tensor> got,
                   session_->Run({}, fetches, {}, {.timeout_in_ms = options_.peer_timeout_ms}));
  for (size_t i = 0; i < model_.peers.size(); ++i) {
    probe.closed.push_back(got[2 * i].scalar<bool>());
    probe.size.push_back(got[2 * i + 1].scalar<int32_t>());
  }
  return probe;
}

absl::Status PeerToPeerTrainer::RecordTaken(const std::vector<Tensor>& steps) {
  for (size_t i = 0; i < steps.size(); ++i) {
    const int64_t n = steps[i].NumElements();
    const int64_t* s = steps[i].flat<int64_t>().data();
    for (int64_t k = 0; k < n; ++k) {
      if (s[k] != newest_[i] + 1) {
        return absl::InternalError(absl::StrCat(
            "peer-to-peer worker ", model_.worker_index, ": took the gradient of step ", s[k],
            " from ", PeerTask(static_cast<int>(i)), " after its step ", newest_[i]));
      }
      newest_[i] = s[k];
    }
    peer_gradients_applied_ += n;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> PeerToPeerTrainer::RunTaking(
    std::vector<std::pair<Output, Tensor>> feeds, const std::vector<int64_t>& take,
    std::vector<Output> fetches, Node* target) {
  const size_t first_steps = fetches.size();
  for (size_t i = 0; i < model_.peers.size(); ++i) {
    feeds.push_back({model_.peers[i].take, Tensor::Scalar<int32_t>(static_cast<int32_t>(take[i]))});
    fetches.push_back(model_.peers[i].steps);
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> got,
                   session_->Run(feeds, fetches, {target},
                                 {.timeout_in_ms = options_.peer_timeout_ms}));
  std::vector<Tensor> steps(got.begin() + static_cast<std::ptrdiff_t>(first_steps), got.end());
  RETURN_IF_ERROR(RecordTaken(steps));
  got.resize(first_steps);
  return got;
}

absl::StatusOr<PeerStepStats> PeerToPeerTrainer::Step(
    const std::vector<std::pair<Output, Tensor>>& feeds) {
  if (finished_) return absl::FailedPreconditionError("peer-to-peer: Step after Finish");
  const int64_t t = next_step_;
  const std::string where =
      absl::StrCat("peer-to-peer worker ", model_.worker_index, ", step ", t);
  absl::StatusOr<Probe> probed = RunProbe();
  if (!probed.ok()) return AddContext(probed.status(), where);
  const Probe& probe = *probed;

  // Take everything that has arrived, and from each running peer at least
  // up to its step t - S (waiting for it inside the run).
  std::vector<int64_t> take(model_.peers.size());
  std::vector<std::string> waiting;
  for (size_t i = 0; i < take.size(); ++i) {
    const int64_t need = probe.closed[i] ? 0 : (t - model_.max_staleness) - newest_[i];
    take[i] = std::max(probe.size[i], need);
    if (take[i] > probe.size[i]) {
      waiting.push_back(absl::StrCat(PeerTask(static_cast<int>(i)), " (step ", newest_[i] + take[i],
                                     ", has sent up to ", newest_[i] + probe.size[i], ")"));
    }
  }
  std::vector<std::pair<Output, Tensor>> all = feeds;
  all.push_back({model_.step, Tensor::Scalar<int64_t>(t)});
  const int64_t applied_before = peer_gradients_applied_;
  absl::StatusOr<std::vector<Tensor>> got =
      RunTaking(std::move(all), take, {model_.replica.loss}, model_.train);
  if (!got.ok()) {
    if (absl::IsDeadlineExceeded(got.status()) && !waiting.empty()) {
      return absl::DeadlineExceededError(absl::StrCat(
          where, ": no gradients within ", options_.peer_timeout_ms,
          " ms from ", absl::StrJoin(waiting, ", "), ": ", got.status().message()));
    }
    return AddContext(got.status(), where);
  }

  PeerStepStats stats;
  stats.step = t;
  stats.loss = (*got)[0].scalar<float>();
  stats.peer_gradients = static_cast<int>(peer_gradients_applied_ - applied_before);
  for (size_t i = 0; i < newest_.size(); ++i) {
    if (probe.closed[i]) continue;
    stats.staleness = std::max(stats.staleness, static_cast<int>(t - newest_[i]));
  }
  max_staleness_seen_ = std::max(max_staleness_seen_, stats.staleness);
  ++next_step_;
  return stats;
}

absl::Status PeerToPeerTrainer::Finish() {
  if (finished_) return absl::OkStatus();
  finished_ = true;
  const std::string where = absl::StrCat("peer-to-peer worker ", model_.worker_index, ", finish");
  RETURN_IF_ERROR(AddContext(
      session_->Run({}, {}, {model_.close_outgoing}, {.timeout_in_ms = options_.peer_timeout_ms})
          .status(),
      where));
  const absl::Time deadline = absl::Now() + absl::Milliseconds(options_.peer_timeout_ms);
  while (true) {
    absl::StatusOr<Probe> probed = RunProbe();
    if (!probed.ok()) return AddContext(probed.status(), where);
    const Probe& probe = *probed;
    bool any = false, all_closed = true;
    for (size_t i = 0; i < probe.size.size(); ++i) {
      any = any || probe.size[i] > 0;
      all_closed = all_closed && probe.closed[i];
    }
    if (!any && all_closed) return absl::OkStatus();
    if (any) {
      std::vector<std::pair<Output, Tensor>> zeros;
      for (size_t v = 0; v < zero_gradients_.size(); ++v) {
        zeros.push_back({model_.own_gradients[v], zero_gradients_[v]});
      }
      RETURN_IF_ERROR(
          AddContext(RunTaking(std::move(zeros), probe.size, {}, model_.apply).status(), where));
      continue;
    }
    if (absl::Now() > deadline) {
      std::vector<std::string> running;
      for (size_t i = 0; i < probe.closed.size(); ++i) {
        if (!probe.closed[i]) running.push_back(PeerTask(static_cast<int>(i)));
      }
      return absl::DeadlineExceededError(absl::StrCat(
          where, ": ", absl::StrJoin(running, ", "), " did not finish within ",
          options_.peer_timeout_ms, " ms"));
    }
    absl::SleepFor(absl::Milliseconds(options_.poll_ms));
  }
}

}  // namespace sluice
