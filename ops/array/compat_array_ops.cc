// Empty, UnravelIndex, the Inplace ops, NthElement, Snapshot,
// GuaranteeConst, DeepCopy and ToBool: definitions, CPU
// kernels, gradients and wrappers (ops/array/compat_array_ops.h).
#include "ops/array/compat_array_ops.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/internal/index_tensors.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

class EmptyOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& shape = ctx->input(0);
    if (shape.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Empty: shape must be a vector, got shape ", shape.shape().DebugString()));
    }
    std::vector<int64_t> dims(shape.data<int32_t>(), shape.data<int32_t>() + shape.NumElements());
    for (int64_t d : dims) {
      if (d < 0) return absl::InvalidArgumentError(absl::StrCat("Empty: negative dimension ", d));
    }
    Tensor out(dtype_, TensorShape(dims));
    if (out.TotalBytes() > 0 && dtype_ != DT_STRING) std::memset(out.raw_data(), 0, out.TotalBytes());
    ctx->set_output(0, std::move(out));
    return absl::OkStatus();
  }

 private:
  DataType dtype_ = DT_INVALID;
};

template <typename T>
class UnravelIndexOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& dims_t = ctx->input(1);
    if (indices.dims() > 1 || dims_t.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "UnravelIndex: indices must be a scalar or vector and dims a vector, got shapes ",
          indices.shape().DebugString(), " and ", dims_t.shape().DebugString()));
    }
    const T* dims = dims_t.data<T>();
    const int64_t nd = dims_t.NumElements();
    int64_t total = 1;
    for (int64_t k = 0; k < nd; ++k) {
      if (dims[k] <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("UnravelIndex: dims must be positive, got ", dims[k], " at ", k));
      }
      total *= dims[k];
    }
    const int64_t n = indices.NumElements();
    TensorShape out_shape = indices.dims() == 0 ? TensorShape({nd}) : TensorShape({nd, n});
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    T* o = out->data<T>();
    for (int64_t j = 0; j < n; ++j) {
      int64_t flat = indices.data<T>()[j];
      if (flat < 0 || flat >= total) {
        return absl::InvalidArgumentError(absl::StrCat(
            "UnravelIndex: index ", flat, " is out of bounds for a tensor of ", total,
            " elements"));
      }
      for (int64_t k = nd - 1; k >= 0; --k) {
        o[k * n + j] = static_cast<T>(flat % dims[k]);
        flat /= dims[k];
      }
    }
    return absl::OkStatus();
  }
};

template <typename T>
class InplaceOp : public OpKernel {
 public:
  enum class Kind { kUpdate, kAdd, kSub };
  explicit InplaceOp(Kind kind) : kind_(kind) {}

  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    const Tensor& x = ctx->input(0);
    const Tensor& i = ctx->input(1);
    const Tensor& v = ctx->input(2);
    if (x.dims() < 1) return absl::InvalidArgumentError(absl::StrCat(op, ": x must have a row dimension"));
    std::vector<int64_t> want = {i.NumElements()};
    for (int d = 1; d < x.dims(); ++d) want.push_back(x.dim_size(d));
    if (i.dims() > 1 || v.shape() != TensorShape(want)) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": i and x shape doesn't match v: i ", i.shape().DebugString(), ", x ",
          x.shape().DebugString(), ", v ", v.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    const T* src = x.data<T>();
    T* dst = y->data<T>();
    std::copy(src, src + x.NumElements(), dst);
    const int64_t row = x.dim_size(0) == 0 ? 0 : x.NumElements() / x.dim_size(0);
    for (int64_t k = 0; k < i.NumElements(); ++k) {
      const int64_t r = i.data<int32_t>()[k];
      if (r < 0 || r >= x.dim_size(0)) {
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": i[", k, "] = ", r, " is not in [0, ", x.dim_size(0), ")"));
      }
      const T* vr = v.data<T>() + k * row;
      T* yr = dst + r * row;
      for (int64_t c = 0; c < row; ++c) {
        if (kind_ == Kind::kUpdate) {
          yr[c] = vr[c];
        } else if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<T, std::string>) {
          yr[c] = kind_ == Kind::kAdd ? yr[c] + vr[c] : yr[c] - vr[c];
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  const Kind kind_;
};

