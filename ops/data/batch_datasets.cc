// BatchDatasetV2 and PaddedBatchDatasetV2: batch_size consecutive elements
// stacked along a new first dimension. Batches of fixed-size dtypes are
// one allocation and a memcpy per element and component; PaddedBatch fills
// each component with its padding value, then copies each element's rows.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/data/dataset_kernel.h"
#include "ops/data/internal/dataset_kernels.h"
#include "ops/data/internal/tensor_rows.h"

namespace sluice {
namespace data {
namespace {

struct Padding {
  std::vector<TensorShape> shapes;  // per component; -1 dims: the batch's largest
  std::vector<Tensor> values;       // per component, a scalar
};

class BatchDataset : public DatasetBase {
 public:
  BatchDataset(std::string node, std::shared_ptr<const DatasetBase> input, int64_t batch_size,
               bool drop_remainder, std::unique_ptr<Padding> padding, DataTypeVector dtypes,
               std::vector<TensorShape> shapes)
      : DatasetBase(std::move(node), std::move(dtypes), std::move(shapes)),
        input_(std::move(input)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder),
        padding_(std::move(padding)) {}
  std::string Name() const override { return padding_ ? "PaddedBatch" : "Batch"; }
  int64_t Cardinality() const override {
    const int64_t n = input_->Cardinality();
    if (n < 0) return n;
    return n / batch_size_ + (!drop_remainder_ && n % batch_size_ != 0 ? 1 : 0);
  }
  const DatasetBase& input() const { return *input_; }
  int64_t batch_size() const { return batch_size_; }
  bool drop_remainder() const { return drop_remainder_; }
  const Padding* padding() const { return padding_.get(); }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  const std::shared_ptr<const DatasetBase> input_;
  const int64_t batch_size_;
  const bool drop_remainder_;
  const std::unique_ptr<Padding> padding_;  // null: BatchDatasetV2
};

class BatchIterator : public DatasetIterator<BatchDataset> {
 public:
  using DatasetIterator::DatasetIterator;
  absl::Status Initialize(IteratorContext* ctx) override {
    ASSIGN_OR_RETURN(input_, dataset()->input().MakeIterator(ctx, prefix()));
    return absl::OkStatus();
  }

  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    out->clear();
    *end = false;
    const int64_t want = dataset()->batch_size();
    if (elements_.size() < static_cast<size_t>(want)) elements_.resize(want);
    int64_t n = 0;
    while (input_ != nullptr && n < want) {
      bool input_end = false;
      RETURN_IF_ERROR(input_->GetNext(ctx, &elements_[n], &input_end));
      if (input_end) {
        input_.reset();
        break;
      }
      ++n;
    }
    if (n == 0 || (n < want && dataset()->drop_remainder())) {
      *end = true;
      for (int64_t i = 0; i < n; ++i) elements_[i].clear();
      return absl::OkStatus();
    }
    absl::Status s = Stack(ctx, n, out);
    for (int64_t i = 0; i < n; ++i) elements_[i].clear();
    return s;
  }

  absl::Status Save(IteratorStateWriter* w) override {
    return SaveInput(w, *this, "input", input_.get());
  }
  absl::Status Restore(IteratorContext* ctx, const IteratorStateReader& r) override {
    return RestoreInput(ctx, r, *this, "input", dataset()->input(), &input_);
  }

 private:
  absl::Status Stack(IteratorContext* ctx, int64_t n, std::vector<Tensor>* out) {
    const size_t num = elements_[0].size();
    for (int64_t i = 1; i < n; ++i) {
      if (elements_[i].size() != num) {
        return absl::InvalidArgumentError(absl::StrCat(
            "BatchDataset '", dataset()->node(), "': element ", i, " has ",
            elements_[i].size(), " components, element 0 has ", num));
      }
    }
    for (size_t c = 0; c < num; ++c) {
      ASSIGN_OR_RETURN(Tensor batch, dataset()->padding() == nullptr ? StackComponent(ctx, n, c)
                                                                     : PadComponent(ctx, n, c));
      out->push_back(std::move(batch));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Tensor> StackComponent(IteratorContext* ctx, int64_t n, size_t c) {
    const Tensor& first = elements_[0][c];
    for (int64_t i = 1; i < n; ++i) {
      if (elements_[i][c].shape() != first.shape() || elements_[i][c].dtype() != first.dtype()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Cannot batch tensors with different shapes in component ", c,
            ". First element had shape ", first.shape().DebugString(), " and element ", i,
            " had shape ", elements_[i][c].shape().DebugString(), "."));
      }
    }
    ASSIGN_OR_RETURN(Tensor batch, Tensor::Allocate(ctx->allocator(), first.dtype(),
                                                    internal::BatchShape(n, first.shape())));
    for (int64_t i = 0; i < n; ++i) {
      RETURN_IF_ERROR(internal::CopyIntoRow(elements_[i][c], &batch, i));
    }
    return batch;
  }

