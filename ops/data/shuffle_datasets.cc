// ShuffleDataset(V2, V3) and ShuffleAndRepeatDataset(V2): a buffer of buffer_size
// elements; each GetNext refills it from the input and hands out a random
// one. ShuffleAndRepeat remakes its input `count` times (-1: forever), the
// buffer running across epochs as TensorFlow's does.
//
// Seeds: seed = seed2 = 0 draws fresh seeds when the dataset is made (not
// reproducible); otherwise the order is a function of (seed, seed2). With
// reshuffle_each_iteration each iterator made from the dataset (each epoch
// of a RepeatDataset above it) takes the next seeds of a stream that starts
// at (seed, seed2); without it every iterator uses (seed, seed2) itself.
// ShuffleDatasetV2 takes (seed, seed2, reshuffle) from an
// AnonymousSeedGenerator; V3 and ShuffleAndRepeatDatasetV2 use their own
// inputs and attr and leave their seed generator unused. The generator is
// SplitMix64 over a counter, not TensorFlow's Philox
// stream: the same seeds give the same order in Sluice, not TensorFlow's.
//
// Checkpoints save the buffer, the input, the generator's counter and the
// dataset's seed stream position, so a restored pipeline continues the
// same order (and the next epochs' orders).
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "ops/data/dataset_kernel.h"
#include "ops/data/internal/dataset_kernels.h"
#include "runtime/resource_handle.h"

namespace sluice {
namespace data {
namespace {

uint64_t Mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Draw k of the stream keyed by (seed, seed2).
uint64_t Draw(int64_t seed, int64_t seed2, int64_t k) {
  return Mix(Mix(static_cast<uint64_t>(seed)) ^ Mix(static_cast<uint64_t>(seed2) + 1) ^
             Mix(static_cast<uint64_t>(k) * 0x632be59bd9b4e019ull));
}

// The seeds of successive iterators of one dataset.
class SeedStream {
 public:
  SeedStream(int64_t seed, int64_t seed2, bool reshuffle)
      : seed_(seed), seed2_(seed2), reshuffle_(reshuffle) {}
  // Seeds for the next iterator.
  std::pair<int64_t, int64_t> Next() {
    if (!reshuffle_) return {seed_, seed2_};
    absl::MutexLock l(&mu_);
    const int64_t k = next_++;
    return {static_cast<int64_t>(Draw(seed_, seed2_, 2 * k)),
            static_cast<int64_t>(Draw(seed_, seed2_, 2 * k + 1))};
  }
  int64_t position() const {
    absl::MutexLock l(&mu_);
    return next_;
  }
  void set_position(int64_t k) {
    absl::MutexLock l(&mu_);
    next_ = k;
  }

 private:
  const int64_t seed_, seed2_;
  const bool reshuffle_;
  mutable absl::Mutex mu_;
  int64_t next_ ABSL_GUARDED_BY(mu_) = 0;
};

class ShuffleDataset : public DatasetBase {
 public:
  ShuffleDataset(std::string node, std::shared_ptr<const DatasetBase> input, int64_t buffer_size,
                 int64_t seed, int64_t seed2, bool reshuffle, int64_t count)
      : DatasetBase(std::move(node), input->output_dtypes(), input->output_shapes()),
        input_(std::move(input)),
        buffer_size_(buffer_size),
        count_(count),
        seeds_(std::make_unique<SeedStream>(seed, seed2, reshuffle)) {}
  std::string Name() const override { return count_ == 1 ? "Shuffle" : "ShuffleAndRepeat"; }
  int64_t Cardinality() const override {
    const int64_t n = input_->Cardinality();
    if (count_ == 1 || n < 0) return n;
    if (count_ < 0) return n == 0 ? 0 : kInfiniteCardinality;
    return n * count_;
  }
  const DatasetBase& input() const { return *input_; }
  int64_t buffer_size() const { return buffer_size_; }
  int64_t count() const { return count_; }
  SeedStream& seeds() const { return *seeds_; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  const std::shared_ptr<const DatasetBase> input_;
  const int64_t buffer_size_;
  const int64_t count_;  // epochs of the input: 1 for ShuffleDataset, -1 forever
  const std::unique_ptr<SeedStream> seeds_;  // shared by the dataset's iterators
};

class ShuffleIterator : public DatasetIterator<ShuffleDataset> {
 public:
  using DatasetIterator::DatasetIterator;

  absl::Status Initialize(IteratorContext* ctx) override {
    std::tie(seed_, seed2_) = dataset()->seeds().Next();
    if (dataset()->count() == 0) return absl::OkStatus();  // no epochs
    ASSIGN_OR_RETURN(input_, dataset()->input().MakeIterator(ctx, prefix()));
    return absl::OkStatus();
  }

  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    out->clear();
    RETURN_IF_ERROR(Fill(ctx));
    *end = buffer_.empty();
    if (*end) return absl::OkStatus();
    const size_t i = Draw(seed_, seed2_, draws_++) % buffer_.size();
    *out = std::move(buffer_[i]);
    if (i + 1 != buffer_.size()) buffer_[i] = std::move(buffer_.back());
    buffer_.pop_back();
    return absl::OkStatus();
  }