template <typename T>
class NthElementOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(reverse_, ctx.GetAttr<bool>("reverse"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& n_t = ctx->input(1);
    if (n_t.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("NthElement: n must be a scalar, got shape ", n_t.shape().DebugString()));
    }
    if (in.dims() < 1) {
      return absl::InvalidArgumentError("NthElement: input must be at least rank 1");
    }
    const int64_t cols = in.dim_size(in.dims() - 1);
    const int64_t n = n_t.scalar<int32_t>();
    if (n < 0 || n >= cols) {
      return absl::InvalidArgumentError(absl::StrCat(
          "NthElement: n must be in [0, ", cols, ") (the last dimension), got ", n));
    }
    std::vector<int64_t> out_dims(in.shape().dims().begin(), in.shape().dims().end() - 1);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape(out_dims)));
    std::vector<T> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < out->NumElements(); ++r) {
      const T* src = in.data<T>() + r * cols;
      std::copy(src, src + cols, row.begin());
      if (reverse_) {
        std::nth_element(row.begin(), row.begin() + n, row.end(), std::greater<T>());
      } else {
        std::nth_element(row.begin(), row.begin() + n, row.end());
      }
      out->data<T>()[r] = row[n];
    }
    return absl::OkStatus();
  }

 private:
  bool reverse_ = false;
};

// TensorFlow's: the gradient goes to the inputs equal to the selected
// value, shared equally among them.
absl::StatusOr<std::vector<Output>> NthElementGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  std::vector<Output> grads(2);
  if (!dy[0].valid()) return grads;
  const Output input = internal::InputOf(node, 0);
  const Output selected = internal::OutputOf(node, 0);
  const Output last = ops::Const(s, -1);
  const Output hits = s.Op("Equal").Input(s.Op("ExpandDims").Input(selected).Input(last).Finalize1())
                          .Input(input)
                          .Finalize1();
  const Output indicators = s.Op("Cast").Input(hits).Attr("DstT", dy[0].dtype()).Finalize1();
  const Output count =
      s.Op("Sum").Input(indicators).Input(last).Attr("keep_dims", true).Finalize1();
  const Output share = s.Op("RealDiv").Input(indicators).Input(count).Finalize1();
  grads[0] = s.Op("Mul")
                 .Input(share)
                 .Input(s.Op("ExpandDims").Input(dy[0]).Input(last).Finalize1())
                 .Finalize1();
  RETURN_IF_ERROR(s.status());
  return grads;
}

template <typename T>
void RegisterInplace(KernelRegistry* k, DataType t, bool arithmetic) {
  using Op = InplaceOp<T>;
  auto on = [t](const char* op) { return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", t); };
  k->Register(on("InplaceUpdate"), [] { return std::make_unique<Op>(Op::Kind::kUpdate); });
  if (!arithmetic) return;
  k->Register(on("InplaceAdd"), [] { return std::make_unique<Op>(Op::Kind::kAdd); });
  k->Register(on("InplaceSub"), [] { return std::make_unique<Op>(Op::Kind::kSub); });
}

template <typename T>
void RegisterNthElement(KernelRegistry* k) {
  k->Register<NthElementOp<T>>(
      KernelDef("NthElement", kDeviceTypeCpu).TypeConstraint("T", DataTypeToEnum<T>::value));
}

}  // namespace

