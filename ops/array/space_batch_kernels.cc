// CPU kernels of SpaceToBatchND and BatchToSpaceND
// (ops/array/array_rearrange_ops.h), moving elements as bytes.
//
// Both relate a "space" tensor [B, S_1..S_M, R...] to a "batch" tensor
// [B * prod(block), J_1..J_M, R...]: batch element (o * B + b, j_1..j_M),
// with o the row-major index of the block offsets (o_1..o_M), holds space
// element (b, j_k * block_k + o_k - before_k), or zero where that falls in
// the padding. SpaceToBatchND fills the batch tensor from the space tensor
// (before = paddings[:, 0]); BatchToSpaceND fills the space tensor from the
// batch tensor (before = crops[:, 0]), skipping the cropped elements.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "ops/array/array_rearrange_ops.h"
#include "ops/array/internal/array_kernel_util.h"
#include "ops/internal/index_tensors.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

char* Bytes(const Tensor& t) { return static_cast<char*>(t.raw_data()); }

struct Layout {
  int64_t batch = 0;               // B
  std::vector<int64_t> block;      // block_k
  std::vector<int64_t> before;     // before_k
  std::vector<int64_t> space;      // S_k
  std::vector<int64_t> blocked;    // J_k
  int64_t inner = 1;               // elements of R...
};

// Calls f(batch_row, space_row) for every row (of `inner` elements) of the
// batch tensor; space_row is -1 in the padding.
template <typename F>
void ForEachRow(const Layout& l, F&& f) {
  const size_t m = l.block.size();
  int64_t offsets = 1, cells = 1;
  for (size_t k = 0; k < m; ++k) offsets *= l.block[k], cells *= l.blocked[k];
  std::vector<int64_t> o(m), j(m);
  int64_t row = 0;
  for (int64_t oi = 0; oi < offsets; ++oi) {
    for (int64_t rest = oi, k = static_cast<int64_t>(m) - 1; k >= 0; --k) {
      o[k] = rest % l.block[k], rest /= l.block[k];
    }
    for (int64_t b = 0; b < l.batch; ++b) {
      for (int64_t ci = 0; ci < cells; ++ci, ++row) {
        int64_t space_row = b;
        for (int64_t rest = ci, k = static_cast<int64_t>(m) - 1; k >= 0; --k) {
          j[k] = rest % l.blocked[k], rest /= l.blocked[k];
        }
        for (size_t k = 0; k < m && space_row >= 0; ++k) {
          const int64_t s = j[k] * l.block[k] + o[k] - l.before[k];
          space_row = s < 0 || s >= l.space[k] ? -1 : space_row * l.space[k] + s;
        }
        f(row, space_row);
      }
    }
  }
}

// Reads block_shape (input 1) and the [M, 2] paddings or crops (input 2)
// against the input's rank; the pairs come back flat.
absl::Status ReadBlocks(OpKernelContext* ctx, const char* op, std::vector<int64_t>* block,
                        std::vector<int64_t>* pairs) {
  const Tensor& x = ctx->input(0);
  ASSIGN_OR_RETURN(*block, internal::ReadVector(ctx->input(1), absl::StrCat(op, ": block_shape")));
  const int64_t m = static_cast<int64_t>(block->size());
  const Tensor& p = ctx->input(2);
  if (p.dims() != 2 || p.dim_size(0) != m || p.dim_size(1) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": paddings/crops must be [", m,
                                                   ", 2] for block_shape of size ", m, ", got ",
                                                   p.shape().DebugString()));
  }
  if (x.dims() < 1 + m) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": input rank must be >= 1 + ", m,
                                                   " (the size of block_shape), got shape ",
                                                   x.shape().DebugString()));
  }
  ASSIGN_OR_RETURN(*pairs, internal::ReadInts(p, absl::StrCat(op, ": paddings/crops")));
  for (int64_t b : *block) {
    if (b < 1) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": block_shape [",
                                                     absl::StrJoin(*block, ", "),
                                                     "] must be positive"));
    }
  }
  for (int64_t v : *pairs) {
    if (v < 0) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": paddings/crops [",
                                                     absl::StrJoin(*pairs, ", "),
                                                     "] must be non-negative"));
    }
  }
  return absl::OkStatus();
}

