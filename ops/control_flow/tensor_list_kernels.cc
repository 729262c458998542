// The list ops' kernels (see tensor_list_ops.h): the CPU's, and a device's
// whose elements live in its own memory.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/control_flow/tensor_array.h"
#include "ops/control_flow/tensor_list.h"
#include "ops/control_flow/tensor_list_ops.h"
#include "runtime/device.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using ListPtr = std::shared_ptr<TensorList>;

// A new list with `from`'s dtype, shape, limit and elements (shared buffers).
ListPtr CopyOf(const TensorList& from) {
  auto list = std::make_shared<TensorList>(from.element_dtype, from.element_shape);
  list->max_num_elements = from.max_num_elements;
  list->tensors = from.tensors;
  return list;
}

absl::StatusOr<int64_t> ScalarIndex(const Tensor& t, absl::string_view op, absl::string_view what) {
  if (t.dtype() != DT_INT32 || t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", what, " must be an int32 scalar"));
  }
  return int64_t{t.data<int32_t>()[0]};
}

// A list kernel. Elements live in the memory of the kernel's device: the
// host's, or a device's whose bytes `device_ops` moves and clears (a GPU's;
// the lists themselves, shapes and indices stay in host memory).
class ListKernel : public OpKernel {
 public:
  explicit ListKernel(const TensorArrayDeviceOps* device_ops = nullptr)
      : device_ops_(device_ops) {}
  absl::Status Init(const OpKernelConstruction& ctx) override {
    op_ = ctx.node().op();
    absl::StatusOr<DataType> dtype = ctx.GetAttr<DataType>("element_dtype");
    if (dtype.ok()) element_dtype_ = *dtype;
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 protected:
  // The list of input `i`, checked to hold this op's element_dtype.
  absl::StatusOr<const TensorList*> List(OpKernelContext* ctx, int i) const {
    ASSIGN_OR_RETURN(const TensorList* list, GetTensorList(ctx->input(i), op_));
    if (element_dtype_ != DT_INVALID && list->element_dtype != element_dtype_) {
      return absl::InvalidArgumentError(absl::StrCat(op_, ": the list holds ",
                                                     DataTypeName(list->element_dtype),
                                                     ", the op reads ",
                                                     DataTypeName(element_dtype_)));
    }
    return list;
  }

  // The list of input 0 to change as output 0. TensorFlow's list kernels
  // change a list in place when they hold its only reference; so does this:
  // when the input's buffer forwards to the output and its Variant is the
  // list's sole holder, the list itself, else a copy that shares the
  // elements' buffers. Appending in a loop is then O(1), not O(length).
  // Read what the op needs from the input before changing the list.
  absl::StatusOr<TensorList*> ListToChange(OpKernelContext* ctx) const {
    ASSIGN_OR_RETURN(const TensorList* in, List(ctx, 0));
    ASSIGN_OR_RETURN(Tensor* out, ctx->forward_input_or_allocate_output(0, 0, TensorShape()));
    if (out->SharesBufferWith(ctx->input(0))) {
      if (TensorList* list = out->scalar<Variant>().mutable_if_sole<TensorList>()) return list;
    }
    ListPtr copy = CopyOf(*in);
    TensorList* list = copy.get();
    *out = TensorListHandle(std::move(copy));
    return list;
  }

  // Whether new elements go to the device's memory (else the host's).
  bool on_device() const { return device_ops_ != nullptr; }

  absl::StatusOr<Tensor> NewTensor(OpKernelContext* ctx, DataType dtype, const TensorShape& shape,
                                   bool device) const {
    if (!device) return Tensor(dtype, shape);
    return Tensor::Allocate(ctx->allocator(), dtype, shape);
  }

  // Rows of `src` into `dst`, both in the device's memory when `device`.
  absl::Status Copy(OpKernelContext* ctx, bool device, const Tensor& src, int64_t src_row,
                    Tensor* dst, int64_t dst_row, int64_t rows, int64_t row_elements) const {
    if (!device) {
      CopyRows(src, src_row, dst, dst_row, rows, row_elements);
      return absl::OkStatus();
    }
    return device_ops_->copy_rows(ctx->device(), src, src_row, dst, dst_row, rows, row_elements);
  }

  absl::StatusOr<Tensor> Zeros(OpKernelContext* ctx, DataType dtype, const TensorShape& shape,
                               bool device) const {
    ASSIGN_OR_RETURN(Tensor t, NewTensor(ctx, dtype, shape, device));
    if (device) {
      RETURN_IF_ERROR(device_ops_->zero(ctx->device(), &t));
    } else if (!HoldsObjects(dtype) && t.NumElements() > 0) {
      std::memset(t.raw_data(), 0, t.TotalBytes());
    }
    return t;
  }

  // InvalidArgument unless element `index` lives in this kernel's memory
  // (a list filled on one device and read on another).
  absl::Status CheckMemory(OpKernelContext* ctx, const Tensor& t, int64_t index) const {
    if (t.on_device() == on_device()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        op_, " on ", ctx->device()->name(), ": element ", index, " of the list lives in ",
        t.on_device() ? "device" : "host", " memory, this kernel reads ",
        on_device() ? "device" : "host", " memory (fill and read a list on one device)"));
  }

