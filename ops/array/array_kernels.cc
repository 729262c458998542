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
#include "base/status_macros.h"
#include "ops/array/array_index_kernels.h"
#include "ops/array/array_ops.h"
#include "ops/array/const_kernel.h"
#include "ops/array/fill_kernels.h"
#include "ops/array/internal/array_kernel_checks.h"
#include "ops/array/internal/array_kernel_util.h"
#include "ops/internal/array_util.h"
#include "ops/internal/index_tensors.h"
#include "ops/array/internal/shape_kernels.h"

namespace sluice {
namespace {

using internal::AllTypes;
using internal::CanonicalAxis;
using internal::CheckPermutation;
using internal::DispatchBySize;
using internal::ExpandDimsOp;
using internal::IdentityOp;
using internal::IntsDebugString;
using internal::Make;
using internal::NoOpKernel;
using internal::Product;
using internal::ReadInts;
using internal::ReadScalar;
using internal::ReadVector;
using internal::ReshapeOp;
using internal::ShapeOp;
using internal::SqueezeOp;
using internal::WriteInts;

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

// ---- Creating ------------------------------------------------------------------

// The CPU's writes for the shells of ops/array/fill_kernels.h.
struct CpuFillImpl {
  static absl::Status Fill(OpKernelContext*, const Tensor& value, Tensor* out) {
    FillElements(static_cast<char*>(out->raw_data()), out->NumElements(),
                 static_cast<const char*>(value.raw_data()), DataTypeSize(value.dtype()));
    return absl::OkStatus();
  }
  static absl::Status Zero(OpKernelContext*, Tensor* out) {
    std::memset(out->raw_data(), 0, out->TotalBytes());
    return absl::OkStatus();
  }
  static absl::Status FillBits(OpKernelContext*, uint64_t bits, Tensor* out) {
    FillElements(static_cast<char*>(out->raw_data()), out->NumElements(),
                 reinterpret_cast<const char*>(&bits), DataTypeSize(out->dtype()));
    return absl::OkStatus();
  }
};

// ---- Shapes -----------------------------------------------------------------

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

// ---- Joining and splitting ------------------------------------------------------

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

// The CPU's element moves for the join and split shells of
// ops/array/array_index_kernels.h (the others: slice_kernels.cc).
struct CpuJoinImpl {
  // ConcatColumns of DT_STRING tensors (Pack of the Saver's shard file
  // names): strings are copied element by element, not as bytes.
  static absl::Status ConcatStringColumns(const std::vector<const Tensor*>& inputs,
                                          const std::vector<int64_t>& widths, int64_t rows,
                                          Tensor* out) {
    absl::Span<std::string> dst = out->flat<std::string>();
    size_t k = 0;
    for (int64_t o = 0; o < rows; ++o) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        const std::string* src = inputs[i]->data<std::string>() + o * widths[i];
        for (int64_t j = 0; j < widths[i]; ++j) dst[k++] = src[j];
      }
    }
    return absl::OkStatus();
  }

  static absl::Status ConcatColumns(OpKernelContext*, const std::vector<const Tensor*>& inputs,
                                    const std::vector<int64_t>& widths, int64_t rows,
                                    Tensor* out) {
    if (out->dtype() == DT_STRING) return ConcatStringColumns(inputs, widths, rows, out);
    const size_t esize = DataTypeSize(out->dtype());
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t o = 0; o < rows; ++o) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        const size_t chunk = static_cast<size_t>(widths[i]) * esize;
        if (chunk == 0) continue;
        std::memcpy(dst, static_cast<const char*>(inputs[i]->raw_data()) + o * chunk, chunk);
        dst += chunk;
      }
    }
    return absl::OkStatus();
  }

  static absl::Status SplitRows(OpKernelContext* ctx, const Tensor& x, int64_t num,
                                int64_t outer, int64_t chunk_elements,
                                const TensorShape& out_shape) {
    const size_t chunk = static_cast<size_t>(chunk_elements) * DataTypeSize(x.dtype());
    const char* src = static_cast<const char*>(x.raw_data());
    for (int64_t i = 0; i < num; ++i) {
      ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(static_cast<int>(i), out_shape));
      if (x.dtype() == DT_STRING) {  // element by element, not as bytes
        const std::string* from = x.data<std::string>();
        std::string* to = out->data<std::string>();
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t j = 0; j < chunk_elements; ++j) {
            to[o * chunk_elements + j] = from[(o * num + i) * chunk_elements + j];
          }
        }
        continue;
      }
      if (chunk == 0) continue;
      char* dst = static_cast<char*>(out->raw_data());
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(dst + o * chunk, src + (o * num + i) * chunk, chunk);
      }
    }
    return absl::OkStatus();
  }
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

class BroadcastArgsOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<int64_t> s0, ReadVector(ctx->input(0), "BroadcastArgs: s0"));
    ASSIGN_OR_RETURN(std::vector<int64_t> s1, ReadVector(ctx->input(1), "BroadcastArgs: s1"));
    std::vector<int64_t> unused0, unused1;
    RETURN_IF_ERROR(internal::BroadcastReductionAxes(s0, s1, &unused0, &unused1));
    if (s0.size() < s1.size()) std::swap(s0, s1);
    // s0 is the longer; a dimension of 1 gives way to the other side's.
    const size_t shift = s0.size() - s1.size();
    for (size_t i = shift; i < s0.size(); ++i) {
      if (s0[i] == 1) s0[i] = s1[i - shift];
    }
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->allocate_output(0, TensorShape({static_cast<int64_t>(s0.size())})));
    return WriteInts(s0, out);
  }
  bool IsExpensive() const override { return false; }
};

}  // namespace

