#include "training/monitored_session.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

// A task died or restarted: a new session may work.
bool IsRecoverable(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsAborted(s);
}

// "node" and "node:0" name the same tensor.
std::string CanonicalTensorName(const std::string& name) {
  const size_t colon = name.rfind(':');
  if (colon != std::string::npos && colon + 1 < name.size() &&
      std::all_of(name.begin() + colon + 1, name.end(),
                  [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); })) {
    return name;
  }
  return name + ":0";
}

constexpr absl::Duration kReadyPollInterval = absl::Milliseconds(100);

}  // namespace

absl::StatusOr<std::unique_ptr<MonitoredSession>> MonitoredSession::Create(
    MonitoredSessionOptions options) {
  if (!options.create_session) {
    return absl::InvalidArgumentError("MonitoredSession: options.create_session is not set");
  }
  if (options.max_recoveries < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("MonitoredSession: max_recoveries is ", options.max_recoveries));
  }
  std::unique_ptr<MonitoredSession> ms(new MonitoredSession(std::move(options)));
  for (SessionRunHook* hook : ms->options_.hooks) RETURN_IF_ERROR(hook->Begin());
  absl::Status created = ms->CreateAndPrepare();
  if (!created.ok()) {
    if (!IsRecoverable(created)) return created;
    int failures = 0;
    RETURN_IF_ERROR(ms->Recover(created, &failures));
  }
  return ms;
}

MonitoredSession::~MonitoredSession() {
  if (!closed_ && session_ != nullptr) session_->Close().IgnoreError();
}

absl::StatusOr<std::vector<std::string>> MonitoredSession::NotReady() {
  absl::StatusOr<std::vector<Tensor>> values = session_->Run({}, options_.ready_tensors, {});
  if (!values.ok()) return AddContext(values.status(), "fetching the ready tensors");
  std::vector<std::string> not_ready;
  for (size_t i = 0; i < values->size(); ++i) {
    const Tensor& t = (*values)[i];
    if (t.dtype() != DT_BOOL || t.NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ready tensor '", options_.ready_tensors[i], "' is ", DataTypeName(t.dtype()), " ",
          t.shape().DebugString(), "; want a bool scalar (IsVariableInitialized)"));
    }
    if (!t.scalar<bool>()) not_ready.push_back(options_.ready_tensors[i]);
  }
  return not_ready;
}

absl::Status MonitoredSession::PrepareChief() {
  std::vector<std::string> not_ready;
  if (!options_.ready_tensors.empty()) {
    ASSIGN_OR_RETURN(not_ready, NotReady());
    if (not_ready.empty()) return absl::OkStatus();
  }
  std::string how;
  if (options_.saver != nullptr && !options_.checkpoint_dir.empty()) {
    // The newest checkpoint that restores (a corrupt latest one is passed
    // over for the one before).
    absl::StatusOr<std::string> prefix =
        options_.saver->RestoreNewest(session_.get(), options_.checkpoint_dir);
    if (prefix.ok()) {
      how = absl::StrCat("restoring '", *prefix, "'");
    } else if (!absl::IsNotFound(prefix.status())) {
      return AddContext(prefix.status(), "chief restoring a checkpoint");
    }
  }
  if (how.empty()) {
    if (options_.init_op.empty()) {
      if (options_.ready_tensors.empty()) return absl::OkStatus();
      return absl::FailedPreconditionError(absl::StrCat(
          "chief: the model is not initialized (", absl::StrJoin(not_ready, ", "),
          " false) and there is no init_op and no checkpoint",
          options_.checkpoint_dir.empty() ? "" : absl::StrCat(" in '", options_.checkpoint_dir, "'")));
    }
    RETURN_IF_ERROR(AddContext(session_->Run({}, {}, {options_.init_op}).status(),
                               absl::StrCat("chief running init_op '", options_.init_op, "'")));
    how = absl::StrCat("running init_op '", options_.init_op, "'");
  }
  if (options_.ready_tensors.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(not_ready, NotReady());
  if (!not_ready.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("chief: after ", how,
                                                      " the model is still not ready: ",
                                                      absl::StrJoin(not_ready, ", "), " false"));
  }
  return absl::OkStatus();
}

absl::Status MonitoredSession::WaitForReady() {
  if (options_.ready_tensors.empty()) return absl::OkStatus();
  const absl::Time deadline = absl::Now() + absl::Milliseconds(options_.wait_for_ready_ms);
  std::vector<std::string> not_ready = options_.ready_tensors;
  absl::Status last_error;
  while (true) {
    absl::StatusOr<std::vector<std::string>> r = NotReady();
    if (r.ok()) {
      if (r->empty()) return absl::OkStatus();
      not_ready = *std::move(r);
    } else if (IsRecoverable(r.status())) {
      last_error = r.status();  // the chief's tasks may still be starting
    } else {
      return r.status();
    }
    const absl::Time now = absl::Now();
    if (now >= deadline) break;
    absl::SleepFor(std::min(kReadyPollInterval, deadline - now));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "waited ", options_.wait_for_ready_ms, " ms for the chief to initialize the model; still ",
      last_error.ok() ? "uninitialized" : "not known to be initialized", ": ",
      absl::StrJoin(not_ready, ", "),
      last_error.ok() ? "" : absl::StrCat(" (last error: ", last_error.message(), ")")));
}