  // Element `index`, or zeros of its shape when it was never set.
  absl::StatusOr<Tensor> Read(OpKernelContext* ctx, const TensorList& list, int64_t index,
                              const TensorShape& hint) const {
    ASSIGN_OR_RETURN(const Tensor* t, ElementAt(list, index, op_));
    if (t->IsInitialized()) {
      RETURN_IF_ERROR(CheckMemory(ctx, *t, index));
      return *t;
    }
    ASSIGN_OR_RETURN(TensorShape shape, UnsetElementShape(list, index, hint, op_));
    return Zeros(ctx, list.element_dtype, shape, on_device());
  }

  // Row `row` of `t` (its first dimension) as a tensor of its own.
  absl::StatusOr<Tensor> RowOf(OpKernelContext* ctx, const Tensor& t, int64_t row) const {
    TensorShape shape = t.shape();
    shape.RemoveDim(0);
    ASSIGN_OR_RETURN(Tensor out, NewTensor(ctx, t.dtype(), shape, on_device()));
    RETURN_IF_ERROR(Copy(ctx, on_device(), t, row, &out, 0, 1, out.NumElements()));
    return out;
  }

  // Stacks `rows` of `list` (each read as Read does) into one tensor of
  // shape [rows.size()] + element shape.
  absl::StatusOr<Tensor> StackRows(OpKernelContext* ctx, const TensorList& list,
                                   const std::vector<int64_t>& rows,
                                   const TensorShape& hint) const {
    ASSIGN_OR_RETURN(TensorShape shape, list.element_shape.Merge(hint));
    for (int64_t r : rows) {
      ASSIGN_OR_RETURN(const Tensor* t, ElementAt(list, r, op_));
      if (!t->IsInitialized()) continue;
      absl::StatusOr<TensorShape> merged = shape.Merge(t->shape());
      if (!merged.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(op_, ": element ", r, " has shape ",
                                                       t->shape().DebugString(), ", others ",
                                                       shape.DebugString()));
      }
      shape = *std::move(merged);
    }
    if (!shape.IsFullyDefined()) {
      // The other elements may say it (as in TensorFlow).
      absl::StatusOr<TensorShape> from_all =
          UnsetElementShape(list, rows.empty() ? 0 : rows[0], shape, op_);
      if (!from_all.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            op_, ": the element shape ", shape.DebugString(),
            " is not known (no element set, and the list and the op leave it open)"));
      }
      shape = *std::move(from_all);
    }
    TensorShape out_shape = shape;
    out_shape.InsertDim(0, static_cast<int64_t>(rows.size()));
    ASSIGN_OR_RETURN(Tensor out, NewTensor(ctx, list.element_dtype, out_shape, on_device()));
    const int64_t row_elements = shape.num_elements();
    for (size_t i = 0; i < rows.size(); ++i) {
      ASSIGN_OR_RETURN(Tensor e, Read(ctx, list, rows[i], shape));
      RETURN_IF_ERROR(Copy(ctx, on_device(), e, 0, &out, static_cast<int64_t>(i), 1, row_elements));
    }
    return out;
  }

  // Writes rows of `t` at `indices` into `list`, growing it to fit.
  absl::Status ScatterInto(OpKernelContext* ctx, TensorList* list, const Tensor& t,
                           const std::vector<int64_t>& indices) const {
    if (t.dims() < 1 || t.dim_size(0) != static_cast<int64_t>(indices.size())) {
      return absl::InvalidArgumentError(absl::StrCat(op_, ": ", indices.size(),
                                                     " indices for a tensor of shape ",
                                                     t.shape().DebugString()));
    }
    for (size_t i = 0; i < indices.size(); ++i) {
      ASSIGN_OR_RETURN(Tensor row, RowOf(ctx, t, static_cast<int64_t>(i)));
      RETURN_IF_ERROR(CheckElement(*list, row, op_));
      if (indices[i] >= static_cast<int64_t>(list->tensors.size())) {
        list->tensors.resize(static_cast<size_t>(indices[i]) + 1);
      }
      list->tensors[indices[i]] = std::move(row);
    }
    return absl::OkStatus();
  }

  // a + b in a new tensor, where a lives.
  absl::StatusOr<Tensor> Add(OpKernelContext* ctx, const Tensor& a, const Tensor& b) const {
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(op_, ": elements of ", DataTypeName(a.dtype()),
                                                     " ", a.shape().DebugString(), " and ",
                                                     DataTypeName(b.dtype()), " ",
                                                     b.shape().DebugString(), " do not add"));
    }
    if (a.on_device() != b.on_device()) {
      return absl::InvalidArgumentError(absl::StrCat(
          op_, ": adding an element in ", a.on_device() ? "device" : "host",
          " memory to one in ", b.on_device() ? "device" : "host", " memory"));
    }
    if (device_ops_ == nullptr || !a.on_device()) {
      return SumOnHost(a, b, absl::StrCat(op_, ": adding lists of "));
    }
    if (device_ops_->add == nullptr) {
      return absl::UnimplementedError(absl::StrCat(op_, ": adding lists on ", ctx->device()->name()));
    }
    ASSIGN_OR_RETURN(Tensor sum, NewTensor(ctx, a.dtype(), a.shape(), /*device=*/true));
    RETURN_IF_ERROR(device_ops_->add(ctx->device(), a, b, &sum));
    return sum;
  }

  const TensorArrayDeviceOps* const device_ops_;
  std::string op_;
  DataType element_dtype_ = DT_INVALID;
};