int64_t Inner(const Tensor& x, size_t m) {
  int64_t inner = 1;
  for (int d = static_cast<int>(m) + 1; d < x.dims(); ++d) inner *= x.dim_size(d);
  return inner;
}

class SpaceToBatchOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Layout l;
    std::vector<int64_t> pads;
    RETURN_IF_ERROR(ReadBlocks(ctx, "SpaceToBatchND", &l.block, &pads));
    const size_t m = l.block.size();
    l.batch = x.dim_size(0);
    l.inner = Inner(x, m);
    TensorShape out_shape = x.shape();
    int64_t prod = 1;
    for (size_t k = 0; k < m; ++k) {
      const int64_t padded = x.dim_size(static_cast<int>(k) + 1) + pads[2 * k] + pads[2 * k + 1];
      if (padded % l.block[k] != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "SpaceToBatchND: padded_shape[", k, "] = ", padded,
            " is not divisible by block_shape[", k, "] = ", l.block[k]));
      }
      l.before.push_back(pads[2 * k]);
      l.space.push_back(x.dim_size(static_cast<int>(k) + 1));
      l.blocked.push_back(padded / l.block[k]);
      out_shape.set_dim(static_cast<int>(k) + 1, padded / l.block[k]);
      prod *= l.block[k];
    }
    out_shape.set_dim(0, l.batch * prod);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    const size_t bytes = l.inner * DataTypeSize(x.dtype());
    if (out->NumElements() == 0) return absl::OkStatus();
    ForEachRow(l, [&](int64_t row, int64_t space_row) {
      char* dst = Bytes(*out) + row * bytes;
      if (space_row < 0) {
        std::memset(dst, 0, bytes);
      } else {
        std::memcpy(dst, Bytes(x) + space_row * bytes, bytes);
      }
    });
    return absl::OkStatus();
  }
};

class BatchToSpaceOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Layout l;
    std::vector<int64_t> crops;
    RETURN_IF_ERROR(ReadBlocks(ctx, "BatchToSpaceND", &l.block, &crops));
    const size_t m = l.block.size();
    int64_t prod = 1;
    for (int64_t b : l.block) prod *= b;
    if (x.dim_size(0) % prod != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "BatchToSpaceND: input batch dimension ", x.dim_size(0),
          " is not divisible by the product of block sizes ", prod));
    }
    l.batch = x.dim_size(0) / prod;
    l.inner = Inner(x, m);
    TensorShape out_shape = x.shape();
    out_shape.set_dim(0, l.batch);
    for (size_t k = 0; k < m; ++k) {
      const int64_t j = x.dim_size(static_cast<int>(k) + 1);
      const int64_t size = j * l.block[k] - crops[2 * k] - crops[2 * k + 1];
      if (size < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "BatchToSpaceND: crops (", crops[2 * k], ", ", crops[2 * k + 1], ") of dimension ",
            k + 1, " exceed its uncropped size ", j * l.block[k]));
      }
      l.before.push_back(crops[2 * k]);
      l.space.push_back(size);
      l.blocked.push_back(j);
      out_shape.set_dim(static_cast<int>(k) + 1, size);
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    const size_t bytes = l.inner * DataTypeSize(x.dtype());
    if (out->NumElements() == 0) return absl::OkStatus();
    ForEachRow(l, [&](int64_t row, int64_t space_row) {
      if (space_row >= 0) {
        std::memcpy(Bytes(*out) + space_row * bytes, Bytes(x) + row * bytes, bytes);
      }
    });
    return absl::OkStatus();
  }
};

}  // namespace

namespace internal {

void RegisterSpaceBatchKernels(KernelRegistry* kernels) {
  const std::vector<DataType>& all = AllTypes();
  kernels->Register(KernelDef("SpaceToBatchND", kDeviceTypeCpu).TypeConstraint("T", all),
                    Make<SpaceToBatchOp>());
  kernels->Register(KernelDef("BatchToSpaceND", kDeviceTypeCpu).TypeConstraint("T", all),
                    Make<BatchToSpaceOp>());
}

}  // namespace internal
}  // namespace sluice
