// ParallelMapDataset and ParallelMapDatasetV2: up to num_parallel_calls
// calls of the function at once, on threads the iterator owns (started at
// its first GetNext), never on the executor's. Workers take input elements
// one at a time, in order, and reserve a result slot for each; GetNext hands
// out the slots in input order (deterministic, the default) or the first
// finished one (deterministic = "false", or sloppy = true).
//
// Save stops the workers from taking input, waits for the calls under way
// and writes the finished results beside the input's state.
#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "ops/data/captured_function.h"
#include "ops/data/dataset_kernel.h"
#include "ops/data/internal/dataset_kernels.h"
#include "ops/data/internal/function_dataset.h"

namespace sluice {
namespace data {
namespace {

constexpr int64_t kAutotune = -1;

class ParallelMapDataset : public DatasetBase {
 public:
  ParallelMapDataset(std::string node, std::shared_ptr<const DatasetBase> input,
                     std::shared_ptr<const CapturedFunction> fn, int64_t parallelism,
                     bool deterministic, bool preserve_cardinality, DataTypeVector dtypes,
                     std::vector<TensorShape> shapes)
      : DatasetBase(std::move(node), std::move(dtypes), std::move(shapes)),
        input_(std::move(input)),
        fn_(std::move(fn)),
        parallelism_(parallelism),
        deterministic_(deterministic),
        preserve_cardinality_(preserve_cardinality) {}
  std::string Name() const override { return "ParallelMap"; }
  int64_t Cardinality() const override {
    return preserve_cardinality_ ? input_->Cardinality() : kUnknownCardinality;
  }
  const DatasetBase& input() const { return *input_; }
  const CapturedFunction& fn() const { return *fn_; }
  int64_t parallelism() const { return parallelism_; }
  bool deterministic() const { return deterministic_; }
  bool preserve_cardinality() const { return preserve_cardinality_; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  const std::shared_ptr<const DatasetBase> input_;
  const std::shared_ptr<const CapturedFunction> fn_;
  const int64_t parallelism_;
  const bool deterministic_;
  const bool preserve_cardinality_;
};

class ParallelMapIterator : public DatasetIterator<ParallelMapDataset> {
 public:
  ParallelMapIterator(std::shared_ptr<const ParallelMapDataset> ds, std::string prefix)
      : DatasetIterator(std::move(ds), std::move(prefix)),
        ctx_(IteratorContext::Params{}) {}

  ~ParallelMapIterator() override {
    {
      absl::MutexLock l(&mu_);
      cancelled_ = true;
    }
    for (std::thread& t : workers_) t.join();
  }

  absl::Status Initialize(IteratorContext* ctx) override {
    ASSIGN_OR_RETURN(input_, dataset()->input().MakeIterator(ctx, prefix()));
    return absl::OkStatus();
  }

  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    StartWorkers(ctx);
    out->clear();
    std::shared_ptr<Slot> slot;
    {
      absl::MutexLock l(&mu_);
      mu_.Await(absl::Condition(this, &ParallelMapIterator::HasResult));
      auto it = slots_.begin();
      if (!dataset()->deterministic()) {
        it = std::find_if(slots_.begin(), slots_.end(),
                          [](const std::shared_ptr<Slot>& s) { return s->done && !s->end; });
        if (it == slots_.end()) it = slots_.begin();
      }
      if (it == slots_.end()) {  // input ended and every result is out
        *end = true;
        return absl::OkStatus();
      }
      slot = *it;
      if (slot->end) {  // stays: later calls see the end as well
        *end = true;
        return absl::OkStatus();
      }
      slots_.erase(it);
    }
    *end = false;
    if (!slot->status.ok()) return slot->status;
    *out = std::move(slot->out);
    return absl::OkStatus();
  }

  absl::Status Save(IteratorStateWriter* w) override {
    Pause pause(this);
    absl::MutexLock in(&input_mu_);
    absl::MutexLock l(&mu_);
    mu_.Await(absl::Condition(this, &ParallelMapIterator::NoneRunning));
    RETURN_IF_ERROR(input_->Save(w));
    w->WriteInt(Key("slots"), static_cast<int64_t>(slots_.size()));
    for (size_t i = 0; i < slots_.size(); ++i) {
      const std::string k = absl::StrCat("slot", i);
      SaveStatus(w, *this, k, slots_[i]->status);
      w->WriteInt(Key(k + ".end"), slots_[i]->end ? 1 : 0);
      SaveElement(w, *this, k, slots_[i]->out);
    }
    return absl::OkStatus();
  }

  absl::Status Restore(IteratorContext* ctx, const IteratorStateReader& r) override {
    RETURN_IF_ERROR(input_->Restore(ctx, r));
    ASSIGN_OR_RETURN(int64_t n, r.ReadInt(Key("slots")));
    absl::MutexLock l(&mu_);
    slots_.clear();
    input_done_ = false;
    for (int64_t i = 0; i < n; ++i) {
      const std::string k = absl::StrCat("slot", i);
      auto slot = std::make_shared<Slot>();
      slot->done = true;
      ASSIGN_OR_RETURN(slot->status, RestoreStatus(r, *this, k));
      ASSIGN_OR_RETURN(int64_t end, r.ReadInt(Key(k + ".end")));
      slot->end = end != 0;
      input_done_ |= slot->end;
      ASSIGN_OR_RETURN(slot->out, RestoreElement(r, *this, k));
      slots_.push_back(std::move(slot));
    }
    return absl::OkStatus();
  }

 private:
  struct Slot {
    bool done = false;
    bool end = false;  // the input's end
    absl::Status status;
    std::vector<Tensor> out;
  };

