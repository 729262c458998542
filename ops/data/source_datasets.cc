// TensorDataset, TensorSliceDataset and RangeDataset.
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

// The whole of `components` once (TensorDataset) or each of its rows
// (TensorSliceDataset).
class TensorsDataset : public DatasetBase {
 public:
  TensorsDataset(std::string node, std::vector<Tensor> components, bool slice,
                 std::vector<TensorShape> shapes)
      : DatasetBase(std::move(node), DtypesOf(components), std::move(shapes)),
        components_(std::move(components)),
        slice_(slice) {}
  std::string Name() const override { return slice_ ? "TensorSlice" : "Tensor"; }
  int64_t Cardinality() const override { return slice_ ? components_[0].dim_size(0) : 1; }
  const std::vector<Tensor>& components() const { return components_; }
  bool slice() const { return slice_; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  static DataTypeVector DtypesOf(const std::vector<Tensor>& ts) {
    DataTypeVector v;
    for (const Tensor& t : ts) v.push_back(t.dtype());
    return v;
  }
  const std::vector<Tensor> components_;
  const bool slice_;
};

class TensorsIterator : public DatasetIterator<TensorsDataset> {
 public:
  using DatasetIterator::DatasetIterator;
  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    out->clear();
    *end = next_ >= dataset()->Cardinality();
    if (*end) return absl::OkStatus();
    for (const Tensor& c : dataset()->components()) {
      if (!dataset()->slice()) {
        out->push_back(c);
        continue;
      }
      ASSIGN_OR_RETURN(Tensor row, internal::Row(c, next_, ctx->allocator()));
      out->push_back(std::move(row));
    }
    ++next_;
    return absl::OkStatus();
  }
  absl::Status Save(IteratorStateWriter* w) override {
    w->WriteInt(Key("next"), next_);
    return absl::OkStatus();
  }
  absl::Status Restore(IteratorContext*, const IteratorStateReader& r) override {
    ASSIGN_OR_RETURN(next_, r.ReadInt(Key("next")));
    return absl::OkStatus();
  }

 private:
  int64_t next_ = 0;
};

std::unique_ptr<IteratorBase> TensorsDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<TensorsIterator>(SharedAs<TensorsDataset>(), std::move(prefix));
}

template <bool kSlice>
class TensorsOp : public DatasetOpKernel {
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    std::vector<Tensor> components = InputRange(ctx);
    for (size_t i = 0; i < components.size(); ++i) {
      if (components[i].dtype() != dtypes()[i]) {
        return absl::InvalidArgumentError(absl::StrCat("component ", i, " is a ",
                                                       DataTypeName(components[i].dtype()),
                                                       ", Toutput_types says ",
                                                       DataTypeName(dtypes()[i])));
      }
      if (kSlice && (components[i].dims() == 0 ||
                     components[i].dim_size(0) != components[0].dim_size(0))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "all components must have the same size in the 0th dimension and at least one "
            "dimension; component 0 has shape ",
            components[0].shape().DebugString(), " and component ", i, " has shape ",
            components[i].shape().DebugString()));
      }
    }
    return std::make_shared<TensorsDataset>(node(), std::move(components), kSlice, shapes());
  }
  static std::vector<Tensor> InputRange(OpKernelContext* ctx) {
    std::vector<Tensor> v;
    for (int i = 0; i < ctx->num_inputs(); ++i) v.push_back(ctx->input(i));
    return v;
  }
};

// start, start + step, ... up to (not including) stop.
class RangeDataset : public DatasetBase {
 public:
  RangeDataset(std::string node, int64_t start, int64_t stop, int64_t step, DataType dtype)
      : DatasetBase(std::move(node), {dtype}, {TensorShape()}),
        start_(start),
        stop_(stop),
        step_(step) {}
  std::string Name() const override { return "Range"; }
  int64_t Cardinality() const override {
    if (step_ > 0) return stop_ > start_ ? (stop_ - start_ - 1) / step_ + 1 : 0;
    return start_ > stop_ ? (start_ - stop_ - 1) / -step_ + 1 : 0;
  }
  int64_t start() const { return start_; }
  int64_t step() const { return step_; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  const int64_t start_, stop_, step_;
};

class RangeIterator : public DatasetIterator<RangeDataset> {
 public:
  using DatasetIterator::DatasetIterator;
  absl::Status GetNext(IteratorContext*, std::vector<Tensor>* out, bool* end) override {
    out->clear();
    *end = index_ >= dataset()->Cardinality();
    if (*end) return absl::OkStatus();
    const int64_t v = dataset()->start() + index_ * dataset()->step();
    ++index_;
    switch (dataset()->output_dtypes()[0]) {
      case DT_INT32: out->push_back(Tensor::Scalar<int32_t>(static_cast<int32_t>(v))); break;
      case DT_FLOAT: out->push_back(Tensor::Scalar<float>(static_cast<float>(v))); break;
      case DT_DOUBLE: out->push_back(Tensor::Scalar<double>(static_cast<double>(v))); break;
      default: out->push_back(Tensor::Scalar<int64_t>(v)); break;
    }
    return absl::OkStatus();
  }
  absl::Status Save(IteratorStateWriter* w) override {
    w->WriteInt(Key("index"), index_);
    return absl::OkStatus();
  }
  absl::Status Restore(IteratorContext*, const IteratorStateReader& r) override {
    ASSIGN_OR_RETURN(index_, r.ReadInt(Key("index")));
    return absl::OkStatus();
  }

 private:
  int64_t index_ = 0;
};

std::unique_ptr<IteratorBase> RangeDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<RangeIterator>(SharedAs<RangeDataset>(), std::move(prefix));
}

class RangeOp : public DatasetOpKernel {
  absl::Status InitDataset(const OpKernelConstruction&) override {
    if (dtypes().size() != 1) {
      return absl::InvalidArgumentError("RangeDataset has one output type");
    }
    const DataType t = dtypes()[0];
    if (t != DT_INT64 && t != DT_INT32 && t != DT_FLOAT && t != DT_DOUBLE) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RangeDataset: output type ", DataTypeName(t), " is not int32, int64, float or double"));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(int64_t start, Int64Input(ctx, 0, "start"));
    ASSIGN_OR_RETURN(int64_t stop, Int64Input(ctx, 1, "stop"));
    ASSIGN_OR_RETURN(int64_t step, Int64Input(ctx, 2, "step"));
    if (step == 0) return absl::InvalidArgumentError("step must be a non-zero integer.");
    return std::make_shared<RangeDataset>(node(), start, stop, step, dtypes()[0]);
  }
};

}  // namespace

namespace internal {
void RegisterSourceDatasetKernels(KernelRegistry* kernels) {
  kernels->Register<TensorsOp<false>>(KernelDef("TensorDataset", kDeviceTypeCpu));
  kernels->Register<TensorsOp<true>>(KernelDef("TensorSliceDataset", kDeviceTypeCpu));
  kernels->Register<RangeOp>(KernelDef("RangeDataset", kDeviceTypeCpu));
}
}  // namespace internal

}  // namespace data
}  // namespace sluice
