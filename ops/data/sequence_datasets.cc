// Datasets that reorder or count their input's elements without looking at
// them: RepeatDataset, TakeDataset, SkipDataset, ShardDataset,
// ConcatenateDataset, ZipDataset; OptimizeDataset(V2), ModelDataset and the
// options TF 2 attaches (OptionsDataset, PrivateThreadPoolDataset,
// MaxIntraOpParallelismDataset) pass their input through: Sluice runs a
// pipeline as written.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/data/dataset_kernel.h"
#include "ops/data/internal/dataset_kernels.h"

namespace sluice {
namespace data {
namespace {

enum class Kind { kRepeat, kTake, kSkip, kShard };

// Repeat, Take, Skip and Shard: one input and two numbers.
class CountDataset : public DatasetBase {
 public:
  CountDataset(std::string node, Kind kind, std::shared_ptr<const DatasetBase> input,
               int64_t count, int64_t index = 0, bool require_non_empty = false)
      : DatasetBase(std::move(node), input->output_dtypes(), input->output_shapes()),
        kind_(kind),
        input_(std::move(input)),
        count_(count),
        index_(index),
        require_non_empty_(require_non_empty) {}
  std::string Name() const override {
    switch (kind_) {
      case Kind::kRepeat: return "Repeat";
      case Kind::kTake: return "Take";
      case Kind::kSkip: return "Skip";
      case Kind::kShard: return "Shard";
    }
    return "";
  }
  int64_t Cardinality() const override {
    const int64_t n = input_->Cardinality();
    switch (kind_) {
      case Kind::kRepeat:
        if (count_ == 0 || n == 0) return 0;
        if (n < 0) return n;
        return count_ < 0 ? kInfiniteCardinality : n * count_;
      case Kind::kTake:
        if (count_ < 0) return n;
        if (n == kInfiniteCardinality) return count_;
        return n < 0 ? n : std::min(n, count_);
      case Kind::kSkip:
        if (n < 0) return n;
        return count_ < 0 ? 0 : std::max<int64_t>(0, n - count_);
      case Kind::kShard:
        if (n < 0) return n;
        return n / count_ + (index_ < n % count_ ? 1 : 0);
    }
    return kUnknownCardinality;
  }
  Kind kind() const { return kind_; }
  const DatasetBase& input() const { return *input_; }
  int64_t count() const { return count_; }
  int64_t index() const { return index_; }
  bool require_non_empty() const { return require_non_empty_; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  const Kind kind_;
  const std::shared_ptr<const DatasetBase> input_;
  const int64_t count_;  // repeats, elements taken or skipped, or num_shards
  const int64_t index_;  // Shard's
  const bool require_non_empty_;
};

class CountIterator : public DatasetIterator<CountDataset> {
 public:
  using DatasetIterator::DatasetIterator;
  absl::Status Initialize(IteratorContext* ctx) override {
    if (dataset()->kind() == Kind::kRepeat && dataset()->count() == 0) return absl::OkStatus();
    if (dataset()->kind() == Kind::kTake && dataset()->count() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(input_, dataset()->input().MakeIterator(ctx, prefix()));
    return absl::OkStatus();
  }

  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    out->clear();
    *end = false;
    switch (dataset()->kind()) {
      case Kind::kRepeat: return Repeat(ctx, out, end);
      case Kind::kTake: {
        const int64_t count = dataset()->count();
        if (input_ != nullptr && (count < 0 || n_ < count)) {
          RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
          if (!*end) {
            ++n_;
            return absl::OkStatus();
          }
        }
        input_.reset();
        *end = true;
        return absl::OkStatus();
      }
      case Kind::kSkip: {
        const int64_t count = dataset()->count();
        while (input_ != nullptr && (count < 0 || n_ < count)) {
          RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
          if (*end) break;
          ++n_;
        }
        if (input_ != nullptr && !*end) RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
        if (*end || input_ == nullptr) {
          input_.reset();
          out->clear();
          *end = true;
        }
        return absl::OkStatus();
      }
      case Kind::kShard: return Shard(ctx, out, end);
    }
    return absl::OkStatus();
  }

  absl::Status Save(IteratorStateWriter* w) override {
    w->WriteInt(Key("n"), n_);
    w->WriteInt(Key("produced"), produced_);
    return SaveInput(w, *this, "input", input_.get());
  }
  absl::Status Restore(IteratorContext* ctx, const IteratorStateReader& r) override {
    ASSIGN_OR_RETURN(n_, r.ReadInt(Key("n")));
    ASSIGN_OR_RETURN(produced_, r.ReadInt(Key("produced")));
    return RestoreInput(ctx, r, *this, "input", dataset()->input(), &input_);
  }

