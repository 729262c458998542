// FlatMapDataset, InterleaveDataset and ParallelInterleaveDatasetV2-V4: a
// function maps each input element to a dataset, whose elements are handed
// out in turn. FlatMap reads each dataset to its end before the next;
// Interleave keeps cycle_length of them open and takes block_length
// elements from each in turn (TensorFlow's order: a slot whose dataset
// ends is refilled from the input when the cycle comes back to it).
//
// ParallelInterleaveDatasetV2-V4 give Interleave's order (deterministic;
// `sloppy` / deterministic=false are accepted and give the same order) and
// read their open datasets in parallel: each is read ahead by a thread of
// its own (a PrefetchDataset of buffer_output_elements, AUTOTUNE: 4). The
// function itself runs on the consumer's thread; num_parallel_calls and
// prefetch_input_elements are checked, then not used.
//
// Checkpoints save each open slot's input element and its dataset's
// iterator; Restore calls the function on the element again.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/data/captured_function.h"
#include "ops/data/dataset_kernel.h"
#include "ops/data/internal/dataset_kernels.h"
#include "ops/data/internal/function_dataset.h"

namespace sluice {
namespace data {
namespace {

class InterleaveDataset : public DatasetBase {
 public:
  // cycle_length 1 and block_length "forever" is FlatMap.
  InterleaveDataset(std::string name, std::string node, std::shared_ptr<const DatasetBase> input,
                    std::shared_ptr<const CapturedFunction> fn, int64_t cycle_length,
                    int64_t block_length, DataTypeVector dtypes, std::vector<TensorShape> shapes,
                    int64_t read_ahead = 0)
      : DatasetBase(std::move(node), std::move(dtypes), std::move(shapes)),
        name_(std::move(name)),
        input_(std::move(input)),
        fn_(std::move(fn)),
        cycle_length_(cycle_length),
        block_length_(block_length),
        read_ahead_(read_ahead) {}
  std::string Name() const override { return name_; }
  const DatasetBase& input() const { return *input_; }
  int64_t cycle_length() const { return cycle_length_; }
  int64_t block_length() const { return block_length_; }

  // The dataset the function makes of `args`.
  absl::StatusOr<std::shared_ptr<const DatasetBase>> Apply(std::vector<Tensor> args) const {
    std::vector<Tensor> rets;
    RETURN_IF_ERROR(fn_->Run(std::move(args), &rets));
    if (rets.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the function of ", name_, "Dataset '", node(), "' returned ", rets.size(),
          " values; it must return one dataset"));
    }
    absl::StatusOr<std::shared_ptr<const DatasetBase>> ds = DatasetFromTensor(rets[0]);
    if (!ds.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the function of ", name_, "Dataset '", node(), "' must return a dataset: ",
          ds.status().message()));
    }
    if (read_ahead_ == 0) return ds;
    return internal::MakePrefetchDataset(node(), *std::move(ds), read_ahead_);
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  const std::string name_;
  const std::shared_ptr<const DatasetBase> input_;
  const std::shared_ptr<const CapturedFunction> fn_;
  const int64_t cycle_length_;
  const int64_t block_length_;
  const int64_t read_ahead_;  // 0: none; else each opened dataset is prefetched
};

class InterleaveIterator : public DatasetIterator<InterleaveDataset> {
 public:
  using DatasetIterator::DatasetIterator;

