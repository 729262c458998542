#include "distributed/collective_training/collective_trainer.h"

#include <cstdio>
#include <map>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "training/checkpoint/checkpoint_state.h"
#include "training/checkpoint/saver.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/master_session.h"
#include "distributed/collective_training/background_prober.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/collective/collective_ops.h"
#include "runtime/collective/collective_executor.h"

namespace sluice {
namespace {

// MultiWorkerMirrored's group key is all_reduce.group_key + this * generation
// (mirrored_strategy.h); the barrier joins the same group.
constexpr int64_t kGenerationStride = 1000;
// The barrier's instance, relative to first_instance_key: past
// MultiWorkerMirrored's (buckets, loss 50000+, broadcasts 100000+).
constexpr int64_t kBarrierInstance = 200000;
// The rejoin vote's instance (elastic formations missing a worker).
constexpr int64_t kRejoinVoteInstance = 200001;
// How often the chief of a formation missing a worker probes it (on a
// thread of its own: a rejoin check only reads the last answer).
constexpr absl::Duration kRejoinProbeInterval = absl::Milliseconds(500);
constexpr absl::Duration kProbeInterval = absl::Milliseconds(200);

// The sessions of a formation see only this task: placement never needs the
// other workers (the graph is all on this task), so a dead peer cannot
// block session creation; collectives reach the peers on their own.
class TaskOnlyCache : public WorkerCache {
 public:
  TaskOnlyCache(WorkerCache* base, std::string task) : base_(base), task_(std::move(task)) {}
  absl::StatusOr<WorkerInterface*> GetWorker(const std::string& task) override {
    if (task != task_) {
      return absl::NotFoundError(
          absl::StrCat("task ", task, " is outside this worker's session (only ", task_, ")"));
    }
    return base_->GetWorker(task);
  }
  std::vector<std::string> ListTasks() const override { return {task_}; }

 private:
  WorkerCache* const base_;
  const std::string task_;
};

// A failure that a new formation may get past: a peer died, restarted or
// did not answer in time, or the step was aborted because of that.
bool IsPeerFailure(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kCancelled:
      return true;
    default:
      return false;
  }
}

// The device a member trains on: its GPU:0 when it has one, else CPU:0.
std::string MemberDevice(const std::string& task, const WorkerInfo& info) {
  for (const DeviceInfo& d : info.devices) {
    if (d.device_type == "GPU" && absl::EndsWith(d.name, "/device:GPU:0")) return d.name;
  }
  return absl::StrCat(task, "/device:CPU:0");
}

struct Probed {
  MemberId id;
  std::string device;
};

// One formation's graph and session.
struct Formation {
  explicit Formation(Scope s) : scope(std::move(s)) {}
  MemberPlan plan;
  int64_t group_key = 0;
  Scope scope;
  std::vector<Output> inputs;
  std::unique_ptr<Optimizer> optimizer;
  MultiWorkerModel model;
  Output barrier;
  // Elastic formations missing a worker: this member's vote (a float
  // scalar placeholder) and the members' sum; else empty.
  Output vote_in;
  Output vote;
  std::unique_ptr<Saver> saver;
  std::unique_ptr<Session> session;
  // The chief of a formation with a vote: whether a missing worker answers.
  std::unique_ptr<BackgroundProber> missing_prober;
};

}  // namespace

class CollectiveTrainer::Impl {
 public:
  Impl(CollectiveTrainerOptions options, int self, int workers)
      : o_(std::move(options)), self_(self), workers_(workers) {}
  ~Impl() {
    if (current_ != nullptr && current_->session != nullptr) (void)current_->session->Close();
  }

  absl::StatusOr<TrainResult> Train();
  Session* session() const { return current_ == nullptr ? nullptr : current_->session.get(); }
  const MultiWorkerModel& model() const { return current_ == nullptr ? empty_model_ : current_->model; }
  const std::vector<Output>& inputs() const {
    return current_ == nullptr ? empty_inputs_ : current_->inputs;
  }