 private:
  // n_ counts finished epochs; produced_ the elements of this epoch.
  absl::Status Repeat(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) {
    const int64_t count = dataset()->count();
    while (input_ != nullptr) {
      RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
      if (!*end) {
        ++produced_;
        return absl::OkStatus();
      }
      ++n_;
      input_.reset();
      // An empty epoch ends a forever-repeat (TensorFlow's rule too).
      if ((count < 0 && produced_ > 0) || (count > 0 && n_ < count)) {
        ASSIGN_OR_RETURN(input_, dataset()->input().MakeIterator(ctx, prefix()));
      }
      produced_ = 0;
    }
    *end = true;
    return absl::OkStatus();
  }

  // n_ counts the input's elements read; produced_ this shard's.
  absl::Status Shard(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) {
    const int64_t num = dataset()->count();
    const int64_t index = dataset()->index();
    while (input_ != nullptr) {
      RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
      if (*end) {
        input_.reset();
        break;
      }
      if ((n_++) % num == index) {
        ++produced_;
        return absl::OkStatus();
      }
    }
    out->clear();
    *end = true;
    if (produced_ == 0 && dataset()->require_non_empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Could not shard the dataset: shard ", index, " of ", num,
          " got no elements (require_non_empty is set; ShardDataset '", dataset()->node(),
          "')"));
    }
    return absl::OkStatus();
  }

  std::unique_ptr<IteratorBase> input_;  // null once exhausted
  int64_t n_ = 0;
  int64_t produced_ = 0;
};

std::unique_ptr<IteratorBase> CountDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<CountIterator>(SharedAs<CountDataset>(), std::move(prefix));
}

template <Kind kKind>
class CountOp : public UnaryDatasetOpKernel {
  absl::Status InitDataset(const OpKernelConstruction& ctx) override {
    if (kKind == Kind::kShard) {
      ASSIGN_OR_RETURN(require_non_empty_, ctx.GetAttr<bool>("require_non_empty"));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(
      OpKernelContext* ctx, std::shared_ptr<const DatasetBase> input) override {
    if (kKind == Kind::kShard) {
      ASSIGN_OR_RETURN(int64_t num, Int64Input(ctx, 1, "num_shards"));
      ASSIGN_OR_RETURN(int64_t index, Int64Input(ctx, 2, "index"));
      if (num <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Number of shards must be greater than zero (currently num_shards = ",
                         num, ")."));
      }
      if (index < 0 || index >= num) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Index must be between 0 and ", num - 1, " (currently index = ", index, ")."));
      }
      return std::make_shared<CountDataset>(node(), kKind, std::move(input), num, index,
                                            require_non_empty_);
    }
    ASSIGN_OR_RETURN(int64_t count, Int64Input(ctx, 1, "count"));
    if (count < -1) {
      return absl::InvalidArgumentError(absl::StrCat("count must be -1 or >= 0, got ", count));
    }
    return std::make_shared<CountDataset>(node(), kKind, std::move(input), count);
  }
  bool require_non_empty_ = false;
};

// Concatenate (every input in turn) and Zip (one element of each at once).
class MultiDataset : public DatasetBase {
 public:
  MultiDataset(std::string node, bool zip, std::vector<std::shared_ptr<const DatasetBase>> inputs,
               DataTypeVector dtypes, std::vector<TensorShape> shapes)
      : DatasetBase(std::move(node), std::move(dtypes), std::move(shapes)),
        zip_(zip),
        inputs_(std::move(inputs)) {}
  std::string Name() const override { return zip_ ? "Zip" : "Concatenate"; }
  int64_t Cardinality() const override {
    int64_t total = zip_ ? kInfiniteCardinality : 0;
    for (const auto& in : inputs_) {
      const int64_t n = in->Cardinality();
      if (zip_) {
        if (n == kUnknownCardinality) return n;
        if (n >= 0) total = total < 0 ? n : std::min(total, n);
      } else {
        if (n < 0) return n;
        total += n;
      }
    }
    return total;
  }
  bool zip() const { return zip_; }
  const std::vector<std::shared_ptr<const DatasetBase>>& inputs() const { return inputs_; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  const bool zip_;
  const std::vector<std::shared_ptr<const DatasetBase>> inputs_;
};

class MultiIterator : public DatasetIterator<MultiDataset> {
 public:
  using DatasetIterator::DatasetIterator;
  absl::Status Initialize(IteratorContext* ctx) override {
    const auto& inputs = dataset()->inputs();
    for (size_t i = 0; i < inputs.size(); ++i) {
      // Concatenate starts only its first input; the next when it ends.
      if (!dataset()->zip() && i > 0) {
        its_.emplace_back();
        continue;
      }
      ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it,
                       inputs[i]->MakeIterator(ctx, absl::StrCat(prefix(), "[", i, "]")));
      its_.push_back(std::move(it));
    }
    return absl::OkStatus();
  }

  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    out->clear();
    *end = false;
    if (done_) {
      *end = true;
      return absl::OkStatus();
    }
    if (dataset()->zip()) {
      std::vector<Tensor> part;
      for (auto& it : its_) {
        RETURN_IF_ERROR(it->GetNext(ctx, &part, end));
        if (*end) {
          done_ = true;
          out->clear();
          return absl::OkStatus();
        }
        out->insert(out->end(), part.begin(), part.end());
      }
      return absl::OkStatus();
    }
    const auto& inputs = dataset()->inputs();
    while (current_ < static_cast<int64_t>(its_.size())) {
      RETURN_IF_ERROR(its_[current_]->GetNext(ctx, out, end));
      if (!*end) return absl::OkStatus();
      its_[current_].reset();
      if (++current_ < static_cast<int64_t>(its_.size())) {
        ASSIGN_OR_RETURN(its_[current_],
                         inputs[current_]->MakeIterator(ctx,
                                                        absl::StrCat(prefix(), "[", current_, "]")));
      }
    }
    done_ = true;
    *end = true;
    return absl::OkStatus();
  }

