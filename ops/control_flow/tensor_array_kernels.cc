// The TensorArray kernels (ops: tensor_array_ops.cc) on the CPU and, with
// a device's TensorArrayDeviceOps, on a device with its own memory.
#include "ops/control_flow/tensor_array_ops.h"

#include <atomic>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/control_flow/tensor_array.h"
#include "runtime/kernel.h"
#include "runtime/resource_mgr.h"

namespace sluice {
namespace {

absl::StatusOr<TensorArray*> LookUpArray(OpKernelContext* ctx) {
  const Tensor& handle = ctx->input(0);
  if (handle.dtype() != DT_RESOURCE || handle.NumElements() != 1) {
    return absl::InvalidArgumentError("a TensorArray handle must be a resource scalar");
  }
  const std::string& name = handle.scalar<std::string>();
  TensorArray* ta = ctx->resource_manager()->Find<TensorArray>(
      ResourceMgr::StepContainer(ctx->step_id()), name);
  if (ta == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "TensorArray '", name, "' does not exist in this step on ", ctx->device()->name(),
        " (TensorArrays live for one step, on the device that made them)"));
  }
  return ta;
}

absl::StatusOr<int64_t> ScalarIndex(const Tensor& t, const char* what) {
  if (t.dims() != 0 || t.dtype() != DT_INT32) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be an int32 scalar, got shape ", t.shape().DebugString()));
  }
  return t.scalar<int32_t>();
}

absl::StatusOr<std::vector<int64_t>> IndexVector(const Tensor& t) {
  if (t.dims() != 1 || t.dtype() != DT_INT32) {
    return absl::InvalidArgumentError(
        absl::StrCat("indices must be an int32 vector, got shape ", t.shape().DebugString()));
  }
  absl::Span<const int32_t> v = t.flat<int32_t>();
  return std::vector<int64_t>(v.begin(), v.end());
}

// `shape` with `first` put in front.
TensorShape Prepend(int64_t first, const TensorShape& shape) {
  TensorShape out = shape;
  out.InsertDim(0, first);
  return out;
}

// CopyRows in the memory the elements live in: the host's (no device ops)
// or the kernel's device's.
absl::Status CopyElementRows(const TensorArrayDeviceOps* device_ops, OpKernelContext* ctx,
                             const Tensor& src, int64_t src_row, Tensor* dst, int64_t dst_row,
                             int64_t rows, int64_t row_elements) {
  if (device_ops == nullptr) {
    CopyRows(src, src_row, dst, dst_row, rows, row_elements);
    return absl::OkStatus();
  }
  if (rows * row_elements == 0) return absl::OkStatus();
  return device_ops->copy_rows(ctx->device(), src, src_row, dst, dst_row, rows, row_elements);
}

absl::Status CheckDtype(const TensorArray& ta, DataType asked) {
  if (ta.dtype() == asked) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(ta.DebugString(), " holds ",
                                                 DataTypeName(ta.dtype()), " but the op asks for ",
                                                 DataTypeName(asked)));
}

// The shape of a zero-element result: the op's and the array's element
// shapes must together be fully known (TensorFlow: only static shapes when
// packing an empty TensorArray).
absl::StatusOr<TensorShape> EmptyElementShape(const TensorArray& ta, const TensorShape& from_op) {
  ASSIGN_OR_RETURN(TensorShape known, ta.ElementShape());
  absl::StatusOr<TensorShape> merged = known.Merge(from_op);
  if (!merged.ok() || !merged->IsFullyDefined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        ta.DebugString(), " has no elements to pack, and its element shape ",
        known.DebugString(), " is not fully defined"));
  }
  return *merged;
}

// Finds the array `name` in this step's container, or makes it with
// `make`, and outputs its handle as output 0.
absl::Status OutputArray(OpKernelContext* ctx, const std::string& name,
                         absl::FunctionRef<std::unique_ptr<TensorArray>()> make) {
  ResourceMgr* rm = ctx->resource_manager();
  RETURN_IF_ERROR(rm->LookupOrCreate<TensorArray>(
                        rm->UseStepContainer(ctx->step_id()), name,
                        [&]() -> absl::StatusOr<std::unique_ptr<TensorArray>> { return make(); })
                      .status());
  ASSIGN_OR_RETURN(Tensor * handle, ctx->allocate_output(0, TensorShape()));
  handle->scalar<std::string>() = name;
  return absl::OkStatus();
}

