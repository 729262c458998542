// CPU kernels of the array ops: constants and feeds, identity-like ops,
// creating (Fill, ZerosLike, OnesLike), shapes (Reshape, ExpandDims, Squeeze,
// InvertPermutation, Shape, Size, Rank), joining and splitting (Concat,
// ConcatOffset, Split, Pack, Unpack) and BroadcastGradientArgs; the indexing
// kernels are in slice_kernels.cc. Most move bytes without looking at them, so
// one kernel serves every fixed-size dtype; the few that compute
// (OnesLike, InvertPermutation) are typed. Kernels do not split work over the
// device's thread pool: they are memory-bound, and the executor already runs
// independent nodes in parallel.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/status_macros.h"
#include "ops/array_ops.h"
#include "ops/internal/array_kernel_util.h"
#include "ops/internal/array_util.h"

namespace sluice {
namespace {

using internal::AllTypes;
using internal::CanonicalAxis;
using internal::CheckPermutation;
using internal::DispatchBySize;
using internal::IntsDebugString;
using internal::Make;
using internal::Product;
using internal::ReadInts;
using internal::ReadScalar;
using internal::ReadVector;
using internal::WriteInts;
using ::tensorflow::TensorProto;

// Fills `n` elements at `dst` with the element at `value`.
void FillElements(char* dst, int64_t n, const char* value, size_t esize) {
  DispatchBySize(esize, [&](auto tag) {
    using U = typename decltype(tag)::type;
    U v;
    std::memcpy(&v, value, sizeof(U));
    std::fill_n(reinterpret_cast<U*>(dst), n, v);
  });
}

// ---- Constants and feeds ---------------------------------------------------

class ConstOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(TensorProto proto, ctx.GetAttr<TensorProto>("value"));
    Allocator* allocator = ctx.device() != nullptr ? ctx.device()->allocator() : nullptr;
    ASSIGN_OR_RETURN(value_, Tensor::FromProto(proto, allocator));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, value_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  Tensor value_;
};

class PlaceholderOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("dtype"));
    absl::StatusOr<TensorShape> shape = ctx.GetAttr<TensorShape>("shape");
    shape_ = shape.ok() ? *shape : TensorShape::Unknown();
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    std::string message = absl::StrCat("You must feed a value for placeholder tensor '",
                                       ctx->node().name(), "' with dtype ", DataTypeName(dtype_));
    if (!shape_.unknown_rank()) absl::StrAppend(&message, " and shape ", shape_.DebugString());
    return absl::InvalidArgumentError(message);
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
};

// Identity, StopGradient, PreventGradient, PlaceholderWithDefault.
class IdentityOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, ctx->input(0));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class NoOpKernel : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override { return absl::OkStatus(); }
  bool IsExpensive() const override { return false; }
};

// ---- Creating ------------------------------------------------------------------

class FillOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadVector(ctx->input(0), "Fill: dims"));
    const Tensor& value = ctx->input(1);
    if (value.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Fill: value must be a scalar, got shape ", value.shape().DebugString()));
    }
    for (int64_t d : dims) {
      if (d < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Fill: dims must be non-negative, got ", IntsDebugString(dims)));
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(dims))));
    FillElements(static_cast<char*>(out->raw_data()), out->NumElements(),
                 static_cast<const char*>(value.raw_data()), DataTypeSize(value.dtype()));
    return absl::OkStatus();
  }
};

class ZerosLikeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->forward_input_or_allocate_output(0, 0, ctx->input(0).shape()));
    if (out->TotalBytes() > 0) std::memset(out->raw_data(), 0, out->TotalBytes());
    return absl::OkStatus();
  }
};

