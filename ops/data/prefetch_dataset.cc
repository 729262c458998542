// PrefetchDataset: a thread of the iterator's own (started at its first
// GetNext) reads ahead up to buffer_size elements (-1, AUTOTUNE: 4), so the
// consumer's GetNext only takes an element that is already there. Errors
// are buffered in order like elements; the end of the input too.
//
// Save stops the thread from reading on (it finishes the element under
// way), then writes the buffer beside the input's state.
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "ops/data/dataset_kernel.h"
#include "ops/data/internal/dataset_kernels.h"

namespace sluice {
namespace data {
namespace {

constexpr int64_t kAutotuneBuffer = 4;

class PrefetchDataset : public DatasetBase {
 public:
  PrefetchDataset(std::string node, std::shared_ptr<const DatasetBase> input, int64_t buffer_size)
      : DatasetBase(std::move(node), input->output_dtypes(), input->output_shapes()),
        input_(std::move(input)),
        buffer_size_(buffer_size) {}
  std::string Name() const override { return "Prefetch"; }
  int64_t Cardinality() const override { return input_->Cardinality(); }
  const DatasetBase& input() const { return *input_; }
  int64_t buffer_size() const { return buffer_size_; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  const std::shared_ptr<const DatasetBase> input_;
  const int64_t buffer_size_;
};

class PrefetchIterator : public DatasetIterator<PrefetchDataset> {
 public:
  PrefetchIterator(std::shared_ptr<const PrefetchDataset> ds, std::string prefix)
      : DatasetIterator(std::move(ds), std::move(prefix)), ctx_(IteratorContext::Params{}) {}

  ~PrefetchIterator() override {
    {
      absl::MutexLock l(&mu_);
      cancelled_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }

  absl::Status Initialize(IteratorContext* ctx) override {
    ASSIGN_OR_RETURN(input_, dataset()->input().MakeIterator(ctx, prefix()));
    return absl::OkStatus();
  }

  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    if (!thread_.joinable()) {
      bool finished;
      {
        absl::MutexLock l(&mu_);
        finished = finished_;
      }
      if (!finished) {
        ctx_ = IteratorContext(ctx->params());
        thread_ = std::thread([this] { Prefetch(); });
      }
    }
    absl::MutexLock l(&mu_);
    mu_.Await(absl::Condition(
        +[](std::deque<Slot>* b) { return !b->empty(); }, &buffer_));
    return TakeFront(out, end);
  }

  bool TryGetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end,
                  absl::Status* status) override {
    absl::MutexLock l(&mu_);
    if (!thread_.joinable() || buffer_.empty()) return false;
    *status = TakeFront(out, end);
    return true;
  }

  absl::Status Save(IteratorStateWriter* w) override {
    {
      absl::MutexLock l(&mu_);
      ++paused_;
    }
    absl::Status s;
    {
      absl::MutexLock in(&input_mu_);
      absl::MutexLock l(&mu_);
      s = finished_ ? absl::OkStatus() : input_->Save(w);
      w->WriteInt(Key("buffer"), static_cast<int64_t>(buffer_.size()));
      w->WriteInt(Key("finished"), finished_ ? 1 : 0);
      for (size_t i = 0; i < buffer_.size(); ++i) {
        const std::string k = absl::StrCat("buffer.", i);
        SaveStatus(w, *this, k, buffer_[i].status);
        w->WriteInt(Key(k + ".end"), buffer_[i].end ? 1 : 0);
        SaveElement(w, *this, k, buffer_[i].element);
      }
      --paused_;
    }
    return s;
  }