// A TensorArray kernel. The arrays live for one step (in its container) and
// their elements are device buffers a recording keeps, so a recorded step
// (runtime/step_replay.h) replays these kernels right: the replay redoes
// the device work of the recorded run's writes and reads on the same buffers.
class TensorArrayKernel : public OpKernel {
 public:
  bool ReplaysRight() const final { return true; }
};

class TensorArrayOp : public TensorArrayKernel {
 public:
  explicit TensorArrayOp(const TensorArrayDeviceOps* device_ops = nullptr)
      : device_ops_(device_ops) {}
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(options_.dtype, ctx.GetAttr<DataType>("dtype"));
    ASSIGN_OR_RETURN(options_.element_shape, ctx.GetAttr<TensorShape>("element_shape"));
    ASSIGN_OR_RETURN(options_.dynamic_size, ctx.GetAttr<bool>("dynamic_size"));
    ASSIGN_OR_RETURN(options_.clear_after_read, ctx.GetAttr<bool>("clear_after_read"));
    ASSIGN_OR_RETURN(options_.identical_element_shapes,
                     ctx.GetAttr<bool>("identical_element_shapes"));
    ASSIGN_OR_RETURN(std::string name, ctx.GetAttr<std::string>("tensor_array_name"));
    name_ = name.empty() ? ctx.node().name() : name;
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(int64_t size, ScalarIndex(ctx->input(0), "TensorArray size"));
    if (size < 0) return absl::InvalidArgumentError(absl::StrCat("TensorArray size ", size, " < 0"));
    TensorArray::Options options = options_;
    options.size = size;
    if (device_ops_ != nullptr) {
      options.device = ctx->device();
      options.device_ops = device_ops_;
    }
    // One array per run (a TensorArrayV3 in a loop makes one per iteration).
    const std::string name = absl::StrCat(name_, "_", next_id_.fetch_add(1));
    RETURN_IF_ERROR(OutputArray(ctx, name, [&] { return std::make_unique<TensorArray>(name, options); }));
    ASSIGN_OR_RETURN(Tensor * flow, ctx->allocate_output(1, TensorShape()));
    if (device_ops_ != nullptr) return device_ops_->zero(ctx->device(), flow);
    flow->scalar<float>() = 0.0f;
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  const TensorArrayDeviceOps* const device_ops_;
  TensorArray::Options options_;
  std::string name_;
  std::atomic<int64_t> next_id_{0};
};

// TensorArrayGradWithShape: each gradient element is shape_to_prepend
// followed by the forward element's shape (a known element shape, and each
// written element's shape, as TensorFlow's CopyShapesFrom does).
absl::Status PrependShape(const Tensor& prefix, TensorArray::GradientSpec* spec) {
  if (prefix.dims() != 1 || prefix.dtype() != DT_INT32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArrayGradWithShape: shape_to_prepend must be an int32 vector, got shape ",
        prefix.shape().DebugString()));
  }
  absl::Span<const int32_t> dims = prefix.flat<int32_t>();
  for (int32_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorArrayGradWithShape: shape_to_prepend has a negative dimension ", d));
    }
  }
  auto prepend = [&](TensorShape* shape) {
    if (shape->unknown_rank()) return;
    for (size_t i = 0; i < dims.size(); ++i) shape->InsertDim(static_cast<int>(i), dims[i]);
  };
  prepend(&spec->options.element_shape);
  for (TensorShape& shape : spec->shapes) prepend(&shape);
  return absl::OkStatus();
}

class TensorArrayGradOp : public TensorArrayKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(source_, ctx.GetAttr<std::string>("source"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorArray * forward, LookUpArray(ctx));
    ASSIGN_OR_RETURN(TensorArray::GradientSpec spec, forward->Gradient());
    if (ctx->num_inputs() > 2) RETURN_IF_ERROR(PrependShape(ctx->input(2), &spec));
    const std::string name = absl::StrCat(forward->name(), "@", source_);
    RETURN_IF_ERROR(OutputArray(ctx, name, [&] {
      return std::make_unique<TensorArray>(name, spec.options, std::move(spec.shapes));
    }));
    ctx->set_output(1, ctx->input(1));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  std::string source_;
};

class TensorArrayWriteOp : public TensorArrayKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorArray * ta, LookUpArray(ctx));
    ASSIGN_OR_RETURN(int64_t index, ScalarIndex(ctx->input(1), "TensorArrayWriteV3's index"));
    RETURN_IF_ERROR(ta->Write(index, ctx->input(2)));
    ctx->set_output(0, ctx->input(3));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class TensorArrayReadOp : public TensorArrayKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorArray * ta, LookUpArray(ctx));
    RETURN_IF_ERROR(CheckDtype(*ta, dtype_));
    ASSIGN_OR_RETURN(int64_t index, ScalarIndex(ctx->input(1), "TensorArrayReadV3's index"));
    ASSIGN_OR_RETURN(Tensor value, ta->Read(index));
    ctx->set_output(0, std::move(value));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
};