// The bytes of the value 1 in `dtype`.
uint64_t OneBits(DataType dtype) {
  uint64_t bits = 0;
  auto put = [&bits](auto v) { std::memcpy(&bits, &v, sizeof(v)); };
  switch (dtype) {
    case DT_FLOAT:
      put(1.0f);
      break;
    case DT_DOUBLE:
      put(1.0);
      break;
    case DT_HALF:
      put(Half::FromFloat(1.0f));
      break;
    case DT_BFLOAT16:
      put(BFloat16::FromFloat(1.0f));
      break;
    case DT_BOOL:
      put(true);
      break;
    case DT_INT8:
      put(int8_t{1});
      break;
    case DT_UINT8:
      put(uint8_t{1});
      break;
    case DT_INT16:
      put(int16_t{1});
      break;
    case DT_UINT16:
      put(uint16_t{1});
      break;
    case DT_INT32:
      put(int32_t{1});
      break;
    default:
      put(int64_t{1});
      break;
  }
  return bits;
}

class OnesLikeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    const uint64_t one = OneBits(x.dtype());
    FillElements(static_cast<char*>(out->raw_data()), out->NumElements(),
                 reinterpret_cast<const char*>(&one), DataTypeSize(x.dtype()));
    return absl::OkStatus();
  }
};

// ---- Shapes -----------------------------------------------------------------

class ReshapeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> requested, ReadVector(ctx->input(1), "Reshape: shape"));
    ASSIGN_OR_RETURN(TensorShape shape, internal::ResolveReshape(x.shape(), requested));
    ASSIGN_OR_RETURN(Tensor y, x.Reshaped(shape));
    ctx->set_output(0, std::move(y));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class ExpandDimsOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(int64_t dim, ReadScalar(ctx->input(1), "ExpandDims: dim"));
    ASSIGN_OR_RETURN(int64_t d, CanonicalAxis(dim, x.dims() + 1, "ExpandDims: dim", x.shape()));
    TensorShape shape = x.shape();
    shape.InsertDim(static_cast<int>(d), 1);
    ASSIGN_OR_RETURN(Tensor y, x.Reshaped(shape));
    ctx->set_output(0, std::move(y));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class SqueezeOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(squeeze_dims_, ctx.GetAttr<std::vector<int64_t>>("squeeze_dims"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    std::vector<bool> remove(x.dims(), false);
    for (int64_t d : squeeze_dims_) {
      ASSIGN_OR_RETURN(int64_t a,
                       CanonicalAxis(d, x.dims(), "Squeeze: squeeze_dims entry", x.shape()));
      if (x.dim_size(a) != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("Can not squeeze dim[", a, "], expected a dimension of 1, got ",
                         x.dim_size(a), " (shape ", x.shape().DebugString(), ")"));
      }
      remove[a] = true;
    }
    std::vector<int64_t> dims;
    for (int i = 0; i < x.dims(); ++i) {
      if (squeeze_dims_.empty() ? x.dim_size(i) != 1 : !remove[i]) dims.push_back(x.dim_size(i));
    }
    ASSIGN_OR_RETURN(Tensor y, x.Reshaped(TensorShape(absl::MakeConstSpan(dims))));
    ctx->set_output(0, std::move(y));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  std::vector<int64_t> squeeze_dims_;
};

template <typename T>
class InvertPermutationOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "InvertPermutation: x must be a vector, got shape ", x.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> perm, ReadInts(x, "InvertPermutation: x"));
    RETURN_IF_ERROR(CheckPermutation(perm, "InvertPermutation: x"));
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    T* out = y->data<T>();
    for (size_t i = 0; i < perm.size(); ++i) out[perm[i]] = static_cast<T>(i);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// Shape, Size, Rank.
