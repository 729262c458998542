// CPU kernels of MirrorPad, MirrorPadGrad, ReverseSequence and
// ParallelConcat (ops/array/array_rearrange_ops.h). All but MirrorPadGrad move
// elements as bytes; MirrorPadGrad adds.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/array_rearrange_ops.h"
#include "ops/array/internal/array_kernel_util.h"
#include "ops/internal/index_tensors.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::Make;

char* Bytes(const Tensor& t) { return static_cast<char*>(t.raw_data()); }

// Position `o` of a mirror-padded dimension (`before` elements added in
// front of `n`) as a position of the unpadded one.
int64_t MirrorSource(int64_t o, int64_t before, int64_t n, bool reflect) {
  const int64_t i = o - before;
  if (i < 0) return reflect ? -i : -i - 1;
  if (i >= n) return reflect ? 2 * (n - 1) - i : 2 * n - 1 - i;
  return i;
}

// For each dimension of the padded shape, its positions' sources in the
// unpadded shape `small`. Checks the paddings against the mode's limits.
absl::StatusOr<std::vector<std::vector<int64_t>>> MirrorMaps(const std::string& op,
                                                             const TensorShape& small,
                                                             const Tensor& paddings,
                                                             bool reflect) {
  const int rank = small.rank();
  if (paddings.dims() != 2 || paddings.dim_size(0) != rank || paddings.dim_size(1) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": paddings must be a [rank, 2] = [", rank,
                                                   ", 2] matrix, got ",
                                                   paddings.shape().DebugString()));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> pads, internal::ReadInts(paddings, "paddings"));
  std::vector<std::vector<int64_t>> maps(rank);
  for (int d = 0; d < rank; ++d) {
    const int64_t before = pads[2 * d], after = pads[2 * d + 1], n = small.dim(d);
    const int64_t limit = reflect ? n - 1 : n;
    if (before < 0 || after < 0 || (before + after > 0 && (before > limit || after > limit))) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": paddings (", before, ", ", after, ") of dimension ", d,
          " must be non-negative and at most ", limit, " (the size ", n,
          reflect ? " less 1) in REFLECT mode" : ") in SYMMETRIC mode"));
    }
    for (int64_t o = 0; o < before + n + after; ++o) {
      maps[d].push_back(MirrorSource(o, before, n, reflect));
    }
  }
  return maps;
}

// The padded shape of the maps.
TensorShape PaddedShape(const std::vector<std::vector<int64_t>>& maps) {
  TensorShape s;
  for (const auto& m : maps) s.AddDim(static_cast<int64_t>(m.size()));
  return s;
}

// Calls f(padded_offset, small_offset) for every element of the padded shape.
template <typename F>
void ForEachMirrored(const std::vector<std::vector<int64_t>>& maps, const TensorShape& small,
                     F&& f) {
  const int rank = small.rank();
  const TensorShape padded = PaddedShape(maps);
  const int64_t n = padded.num_elements();
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (int d = 0; d < rank; ++d) src = src * small.dim(d) + maps[d][index[d]];
    f(i, src);
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < padded.dim(d)) break;
      index[d] = 0;
    }
  }
}

absl::StatusOr<bool> ReadReflect(const OpKernelConstruction& ctx) {
  ASSIGN_OR_RETURN(std::string mode, ctx.GetAttr<std::string>("mode"));
  if (mode != "REFLECT" && mode != "SYMMETRIC") {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().op(), ": unknown mode '", mode, "'"));
  }
  return mode == "REFLECT";
}

class MirrorPadOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(reflect_, ReadReflect(ctx));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(auto maps, MirrorMaps("MirrorPad", x.shape(), ctx->input(1), reflect_));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, PaddedShape(maps)));
    const size_t esize = DataTypeSize(x.dtype());
    if (out->NumElements() == 0) return absl::OkStatus();
    ForEachMirrored(maps, x.shape(), [&](int64_t dst, int64_t src) {
      std::memcpy(Bytes(*out) + dst * esize, Bytes(x) + src * esize, esize);
    });
    return absl::OkStatus();
  }

 private:
  bool reflect_ = true;
};

// Input: a gradient of MirrorPad's output; output: MirrorPad's input shape,
// each element the sum of the gradient at the positions mirrored from it.
template <typename T>
class MirrorPadGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(reflect_, ReadReflect(ctx));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& paddings = ctx->input(1);
    if (paddings.dims() != 2 || paddings.dim_size(0) != dy.dims() || paddings.dim_size(1) != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MirrorPadGrad: paddings must be a [rank, 2] = [", dy.dims(), ", 2] matrix, got ",
          paddings.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> pads, internal::ReadInts(paddings, "paddings"));
    TensorShape small = dy.shape();
    for (int d = 0; d < dy.dims(); ++d) {
      small.set_dim(d, dy.dim_size(d) - pads[2 * d] - pads[2 * d + 1]);
      if (small.dim(d) < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "MirrorPadGrad: paddings of dimension ", d, " exceed its size ", dy.dim_size(d)));
      }
    }
    ASSIGN_OR_RETURN(auto maps, MirrorMaps("MirrorPadGrad", small, paddings, reflect_));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, small));
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), T(0));
    const T* g = dy.data<T>();
    ForEachMirrored(maps, small, [&](int64_t dst, int64_t src) { o[src] += g[dst]; });
    return absl::OkStatus();
  }

 private:
  bool reflect_ = true;
};

class ReverseSequenceOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(seq_dim_, ctx.GetAttr<int64_t>("seq_dim"));
    ASSIGN_OR_RETURN(batch_dim_, ctx.GetAttr<int64_t>("batch_dim"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> lengths, CheckedLengths(x, ctx->input(1)));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    const size_t esize = DataTypeSize(x.dtype());
    auto stride = [&](int64_t dim) {
      int64_t s = 1;
      for (int d = static_cast<int>(dim) + 1; d < x.dims(); ++d) s *= x.dim_size(d);
      return s;
    };
    const int64_t seq_stride = stride(seq_dim_), batch_stride = stride(batch_dim_);
    const int64_t seq_size = x.dim_size(static_cast<int>(seq_dim_));
    const int64_t batch_size = x.dim_size(static_cast<int>(batch_dim_));
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      const int64_t s = (i / seq_stride) % seq_size;
      const int64_t len = lengths[(i / batch_stride) % batch_size];
      const int64_t src = s < len ? i + (len - 1 - 2 * s) * seq_stride : i;
      std::memcpy(Bytes(*out) + i * esize, Bytes(x) + src * esize, esize);
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<std::vector<int64_t>> CheckedLengths(const Tensor& x, const Tensor& seq_lengths) {
    const int rank = x.dims();
    if (seq_dim_ == batch_dim_ || seq_dim_ < 0 || seq_dim_ >= rank || batch_dim_ < 0 ||
        batch_dim_ >= rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ReverseSequence: seq_dim ", seq_dim_, " and batch_dim ", batch_dim_,
          " must differ and lie in [0, ", rank, ") for an input of shape ",
          x.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> lengths,
                     internal::ReadVector(seq_lengths, "ReverseSequence: seq_lengths"));
    const int64_t batch = x.dim_size(static_cast<int>(batch_dim_));
    if (static_cast<int64_t>(lengths.size()) != batch) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ReverseSequence: seq_lengths has ", lengths.size(), " entries but input.dims(",
          batch_dim_, ") = ", batch));
    }
    const int64_t max = x.dim_size(static_cast<int>(seq_dim_));
    for (size_t b = 0; b < lengths.size(); ++b) {
      if (lengths[b] < 0 || lengths[b] > max) {
        return absl::InvalidArgumentError(absl::StrCat("ReverseSequence: seq_lengths[", b, "] = ",
                                                       lengths[b], " is not in [0, input.dims(",
                                                       seq_dim_, ") = ", max, "]"));
      }
    }
    return lengths;
  }

  int64_t seq_dim_ = 0;
  int64_t batch_dim_ = 0;
};

class ParallelConcatOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(shape_, ctx.GetAttr<TensorShape>("shape"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    if (!shape_.IsFullyDefined() || shape_.rank() < 1 || shape_.dim(0) != n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ParallelConcat: the shape attr ", shape_.DebugString(),
          " must be fully defined with its first dimension the number of values, ", n));
    }
    TensorShape row = shape_;
    row.set_dim(0, 1);
    for (int i = 0; i < n; ++i) {
      if (ctx->input(i).shape() != row) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ParallelConcat: values[", i, "] has shape ", ctx->input(i).shape().DebugString(),
            ", expected ", row.DebugString()));
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape_));
    const size_t bytes = row.num_elements() * DataTypeSize(out->dtype());
    for (int i = 0; i < n && bytes > 0; ++i) {
      std::memcpy(Bytes(*out) + i * bytes, Bytes(ctx->input(i)), bytes);
    }
    return absl::OkStatus();
  }

 private:
  TensorShape shape_;
};

}  // namespace

void RegisterArrayRearrangeKernels(KernelRegistry* kernels) {
  const std::vector<DataType>& all = internal::AllTypes();
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  kernels->Register(cpu("MirrorPad").TypeConstraint("T", all), Make<MirrorPadOp>());
  kernels->Register<MirrorPadGradOp<float>>(cpu("MirrorPadGrad").TypeConstraint("T", DT_FLOAT));
  kernels->Register<MirrorPadGradOp<double>>(cpu("MirrorPadGrad").TypeConstraint("T", DT_DOUBLE));
  kernels->Register<MirrorPadGradOp<int32_t>>(cpu("MirrorPadGrad").TypeConstraint("T", DT_INT32));
  kernels->Register<MirrorPadGradOp<int64_t>>(cpu("MirrorPadGrad").TypeConstraint("T", DT_INT64));
  kernels->Register(cpu("ReverseSequence").TypeConstraint("T", all), Make<ReverseSequenceOp>());
  kernels->Register(cpu("ParallelConcat").TypeConstraint("T", all), Make<ParallelConcatOp>());
  internal::RegisterSpaceBatchKernels(kernels);
}

}  // namespace sluice