// Stacks `elements` (all of one shape) along a new first dimension.
absl::Status Pack(const TensorArrayDeviceOps* device_ops, OpKernelContext* ctx,
                  const TensorArray& ta, const std::vector<Tensor>& elements,
                  const TensorShape& empty_shape) {
  if (elements.empty()) {
    ASSIGN_OR_RETURN(TensorShape shape, EmptyElementShape(ta, empty_shape));
    return ctx->allocate_output(0, Prepend(0, shape)).status();
  }
  const TensorShape& shape = elements[0].shape();
  for (size_t i = 1; i < elements.size(); ++i) {
    if (elements[i].shape() != shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          ta.DebugString(), " has inconsistent shapes: element 0 has shape ", shape.DebugString(),
          " but element ", i, " has shape ", elements[i].shape().DebugString()));
    }
  }
  ASSIGN_OR_RETURN(Tensor * out,
                   ctx->allocate_output(0, Prepend(static_cast<int64_t>(elements.size()), shape)));
  const int64_t row = shape.num_elements();
  for (size_t i = 0; i < elements.size(); ++i) {
    RETURN_IF_ERROR(
        CopyElementRows(device_ops, ctx, elements[i], 0, out, static_cast<int64_t>(i), 1, row));
  }
  return absl::OkStatus();
}

class TensorArrayGatherOp : public TensorArrayKernel {
 public:
  explicit TensorArrayGatherOp(const TensorArrayDeviceOps* device_ops = nullptr)
      : device_ops_(device_ops) {}
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
    ASSIGN_OR_RETURN(element_shape_, ctx.GetAttr<TensorShape>("element_shape"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorArray * ta, LookUpArray(ctx));
    RETURN_IF_ERROR(CheckDtype(*ta, dtype_));
    ASSIGN_OR_RETURN(std::vector<int64_t> indices, IndexVector(ctx->input(1)));
    ASSIGN_OR_RETURN(std::vector<Tensor> elements, ta->ReadMany(indices));
    return Pack(device_ops_, ctx, *ta, elements, element_shape_);
  }

 private:
  const TensorArrayDeviceOps* const device_ops_;
  DataType dtype_ = DT_INVALID;
  TensorShape element_shape_;
};

// Rows [begin, begin + rows) of `value`, as a new tensor of the kernel's
// device.
absl::StatusOr<Tensor> Rows(const TensorArrayDeviceOps* device_ops, OpKernelContext* ctx,
                            const Tensor& value, int64_t begin, int64_t rows) {
  TensorShape shape = value.shape();
  const int64_t row = value.dims() > 0 && value.dim_size(0) > 0
                          ? value.NumElements() / value.dim_size(0)
                          : 0;
  shape.set_dim(0, rows);
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(ctx->allocator(), value.dtype(), shape));
  RETURN_IF_ERROR(CopyElementRows(device_ops, ctx, value, begin, &out, 0, rows, row));
  return out;
}

class TensorArrayScatterOp : public TensorArrayKernel {
 public:
  explicit TensorArrayScatterOp(const TensorArrayDeviceOps* device_ops = nullptr)
      : device_ops_(device_ops) {}
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorArray * ta, LookUpArray(ctx));
    ASSIGN_OR_RETURN(std::vector<int64_t> indices, IndexVector(ctx->input(1)));
    const Tensor& value = ctx->input(2);
    if (value.dims() < 1 || value.dim_size(0) != static_cast<int64_t>(indices.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorArrayScatterV3 into ", ta->DebugString(), ": expected len(indices) == "
          "value.shape[0], but saw ", indices.size(), " vs. ", value.shape().DebugString()));
    }
    TensorShape element = value.shape();
    element.RemoveDim(0);
    const int64_t row = element.num_elements();
    std::vector<Tensor> rows;
    rows.reserve(indices.size());
    for (size_t i = 0; i < indices.size(); ++i) {
      ASSIGN_OR_RETURN(Tensor r, Tensor::Allocate(ctx->allocator(), value.dtype(), element));
      RETURN_IF_ERROR(
          CopyElementRows(device_ops_, ctx, value, static_cast<int64_t>(i), &r, 0, 1, row));
      rows.push_back(std::move(r));
    }
    RETURN_IF_ERROR(ta->WriteMany(indices, rows));
    ctx->set_output(0, ctx->input(3));
    return absl::OkStatus();
  }

 private:
  const TensorArrayDeviceOps* const device_ops_;
};