// EmptyTensorList(element_shape, max_num_elements) and
// TensorListReserve(element_shape, num_elements).
class NewListOp : public ListKernel {
 public:
  NewListOp(bool reserve, const TensorArrayDeviceOps* device_ops)
      : ListKernel(device_ops), reserve_(reserve) {}
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(TensorShape shape, ShapeFromTensor(ctx->input(0), op_));
    ASSIGN_OR_RETURN(int64_t n, ScalarIndex(ctx->input(1), op_,
                                            reserve_ ? "num_elements" : "max_num_elements"));
    auto list = std::make_shared<TensorList>(element_dtype_, shape);
    if (reserve_) {
      if (n < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(op_, ": num_elements is ", n, ", it must be at least 0"));
      }
      list->tensors.resize(static_cast<size_t>(n));
    } else {
      if (n < -1) {
        return absl::InvalidArgumentError(absl::StrCat(
            op_, ": max_num_elements is ", n, ", it must be -1 (no limit) or at least 0"));
      }
      list->max_num_elements = n;
    }
    ctx->set_output(0, TensorListHandle(std::move(list)));
    return absl::OkStatus();
  }

 private:
  const bool reserve_;
};

class FromTensorOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    if (t.dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat(op_, ": the tensor must have a first dimension, got ",
                                                     t.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(TensorShape given, ShapeFromTensor(ctx->input(1), op_));
    TensorShape row = t.shape();
    row.RemoveDim(0);
    absl::StatusOr<TensorShape> shape = given.Merge(row);
    if (!shape.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(op_, ": rows of shape ", row.DebugString(),
                                                     " do not fit the element shape ",
                                                     given.DebugString()));
    }
    auto list = std::make_shared<TensorList>(t.dtype(), given);
    for (int64_t i = 0; i < t.dim_size(0); ++i) {
      ASSIGN_OR_RETURN(Tensor row, RowOf(ctx, t, i));
      list->tensors.push_back(std::move(row));
    }
    ctx->set_output(0, TensorListHandle(std::move(list)));
    return absl::OkStatus();
  }
};

class PushBackOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const TensorList* in, List(ctx, 0));
    RETURN_IF_ERROR(CheckElement(*in, ctx->input(1), op_));
    if (in->max_num_elements >= 0 &&
        static_cast<int64_t>(in->tensors.size()) >= in->max_num_elements) {
      return absl::InvalidArgumentError(absl::StrCat(op_, ": the list is full (max_num_elements ",
                                                     in->max_num_elements, ")"));
    }
    ASSIGN_OR_RETURN(TensorList* out, ListToChange(ctx));
    out->tensors.push_back(ctx->input(1));
    return absl::OkStatus();
  }
};

class PopBackOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const TensorList* in, List(ctx, 0));
    if (in->tensors.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(op_, ": pop from an empty list"));
    }
    ASSIGN_OR_RETURN(TensorShape hint, ShapeFromTensor(ctx->input(1), op_));
    const int64_t last = static_cast<int64_t>(in->tensors.size()) - 1;
    ASSIGN_OR_RETURN(Tensor value, Read(ctx, *in, last, hint));
    ASSIGN_OR_RETURN(TensorList* out, ListToChange(ctx));
    out->tensors.pop_back();
    ctx->set_output(1, std::move(value));
    return absl::OkStatus();
  }
};

class LengthOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const TensorList* in, List(ctx, 0));
    ctx->set_output(0, Tensor::Scalar<int32_t>(static_cast<int32_t>(in->tensors.size())));
    return absl::OkStatus();
  }
};

class ElementShapeOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Init(const OpKernelConstruction& ctx) override {
    RETURN_IF_ERROR(ListKernel::Init(ctx));
    ASSIGN_OR_RETURN(shape_type_, ctx.GetAttr<DataType>("shape_type"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const TensorList* in, List(ctx, 0));
    ctx->set_output(0, ShapeToTensor(in->element_shape, shape_type_));
    return absl::OkStatus();
  }

 private:
  DataType shape_type_ = DT_INT32;
};

class GetItemOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const TensorList* in, List(ctx, 0));
    ASSIGN_OR_RETURN(int64_t index, ScalarIndex(ctx->input(1), op_, "index"));
    ASSIGN_OR_RETURN(TensorShape hint, ShapeFromTensor(ctx->input(2), op_));
    ASSIGN_OR_RETURN(Tensor value, Read(ctx, *in, index, hint));
    ctx->set_output(0, std::move(value));
    return absl::OkStatus();
  }
};

class SetItemOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Init(const OpKernelConstruction& ctx) override {
    RETURN_IF_ERROR(ListKernel::Init(ctx));
    absl::StatusOr<bool> resize = ctx.GetAttr<bool>("resize_if_index_out_of_bounds");
    resize_ = resize.ok() && *resize;
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const TensorList* in, List(ctx, 0));
    ASSIGN_OR_RETURN(int64_t index, ScalarIndex(ctx->input(1), op_, "index"));
    const int64_t size = static_cast<int64_t>(in->tensors.size());
    if (index < 0 || (index >= size && !resize_)) {
      return absl::InvalidArgumentError(absl::StrCat(op_, ": index ", index,
                                                     " is outside a list of ", size, " elements"));
    }
    RETURN_IF_ERROR(CheckElement(*in, ctx->input(2), op_));
    ASSIGN_OR_RETURN(TensorList* out, ListToChange(ctx));
    if (index >= size) out->tensors.resize(static_cast<size_t>(index) + 1);
    out->tensors[index] = ctx->input(2);
    return absl::OkStatus();
  }

 private:
  bool resize_ = false;
};

class ResizeOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(int64_t size, ScalarIndex(ctx->input(1), op_, "size"));
    if (size < 0) {
      return absl::InvalidArgumentError(absl::StrCat(op_, ": size is ", size));
    }
    ASSIGN_OR_RETURN(TensorList* out, ListToChange(ctx));
    out->tensors.resize(static_cast<size_t>(size));
    return absl::OkStatus();
  }
};

class StackOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Init(const OpKernelConstruction& ctx) override {
    RETURN_IF_ERROR(ListKernel::Init(ctx));
    absl::StatusOr<int64_t> n = ctx.GetAttr<int64_t>("num_elements");
    num_elements_ = n.ok() ? *n : -1;
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const TensorList* in, List(ctx, 0));
    ASSIGN_OR_RETURN(TensorShape hint, ShapeFromTensor(ctx->input(1), op_));
    const int64_t size = static_cast<int64_t>(in->tensors.size());
    if (num_elements_ != -1 && num_elements_ != size) {
      return absl::InvalidArgumentError(absl::StrCat(op_, ": the list has ", size,
                                                     " elements, num_elements is ", num_elements_));
    }
    std::vector<int64_t> rows(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) rows[i] = i;
    ASSIGN_OR_RETURN(Tensor out, StackRows(ctx, *in, rows, hint));
    ctx->set_output(0, std::move(out));
    return absl::OkStatus();
  }

 private:
  int64_t num_elements_ = -1;
};

absl::StatusOr<std::vector<int64_t>> IndexVector(const Tensor& t, absl::string_view op) {
  if (t.dtype() != DT_INT32 || t.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": indices must be an int32 vector"));
  }
  std::vector<int64_t> out(t.data<int32_t>(), t.data<int32_t>() + t.NumElements());
  for (int64_t i : out) {
    if (i < 0) return absl::InvalidArgumentError(absl::StrCat(op, ": index ", i, " is negative"));
  }
  return out;
}

class GatherOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const TensorList* in, List(ctx, 0));
    ASSIGN_OR_RETURN(std::vector<int64_t> rows, IndexVector(ctx->input(1), op_));
    ASSIGN_OR_RETURN(TensorShape hint, ShapeFromTensor(ctx->input(2), op_));
    ASSIGN_OR_RETURN(Tensor out, StackRows(ctx, *in, rows, hint));
    ctx->set_output(0, std::move(out));
    return absl::OkStatus();
  }
};

class ScatterIntoExistingListOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<int64_t> indices, IndexVector(ctx->input(2), op_));
    ASSIGN_OR_RETURN(TensorList* out, ListToChange(ctx));
    return ScatterInto(ctx, out, ctx->input(1), indices);
  }
};

// TensorListScatter(tensor, indices, element_shape) and TensorListScatterV2
// (..., num_elements): a new list of max(num_elements, max index + 1).
class ScatterOp : public ListKernel {
 public:
  ScatterOp(bool v2, const TensorArrayDeviceOps* device_ops)
      : ListKernel(device_ops), v2_(v2) {}
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> indices, IndexVector(ctx->input(1), op_));
    ASSIGN_OR_RETURN(TensorShape shape, ShapeFromTensor(ctx->input(2), op_));
    auto list = std::make_shared<TensorList>(t.dtype(), shape);
    if (v2_) {
      ASSIGN_OR_RETURN(int64_t n, ScalarIndex(ctx->input(3), op_, "num_elements"));
      if (n < -1) {
        return absl::InvalidArgumentError(absl::StrCat(
            op_, ": num_elements is ", n, ", it must be -1 (as many as indexed) or at least 0"));
      }
      if (n > 0) list->tensors.resize(static_cast<size_t>(n));
    }
    RETURN_IF_ERROR(ScatterInto(ctx, list.get(), t, indices));
    ctx->set_output(0, TensorListHandle(std::move(list)));
    return absl::OkStatus();
  }

 private:
  const bool v2_;
};