  absl::Status Save(IteratorStateWriter* w) override {
    w->WriteInt(Key("current"), current_);
    w->WriteInt(Key("done"), done_ ? 1 : 0);
    if (done_) return absl::OkStatus();
    for (auto& it : its_) {
      if (it != nullptr) RETURN_IF_ERROR(it->Save(w));
    }
    return absl::OkStatus();
  }
  absl::Status Restore(IteratorContext* ctx, const IteratorStateReader& r) override {
    ASSIGN_OR_RETURN(current_, r.ReadInt(Key("current")));
    ASSIGN_OR_RETURN(int64_t done, r.ReadInt(Key("done")));
    done_ = done != 0;
    const auto& inputs = dataset()->inputs();
    for (size_t i = 0; i < its_.size(); ++i) {
      its_[i].reset();
      if (done_ || (!dataset()->zip() && static_cast<int64_t>(i) != current_)) continue;
      ASSIGN_OR_RETURN(its_[i], inputs[i]->MakeIterator(ctx, absl::StrCat(prefix(), "[", i, "]")));
      RETURN_IF_ERROR(its_[i]->Restore(ctx, r));
    }
    return absl::OkStatus();
  }

 private:
  std::vector<std::unique_ptr<IteratorBase>> its_;
  int64_t current_ = 0;  // Concatenate's input being read
  bool done_ = false;
};

std::unique_ptr<IteratorBase> MultiDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<MultiIterator>(SharedAs<MultiDataset>(), std::move(prefix));
}

class ConcatenateOp : public DatasetOpKernel {
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(auto a, DatasetInput(ctx, 0, "input_dataset"));
    ASSIGN_OR_RETURN(auto b, DatasetInput(ctx, 1, "another_dataset"));
    if (a->output_dtypes() != b->output_dtypes()) {
      return absl::InvalidArgumentError(
          "input dataset and dataset to concatenate have different types");
    }
    return std::make_shared<MultiDataset>(node(), false,
                                          std::vector<std::shared_ptr<const DatasetBase>>{a, b},
                                          dtypes(), shapes());
  }
};

class ZipOp : public DatasetOpKernel {
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    std::vector<std::shared_ptr<const DatasetBase>> inputs;
    DataTypeVector all;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      ASSIGN_OR_RETURN(auto in, DatasetInput(ctx, i, absl::StrCat("input_datasets[", i, "]")));
      all.insert(all.end(), in->output_dtypes().begin(), in->output_dtypes().end());
      inputs.push_back(std::move(in));
    }
    if (all != dtypes()) {
      return absl::InvalidArgumentError("the zipped datasets' types do not match output_types");
    }
    return std::make_shared<MultiDataset>(node(), true, std::move(inputs), dtypes(), shapes());
  }
};

// OptimizeDataset(V2), ModelDataset: the input itself.
class PassThroughOp : public UnaryDatasetOpKernel {
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(
      OpKernelContext*, std::shared_ptr<const DatasetBase> input) override {
    return input;
  }
};

}  // namespace

namespace internal {
void RegisterSequenceDatasetKernels(KernelRegistry* kernels) {
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  kernels->Register<CountOp<Kind::kRepeat>>(cpu("RepeatDataset"));
  kernels->Register<CountOp<Kind::kTake>>(cpu("TakeDataset"));
  kernels->Register<CountOp<Kind::kSkip>>(cpu("SkipDataset"));
  kernels->Register<CountOp<Kind::kShard>>(cpu("ShardDataset"));
  kernels->Register<ConcatenateOp>(cpu("ConcatenateDataset"));
  kernels->Register<ZipOp>(cpu("ZipDataset"));
  kernels->Register<PassThroughOp>(cpu("OptimizeDataset"));
  kernels->Register<PassThroughOp>(cpu("OptimizeDatasetV2"));
  kernels->Register<PassThroughOp>(cpu("ModelDataset"));
  kernels->Register<PassThroughOp>(cpu("OptionsDataset"));
  kernels->Register<PassThroughOp>(cpu("PrivateThreadPoolDataset"));
  kernels->Register<PassThroughOp>(cpu("MaxIntraOpParallelismDataset"));
}
}  // namespace internal

}  // namespace data
}  // namespace sluice