class ShapeOp : public OpKernel {
 public:
  enum class Kind { kShape, kSize, kRank };
  explicit ShapeOp(Kind kind) : kind_(kind) {}
  absl::Status Compute(OpKernelContext* ctx) override {
    const TensorShape& s = ctx->input(0).shape();
    std::vector<int64_t> values;
    TensorShape out_shape;
    switch (kind_) {
      case Kind::kShape:
        values = s.dims();
        out_shape = TensorShape({static_cast<int64_t>(values.size())});
        break;
      case Kind::kSize:
        values = {ctx->input(0).NumElements()};
        break;
      case Kind::kRank:
        values = {s.rank()};
        break;
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    return WriteInts(values, out);
  }
  bool IsExpensive() const override { return false; }

 private:
  const Kind kind_;
};

// ---- Joining and splitting ------------------------------------------------------

// ConcatV2 (axis last) and Concat (axis first).
class ConcatOp : public OpKernel {
 public:
  explicit ConcatOp(bool axis_first) : axis_first_(axis_first) {}
  absl::Status Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    const int first = axis_first_ ? 1 : 0;
    ASSIGN_OR_RETURN(int64_t axis_value,
                     ReadScalar(ctx->input(axis_first_ ? 0 : n), "Concat: axis"));
    const Tensor& x0 = ctx->input(first);
    const int rank = x0.dims();
    if (rank == 0) {
      return absl::InvalidArgumentError("Concat: can't concatenate scalars (use Pack instead)");
    }
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_value, rank, "Concat: axis", x0.shape()));
    TensorShape out_shape = x0.shape();
    int64_t axis_size = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& x = ctx->input(first + i);
      bool match = x.dims() == rank;
      for (int d = 0; match && d < rank; ++d) match = d == axis || x.dim_size(d) == x0.dim_size(d);
      if (!match) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Concat: dimensions of inputs should match except along axis ", axis, ": shape[0] = ",
            x0.shape().DebugString(), " vs. shape[", i, "] = ", x.shape().DebugString()));
      }
      axis_size += x.dim_size(axis);
    }
    out_shape.set_dim(static_cast<int>(axis), axis_size);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    const size_t esize = DataTypeSize(x0.dtype());
    const int64_t outer = Product(x0.shape().dims(), 0, axis);
    std::vector<size_t> chunk(n);
    size_t out_row = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& x = ctx->input(first + i);
      chunk[i] = static_cast<size_t>(Product(x.shape().dims(), axis, rank)) * esize;
      out_row += chunk[i];
    }
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int i = 0; i < n; ++i) {
        if (chunk[i] == 0) continue;
        std::memcpy(dst, static_cast<const char*>(ctx->input(first + i).raw_data()) + o * chunk[i],
                    chunk[i]);
        dst += chunk[i];
      }
    }
    return absl::OkStatus();
  }

 private:
  const bool axis_first_;
};

class ConcatOffsetOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    ASSIGN_OR_RETURN(int64_t axis_value, ReadScalar(ctx->input(0), "ConcatOffset: concat_dim"));
    ASSIGN_OR_RETURN(std::vector<int64_t> s0, ReadVector(ctx->input(1), "ConcatOffset: shape"));
    const int64_t rank = static_cast<int64_t>(s0.size());
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_value, rank, "ConcatOffset: concat_dim",
                                                 TensorShape(absl::MakeConstSpan(s0))));
    int64_t offset = 0;
    for (int i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(std::vector<int64_t> s,
                       ReadVector(ctx->input(1 + i), "ConcatOffset: shape"));
      bool match = static_cast<int64_t>(s.size()) == rank;
      for (int64_t d = 0; match && d < rank; ++d) match = d == axis || s[d] == s0[d];
      if (!match) {
        return absl::InvalidArgumentError(
            absl::StrCat("ConcatOffset: shape ", i, " ", IntsDebugString(s),
                         " does not match shape 0 ", IntsDebugString(s0), " except along ", axis));
      }
      std::vector<int64_t> value(rank, 0);
      value[axis] = offset;
      offset += s[axis];
      ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(i, TensorShape({rank})));
      RETURN_IF_ERROR(WriteInts(value, out));
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// Writes `num` outputs; output i takes, for each of `outer` rows, the i-th
// run of `chunk` bytes of the input row.
absl::Status SplitRows(OpKernelContext* ctx, const Tensor& x, int64_t num, int64_t outer,
                       size_t chunk, const TensorShape& out_shape) {
  const char* src = static_cast<const char*>(x.raw_data());
  for (int64_t i = 0; i < num; ++i) {
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(static_cast<int>(i), out_shape));
    if (chunk == 0) continue;
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + o * chunk, src + (o * num + i) * chunk, chunk);
    }
  }
  return absl::OkStatus();
}

class SplitOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(1);
    const int64_t num = ctx->num_outputs();
    ASSIGN_OR_RETURN(int64_t axis_value, ReadScalar(ctx->input(0), "Split: axis"));
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_value, x.dims(), "Split: axis", x.shape()));
    const int64_t d = x.dim_size(axis);
    if (d % num != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Number of ways to split should evenly divide the split dimension, but got split_dim ",
          axis, " (size = ", d, ") and num_split ", num));
    }
    if (num == 1) {
      ctx->set_output(0, x);
      return absl::OkStatus();
    }
    TensorShape out_shape = x.shape();
    out_shape.set_dim(static_cast<int>(axis), d / num);
    const size_t chunk =
        static_cast<size_t>(Product(out_shape.dims(), axis, x.dims())) * DataTypeSize(x.dtype());
    return SplitRows(ctx, x, num, Product(x.shape().dims(), 0, axis), chunk, out_shape);
  }
};

class PackOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(axis_, ctx.GetAttr<int64_t>("axis"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const Tensor& x0 = ctx->input(0);
    for (int i = 1; i < n; ++i) {
      if (ctx->input(i).shape() != x0.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Pack: shapes of all inputs must match: values[0].shape = ", x0.shape().DebugString(),
            " != values[", i, "].shape = ", ctx->input(i).shape().DebugString()));
      }
    }
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_, x0.dims() + 1, "Pack: axis", x0.shape()));
    TensorShape out_shape = x0.shape();
    out_shape.InsertDim(static_cast<int>(axis), n);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    const int64_t outer = Product(x0.shape().dims(), 0, axis);
    const size_t chunk =
        static_cast<size_t>(Product(x0.shape().dims(), axis, x0.dims())) * DataTypeSize(x0.dtype());
    if (chunk == 0) return absl::OkStatus();
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int i = 0; i < n; ++i) {
        std::memcpy(dst, static_cast<const char*>(ctx->input(i).raw_data()) + o * chunk, chunk);
        dst += chunk;
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 0;
};

class UnpackOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(axis_, ctx.GetAttr<int64_t>("axis"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int64_t num = ctx->num_outputs();
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_, x.dims(), "Unpack: axis", x.shape()));
    if (x.dim_size(axis) != num) {
      return absl::InvalidArgumentError(
          absl::StrCat("Unpack: input shape ", x.shape().DebugString(), " has ", x.dim_size(axis),
                       " along axis ", axis, " but num = ", num));
    }
    TensorShape out_shape = x.shape();
    out_shape.RemoveDim(static_cast<int>(axis));
    const size_t chunk = static_cast<size_t>(Product(x.shape().dims(), axis + 1, x.dims())) *
                         DataTypeSize(x.dtype());
    return SplitRows(ctx, x, num, Product(x.shape().dims(), 0, axis), chunk, out_shape);
  }

 private:
  int64_t axis_ = 0;
};

class BroadcastGradientArgsOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<int64_t> s0,
                     ReadVector(ctx->input(0), "BroadcastGradientArgs: s0"));
    ASSIGN_OR_RETURN(std::vector<int64_t> s1,
                     ReadVector(ctx->input(1), "BroadcastGradientArgs: s1"));
    std::vector<int64_t> r0, r1;
    RETURN_IF_ERROR(internal::BroadcastReductionAxes(s0, s1, &r0, &r1));
    ASSIGN_OR_RETURN(Tensor * out0,
                     ctx->allocate_output(0, TensorShape({static_cast<int64_t>(r0.size())})));
    RETURN_IF_ERROR(WriteInts(r0, out0));
    ASSIGN_OR_RETURN(Tensor * out1,
                     ctx->allocate_output(1, TensorShape({static_cast<int64_t>(r1.size())})));
    return WriteInts(r1, out1);
  }
  bool IsExpensive() const override { return false; }
};

}  // namespace