  absl::Status Save(IteratorStateWriter* w) override {
    w->WriteInt(Key("seed"), seed_);
    w->WriteInt(Key("seed2"), seed2_);
    w->WriteInt(Key("draws"), draws_);
    w->WriteInt(Key("epoch"), epoch_);
    w->WriteInt(Key("epoch_elements"), epoch_elements_);
    w->WriteInt(Key("seed_stream"), dataset()->seeds().position());
    w->WriteInt(Key("buffer"), static_cast<int64_t>(buffer_.size()));
    for (size_t i = 0; i < buffer_.size(); ++i) {
      SaveElement(w, *this, absl::StrCat("buffer.", i), buffer_[i]);
    }
    return SaveInput(w, *this, "input", input_.get());
  }

  absl::Status Restore(IteratorContext* ctx, const IteratorStateReader& r) override {
    ASSIGN_OR_RETURN(seed_, r.ReadInt(Key("seed")));
    ASSIGN_OR_RETURN(seed2_, r.ReadInt(Key("seed2")));
    ASSIGN_OR_RETURN(draws_, r.ReadInt(Key("draws")));
    ASSIGN_OR_RETURN(epoch_, r.ReadInt(Key("epoch")));
    ASSIGN_OR_RETURN(epoch_elements_, r.ReadInt(Key("epoch_elements")));
    ASSIGN_OR_RETURN(int64_t stream, r.ReadInt(Key("seed_stream")));
    dataset()->seeds().set_position(stream);
    ASSIGN_OR_RETURN(int64_t n, r.ReadInt(Key("buffer")));
    buffer_.clear();
    buffer_.reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(std::vector<Tensor> e, RestoreElement(r, *this, absl::StrCat("buffer.", i)));
      buffer_.push_back(std::move(e));
    }
    return RestoreInput(ctx, r, *this, "input", dataset()->input(), &input_);
  }

 private:
  // Tops the buffer up from the input, starting the next epoch when one ends.
  absl::Status Fill(IteratorContext* ctx) {
    const size_t want = static_cast<size_t>(dataset()->buffer_size());
    if (buffer_.capacity() < want && want <= (1 << 16)) buffer_.reserve(want);
    while (input_ != nullptr && buffer_.size() < want) {
      std::vector<Tensor> e;
      bool end = false;
      RETURN_IF_ERROR(input_->GetNext(ctx, &e, &end));
      if (!end) {
        buffer_.push_back(std::move(e));
        ++epoch_elements_;
        continue;
      }
      input_.reset();
      ++epoch_;
      const int64_t count = dataset()->count();
      const bool more = (count < 0 || epoch_ < count) && epoch_elements_ > 0;
      epoch_elements_ = 0;
      if (more) {
        ASSIGN_OR_RETURN(input_, dataset()->input().MakeIterator(ctx, prefix()));
      }
    }
    return absl::OkStatus();
  }

  int64_t seed_ = 0, seed2_ = 0;
  int64_t draws_ = 0;
  int64_t epoch_ = 0;
  int64_t epoch_elements_ = 0;  // elements the current epoch gave so far
  std::unique_ptr<IteratorBase> input_;  // null once every epoch is read
  std::vector<std::vector<Tensor>> buffer_;
};

std::unique_ptr<IteratorBase> ShuffleDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<ShuffleIterator>(SharedAs<ShuffleDataset>(), std::move(prefix));
}

// AnonymousSeedGenerator's resource: the seeds ShuffleDatasetV2 takes.
// (DummySeedGenerator makes one with reshuffle false and no seeds.)
class SeedGenerator : public ResourceBase {
 public:
  SeedGenerator(int64_t seed, int64_t seed2, bool reshuffle)
      : seed(seed), seed2(seed2), reshuffle(reshuffle) {}
  std::string DebugString() const override { return "SeedGenerator"; }
  const int64_t seed, seed2;
  const bool reshuffle;
};

absl::StatusOr<SeedGenerator*> SeedGeneratorInput(OpKernelContext* ctx, int i) {
  return LookupResourceInput<SeedGenerator>(ctx, i, "seed generator");
}

// AnonymousSeedGenerator (kAnonymous) and DummySeedGenerator.
template <bool kAnonymous>
class SeedGeneratorOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    int64_t seed = 0, seed2 = 0;
    bool reshuffle = false;
    if (kAnonymous) {
      ASSIGN_OR_RETURN(seed, Int64Input(ctx, 0, "seed"));
      ASSIGN_OR_RETURN(seed2, Int64Input(ctx, 1, "seed2"));
      ASSIGN_OR_RETURN(reshuffle, BoolInput(ctx, 2, "reshuffle"));
    }
    static std::atomic<int64_t> next{0};
    const std::string name = absl::StrCat("_SeedGenerator", next.fetch_add(1));
    RETURN_IF_ERROR(ctx->resource_manager()
                        ->LookupOrCreate<SeedGenerator>(
                            "", name,
                            [&]() -> absl::StatusOr<std::unique_ptr<SeedGenerator>> {
                              return std::make_unique<SeedGenerator>(seed, seed2, reshuffle);
                            })
                        .status());
    Tensor h(DT_RESOURCE, TensorShape({}));
    h.scalar<std::string>() = MakeResourceHandle("", name);
    ctx->set_output(0, h);
    if (kAnonymous) {
      Tensor d(::tensorflow::DT_VARIANT, TensorShape({}));
      d.scalar<Variant>() = Variant(std::make_shared<SeedGeneratorDeleter>());
      ctx->set_output(1, d);
    }
    return absl::OkStatus();
  }

 private:
  class SeedGeneratorDeleter : public VariantValue {
   public:
    std::string TypeName() const override { return "SeedGeneratorDeleter"; }
  };
};

class DeleteSeedGeneratorOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    RETURN_IF_ERROR(SeedGeneratorInput(ctx, 0).status());
    ASSIGN_OR_RETURN(ResourceName n, ParseResourceHandle(ctx->input(0), "seed generator"));
    ctx->resource_manager()->Delete(n.container, n.name);
    return absl::OkStatus();
  }
};

enum class ShuffleVersion { kV1, kV2, kV3 };

// ShuffleDataset (V1, V2 with a seed generator's seeds, V3 with its own
// seeds beside a generator) and, with kRepeat, ShuffleAndRepeatDataset(V2).
template <bool kRepeat, ShuffleVersion kVersion = ShuffleVersion::kV1>
class ShuffleOp : public UnaryDatasetOpKernel {
  absl::Status InitDataset(const OpKernelConstruction& ctx) override {
    if (kVersion != ShuffleVersion::kV2) {
      ASSIGN_OR_RETURN(reshuffle_, ctx.GetAttr<bool>("reshuffle_each_iteration"));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(
      OpKernelContext* ctx, std::shared_ptr<const DatasetBase> input) override {
    ASSIGN_OR_RETURN(int64_t buffer_size, Int64Input(ctx, 1, "buffer_size"));
    if (buffer_size <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer_size must be greater than zero, got ", buffer_size));
    }
    int64_t seed = 0, seed2 = 0, count = 1;
    bool reshuffle = reshuffle_;
    if (kVersion == ShuffleVersion::kV2) {
      ASSIGN_OR_RETURN(SeedGenerator * g, SeedGeneratorInput(ctx, 2));
      seed = g->seed;
      seed2 = g->seed2;
      reshuffle = g->reshuffle;
    } else {
      ASSIGN_OR_RETURN(seed, Int64Input(ctx, 2, "seed"));
      ASSIGN_OR_RETURN(seed2, Int64Input(ctx, 3, "seed2"));
    }
    if (kRepeat) {
      ASSIGN_OR_RETURN(count, Int64Input(ctx, 4, "count"));
    }
    if (count < -1) {
      return absl::InvalidArgumentError(absl::StrCat("count must be -1 or >= 0, got ", count));
    }
    if (seed == 0 && seed2 == 0) {
      std::random_device rd;
      seed = (static_cast<int64_t>(rd()) << 32) ^ rd();
      seed2 = (static_cast<int64_t>(rd()) << 32) ^ rd();
    }
    return std::make_shared<ShuffleDataset>(node(), std::move(input), buffer_size, seed, seed2,
                                            reshuffle, count);
  }
  bool reshuffle_ = true;
};

}  // namespace

namespace internal {
void RegisterShuffleDatasetKernels(KernelRegistry* kernels) {
  kernels->Register<ShuffleOp<false>>(KernelDef("ShuffleDataset", kDeviceTypeCpu));
  kernels->Register<ShuffleOp<true>>(KernelDef("ShuffleAndRepeatDataset", kDeviceTypeCpu));
  kernels->Register<ShuffleOp<false, ShuffleVersion::kV2>>(
      KernelDef("ShuffleDatasetV2", kDeviceTypeCpu));
  kernels->Register<ShuffleOp<false, ShuffleVersion::kV3>>(
      KernelDef("ShuffleDatasetV3", kDeviceTypeCpu));
  kernels->Register<ShuffleOp<true, ShuffleVersion::kV3>>(
      KernelDef("ShuffleAndRepeatDatasetV2", kDeviceTypeCpu));
  kernels->Register<SeedGeneratorOp<true>>(KernelDef("AnonymousSeedGenerator", kDeviceTypeCpu));
  kernels->Register<SeedGeneratorOp<false>>(KernelDef("DummySeedGenerator", kDeviceTypeCpu));
  kernels->Register<DeleteSeedGeneratorOp>(KernelDef("DeleteSeedGenerator", kDeviceTypeCpu));
}
}  // namespace internal

}  // namespace data
}  // namespace sluice
