// MapDataset and FilterDataset: a function per element, on the thread that
// asks for it (ParallelMapDataset runs it on threads of its own:
// parallel_map_dataset.cc).
#include <memory>
#include <string>
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

class MapDataset : public DatasetBase {
 public:
  MapDataset(std::string node, std::shared_ptr<const DatasetBase> input,
             std::shared_ptr<const CapturedFunction> fn, DataTypeVector dtypes,
             std::vector<TensorShape> shapes, bool preserve_cardinality)
      : DatasetBase(std::move(node), std::move(dtypes), std::move(shapes)),
        input_(std::move(input)),
        fn_(std::move(fn)),
        preserve_cardinality_(preserve_cardinality) {}
  std::string Name() const override { return "Map"; }
  int64_t Cardinality() const override {
    return preserve_cardinality_ ? input_->Cardinality() : kUnknownCardinality;
  }
  const DatasetBase& input() const { return *input_; }
  const CapturedFunction& fn() const { return *fn_; }
  bool preserve_cardinality() const { return preserve_cardinality_; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  const std::shared_ptr<const DatasetBase> input_;
  const std::shared_ptr<const CapturedFunction> fn_;
  const bool preserve_cardinality_;
};

class MapIterator : public DatasetIterator<MapDataset> {
 public:
  using DatasetIterator::DatasetIterator;
  absl::Status Initialize(IteratorContext* ctx) override {
    ASSIGN_OR_RETURN(input_, dataset()->input().MakeIterator(ctx, prefix()));
    return absl::OkStatus();
  }
  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    RETURN_IF_ERROR(input_->GetNext(ctx, &args_, end));
    out->clear();
    if (*end) return absl::OkStatus();
    absl::Status s = dataset()->fn().Run(std::move(args_), out);
    args_.clear();
    if (absl::IsOutOfRange(s)) {
      // TensorFlow: a function's OutOfRange ends the sequence, unless the
      // dataset promised to keep its input's cardinality.
      if (dataset()->preserve_cardinality()) return absl::InvalidArgumentError(s.message());
      *end = true;
      out->clear();
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(s);
    return CheckElement(*out, dataset()->output_dtypes(), dataset()->output_shapes(),
                        absl::StrCat("the function of MapDataset '", dataset()->node(), "'"));
  }
  absl::Status Save(IteratorStateWriter* w) override { return input_->Save(w); }
  absl::Status Restore(IteratorContext* ctx, const IteratorStateReader& r) override {
    return input_->Restore(ctx, r);
  }

 private:
  std::unique_ptr<IteratorBase> input_;
  std::vector<Tensor> args_;
};

std::unique_ptr<IteratorBase> MapDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<MapIterator>(SharedAs<MapDataset>(), std::move(prefix));
}

class MapOp : public FunctionDatasetOpKernel {
 public:
  MapOp() : FunctionDatasetOpKernel("f") {}

 private:
  absl::Status InitFunctionDataset(const OpKernelConstruction& ctx) override {
    if (ctx.node().attrs().contains("preserve_cardinality")) {
      ASSIGN_OR_RETURN(preserve_cardinality_, ctx.GetAttr<bool>("preserve_cardinality"));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(
      OpKernelContext* ctx, std::shared_ptr<const DatasetBase> input) override {
    return std::make_shared<MapDataset>(node(), std::move(input), Captured(ctx), dtypes(),
                                        shapes(), preserve_cardinality_);
  }
  bool preserve_cardinality_ = false;
};

class FilterDataset : public DatasetBase {
 public:
  FilterDataset(std::string node, std::shared_ptr<const DatasetBase> input,
                std::shared_ptr<const CapturedFunction> fn)
      : DatasetBase(std::move(node), input->output_dtypes(), input->output_shapes()),
        input_(std::move(input)),
        fn_(std::move(fn)) {}
  std::string Name() const override { return "Filter"; }
  const DatasetBase& input() const { return *input_; }
  const CapturedFunction& fn() const { return *fn_; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  const std::shared_ptr<const DatasetBase> input_;
  const std::shared_ptr<const CapturedFunction> fn_;
};

class FilterIterator : public DatasetIterator<FilterDataset> {
 public:
  using DatasetIterator::DatasetIterator;
  absl::Status Initialize(IteratorContext* ctx) override {
    ASSIGN_OR_RETURN(input_, dataset()->input().MakeIterator(ctx, prefix()));
    return absl::OkStatus();
  }
  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    std::vector<Tensor> result;
    while (true) {
      RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
      if (*end) return absl::OkStatus();
      RETURN_IF_ERROR(dataset()->fn().Run(*out, &result));
      if (result.size() != 1 || result[0].dtype() != DT_BOOL || result[0].NumElements() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Filter predicate `", dataset()->fn().spec().function,
            "` must return a scalar bool (FilterDataset '", dataset()->node(), "')."));
      }
      if (result[0].flat<bool>()[0]) return absl::OkStatus();
    }
  }
  absl::Status Save(IteratorStateWriter* w) override { return input_->Save(w); }
  absl::Status Restore(IteratorContext* ctx, const IteratorStateReader& r) override {
    return input_->Restore(ctx, r);
  }

 private:
  std::unique_ptr<IteratorBase> input_;
};

std::unique_ptr<IteratorBase> FilterDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<FilterIterator>(SharedAs<FilterDataset>(), std::move(prefix));
}

class FilterOp : public FunctionDatasetOpKernel {
 public:
  FilterOp() : FunctionDatasetOpKernel("predicate") {}

 private:
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(
      OpKernelContext* ctx, std::shared_ptr<const DatasetBase> input) override {
    return std::make_shared<FilterDataset>(node(), std::move(input), Captured(ctx));
  }
};

}  // namespace

namespace internal {
void RegisterMapDatasetKernels(KernelRegistry* kernels) {
  kernels->Register<MapOp>(KernelDef("MapDataset", kDeviceTypeCpu));
  kernels->Register<FilterOp>(KernelDef("FilterDataset", kDeviceTypeCpu));
}
}  // namespace internal

}  // namespace data
}  // namespace sluice