absl::Status MonitoredSession::CreateAndPrepare() {
  absl::StatusOr<std::unique_ptr<Session>> created = options_.create_session();
  if (!created.ok()) return AddContext(created.status(), "creating the session");
  if (*created == nullptr) return absl::InternalError("create_session returned no session");
  session_ = *std::move(created);
  if (options_.is_chief) {
    RETURN_IF_ERROR(PrepareChief());
  } else {
    RETURN_IF_ERROR(WaitForReady());
  }
  for (SessionRunHook* hook : options_.hooks) {
    RETURN_IF_ERROR(hook->AfterCreateSession(session_.get()));
  }
  return absl::OkStatus();
}

absl::Status MonitoredSession::Recover(absl::Status error, int* failures) {
  const absl::Time start = absl::Now();
  absl::Time last_said = start;
  while (true) {
    if (*failures >= options_.max_recoveries) {
      return AddContext(error, absl::StrCat("after ", *failures, " recoveries"));
    }
    const double waited = absl::ToDoubleSeconds(absl::Now() - start);
    if (waited >= options_.recovery_timeout_s) {
      return absl::DeadlineExceededError(absl::StrCat(
          "gave up recovering after ", static_cast<int64_t>(waited), " s (recovery_timeout_s ",
          options_.recovery_timeout_s, "); last: ", error.message()));
    }
    if (absl::ToDoubleSeconds(absl::Now() - last_said) >= options_.waiting_log_every_s) {
      std::fprintf(stderr, "monitored session: waiting %lld s for the cluster to answer: %s\n",
                   static_cast<long long>(waited), std::string(error.message()).c_str());
      last_said = absl::Now();
    }
    ++*failures;
    ++recoveries_;
    if (session_ != nullptr) {
      session_->Close().IgnoreError();  // its tasks may be gone
      session_.reset();
    }
    absl::SleepFor(absl::Milliseconds(options_.recovery_wait_ms));
    absl::Status created = CreateAndPrepare();
    if (created.ok()) return absl::OkStatus();
    if (!IsRecoverable(created)) return created;
    error = created;
  }
}

absl::StatusOr<std::vector<Tensor>> MonitoredSession::Run(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  if (closed_) return absl::FailedPreconditionError("MonitoredSession::Run after Close");
  // Every tensor the step fetches, once; where[i] is the position of the
  // i-th requested tensor (the user's, then each hook's) among them.
  std::vector<std::string> unique;
  std::map<std::string, size_t> index;
  std::vector<size_t> where;
  auto add = [&](const std::string& name) {
    auto [it, inserted] = index.emplace(CanonicalTensorName(name), unique.size());
    if (inserted) unique.push_back(name);
    where.push_back(it->second);
  };
  for (const std::string& f : fetches) add(f);
  std::vector<size_t> hook_begin;
  for (SessionRunHook* hook : options_.hooks) {
    hook_begin.push_back(where.size());
    for (const std::string& f : hook->BeforeRun()) add(f);
  }
  hook_begin.push_back(where.size());

  int failures = 0;
  if (session_ == nullptr) {
    RETURN_IF_ERROR(
        Recover(absl::UnavailableError("no session (the last recovery failed)"), &failures));
  }
  absl::StatusOr<std::vector<Tensor>> out;
  bool stop_requested = false;
  while (true) {
    out = session_->Run(feeds, unique, targets);
    if (out.ok()) {
      // A hook's own session calls (a checkpoint, a summary) may meet the
      // same failures as the step: they are recovered the same way, and the
      // step is run again, as TensorFlow's MonitoredSession does.
      RunContext context(session_.get());
      absl::Status hooks;
      for (size_t h = 0; h < options_.hooks.size() && hooks.ok(); ++h) {
        std::vector<Tensor> values;
        for (size_t i = hook_begin[h]; i < hook_begin[h + 1]; ++i) values.push_back((*out)[where[i]]);
        hooks = options_.hooks[h]->AfterRun(values, &context);
      }
      if (hooks.ok()) {
        stop_requested = context.stop_requested();
        break;
      }
      out = hooks;
    }
    if (!IsRecoverable(out.status())) return out.status();
    RETURN_IF_ERROR(Recover(out.status(), &failures));
  }
  if (stop_requested) stop_ = true;
  std::vector<Tensor> result;
  result.reserve(fetches.size());
  for (size_t i = 0; i < fetches.size(); ++i) result.push_back((*out)[where[i]]);
  return result;
}

absl::StatusOr<std::vector<Tensor>> MonitoredSession::RunWithoutHooks(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  if (closed_) return absl::FailedPreconditionError("MonitoredSession::Run after Close");
  int failures = 0;
  if (session_ == nullptr) {
    RETURN_IF_ERROR(
        Recover(absl::UnavailableError("no session (the last recovery failed)"), &failures));
  }
  while (true) {
    absl::StatusOr<std::vector<Tensor>> out = session_->Run(feeds, fetches, targets);
    if (out.ok() || !IsRecoverable(out.status())) return out;
    RETURN_IF_ERROR(Recover(out.status(), &failures));
  }
}

absl::Status MonitoredSession::Close() {
  if (closed_) return absl::OkStatus();
  closed_ = true;
  if (session_ == nullptr) return absl::OkStatus();
  absl::Status status;
  for (SessionRunHook* hook : options_.hooks) status.Update(hook->End(session_.get()));
  status.Update(session_->Close());
  return status;
}

}  // namespace sluice