// ---- Gradient plumbing: AddN and ZerosLike of lists ----------------------

// AddN of TensorLists (gradients of a list reaching it twice): element i
// of the sum is the sum of the elements i that are set; the lists must be
// of one length.
class AddListsOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const TensorList* first, GetTensorList(ctx->input(0), op_));
    ListPtr sum = CopyOf(*first);
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      ASSIGN_OR_RETURN(const TensorList* next, GetTensorList(ctx->input(i), op_));
      if (next->tensors.size() != sum->tensors.size() ||
          next->element_dtype != sum->element_dtype) {
        return absl::InvalidArgumentError(absl::StrCat(
            op_, ": adding lists of ", sum->tensors.size(), " ", DataTypeName(sum->element_dtype),
            " and ", next->tensors.size(), " ", DataTypeName(next->element_dtype)));
      }
      for (size_t k = 0; k < sum->tensors.size(); ++k) {
        const Tensor& b = next->tensors[k];
        Tensor& a = sum->tensors[k];
        if (!b.IsInitialized()) continue;
        if (!a.IsInitialized()) {
          a = b;
          continue;
        }
        ASSIGN_OR_RETURN(a, Add(ctx, a, b));
      }
    }
    ctx->set_output(0, TensorListHandle(std::move(sum)));
    return absl::OkStatus();
  }
};

// ZerosLike of a TensorList: as long, each element set zeros of its shape.
class ZerosLikeListOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const TensorList* in, GetTensorList(ctx->input(0), op_));
    ListPtr out = CopyOf(*in);
    for (Tensor& t : out->tensors) {
      if (!t.IsInitialized()) continue;
      ASSIGN_OR_RETURN(t, Zeros(ctx, t.dtype(), t.shape(), on_device() && t.on_device()));
    }
    ctx->set_output(0, TensorListHandle(std::move(out)));
    return absl::OkStatus();
  }
};

