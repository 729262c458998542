// CPU kernels of DynamicStitch, ParallelDynamicStitch and DynamicPartition
// (ops/array/index_ops.h). Slices move as bytes, so every fixed-size dtype runs.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/index_ops.h"
#include "ops/array/internal/array_kernel_util.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

char* Bytes(const Tensor& t) { return static_cast<char*>(t.raw_data()); }

// True when `shape` starts with the dims of `prefix`.
bool StartsWith(const TensorShape& shape, const TensorShape& prefix) {
  if (shape.rank() < prefix.rank()) return false;
  for (int d = 0; d < prefix.rank(); ++d) {
    if (shape.dim(d) != prefix.dim(d)) return false;
  }
  return true;
}

// shape's dims from `begin` on.
TensorShape Suffix(const TensorShape& shape, int begin) {
  TensorShape out;
  for (int d = begin; d < shape.rank(); ++d) out.AddDim(shape.dim(d));
  return out;
}

// DynamicStitch and ParallelDynamicStitch: inputs 0..n-1 are the int32
// indices, n..2n-1 the data. Inputs are copied in order, so the later one
// wins where indices repeat; rows that no index names are zero.
class StitchOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() / 2;
    const std::string& op = ctx->node().op();
    const TensorShape slice_shape = Suffix(ctx->input(n).shape(), ctx->input(0).dims());
    int64_t rows = 0;
    for (int m = 0; m < n; ++m) {
      const Tensor& indices = ctx->input(m);
      const Tensor& data = ctx->input(n + m);
      if (!StartsWith(data.shape(), indices.shape()) ||
          Suffix(data.shape(), indices.dims()) != slice_shape) {
        return absl::InvalidArgumentError(absl::StrCat(
            op, ": data[", m, "].shape = ", data.shape().DebugString(),
            " must be indices[", m, "].shape = ", indices.shape().DebugString(), " + ",
            slice_shape.DebugString(), " (the slice shape of data[0])"));
      }
      for (int32_t v : indices.flat<int32_t>()) {
        if (v < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(op, ": indices[", m, "] holds ", v, ", which is negative"));
        }
        rows = std::max<int64_t>(rows, int64_t{v} + 1);
      }
    }
    TensorShape out_shape({rows});
    for (int64_t d : slice_shape.dims()) out_shape.AddDim(d);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    const size_t bytes = slice_shape.num_elements() * DataTypeSize(out->dtype());
    if (out->NumElements() == 0 || bytes == 0) return absl::OkStatus();
    std::memset(Bytes(*out), 0, rows * bytes);
    for (int m = 0; m < n; ++m) {
      absl::Span<const int32_t> idx = ctx->input(m).flat<int32_t>();
      const char* src = Bytes(ctx->input(n + m));
      for (size_t i = 0; i < idx.size(); ++i) {
        std::memcpy(Bytes(*out) + idx[i] * bytes, src + i * bytes, bytes);
      }
    }
    return absl::OkStatus();
  }
};

class PartitionOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& partitions = ctx->input(1);
    const int num = ctx->num_outputs();
    if (!StartsWith(data.shape(), partitions.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "DynamicPartition: data.shape ", data.shape().DebugString(),
          " must start with partitions.shape ", partitions.shape().DebugString()));
    }
    absl::Span<const int32_t> p = partitions.flat<int32_t>();
    std::vector<int64_t> counts(num, 0);
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] < 0 || p[i] >= num) {
        return absl::InvalidArgumentError(absl::StrCat("DynamicPartition: partitions[", i,
                                                       "] = ", p[i], " is not in [0, ", num,
                                                       ")"));
      }
      ++counts[p[i]];
    }
    const TensorShape slice_shape = Suffix(data.shape(), partitions.dims());
    std::vector<Tensor*> outs(num);
    for (int k = 0; k < num; ++k) {
      TensorShape shape({counts[k]});
      for (int64_t d : slice_shape.dims()) shape.AddDim(d);
      ASSIGN_OR_RETURN(outs[k], ctx->allocate_output(k, shape));
    }
    const size_t bytes = slice_shape.num_elements() * DataTypeSize(data.dtype());
    std::vector<int64_t> next(num, 0);
    for (size_t i = 0; i < p.size() && bytes > 0; ++i) {
      std::memcpy(Bytes(*outs[p[i]]) + next[p[i]]++ * bytes, Bytes(data) + i * bytes, bytes);
    }
    return absl::OkStatus();
  }
};

}  // namespace

namespace internal {

void RegisterStitchKernels(KernelRegistry* kernels) {
  const std::vector<DataType>& all = AllTypes();
  for (const char* op : {"DynamicStitch", "ParallelDynamicStitch"}) {
    kernels->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", all), Make<StitchOp>());
  }
  kernels->Register(KernelDef("DynamicPartition", kDeviceTypeCpu).TypeConstraint("T", all),
                    Make<PartitionOp>());
}

}  // namespace internal
}  // namespace sluice