 private:
  void Log(const std::string& line) const;
  std::string Me() const { return absl::StrCat("worker ", self_); }
  std::string Task(int index) const { return TaskName(o_.job, index); }
  float CollectiveTimeoutS() const {
    return o_.all_reduce.timeout_seconds > 0 ? o_.all_reduce.timeout_seconds : 60.0f;
  }
  double BarrierTimeoutS() const {
    return 2.0 * CollectiveTimeoutS() + (o_.elastic ? o_.elastic_grace_s : 0.0) + 10.0;
  }

  // Every worker that answers a probe now (this one included).
  std::vector<Probed> Probe(std::map<int, std::string>* errors);
  // Waits for the members of the next formation (see the header): every
  // worker, or with `elastic_wait` those that answer within the grace.
  absl::StatusOr<std::vector<Probed>> WaitForMembers(bool elastic_wait, absl::Time deadline,
                                                     const absl::Status& why);
  absl::StatusOr<std::unique_ptr<Formation>> Build(const MemberPlan& plan,
                                                   const std::vector<std::string>& devices);
  // Barrier, restore or init, sync_init; returns the global step.
  absl::StatusOr<int64_t> Start(Formation* f);
  // Trains from `step` to o_.steps; `*progressed` once a step succeeded.
  // Returns early, OK, with `*rejoin` set when the members voted to re-form
  // with a returning worker (the chief saved the step first).
  absl::Status TrainSteps(Formation* f, int64_t step, bool* progressed, bool* rejoin);
  // Whether a worker outside `members` answers a probe.
  bool MissingWorkerIsBack(const std::vector<int>& members);
  absl::Status Save(Formation* f, int64_t step);
  // Forgets the current formation after `why`.
  void Leave(const absl::Status& why);

  const CollectiveTrainerOptions o_;
  const int self_;
  const int workers_;
  std::map<std::string, int64_t> attempts_;  // MembersKey -> formations left
  std::unique_ptr<Formation> current_;
  int64_t last_saved_ = -1;
  int64_t reached_ = 0;
  const MultiWorkerModel empty_model_;
  const std::vector<Output> empty_inputs_;
};