// The kernels of every list op on `device_type`, their elements in the
// memory `device_ops` works on (null: the host's). `on` makes a KernelDef
// for an op; `elements` constrains the element type where the op has one.
// With `untyped`, the ops without an element type too (Length, ElementShape,
// Resize; AddN and ZerosLike of lists, which find each element's memory).
void RegisterListKernels(KernelRegistry* k, const TensorArrayDeviceOps* device_ops,
                         const std::function<KernelDef(const char*)>& on,
                         const std::function<KernelDef(KernelDef)>& elements, bool untyped) {
  auto make = [device_ops](auto tag) -> KernelFactory {
    using K = typename decltype(tag)::type;
    return [device_ops] { return std::make_unique<K>(device_ops); };
  };
  k->Register(elements(on("EmptyTensorList").HostMemory("element_shape")
                           .HostMemory("max_num_elements").HostMemory("handle")),
              [device_ops] { return std::make_unique<NewListOp>(false, device_ops); });
  k->Register(elements(on("TensorListReserve").HostMemory("element_shape")
                           .HostMemory("num_elements").HostMemory("handle")),
              [device_ops] { return std::make_unique<NewListOp>(true, device_ops); });
  k->Register(elements(on("TensorListFromTensor").HostMemory("element_shape")
                           .HostMemory("output_handle")),
              make(std::type_identity<FromTensorOp>()));
  k->Register(elements(on("TensorListPushBack").HostMemory("input_handle")
                           .HostMemory("output_handle")),
              make(std::type_identity<PushBackOp>()));
  k->Register(elements(on("TensorListPopBack").HostMemory("input_handle")
                           .HostMemory("element_shape").HostMemory("output_handle")),
              make(std::type_identity<PopBackOp>()));
  k->Register(elements(on("TensorListGetItem").HostMemory("input_handle").HostMemory("index")
                           .HostMemory("element_shape")),
              make(std::type_identity<GetItemOp>()));
  k->Register(elements(on("TensorListSetItem").HostMemory("input_handle").HostMemory("index")
                           .HostMemory("output_handle")),
              make(std::type_identity<SetItemOp>()));
  k->Register(elements(on("TensorListStack").HostMemory("input_handle")
                           .HostMemory("element_shape")),
              make(std::type_identity<StackOp>()));
  k->Register(elements(on("TensorListGather").HostMemory("input_handle").HostMemory("indices")
                           .HostMemory("element_shape")),
              make(std::type_identity<GatherOp>()));
  k->Register(elements(on("TensorListScatter").HostMemory("indices").HostMemory("element_shape")
                           .HostMemory("output_handle")),
              [device_ops] { return std::make_unique<ScatterOp>(false, device_ops); });
  k->Register(elements(on("TensorListScatterV2").HostMemory("indices")
                           .HostMemory("element_shape").HostMemory("num_elements")
                           .HostMemory("output_handle")),
              [device_ops] { return std::make_unique<ScatterOp>(true, device_ops); });
  k->Register(elements(on("TensorListScatterIntoExistingList").HostMemory("input_handle")
                           .HostMemory("indices").HostMemory("output_handle")),
              make(std::type_identity<ScatterIntoExistingListOp>()));
  if (!untyped) return;
  k->Register(on("TensorListLength").AllHostMemory(), make(std::type_identity<LengthOp>()));
  k->Register(on("TensorListElementShape").AllHostMemory(),
              make(std::type_identity<ElementShapeOp>()));
  k->Register(on("TensorListResize").AllHostMemory(), make(std::type_identity<ResizeOp>()));
  k->Register(on("AddN").TypeConstraint("T", ::tensorflow::DT_VARIANT).HostMemory("inputs")
                  .HostMemory("sum"),
              make(std::type_identity<AddListsOp>()));
  k->Register(on("ZerosLike").TypeConstraint("T", ::tensorflow::DT_VARIANT).HostMemory("x")
                  .HostMemory("y"),
              make(std::type_identity<ZerosLikeListOp>()));
}

}  // namespace

void RegisterTensorListKernels(KernelRegistry* k) {
  RegisterListKernels(
      k, nullptr, [](const char* op) { return KernelDef(op, kDeviceTypeCpu); },
      [](KernelDef def) { return def; }, /*untyped=*/true);
}

void RegisterTensorListDeviceKernels(KernelRegistry* k, const std::string& device_type,
                                     const std::vector<DataType>& device_types,
                                     const TensorArrayDeviceOps* device_ops) {
  RegisterListKernels(
      k, device_ops, [&](const char* op) { return KernelDef(op, device_type); },
      [&](KernelDef def) { return def.TypeConstraint("element_dtype", device_types); },
      /*untyped=*/true);
  // Lists of the other types (int32: shapes, counters) keep their elements
  // in host memory too, as the device's kernels keep such values.
  std::vector<DataType> host_types;
  for (DataType t : {DT_INT32, DT_INT64, DT_BOOL, DT_STRING, DT_FLOAT, DT_DOUBLE}) {
    if (std::find(device_types.begin(), device_types.end(), t) == device_types.end()) {
      host_types.push_back(t);
    }
  }
  if (host_types.empty()) return;
  RegisterListKernels(
      k, nullptr, [&](const char* op) { return KernelDef(op, device_type).AllHostMemory(); },
      [&](KernelDef def) { return def.TypeConstraint("element_dtype", host_types); },
      /*untyped=*/false);
}

}  // namespace sluice