void RegisterArrayKernels(KernelRegistry* kernels) {
  const std::vector<DataType>& all = AllTypes();
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };

  kernels->Register(cpu("Const").TypeConstraint("dtype", all), Make<ConstOp>());
  kernels->Register(cpu("Placeholder"), Make<PlaceholderOp>());
  kernels->Register(cpu("PlaceholderWithDefault").TypeConstraint("dtype", all), Make<IdentityOp>());
  for (const char* op : {"Identity", "StopGradient", "PreventGradient"}) {
    kernels->Register(cpu(op).TypeConstraint("T", all), Make<IdentityOp>());
  }
  kernels->Register(cpu("NoOp"), Make<NoOpKernel>());

  kernels->Register(cpu("Fill").TypeConstraint("T", all), Make<FillOp>());
  kernels->Register(cpu("ZerosLike").TypeConstraint("T", all), Make<ZerosLikeOp>());
  kernels->Register(cpu("OnesLike").TypeConstraint("T", all), Make<OnesLikeOp>());

  kernels->Register(cpu("Reshape").TypeConstraint("T", all), Make<ReshapeOp>());
  kernels->Register(cpu("InvertPermutation").TypeConstraint("T", DT_INT32),
                    Make<InvertPermutationOp<int32_t>>());
  kernels->Register(cpu("InvertPermutation").TypeConstraint("T", DT_INT64),
                    Make<InvertPermutationOp<int64_t>>());
  kernels->Register(cpu("ExpandDims").TypeConstraint("T", all), Make<ExpandDimsOp>());
  kernels->Register(cpu("Squeeze").TypeConstraint("T", all), Make<SqueezeOp>());
  kernels->Register(cpu("Shape").TypeConstraint("T", all),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kShape); });
  kernels->Register(cpu("Size").TypeConstraint("T", all),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kSize); });
  kernels->Register(cpu("Rank").TypeConstraint("T", all),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kRank); });

  kernels->Register(cpu("ConcatV2").TypeConstraint("T", all),
                    [] { return std::make_unique<ConcatOp>(/*axis_first=*/false); });
  kernels->Register(cpu("Concat").TypeConstraint("T", all),
                    [] { return std::make_unique<ConcatOp>(/*axis_first=*/true); });
  kernels->Register(cpu("ConcatOffset"), Make<ConcatOffsetOp>());
  kernels->Register(cpu("Split").TypeConstraint("T", all), Make<SplitOp>());
  kernels->Register(cpu("Pack").TypeConstraint("T", all), Make<PackOp>());
  kernels->Register(cpu("Unpack").TypeConstraint("T", all), Make<UnpackOp>());
  kernels->Register(cpu("BroadcastGradientArgs"), Make<BroadcastGradientArgsOp>());

  internal::RegisterSliceKernels(kernels);

  // DT_STRING: only the kernels that pass buffers along or read shapes. The
  // byte-moving kernels above would copy std::string objects bit by bit.
  kernels->Register(cpu("Const").TypeConstraint("dtype", DT_STRING), Make<ConstOp>());
  kernels->Register(cpu("PlaceholderWithDefault").TypeConstraint("dtype", DT_STRING),
                    Make<IdentityOp>());
  for (const char* op : {"Identity", "StopGradient", "PreventGradient"}) {
    kernels->Register(cpu(op).TypeConstraint("T", DT_STRING), Make<IdentityOp>());
  }
  kernels->Register(cpu("Reshape").TypeConstraint("T", DT_STRING), Make<ReshapeOp>());
  kernels->Register(cpu("ExpandDims").TypeConstraint("T", DT_STRING), Make<ExpandDimsOp>());
  kernels->Register(cpu("Squeeze").TypeConstraint("T", DT_STRING), Make<SqueezeOp>());
  kernels->Register(cpu("Shape").TypeConstraint("T", DT_STRING),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kShape); });
  kernels->Register(cpu("Size").TypeConstraint("T", DT_STRING),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kSize); });
  kernels->Register(cpu("Rank").TypeConstraint("T", DT_STRING),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kRank); });
}

}  // namespace sluice