void CollectiveTrainer::Impl::Log(const std::string& line) const {
  if (o_.log) return o_.log(line);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

std::vector<Probed> CollectiveTrainer::Impl::Probe(std::map<int, std::string>* errors) {
  std::vector<Probed> up;
  for (int i = 0; i < workers_; ++i) {
    const std::string task = Task(i);
    absl::StatusOr<WorkerInfo> info = absl::InternalError("no worker");
    if (i == self_) {
      info = o_.server->worker()->GetStatus();
    } else {
      absl::StatusOr<WorkerInterface*> w = o_.server->worker_cache()->GetWorker(task);
      info = w.ok() ? (*w)->GetStatusWithin(o_.probe_timeout_ms)
                    : absl::StatusOr<WorkerInfo>(w.status());
    }
    if (info.ok()) {
      up.push_back({{i, info->incarnation}, MemberDevice(task, *info)});
    } else {
      (*errors)[i] = std::string(info.status().message());
    }
  }
  return up;
}

absl::StatusOr<std::vector<Probed>> CollectiveTrainer::Impl::WaitForMembers(
    bool elastic_wait, absl::Time deadline, const absl::Status& why) {
  const bool elastic = o_.elastic && elastic_wait;
  const absl::Time grace_end = absl::Now() + absl::Seconds(o_.elastic_grace_s);
  std::string waiting_for;
  while (true) {
    std::map<int, std::string> errors;
    std::vector<Probed> up = Probe(&errors);
    if (errors.empty()) return up;
    if (elastic && absl::Now() >= grace_end) {
      Log(absl::StrCat(Me(), ": going on without ",
                       absl::StrJoin(errors, ", ",
                                     [](std::string* out, const auto& e) {
                                       absl::StrAppend(out, "worker ", e.first);
                                     }),
                       " (elastic)"));
      return up;
    }
    std::string missing = absl::StrJoin(errors, "; ", [&](std::string* out, const auto& e) {
      absl::StrAppend(out, Task(e.first), " (", e.second, ")");
    });
    if (absl::Now() >= deadline) {
      std::string msg = absl::StrCat(Me(), ": workers did not answer within ",
                                     o_.recovery_timeout_s, " s: ", missing);
      if (!why.ok()) absl::StrAppend(&msg, "; after: ", why.message());
      return absl::DeadlineExceededError(msg);
    }
    std::string now_waiting = absl::StrJoin(errors, ",", [](std::string* out, const auto& e) {
      absl::StrAppend(out, e.first);
    });
    if (now_waiting != waiting_for) {
      waiting_for = now_waiting;
      Log(absl::StrCat(Me(), ": waiting for ", missing));
    }
    absl::SleepFor(kProbeInterval);
  }
}

absl::StatusOr<std::unique_ptr<Formation>> CollectiveTrainer::Impl::Build(
    const MemberPlan& plan, const std::vector<std::string>& devices) {
  const OpRegistry* ops = o_.ops != nullptr ? o_.ops : BuiltinOps();
  const KernelRegistry* kernels = o_.kernels != nullptr ? o_.kernels : BuiltinKernels();
  auto f = std::make_unique<Formation>(Scope::NewRootScope(ops));
  f->plan = plan;
  const Scope& root = f->scope;
  for (const TrainerInput& in : o_.inputs) {
    f->inputs.push_back(
        ops::Placeholder(root.WithOpName(in.name), in.dtype, {.shape = in.shape}));
  }
  RETURN_IF_ERROR(root.status());
  ASSIGN_OR_RETURN(f->optimizer, o_.optimizer(plan.learning_rate));
  MultiWorkerOptions mw;
  mw.worker_devices = devices;
  mw.worker_index = plan.rank;
  mw.generation = plan.generation;
  mw.all_reduce = o_.all_reduce;
  ASSIGN_OR_RETURN(f->model,
                   BuildMultiWorkerMirrored(root, f->inputs, o_.replica, f->optimizer.get(), mw));
  f->group_key = o_.all_reduce.group_key + kGenerationStride * plan.generation;

  // The barrier: every member adds 1, so the sum is the member count.
  ops::CollectiveSpec spec;
  spec.group_key = f->group_key;
  spec.instance_key = o_.all_reduce.first_instance_key + kBarrierInstance;
  spec.group_devices = devices;
  spec.timeout_seconds = static_cast<float>(BarrierTimeoutS());
  const Scope on = root.WithDevice(devices[plan.rank]);
  f->barrier = ops::AllReduce(on.WithOpName("formation_barrier"),
                              ops::Const(on.WithOpName("formation_barrier/one"), 1.0f),
                              ReduceOp::kSum, spec);
  if (o_.elastic && o_.rejoin_check_every > 0 &&
      static_cast<int>(plan.members.size()) < workers_) {
    ops::CollectiveSpec vote = spec;
    vote.instance_key = o_.all_reduce.first_instance_key + kRejoinVoteInstance;
    vote.timeout_seconds = CollectiveTimeoutS();
    f->vote_in = ops::Placeholder(on.WithOpName("rejoin_vote/mine"), DT_FLOAT,
                                  {.shape = TensorShape({})});
    f->vote = ops::AllReduce(on.WithOpName("rejoin_vote"), f->vote_in, ReduceOp::kSum, vote);
    if (plan.chief) {
      f->missing_prober = std::make_unique<BackgroundProber>(
          [this, members = plan.members] { return MissingWorkerIsBack(members); },
          kRejoinProbeInterval);
    }
  }
  RETURN_IF_ERROR(root.status());
  ASSIGN_OR_RETURN(f->saver, Saver::Build(root, {}));
  ASSIGN_OR_RETURN(GraphDef def, root.ToGraphDef());

  const std::string task = Task(self_);
  auto cache = std::make_unique<TaskOnlyCache>(o_.server->worker_cache(), task);
  MasterSessionOptions master;
  master.workers = cache.get();
  master.session.ops = ops;
  master.session.kernels = kernels;
  master.session.default_device = task;
  master.session.step_timeout_ms = static_cast<int64_t>((BarrierTimeoutS() + 30) * 1000);
  master.wait_for_cluster_ms = 10000;
  ASSIGN_OR_RETURN(f->session, MasterSession::Create(master, def, std::move(cache)));
  return f;
}

absl::StatusOr<int64_t> CollectiveTrainer::Impl::Start(Formation* f) {
  Session* s = f->session.get();
  ASSIGN_OR_RETURN(std::vector<Tensor> count, s->Run({}, {f->barrier}, {}));
  const int64_t members = static_cast<int64_t>(f->plan.members.size());
  if (count[0].scalar<float>() != static_cast<float>(members)) {
    return absl::InternalError(absl::StrCat(Me(), ": the formation barrier counted ",
                                            count[0].scalar<float>(), " members, expected ",
                                            members));
  }
  if (f->plan.chief) {
    bool restored = false;
    // The newest checkpoint that restores (a corrupt latest one is passed
    // over for the one before).
    absl::StatusOr<std::string> latest = f->saver->RestoreNewest(s, o_.checkpoint_dir);
    if (latest.ok()) {
      restored = true;
    } else if (absl::IsNotFound(latest.status())) {
      RETURN_IF_ERROR(s->Run({}, {}, {f->model.init}).status());
    } else {
      return latest.status();
    }
    RETURN_IF_ERROR(s->Run({}, {}, {f->model.sync_init}).status());
    ASSIGN_OR_RETURN(std::vector<Tensor> step, s->Run({}, {f->model.global_step}, {}));
    const int64_t g = step[0].scalar<int64_t>();
    if (restored) last_saved_ = g;
    Log(latest.ok() ? absl::StrCat(Me(), ": restored ", *latest, " (global step ", g, ")")
                    : absl::StrCat(Me(), ": initialized the model (no checkpoint in ",
                                   o_.checkpoint_dir, ")"));
    return g;
  }
  RETURN_IF_ERROR(s->Run({}, {}, {f->model.sync_init}).status());
  ASSIGN_OR_RETURN(std::vector<Tensor> step, s->Run({}, {f->model.global_step}, {}));
  return step[0].scalar<int64_t>();
}

absl::Status CollectiveTrainer::Impl::Save(Formation* f, int64_t step) {
  ASSIGN_OR_RETURN(std::string prefix,
                   f->saver->Save(f->session.get(), o_.checkpoint_dir, step));
  last_saved_ = step;
  Log(absl::StrCat(Me(), ": saved checkpoint ", prefix));
  return absl::OkStatus();
}

bool CollectiveTrainer::Impl::MissingWorkerIsBack(const std::vector<int>& members) {
  for (int i = 0; i < workers_; ++i) {
    if (absl::c_linear_search(members, i)) continue;
    absl::StatusOr<WorkerInterface*> w = o_.server->worker_cache()->GetWorker(Task(i));
    if (w.ok() && (*w)->GetStatusWithin(o_.probe_timeout_ms).ok()) return true;
  }
  return false;
}

absl::Status CollectiveTrainer::Impl::TrainSteps(Formation* f, int64_t step, bool* progressed,
                                                 bool* rejoin) {
  Session* s = f->session.get();
  absl::Time last_log = absl::Now();
  int64_t last_step = step;
  while (step < o_.steps) {
    ASSIGN_OR_RETURN(std::vector<Tensor> batch, o_.batch(step, f->plan));
    if (batch.size() != f->inputs.size()) {
      return absl::InvalidArgumentError(absl::StrCat("the batch function gave ", batch.size(),
                                                     " tensors for ", f->inputs.size(),
                                                     " inputs"));
    }
    std::vector<std::pair<Output, Tensor>> feeds;
    for (size_t i = 0; i < batch.size(); ++i) feeds.emplace_back(f->inputs[i], batch[i]);
    const int64_t next = step + 1;
    const bool log = (o_.log_every > 0 && next % o_.log_every == 0) || next == o_.steps;
    // Every member votes at the same steps (the vote is a collective).
    const bool vote = f->vote.node != nullptr && next % o_.rejoin_check_every == 0 &&
                      next < o_.steps;
    std::vector<Output> fetches;
    if (log) fetches.push_back(f->model.loss);
    if (vote) {
      const bool back = f->missing_prober != nullptr && f->missing_prober->last();
      feeds.emplace_back(f->vote_in, Tensor::Scalar<float>(back ? 1.0f : 0.0f));
      fetches.push_back(f->vote);
    }
    absl::StatusOr<std::vector<Tensor>> out = s->Run(feeds, fetches, {f->model.train});
    if (!out.ok()) {
      return AddContext(out.status(), absl::StrCat("step ", next, " failed"));
    }
    *progressed = true;
    step = reached_ = next;
    if (vote && out->back().scalar<float>() > 0) {
      *rejoin = true;
      if (f->plan.chief && last_saved_ != step) RETURN_IF_ERROR(Save(f, step));
      Log(absl::StrCat(Me(), ": a missing worker is back: re-forming at global step ", step,
                       " (elastic)"));
      return absl::OkStatus();
    }
    if (!f->plan.chief) continue;
    if (o_.after_chief_step) {
      RETURN_IF_ERROR(o_.after_chief_step(step, s, f->model.replica, f->inputs));
    }
    if (log) {
      const absl::Time now = absl::Now();
      const double secs = absl::ToDoubleSeconds(now - last_log);
      Log(absl::StrFormat("step %d: loss=%.4f (%.1f steps/s)", step, (*out)[0].scalar<float>(),
                          secs > 0 ? (step - last_step) / secs : 0.0));
      last_log = now;
      last_step = step;
    }
    if (o_.checkpoint_every > 0 && step % o_.checkpoint_every == 0 && step < o_.steps) {
      absl::Status saved = Save(f, step);
      if (absl::IsResourceExhausted(saved)) {
        // Disk full: train on; the next interval tries again.
        Log(absl::StrCat(Me(), ": could not save step ", step, " (training goes on): ",
                         saved.message()));
      } else {
        RETURN_IF_ERROR(saved);
      }
    }
  }
  if (f->plan.chief && last_saved_ != step) RETURN_IF_ERROR(Save(f, step));
  return absl::OkStatus();
}

void CollectiveTrainer::Impl::Leave(const absl::Status& why) {
  if (current_ == nullptr) return;
  o_.server->worker()->collective_executor()->ResetGroup(current_->group_key, why);
  if (current_->session != nullptr) (void)current_->session->Close();
  current_.reset();
}

absl::StatusOr<TrainResult> CollectiveTrainer::Impl::Train() {
  const absl::Time start = absl::Now();
  const absl::Duration recovery = absl::Seconds(o_.recovery_timeout_s);
  TrainResult result;
  bool after_failure = false;
  absl::Time deadline = start + recovery;
  absl::Status failure;
  bool rejoining = false;  // this formation takes back a returning worker
  // An elastic worker joining a job that already trained (it restarted, or
  // the job resumes) need not wait for every worker: a worker that is gone
  // for good must not keep it out, and formations grow as workers arrive.
  const bool resuming = o_.elastic && LatestCheckpoint(o_.checkpoint_dir).ok();
  while (true) {
    ASSIGN_OR_RETURN(std::vector<Probed> up,
                     WaitForMembers(after_failure || resuming, deadline, failure));
    std::vector<MemberId> ids;
    for (const Probed& p : up) ids.push_back(p.id);
    const std::string key = MembersKey(ids);
    ASSIGN_OR_RETURN(MemberPlan plan, PlanMembers(ids, self_, attempts_[key], o_.scaling));
    std::vector<std::string> devices;
    for (int m : plan.members) {
      for (const Probed& p : up) {
        if (p.id.index == m) devices.push_back(p.device);
      }
    }
    if (rejoining) {
      ++result.rejoins;
    } else if (after_failure) {
      ++result.recoveries;
    }
    Log(absl::StrFormat(
        "%s: generation %d: workers [%s], rank %d%s, batch %d per worker (%d global), lr %g",
        Me(), plan.generation, absl::StrJoin(plan.members, ","), plan.rank,
        plan.chief ? " (chief)" : "", plan.per_worker_batch, plan.global_batch,
        plan.learning_rate));
    ASSIGN_OR_RETURN(current_, Build(plan, devices));

    bool progressed = false, rejoin = false;
    absl::Status s;
    absl::StatusOr<int64_t> step = Start(current_.get());
    if (!step.ok()) {
      s = AddContext(step.status(), absl::StrCat("forming generation ", plan.generation));
    } else {
      reached_ = *step;
      s = TrainSteps(current_.get(), *step, &progressed, &rejoin);
    }
    rejoining = false;
    if (s.ok() && rejoin) {
      Leave(absl::AbortedError(absl::StrCat(Me(), ": re-forming to take back a worker")));
      // As after a failure, elastic: every worker that answers within the
      // grace period; the same member set on every member.
      after_failure = true;
      rejoining = true;
      deadline = absl::Now() + recovery;
      continue;
    }
    if (s.ok()) {
      result.global_step = reached_;
      result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
      result.plan = plan;
      return result;
    }
    if (!IsPeerFailure(s)) return AddContext(s, Me());
    Log(absl::StrCat(Me(), ": ", s.message()));
    Leave(s);
    ++attempts_[key];
    if (progressed || !after_failure) {
      deadline = absl::Now() + recovery;
    } else if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(Me(), ": could not train again within ",
                                                      o_.recovery_timeout_s, " s; last: ",
                                                      s.message()));
    }
    after_failure = true;
    failure = s;
  }
}

