// CacheDataset: the first pass that reads its input to the end keeps every
// element; later passes read them from memory. With a filename the cache is
// also written to "<filename>.sluice-cache" (Sluice's iterator-state
// encoding, not TensorFlow's tensor-bundle cache files) when the first pass
// ends, and a later dataset with that filename reads the file instead of
// its input.
//
// A pass that stops early keeps nothing (TensorFlow's rule); two passes
// filling at once each keep their own and the first to end wins. A saved
// iterator carries the elements it has read or cached so far, so a restored
// one continues in a process that has no cache yet.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "ops/data/dataset_kernel.h"
#include "ops/data/internal/dataset_kernels.h"
#include "ops/io/file_write_policy.h"
#include "runtime/atomic_file.h"

namespace sluice {
namespace data {
namespace {

using Elements = std::vector<std::vector<Tensor>>;

class Cache {
 public:
  std::shared_ptr<const Elements> elements() const {
    absl::MutexLock l(&mu_);
    return elements_;
  }
  // Keeps `elements` unless a cache is there already.
  void Complete(std::shared_ptr<const Elements> elements) {
    absl::MutexLock l(&mu_);
    if (elements_ == nullptr) elements_ = std::move(elements);
  }

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const Elements> elements_ ABSL_GUARDED_BY(mu_);
};

class CacheDataset : public DatasetBase {
 public:
  CacheDataset(std::string node, std::shared_ptr<const DatasetBase> input, std::string filename)
      : DatasetBase(std::move(node), input->output_dtypes(), input->output_shapes()),
        input_(std::move(input)),
        filename_(std::move(filename)) {}
  std::string Name() const override { return "Cache"; }
  int64_t Cardinality() const override { return input_->Cardinality(); }
  const DatasetBase& input() const { return *input_; }
  Cache& cache() const { return cache_; }

  std::string path() const { return filename_.empty() ? "" : filename_ + ".sluice-cache"; }

  // Loads the file cache, once, when there is one.
  absl::Status LoadFile() const {
    if (filename_.empty() || cache_.elements() != nullptr) return absl::OkStatus();
    // A cache file is one a graph wrote: fenced as writes are (a server's
    // job directories), and only a regular file is read.
    RETURN_IF_ERROR(CheckGraphFileRead(path()));
    absl::StatusOr<std::string> bytes = ReadFileToString(path());
    if (absl::IsNotFound(bytes.status())) return absl::OkStatus();  // not written yet
    RETURN_IF_ERROR(bytes.status());
    ASSIGN_OR_RETURN(IteratorStateMap state, DecodeIteratorState(*bytes));
    IteratorStateReader r(std::move(state));
    ASSIGN_OR_RETURN(int64_t n, r.ReadInt("n"));
    auto elements = std::make_shared<Elements>();
    for (int64_t i = 0; i < n; ++i) {
      std::vector<Tensor> e;
      ASSIGN_OR_RETURN(int64_t k, r.ReadInt(absl::StrCat(i, ".size")));
      for (int64_t c = 0; c < k; ++c) {
        ASSIGN_OR_RETURN(Tensor t, r.ReadTensor(absl::StrCat(i, ".", c)));
        e.push_back(std::move(t));
      }
      elements->push_back(std::move(e));
    }
    cache_.Complete(std::move(elements));
    return absl::OkStatus();
  }

  absl::Status WriteFile(const Elements& elements) const {
    if (filename_.empty()) return absl::OkStatus();
    RETURN_IF_ERROR(CheckGraphFileWrite(path()));
    IteratorStateWriter w;
    w.WriteInt("n", static_cast<int64_t>(elements.size()));
    for (size_t i = 0; i < elements.size(); ++i) {
      w.WriteInt(absl::StrCat(i, ".size"), static_cast<int64_t>(elements[i].size()));
      for (size_t c = 0; c < elements[i].size(); ++c) {
        w.WriteTensor(absl::StrCat(i, ".", c), elements[i][c]);
      }
    }
    return WriteFileAtomically(path(), EncodeIteratorState(w.values()));
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  const std::shared_ptr<const DatasetBase> input_;
  const std::string filename_;
  mutable Cache cache_;
};

class CacheIterator : public DatasetIterator<CacheDataset> {
 public:
  using DatasetIterator::DatasetIterator;