  // Stops workers from taking input for as long as it lives.
  class Pause {
   public:
    explicit Pause(ParallelMapIterator* it) : it_(it) {
      absl::MutexLock l(&it_->mu_);
      ++it_->paused_;
    }
    ~Pause() {
      absl::MutexLock l(&it_->mu_);
      --it_->paused_;
    }

   private:
    ParallelMapIterator* it_;
  };

  int64_t capacity() const {
    const int64_t p = dataset()->parallelism();
    if (p != kAutotune) return p;
    return std::max<int64_t>(2, std::thread::hardware_concurrency());
  }

  void StartWorkers(IteratorContext* ctx) {
    if (!workers_.empty()) return;
    ctx_ = IteratorContext(ctx->params());
    const int64_t n = capacity();
    for (int64_t i = 0; i < n; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  }

  bool HasResult() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (slots_.empty()) return input_done_;
    if (dataset()->deterministic()) return slots_.front()->done;
    for (const auto& s : slots_) {
      if (s->done && !s->end) return true;
    }
    return slots_.front()->done;
  }
  bool NoneRunning() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return running_ == 0; }
  bool CanTake() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancelled_ || input_done_ ||
           (paused_ == 0 && static_cast<int64_t>(slots_.size()) < capacity());
  }

  void WorkerLoop() {
    std::vector<Tensor> args;
    while (true) {
      std::shared_ptr<Slot> slot;
      {
        absl::MutexLock l(&mu_);
        mu_.Await(absl::Condition(this, &ParallelMapIterator::CanTake));
        if (cancelled_ || input_done_) return;
      }
      {
        absl::MutexLock in(&input_mu_);  // never held while waiting for room
        {
          absl::MutexLock l(&mu_);
          if (cancelled_ || input_done_) return;
          if (paused_ > 0 || static_cast<int64_t>(slots_.size()) >= capacity()) continue;
          slot = std::make_shared<Slot>();
          slots_.push_back(slot);
          ++running_;
        }
        bool end = false;
        absl::Status s = input_->GetNext(&ctx_, &args, &end);
        if (!s.ok() || end) {
          absl::MutexLock l(&mu_);
          slot->status = s;
          slot->end = end;
          slot->done = true;
          input_done_ |= end;
          --running_;
          continue;
        }
      }
      std::vector<Tensor> out;
      absl::Status s = dataset()->fn().Run(std::move(args), &out);
      args.clear();
      bool end = false;
      if (absl::IsOutOfRange(s)) {
        if (dataset()->preserve_cardinality()) {
          s = absl::InvalidArgumentError(s.message());
        } else {
          s = absl::OkStatus();
          end = true;
        }
      }
      if (s.ok() && !end) {
        s = CheckElement(out, dataset()->output_dtypes(), dataset()->output_shapes(),
                         absl::StrCat("the function of ParallelMapDataset '", dataset()->node(),
                                      "'"));
      }
      absl::MutexLock l(&mu_);
      slot->status = s;
      slot->out = std::move(out);
      slot->end = end;
      input_done_ |= end;
      slot->done = true;
      --running_;
    }
  }

  IteratorContext ctx_;  // a copy for the workers, made before they start
  std::unique_ptr<IteratorBase> input_;
  std::vector<std::thread> workers_;  // touched only by GetNext and the destructor

  absl::Mutex input_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // one worker takes input at a time
  mutable absl::Mutex mu_;
  std::deque<std::shared_ptr<Slot>> slots_ ABSL_GUARDED_BY(mu_);
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  int paused_ ABSL_GUARDED_BY(mu_) = 0;
  bool input_done_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

std::unique_ptr<IteratorBase> ParallelMapDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<ParallelMapIterator>(SharedAs<ParallelMapDataset>(), std::move(prefix));
}

// ParallelMapDataset (int32 num_parallel_calls, sloppy) and V2 (int64,
// deterministic).
template <bool kV2>
class ParallelMapOp : public FunctionDatasetOpKernel {
 public:
  ParallelMapOp() : FunctionDatasetOpKernel("f") {}

 private:
  absl::Status InitFunctionDataset(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(preserve_cardinality_, ctx.GetAttr<bool>("preserve_cardinality"));
    if (kV2) {
      ASSIGN_OR_RETURN(std::string d, ctx.GetAttr<std::string>("deterministic"));
      if (d != "true" && d != "false" && d != "default") {
        return absl::InvalidArgumentError(absl::StrCat(
            "deterministic must be 'true', 'false' or 'default', got '", d, "'"));
      }
      deterministic_ = d != "false";
    } else {
      ASSIGN_OR_RETURN(bool sloppy, ctx.GetAttr<bool>("sloppy"));
      deterministic_ = !sloppy;
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(
      OpKernelContext* ctx, std::shared_ptr<const DatasetBase> input) override {
    ASSIGN_OR_RETURN(int64_t n,
                     Int64Input(ctx, first_input_after_captured(), "num_parallel_calls"));
    if (n <= 0 && n != kAutotune) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_parallel_calls must be positive or -1 (AUTOTUNE), got ", n));
    }
    return std::make_shared<ParallelMapDataset>(node(), std::move(input), Captured(ctx), n,
                                                deterministic_, preserve_cardinality_, dtypes(),
                                                shapes());
  }
  bool deterministic_ = true;
  bool preserve_cardinality_ = false;
};

}  // namespace

namespace internal {
void RegisterParallelMapKernels(KernelRegistry* kernels) {
  kernels->Register<ParallelMapOp<false>>(KernelDef("ParallelMapDataset", kDeviceTypeCpu));
  kernels->Register<ParallelMapOp<true>>(KernelDef("ParallelMapDatasetV2", kDeviceTypeCpu));
}
}  // namespace internal

}  // namespace data
}  // namespace sluice