// ---- CollectiveTrainer --------------------------------------------------------

absl::StatusOr<std::unique_ptr<CollectiveTrainer>> CollectiveTrainer::Create(
    CollectiveTrainerOptions options) {
  if (options.server == nullptr) return absl::InvalidArgumentError("collective trainer: no server");
  if (!options.replica || !options.optimizer || !options.batch) {
    return absl::InvalidArgumentError(
        "collective trainer: replica, optimizer and batch functions are required");
  }
  if (options.checkpoint_dir.empty()) {
    return absl::InvalidArgumentError("collective trainer: checkpoint_dir is required");
  }
  if (options.steps < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("collective trainer: steps is ", options.steps));
  }
  const std::string& task = options.server->task();
  const std::string prefix = absl::StrCat("/job:", options.job, "/replica:0/task:");
  int self = -1;
  if (!absl::StartsWith(task, prefix) ||
      !absl::SimpleAtoi(absl::string_view(task).substr(prefix.size()), &self)) {
    return absl::InvalidArgumentError(
        absl::StrCat("collective trainer: task ", task, " is not in job '", options.job, "'"));
  }
  int workers = 0;
  for (const std::string& t : options.server->worker_cache()->ListTasks()) {
    if (absl::StartsWith(t, prefix)) ++workers;
  }
  options.scaling.initial_workers = workers;
  // The scaling is checked once here (PlanMembers of the full job).
  std::vector<MemberId> all;
  for (int i = 0; i < workers; ++i) all.push_back({i, 0});
  RETURN_IF_ERROR(AddContext(PlanMembers(all, self, 0, options.scaling).status(),
                             "collective trainer"));
  return std::unique_ptr<CollectiveTrainer>(
      new CollectiveTrainer(std::make_unique<Impl>(std::move(options), self, workers)));
}

CollectiveTrainer::CollectiveTrainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CollectiveTrainer::~CollectiveTrainer() = default;

absl::StatusOr<TrainResult> CollectiveTrainer::Train() { return impl_->Train(); }
Session* CollectiveTrainer::session() const { return impl_->session(); }
const MultiWorkerModel& CollectiveTrainer::model() const { return impl_->model(); }
const std::vector<Output>& CollectiveTrainer::inputs() const { return impl_->inputs(); }

}  // namespace sluice