  absl::Status Initialize(IteratorContext* ctx) override {
    slots_.resize(dataset()->cycle_length());
    ASSIGN_OR_RETURN(input_, dataset()->input().MakeIterator(ctx, prefix()));
    return absl::OkStatus();
  }

  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    out->clear();
    while (input_ != nullptr || open_ > 0) {
      Slot& slot = slots_[cycle_index_];
      if (slot.iterator != nullptr) {
        bool inner_end = false;
        RETURN_IF_ERROR(slot.iterator->GetNext(ctx, out, &inner_end));
        if (!inner_end) {
          RETURN_IF_ERROR(CheckElement(*out, dataset()->output_dtypes(),
                                       dataset()->output_shapes(),
                                       absl::StrCat("a dataset made by the function of ",
                                                    dataset()->DebugString())));
          if (++block_index_ == dataset()->block_length()) Advance();
          *end = false;
          return absl::OkStatus();
        }
        slot = Slot();
        --open_;
        Advance();
      } else if (input_ != nullptr) {
        std::vector<Tensor> args;
        bool input_end = false;
        RETURN_IF_ERROR(input_->GetNext(ctx, &args, &input_end));
        if (input_end) {
          input_.reset();
          Advance();
          continue;
        }
        RETURN_IF_ERROR(Open(ctx, cycle_index_, std::move(args)));
      } else {
        Advance();
      }
    }
    *end = true;
    return absl::OkStatus();
  }

  absl::Status Save(IteratorStateWriter* w) override {
    w->WriteInt(Key("cycle_index"), cycle_index_);
    w->WriteInt(Key("block_index"), block_index_);
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].iterator == nullptr) continue;
      const std::string k = absl::StrCat("slot", i);
      w->WriteInt(Key(k), 1);
      SaveElement(w, *this, k + ".args", slots_[i].args);
      RETURN_IF_ERROR(slots_[i].iterator->Save(w));
    }
    return SaveInput(w, *this, "input", input_.get());
  }

  absl::Status Restore(IteratorContext* ctx, const IteratorStateReader& r) override {
    ASSIGN_OR_RETURN(cycle_index_, r.ReadInt(Key("cycle_index")));
    ASSIGN_OR_RETURN(block_index_, r.ReadInt(Key("block_index")));
    open_ = 0;
    for (size_t i = 0; i < slots_.size(); ++i) {
      slots_[i] = Slot();
      const std::string k = absl::StrCat("slot", i);
      if (!r.Contains(Key(k))) continue;
      ASSIGN_OR_RETURN(std::vector<Tensor> args, RestoreElement(r, *this, k + ".args"));
      RETURN_IF_ERROR(Open(ctx, i, std::move(args)));
      RETURN_IF_ERROR(slots_[i].iterator->Restore(ctx, r));
    }
    return RestoreInput(ctx, r, *this, "input", dataset()->input(), &input_);
  }

 private:
  struct Slot {
    std::vector<Tensor> args;  // the input element the dataset was made of
    std::unique_ptr<IteratorBase> iterator;
  };

  absl::Status Open(IteratorContext* ctx, size_t i, std::vector<Tensor> args) {
    ASSIGN_OR_RETURN(std::shared_ptr<const DatasetBase> ds, dataset()->Apply(args));
    ASSIGN_OR_RETURN(slots_[i].iterator, ds->MakeIterator(ctx, absl::StrCat(prefix(), "[", i, "]")));
    slots_[i].args = std::move(args);
    ++open_;
    return absl::OkStatus();
  }

  void Advance() {
    block_index_ = 0;
    cycle_index_ = (cycle_index_ + 1) % static_cast<int64_t>(slots_.size());
  }

  std::unique_ptr<IteratorBase> input_;  // null once exhausted
  std::vector<Slot> slots_;
  int64_t open_ = 0;
  int64_t cycle_index_ = 0;
  int64_t block_index_ = 0;
};

std::unique_ptr<IteratorBase> InterleaveDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<InterleaveIterator>(SharedAs<InterleaveDataset>(), std::move(prefix));
}

constexpr int64_t kAutotune = -1;

class FlatMapOp : public FunctionDatasetOpKernel {
 public:
  FlatMapOp() : FunctionDatasetOpKernel("f") {}

 private:
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(
      OpKernelContext* ctx, std::shared_ptr<const DatasetBase> input) override {
    return std::make_shared<InterleaveDataset>("FlatMap", node(), std::move(input),
                                               Captured(ctx), 1,
                                               std::numeric_limits<int64_t>::max(), dtypes(),
                                               shapes());
  }
};

// InterleaveDataset (kParallelInputs 0) and ParallelInterleaveDatasetV2-V4,
// whose extra int64 inputs after block_length number kParallelInputs.
template <int kParallelInputs>
class InterleaveOp : public FunctionDatasetOpKernel {
 public:
  InterleaveOp() : FunctionDatasetOpKernel("f") {}

 private:
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(
      OpKernelContext* ctx, std::shared_ptr<const DatasetBase> input) override {
    const int first = first_input_after_captured();
    ASSIGN_OR_RETURN(int64_t cycle_length, Int64Input(ctx, first, "cycle_length"));
    ASSIGN_OR_RETURN(int64_t block_length, Int64Input(ctx, first + 1, "block_length"));
    if (cycle_length == kAutotune) {
      cycle_length = std::max<int64_t>(1, std::thread::hardware_concurrency());
    }
    if (cycle_length <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cycle_length must be greater than zero, got ", cycle_length));
    }
    if (block_length <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("block_length must be greater than zero, got ", block_length));
    }
    int64_t read_ahead = kParallelInputs ? -1 : 0;
    for (int i = 0; i < kParallelInputs; ++i) {
      ASSIGN_OR_RETURN(int64_t v, Int64Input(ctx, first + 2 + i, "parallelism input"));
      if (v < -1 || (i == kParallelInputs - 1 && v == 0)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "num_parallel_calls, buffer_output_elements and prefetch_input_elements must be "
            "-1 or positive, got ", v));
      }
      if (kParallelInputs == 3 && i == 0 && v > 0) read_ahead = v;  // buffer_output_elements
    }
    return std::make_shared<InterleaveDataset>(kParallelInputs ? "ParallelInterleave" : "Interleave",
                                               node(), std::move(input), Captured(ctx),
                                               cycle_length, block_length, dtypes(), shapes(),
                                               read_ahead);
  }
};

}  // namespace

namespace internal {
void RegisterInterleaveKernels(KernelRegistry* kernels) {
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  kernels->Register<FlatMapOp>(cpu("FlatMapDataset"));
  kernels->Register<InterleaveOp<0>>(cpu("InterleaveDataset"));
  kernels->Register<InterleaveOp<1>>(cpu("ParallelInterleaveDatasetV2"));
  kernels->Register<InterleaveOp<1>>(cpu("ParallelInterleaveDatasetV3"));
  kernels->Register<InterleaveOp<3>>(cpu("ParallelInterleaveDatasetV4"));
}
}  // namespace internal

}  // namespace data
}  // namespace sluice