class TensorArrayConcatOp : public TensorArrayKernel {
 public:
  explicit TensorArrayConcatOp(const TensorArrayDeviceOps* device_ops = nullptr)
      : device_ops_(device_ops) {}
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
    ASSIGN_OR_RETURN(element_shape_except0_, ctx.GetAttr<TensorShape>("element_shape_except0"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorArray * ta, LookUpArray(ctx));
    RETURN_IF_ERROR(CheckDtype(*ta, dtype_));
    ASSIGN_OR_RETURN(int64_t size, ta->Size());
    std::vector<int64_t> all(static_cast<size_t>(size));
    std::iota(all.begin(), all.end(), 0);
    ASSIGN_OR_RETURN(std::vector<Tensor> elements, ta->ReadMany(all));
    ASSIGN_OR_RETURN(Tensor * lengths, ctx->allocate_output(1, TensorShape({size})));
    if (elements.empty()) {
      if (!element_shape_except0_.IsFullyDefined()) {
        return absl::InvalidArgumentError(absl::StrCat(
            ta->DebugString(), " is empty and element_shape_except0 ",
            element_shape_except0_.DebugString(), " is not fully defined"));
      }
      return ctx->allocate_output(0, Prepend(0, element_shape_except0_)).status();
    }
    TensorShape rest;
    int64_t total = 0;
    for (size_t i = 0; i < elements.size(); ++i) {
      const Tensor& e = elements[i];
      if (e.dims() < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "TensorArrayConcatV3 of ", ta->DebugString(), " saw a scalar at index ", i,
            " but needs at least vectors"));
      }
      TensorShape tail = e.shape();
      tail.RemoveDim(0);
      if (i == 0) rest = tail;
      if (tail != rest) {
        return absl::InvalidArgumentError(absl::StrCat(
            "TensorArrayConcatV3 of ", ta->DebugString(), ": element 0 has shape ",
            elements[0].shape().DebugString(), " but element ", i, " has shape ",
            e.shape().DebugString(), " (all but the first dimension must match)"));
      }
      lengths->flat<int64_t>()[i] = e.dim_size(0);
      total += e.dim_size(0);
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, Prepend(total, rest)));
    const int64_t row = rest.num_elements();
    int64_t at = 0;
    for (const Tensor& e : elements) {
      RETURN_IF_ERROR(CopyElementRows(device_ops_, ctx, e, 0, out, at, e.dim_size(0), row));
      at += e.dim_size(0);
    }
    return absl::OkStatus();
  }

 private:
  const TensorArrayDeviceOps* const device_ops_;
  DataType dtype_ = DT_INVALID;
  TensorShape element_shape_except0_;
};

class TensorArraySplitOp : public TensorArrayKernel {
 public:
  explicit TensorArraySplitOp(const TensorArrayDeviceOps* device_ops = nullptr)
      : device_ops_(device_ops) {}
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorArray * ta, LookUpArray(ctx));
    const Tensor& value = ctx->input(1);
    const Tensor& lengths = ctx->input(2);
    if (value.dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorArraySplitV3 into ", ta->DebugString(), " needs a value of rank >= 1, got ",
          value.shape().DebugString()));
    }
    if (lengths.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorArraySplitV3: lengths must be a vector, got ", lengths.shape().DebugString()));
    }
    absl::Span<const int64_t> len = lengths.flat<int64_t>();
    int64_t sum = 0;
    for (int64_t l : len) {
      if (l < 0) return absl::InvalidArgumentError("TensorArraySplitV3: a length is negative");
      sum += l;
    }
    if (sum != value.dim_size(0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorArraySplitV3 into ", ta->DebugString(), ": the lengths sum to ", sum,
          " but the value's shape is ", value.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(int64_t size, ta->Size());
    if (!ta->dynamic_size() && static_cast<int64_t>(len.size()) != size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorArraySplitV3: ", ta->DebugString(), " has size ", size, " but lengths has ",
          len.size(), " entries, and the array is not dynamically sized"));
    }
    std::vector<int64_t> indices;
    std::vector<Tensor> parts;
    int64_t at = 0;
    for (size_t i = 0; i < len.size(); ++i) {
      indices.push_back(static_cast<int64_t>(i));
      ASSIGN_OR_RETURN(Tensor part, Rows(device_ops_, ctx, value, at, len[i]));
      parts.push_back(std::move(part));
      at += len[i];
    }
    RETURN_IF_ERROR(ta->WriteMany(indices, parts));
    ctx->set_output(0, ctx->input(3));
    return absl::OkStatus();
  }

 private:
  const TensorArrayDeviceOps* const device_ops_;
};