  absl::Status Initialize(IteratorContext* ctx) override {
    RETURN_IF_ERROR(dataset()->LoadFile());
    cached_ = dataset()->cache().elements();
    if (cached_ != nullptr) return absl::OkStatus();
    filling_ = std::make_shared<Elements>();
    ASSIGN_OR_RETURN(input_, dataset()->input().MakeIterator(ctx, prefix()));
    return absl::OkStatus();
  }

  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    out->clear();
    *end = false;
    if (cached_ != nullptr) {
      *end = next_ >= static_cast<int64_t>(cached_->size());
      if (!*end) *out = (*cached_)[next_++];
      return absl::OkStatus();
    }
    if (input_ == nullptr) {
      *end = true;
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
    if (!*end) {
      filling_->push_back(*out);
      return absl::OkStatus();
    }
    input_.reset();
    RETURN_IF_ERROR(dataset()->WriteFile(*filling_));
    dataset()->cache().Complete(std::move(filling_));
    return absl::OkStatus();
  }

  absl::Status Save(IteratorStateWriter* w) override {
    w->WriteInt(Key("next"), next_);
    w->WriteInt(Key("reading"), cached_ != nullptr ? 1 : 0);
    if (cached_ != nullptr) {
      // The cache goes with the position: a restarted process has none.
      w->WriteInt(Key("cached"), static_cast<int64_t>(cached_->size()));
      for (size_t i = 0; i < cached_->size(); ++i) {
        SaveElement(w, *this, absl::StrCat("cached.", i), (*cached_)[i]);
      }
      return absl::OkStatus();
    }
    w->WriteInt(Key("filled"), filling_ ? static_cast<int64_t>(filling_->size()) : 0);
    for (size_t i = 0; filling_ && i < filling_->size(); ++i) {
      SaveElement(w, *this, absl::StrCat("filled.", i), (*filling_)[i]);
    }
    return SaveInput(w, *this, "input", input_.get());
  }

  absl::Status Restore(IteratorContext* ctx, const IteratorStateReader& r) override {
    ASSIGN_OR_RETURN(next_, r.ReadInt(Key("next")));
    ASSIGN_OR_RETURN(int64_t reading, r.ReadInt(Key("reading")));
    if (reading != 0) {
      ASSIGN_OR_RETURN(int64_t n, r.ReadInt(Key("cached")));
      auto elements = std::make_shared<Elements>();
      for (int64_t i = 0; i < n; ++i) {
        ASSIGN_OR_RETURN(std::vector<Tensor> e,
                         RestoreElement(r, *this, absl::StrCat("cached.", i)));
        elements->push_back(std::move(e));
      }
      dataset()->cache().Complete(std::move(elements));
      cached_ = dataset()->cache().elements();
      return absl::OkStatus();
    }
    cached_.reset();
    ASSIGN_OR_RETURN(int64_t n, r.ReadInt(Key("filled")));
    filling_ = std::make_shared<Elements>();
    for (int64_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(std::vector<Tensor> e, RestoreElement(r, *this, absl::StrCat("filled.", i)));
      filling_->push_back(std::move(e));
    }
    return RestoreInput(ctx, r, *this, "input", dataset()->input(), &input_);
  }

 private:
  std::shared_ptr<const Elements> cached_;  // reading the cache
  int64_t next_ = 0;
  std::shared_ptr<Elements> filling_;       // or filling it from input_
  std::unique_ptr<IteratorBase> input_;
};

std::unique_ptr<IteratorBase> CacheDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<CacheIterator>(SharedAs<CacheDataset>(), std::move(prefix));
}

class CacheOp : public UnaryDatasetOpKernel {
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(
      OpKernelContext* ctx, std::shared_ptr<const DatasetBase> input) override {
    const Tensor& f = ctx->input(1);
    if (f.dtype() != DT_STRING || f.dims() != 0) {
      return absl::InvalidArgumentError("filename must be a string scalar");
    }
    return std::make_shared<CacheDataset>(node(), std::move(input), f.scalar<std::string>());
  }
};

}  // namespace

namespace internal {
void RegisterCacheKernels(KernelRegistry* kernels) {
  kernels->Register<CacheOp>(KernelDef("CacheDataset", kDeviceTypeCpu));
}
}  // namespace internal

}  // namespace data
}  // namespace sluice