  absl::Status Restore(IteratorContext* ctx, const IteratorStateReader& r) override {
    ASSIGN_OR_RETURN(int64_t finished, r.ReadInt(Key("finished")));
    if (finished == 0) RETURN_IF_ERROR(input_->Restore(ctx, r));
    ASSIGN_OR_RETURN(int64_t n, r.ReadInt(Key("buffer")));
    absl::MutexLock l(&mu_);
    finished_ = finished != 0;
    buffer_.clear();
    for (int64_t i = 0; i < n; ++i) {
      const std::string k = absl::StrCat("buffer.", i);
      Slot slot;
      ASSIGN_OR_RETURN(slot.status, RestoreStatus(r, *this, k));
      ASSIGN_OR_RETURN(int64_t end, r.ReadInt(Key(k + ".end")));
      slot.end = end != 0;
      ASSIGN_OR_RETURN(slot.element, RestoreElement(r, *this, k));
      buffer_.push_back(std::move(slot));
    }
    return absl::OkStatus();
  }

 private:
  // The buffer's first slot, taken (the end stays, for later calls).
  absl::Status TakeFront(std::vector<Tensor>* out, bool* end)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    out->clear();
    Slot& front = buffer_.front();
    *end = front.end;
    if (front.end) return absl::OkStatus();
    absl::Status s = std::move(front.status);
    *out = std::move(front.element);
    buffer_.pop_front();
    return s;
  }

  struct Slot {
    absl::Status status;
    bool end = false;
    std::vector<Tensor> element;
  };

  int64_t capacity() const {
    const int64_t n = dataset()->buffer_size();
    return n < 0 ? kAutotuneBuffer : n;
  }
  bool HasRoom() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancelled_ || (paused_ == 0 && static_cast<int64_t>(buffer_.size()) < capacity());
  }

  void Prefetch() {
    while (true) {
      {
        absl::MutexLock l(&mu_);
        mu_.Await(absl::Condition(this, &PrefetchIterator::HasRoom));
        if (cancelled_ || finished_) return;
      }
      absl::MutexLock in(&input_mu_);
      {
        absl::MutexLock l(&mu_);
        if (cancelled_) return;
        if (paused_ > 0) continue;
      }
      Slot slot;
      slot.status = input_->GetNext(&ctx_, &slot.element, &slot.end);
      absl::MutexLock l(&mu_);
      const bool end = slot.end;
      buffer_.push_back(std::move(slot));
      if (end) {
        finished_ = true;
        return;
      }
    }
  }

  IteratorContext ctx_;  // the thread's copy, made before it starts
  std::unique_ptr<IteratorBase> input_;
  std::thread thread_;  // touched only by GetNext, TryGetNext and the destructor

  absl::Mutex input_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // held while the thread reads input
  absl::Mutex mu_;
  std::deque<Slot> buffer_ ABSL_GUARDED_BY(mu_);
  int paused_ ABSL_GUARDED_BY(mu_) = 0;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;  // the input's end is in buffer_
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

std::unique_ptr<IteratorBase> PrefetchDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<PrefetchIterator>(SharedAs<PrefetchDataset>(), std::move(prefix));
}

class PrefetchOp : public UnaryDatasetOpKernel {
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(
      OpKernelContext* ctx, std::shared_ptr<const DatasetBase> input) override {
    ASSIGN_OR_RETURN(int64_t buffer_size, Int64Input(ctx, 1, "buffer_size"));
    if (buffer_size < -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer_size must be -1 (AUTOTUNE), 0 or positive, got ", buffer_size));
    }
    if (buffer_size == 0) return input;  // nothing to prefetch
    return std::make_shared<PrefetchDataset>(node(), std::move(input), buffer_size);
  }
};

}  // namespace

namespace internal {
std::shared_ptr<const DatasetBase> MakePrefetchDataset(std::string node,
                                                       std::shared_ptr<const DatasetBase> input,
                                                       int64_t buffer_size) {
  return std::make_shared<PrefetchDataset>(std::move(node), std::move(input), buffer_size);
}

void RegisterPrefetchKernels(KernelRegistry* kernels) {
  kernels->Register<PrefetchOp>(KernelDef("PrefetchDataset", kDeviceTypeCpu));
}
}  // namespace internal

}  // namespace data
}  // namespace sluice