// Snapshot, GuaranteeConst, DeepCopy: the input itself. (TensorFlow copies
// for Snapshot and DeepCopy so that later in-place writes to the input do
// not show; Sluice's tensors are never written in place once handed on.)
class PassThroughOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, ctx->input(0));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// A tensor's truth as Python's: a scalar's value (a string's non-emptiness),
// else whether it has elements.
class ToBoolOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    bool truth = t.NumElements() > 0;
    if (t.dims() == 0) {
      switch (t.dtype()) {
        case DT_STRING:
          truth = !t.data<std::string>()[0].empty();
          break;
        case DT_BOOL:
          truth = t.data<bool>()[0];
          break;
        case DT_FLOAT:
          truth = t.data<float>()[0] != 0;
          break;
        case DT_DOUBLE:
          truth = t.data<double>()[0] != 0;
          break;
        case DT_INT32:
          truth = t.data<int32_t>()[0] != 0;
          break;
        case DT_INT64:
          truth = t.data<int64_t>()[0] != 0;
          break;
        default:
          return absl::UnimplementedError(
              absl::StrCat("ToBool of a ", DataTypeName(t.dtype()), " scalar"));
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->data<bool>()[0] = truth;
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

absl::Status RegisterCompatArrayOps(OpRegistry* ops) {
  for (const char* op : {"Snapshot", "GuaranteeConst", "DeepCopy"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(op)
                                      .Input(op == std::string("DeepCopy") ? "x: T" : "input: T")
                                      .Output(op == std::string("DeepCopy") ? "y: T" : "output: T")
                                      .Attr("T: type")
                                      .SetShapeFn([](InferenceContext* c) {
                                        c->set_output(0, c->input(0));
                                        return absl::OkStatus();
                                      })));
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ToBool")
                                    .Input("input: T")
                                    .Output("output: bool")
                                    .Attr("T: type")
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, TensorShape());
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->SetNoGradient("ToBool"));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Empty")
                                    .Input("shape: int32")
                                    .Output("output: dtype")
                                    .Attr("dtype: type")
                                    .Attr("init: bool = false")
                                    .SetIsStateful()
                                    .SetShapeFn([](InferenceContext* c) -> absl::Status {
                                      ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims,
                                                       c->InputAsInts(0));
                                      c->set_output(0, dims ? TensorShape(*dims)
                                                            : TensorShape::Unknown());
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("UnravelIndex")
          .Input("indices: Tidx")
          .Input("dims: Tidx")
          .Output("output: Tidx")
          .Attr("Tidx: {int32, int64} = int32")
          .SetShapeFn([](InferenceContext* c) {
            const TensorShape& idx = c->input(0);
            const TensorShape& dims = c->input(1);
            const int64_t nd = dims.rank() == 1 ? dims.dim(0) : -1;
            if (idx.rank() == 0) {
              c->set_output(0, TensorShape({nd}));
            } else if (idx.rank() == 1) {
              c->set_output(0, TensorShape({nd, idx.dim(0)}));
            } else {
              c->set_output(0, TensorShape::Unknown());
            }
            return absl::OkStatus();
          })));
  for (const char* op : {"InplaceUpdate", "InplaceAdd", "InplaceSub"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(op)
                                      .Input("x: T")
                                      .Input("i: int32")
                                      .Input("v: T")
                                      .Output("y: T")
                                      .Attr("T: type")
                                      .SetShapeFn([](InferenceContext* c) {
                                        c->set_output(0, c->input(0));
                                        return absl::OkStatus();
                                      })));
  }
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("NthElement")
          .Input("input: T")
          .Input("n: int32")
          .Output("values: T")
          .Attr("reverse: bool = false")
          .Attr("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, "
                "uint32, uint64}")
          .SetShapeFn([](InferenceContext* c) -> absl::Status {
            const TensorShape& in = c->input(0);
            if (in.unknown_rank()) {
              c->set_output(0, TensorShape::Unknown());
              return absl::OkStatus();
            }
            RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
            c->set_output(0, TensorShape(std::vector<int64_t>(in.dims().begin(), in.dims().end() - 1)));
            return absl::OkStatus();
          })));
  for (const char* op : {"Empty", "UnravelIndex", "InplaceUpdate", "InplaceAdd", "InplaceSub"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

absl::Status RegisterCompatArrayGradients(OpRegistry* ops) {
  return ops->SetGradient("NthElement", NthElementGrad);
}

void RegisterCompatArrayKernels(KernelRegistry* k) {
  for (const char* op : {"Snapshot", "GuaranteeConst", "DeepCopy"}) {
    k->Register<PassThroughOp>(KernelDef(op, kDeviceTypeCpu));
  }
  k->Register<ToBoolOp>(KernelDef("ToBool", kDeviceTypeCpu));
  k->Register<EmptyOp>(KernelDef("Empty", kDeviceTypeCpu));
  k->Register<UnravelIndexOp<int32_t>>(
      KernelDef("UnravelIndex", kDeviceTypeCpu).TypeConstraint("Tidx", DT_INT32));
  k->Register<UnravelIndexOp<int64_t>>(
      KernelDef("UnravelIndex", kDeviceTypeCpu).TypeConstraint("Tidx", DT_INT64));
  RegisterInplace<float>(k, DT_FLOAT, true);
  RegisterInplace<double>(k, DT_DOUBLE, true);
  RegisterInplace<int32_t>(k, DT_INT32, true);
  RegisterInplace<int64_t>(k, DT_INT64, true);
  RegisterInplace<bool>(k, DT_BOOL, false);
  RegisterNthElement<float>(k);
  RegisterNthElement<double>(k);
  RegisterNthElement<int32_t>(k);
  RegisterNthElement<int64_t>(k);
}

namespace ops {

Output Empty(const Scope& s, Input shape, DataType dtype, bool init, std::source_location loc) {
  return s.Op("Empty", loc).Input(shape).Attr("dtype", dtype).Attr("init", init).Finalize1();
}

Output Snapshot(const Scope& s, Input input, std::source_location loc) {
  return s.Op("Snapshot", loc).Input(input).Finalize1();
}

Output ToBool(const Scope& s, Input input, std::source_location loc) {
  return s.Op("ToBool", loc).Input(input).Finalize1();
}

Output UnravelIndex(const Scope& s, Input indices, Input dims, std::source_location loc) {
  return s.Op("UnravelIndex", loc).Input(indices).Input(dims).Finalize1();
}

Output Inplace(const Scope& s, const char* op, Input x, Input i, Input v,
               std::source_location loc) {
  return s.Op(op, loc).Input(x).Input(i).Input(v).Finalize1();
}

Output NthElement(const Scope& s, Input input, Input n, bool reverse, std::source_location loc) {
  return s.Op("NthElement", loc).Input(input).Input(n).Attr("reverse", reverse).Finalize1();
}

}  // namespace ops
}  // namespace sluice