  absl::StatusOr<Tensor> PadComponent(IteratorContext* ctx, int64_t n, size_t c) {
    const TensorShape& padded = dataset()->padding()->shapes[c];
    std::vector<int64_t> dims = {n};
    for (int d = 0; d < padded.rank(); ++d) {
      int64_t size = padded.dim(d);
      for (int64_t i = 0; i < n; ++i) {
        const Tensor& e = elements_[i][c];
        if (e.dims() != padded.rank()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "All elements in a batch must have the same rank as the padded shape for "
              "component ", c, ": expected rank ", padded.rank(), " but got element with rank ",
              e.dims()));
        }
        if (padded.dim(d) < 0) {
          size = std::max(size, e.dim_size(d));
        } else if (e.dim_size(d) > padded.dim(d)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Attempted to pad to a smaller size than the input element: component ", c,
              " has shape ", e.shape().DebugString(), ", padded shape ",
              padded.DebugString()));
        }
      }
      dims.push_back(size);
    }
    ASSIGN_OR_RETURN(Tensor batch, Tensor::Allocate(ctx->allocator(), elements_[0][c].dtype(),
                                                    TensorShape(dims)));
    RETURN_IF_ERROR(internal::FillWith(dataset()->padding()->values[c], &batch));
    for (int64_t i = 0; i < n; ++i) {
      RETURN_IF_ERROR(internal::CopyIntoPaddedRow(elements_[i][c], &batch, i));
    }
    return batch;
  }

  std::unique_ptr<IteratorBase> input_;  // null once exhausted
  std::vector<std::vector<Tensor>> elements_;  // reused from batch to batch
};

std::unique_ptr<IteratorBase> BatchDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<BatchIterator>(SharedAs<BatchDataset>(), std::move(prefix));
}

absl::StatusOr<int64_t> BatchSize(OpKernelContext* ctx) {
  ASSIGN_OR_RETURN(int64_t batch_size, Int64Input(ctx, 1, "batch_size"));
  if (batch_size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Batch size must be greater than zero, got ", batch_size));
  }
  return batch_size;
}

class BatchOp : public UnaryDatasetOpKernel {
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(
      OpKernelContext* ctx, std::shared_ptr<const DatasetBase> input) override {
    ASSIGN_OR_RETURN(int64_t batch_size, BatchSize(ctx));
    ASSIGN_OR_RETURN(bool drop, BoolInput(ctx, 2, "drop_remainder"));
    return std::make_shared<BatchDataset>(node(), std::move(input), batch_size, drop, nullptr,
                                          dtypes(), shapes());
  }
};

// Inputs: input_dataset, batch_size, padded_shapes (N), padding_values (N),
// drop_remainder.
class PaddedBatchOp : public UnaryDatasetOpKernel {
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(
      OpKernelContext* ctx, std::shared_ptr<const DatasetBase> input) override {
    ASSIGN_OR_RETURN(int64_t batch_size, BatchSize(ctx));
    const int n = static_cast<int>(dtypes().size());
    if (ctx->num_inputs() != 3 + 2 * n) {
      return absl::InvalidArgumentError(absl::StrCat("expected ", n, " padded_shapes and ", n,
                                                     " padding_values"));
    }
    if (static_cast<int>(input->output_dtypes().size()) != n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the input has ", input->output_dtypes().size(), " components, padded_shapes has ", n));
    }
    auto padding = std::make_unique<Padding>();
    for (int c = 0; c < n; ++c) {
      const Tensor& s = ctx->input(2 + c);
      if (s.dtype() != DT_INT64 || s.dims() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("padded_shapes[", c, "] must be an int64 vector, got ", s.DebugString(3)));
      }
      std::vector<int64_t> dims(s.flat<int64_t>().begin(), s.flat<int64_t>().end());
      for (int64_t d : dims) {
        if (d < -1) {
          return absl::InvalidArgumentError(
              absl::StrCat("padded_shapes[", c, "] has a dimension ", d, " below -1"));
        }
      }
      padding->shapes.push_back(TensorShape(dims));
      const Tensor& v = ctx->input(2 + n + c);
      if (v.NumElements() != 1 || v.dims() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("padding_values[", c, "] must be a scalar, got ", v.DebugString(3)));
      }
      padding->values.push_back(v);
    }
    ASSIGN_OR_RETURN(bool drop, BoolInput(ctx, 2 + 2 * n, "drop_remainder"));
    return std::make_shared<BatchDataset>(node(), std::move(input), batch_size, drop,
                                          std::move(padding), dtypes(), shapes());
  }
};

}  // namespace

namespace internal {
void RegisterBatchDatasetKernels(KernelRegistry* kernels) {
  kernels->Register<BatchOp>(KernelDef("BatchDatasetV2", kDeviceTypeCpu));
  kernels->Register<PaddedBatchOp>(KernelDef("PaddedBatchDatasetV2", kDeviceTypeCpu));
}
}  // namespace internal

}  // namespace data
}  // namespace sluice