void RegisterArrayKernels(KernelRegistry* kernels) {
  const std::vector<DataType>& all = AllTypes();
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };

  // Unsigned words (the stateless random ops' keys, counters and seeds) are
  // held and passed on; no arithmetic kernel takes them.
  std::vector<DataType> held = all;
  held.insert(held.end(), {::tensorflow::DT_UINT32, ::tensorflow::DT_UINT64});
  kernels->Register(cpu("Const").TypeConstraint("dtype", held), Make<ConstOp<ConstMemory::kDevice>>());
  kernels->Register(cpu("Placeholder"), Make<PlaceholderOp>());
  kernels->Register(cpu("BroadcastArgs").TypeConstraint("T", {DT_INT32, DT_INT64}),
                    Make<BroadcastArgsOp>());
  kernels->Register(cpu("PlaceholderWithDefault").TypeConstraint("dtype", held), Make<IdentityOp>());
  for (const char* op : {"Identity", "StopGradient", "PreventGradient"}) {
    kernels->Register(cpu(op).TypeConstraint("T", held), Make<IdentityOp>());
  }
  kernels->Register(cpu("NoOp"), Make<NoOpKernel>());

  kernels->Register(cpu("Fill").TypeConstraint("T", all), Make<FillOp<CpuFillImpl>>());
  kernels->Register(cpu("ZerosLike").TypeConstraint("T", all), Make<ZerosLikeOp<CpuFillImpl>>());
  kernels->Register(cpu("OnesLike").TypeConstraint("T", all), Make<OnesLikeOp<CpuFillImpl>>());

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
                    [] { return std::make_unique<ConcatOp<CpuJoinImpl>>(/*axis_first=*/false); });
  kernels->Register(cpu("Concat").TypeConstraint("T", all),
                    [] { return std::make_unique<ConcatOp<CpuJoinImpl>>(/*axis_first=*/true); });
  kernels->Register(cpu("ConcatOffset"), Make<ConcatOffsetOp>());
  kernels->Register(cpu("Split").TypeConstraint("T", all), Make<SplitOp<CpuJoinImpl>>());
  kernels->Register(cpu("Pack").TypeConstraint("T", all), Make<PackOp<CpuJoinImpl>>());
  kernels->Register(cpu("Unpack").TypeConstraint("T", all), Make<UnpackOp<CpuJoinImpl>>());
  kernels->Register(cpu("BroadcastGradientArgs"), Make<BroadcastGradientArgsOp>());

  internal::RegisterSliceKernels(kernels);

  // DT_STRING: only the kernels that pass buffers along or read shapes. The
  // byte-moving kernels above would copy std::string objects bit by bit.
  kernels->Register(cpu("Const").TypeConstraint("dtype", DT_STRING), Make<ConstOp<ConstMemory::kDevice>>());
  kernels->Register(cpu("PlaceholderWithDefault").TypeConstraint("dtype", DT_STRING),
                    Make<IdentityOp>());
  for (const char* op : {"Identity", "StopGradient", "PreventGradient"}) {
    kernels->Register(cpu(op).TypeConstraint("T", DT_STRING), Make<IdentityOp>());
  }
  // Handles (a resource variable passed to a function, a dataset returned
  // by one) pass through Identity too, as in TensorFlow.
  kernels->Register(cpu("Identity").TypeConstraint(
                        "T", std::vector<DataType>{DT_RESOURCE, ::tensorflow::DT_VARIANT}),
                    Make<IdentityOp>());
  kernels->Register(cpu("Reshape").TypeConstraint("T", DT_STRING), Make<ReshapeOp>());
  kernels->Register(cpu("ExpandDims").TypeConstraint("T", DT_STRING), Make<ExpandDimsOp>());
  kernels->Register(cpu("Squeeze").TypeConstraint("T", DT_STRING), Make<SqueezeOp>());
  // TensorFlow's Saver packs the shard file names (MergeV2Checkpoints);
  // the join and split kernels copy strings element by element.
  kernels->Register(cpu("Pack").TypeConstraint("T", DT_STRING), Make<PackOp<CpuJoinImpl>>());
  kernels->Register(cpu("Unpack").TypeConstraint("T", DT_STRING), Make<UnpackOp<CpuJoinImpl>>());
  kernels->Register(cpu("Split").TypeConstraint("T", DT_STRING), Make<SplitOp<CpuJoinImpl>>());
  kernels->Register(cpu("ConcatV2").TypeConstraint("T", DT_STRING),
                    [] { return std::make_unique<ConcatOp<CpuJoinImpl>>(/*axis_first=*/false); });
  kernels->Register(cpu("Concat").TypeConstraint("T", DT_STRING),
                    [] { return std::make_unique<ConcatOp<CpuJoinImpl>>(/*axis_first=*/true); });
  kernels->Register(cpu("Shape").TypeConstraint("T", DT_STRING),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kShape); });
  kernels->Register(cpu("Size").TypeConstraint("T", DT_STRING),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kSize); });
  kernels->Register(cpu("Rank").TypeConstraint("T", DT_STRING),
                    [] { return std::make_unique<ShapeOp>(ShapeOp::Kind::kRank); });
}

}  // namespace sluice