class TensorArraySizeOp : public TensorArrayKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorArray * ta, LookUpArray(ctx));
    ASSIGN_OR_RETURN(int64_t size, ta->Size());
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<int32_t>() = static_cast<int32_t>(size);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class TensorArrayCloseOp : public TensorArrayKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorArray * ta, LookUpArray(ctx));
    ta->Close();
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// The factory of an `Op` kernel that moves its elements with `device_ops`.
template <typename Op>
KernelFactory WithDeviceOps(const TensorArrayDeviceOps* device_ops) {
  return [device_ops] { return std::make_unique<Op>(device_ops); };
}

}  // namespace

void RegisterTensorArrayKernels(KernelRegistry* kernels) {
  kernels->Register<TensorArrayOp>(KernelDef("TensorArrayV3", kDeviceTypeCpu));
  kernels->Register<TensorArrayGradOp>(KernelDef("TensorArrayGradV3", kDeviceTypeCpu));
  kernels->Register<TensorArrayGradOp>(KernelDef("TensorArrayGradWithShape", kDeviceTypeCpu));
  kernels->Register<TensorArrayWriteOp>(KernelDef("TensorArrayWriteV3", kDeviceTypeCpu));
  kernels->Register<TensorArrayReadOp>(KernelDef("TensorArrayReadV3", kDeviceTypeCpu));
  kernels->Register<TensorArrayGatherOp>(KernelDef("TensorArrayGatherV3", kDeviceTypeCpu));
  kernels->Register<TensorArrayScatterOp>(KernelDef("TensorArrayScatterV3", kDeviceTypeCpu));
  kernels->Register<TensorArrayConcatOp>(KernelDef("TensorArrayConcatV3", kDeviceTypeCpu));
  kernels->Register<TensorArraySplitOp>(KernelDef("TensorArraySplitV3", kDeviceTypeCpu));
  kernels->Register<TensorArraySizeOp>(KernelDef("TensorArraySizeV3", kDeviceTypeCpu));
  kernels->Register<TensorArrayCloseOp>(KernelDef("TensorArrayCloseV3", kDeviceTypeCpu));
}

void RegisterTensorArrayDeviceKernels(KernelRegistry* kernels, const std::string& device_type,
                                      const std::vector<DataType>& device_types,
                                      const TensorArrayDeviceOps* device_ops) {
  auto on = [&](const char* op) { return KernelDef(op, device_type).HostMemory("handle"); };
  kernels->Register(
      on("TensorArrayV3").TypeConstraint("dtype", device_types).HostMemory("size"),
      WithDeviceOps<TensorArrayOp>(device_ops));
  kernels->Register<TensorArrayGradOp>(on("TensorArrayGradV3").HostMemory("grad_handle"));
  kernels->Register<TensorArrayGradOp>(on("TensorArrayGradWithShape")
                                           .HostMemory("grad_handle")
                                           .HostMemory("shape_to_prepend"));
  kernels->Register<TensorArrayWriteOp>(
      on("TensorArrayWriteV3").TypeConstraint("T", device_types).HostMemory("index"));
  kernels->Register<TensorArrayReadOp>(
      on("TensorArrayReadV3").TypeConstraint("dtype", device_types).HostMemory("index"));
  kernels->Register(
      on("TensorArrayGatherV3").TypeConstraint("dtype", device_types).HostMemory("indices"),
      WithDeviceOps<TensorArrayGatherOp>(device_ops));
  kernels->Register(
      on("TensorArrayScatterV3").TypeConstraint("T", device_types).HostMemory("indices"),
      WithDeviceOps<TensorArrayScatterOp>(device_ops));
  kernels->Register(
      on("TensorArrayConcatV3").TypeConstraint("dtype", device_types).HostMemory("lengths"),
      WithDeviceOps<TensorArrayConcatOp>(device_ops));
  kernels->Register(
      on("TensorArraySplitV3").TypeConstraint("T", device_types).HostMemory("lengths"),
      WithDeviceOps<TensorArraySplitOp>(device_ops));
  kernels->Register<TensorArraySizeOp>(on("TensorArraySizeV3").HostMemory("size"));
  kernels->Register<TensorArrayCloseOp>(on("TensorArrayCloseV3"));
}

}  // namespace sluice
