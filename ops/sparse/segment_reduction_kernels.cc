// CPU kernels of the segment reductions (segment_reduction_ops.h): one
// pass over data's rows, each folded into its segment's output row.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/internal/array_kernel_checks.h"
#include "ops/internal/index_tensors.h"
#include "ops/sparse/segment_reduction_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

enum class Kind { kSum, kMax, kMin, kMean, kProd };

template <typename T, Kind kind>
struct Reducer {
  // The value a row starts from before any data row reaches it.
  static T Start() {
    switch (kind) {
      case Kind::kMax:
        return std::numeric_limits<T>::lowest();
      case Kind::kMin:
        return std::numeric_limits<T>::max();
      case Kind::kProd:
        return T(1);
      default:
        return T(0);
    }
  }
  static T Fold(T acc, T x) {
    switch (kind) {
      case Kind::kMax:
        return x > acc ? x : acc;
      case Kind::kMin:
        return x < acc ? x : acc;
      case Kind::kProd:
        return acc * x;
      default:
        return acc + x;
    }
  }
};

// Folds row i of `data` (rows of `inner` elements) into row seg[i] of `out`;
// counts how many rows each output row received.
template <typename T, Kind kind>
void FoldRows(const std::vector<int64_t>& seg, const T* data, int64_t inner, T* out,
              std::vector<int64_t>* counts) {
  for (size_t i = 0; i < seg.size(); ++i) {
    if (seg[i] < 0) continue;
    T* dst = out + seg[i] * inner;
    const T* src = data + static_cast<int64_t>(i) * inner;
    for (int64_t k = 0; k < inner; ++k) dst[k] = Reducer<T, kind>::Fold(dst[k], src[k]);
    ++(*counts)[seg[i]];
  }
}

TensorShape OutputShape(const Tensor& data, int ids_rank, int64_t rows) {
  TensorShape shape({rows});
  for (int d = ids_rank; d < data.dims(); ++d) shape.AddDim(data.dim_size(d));
  return shape;
}

int64_t InnerElements(const Tensor& data, int ids_rank) {
  int64_t inner = 1;
  for (int d = ids_rank; d < data.dims(); ++d) inner *= data.dim_size(d);
  return inner;
}

// SegmentSum/Max/Min/Mean/Prod: sorted 1-D ids; an empty segment gives 0
// (Prod: 1).
template <typename T, Kind kind>
class SegmentReductionOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    if (data.dims() < 1) return absl::InvalidArgumentError("data must be at least rank 1");
    if (ids.dims() != 1 || ids.NumElements() != data.dim_size(0)) {
      return absl::InvalidArgumentError(
          "segment_ids should be the same size as dimension 0 of input.");
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> seg, internal::ReadInts(ids, "segment_ids"));
    const int64_t rows = seg.empty() ? 0 : seg.back() + 1;
    for (size_t i = 0; i < seg.size(); ++i) {
      if (i > 0 && seg[i] < seg[i - 1]) {
        return absl::InvalidArgumentError("segment ids are not increasing");
      }
      if (seg[i] < 0 || seg[i] >= rows) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Segment id ", seg[i], " out of range [0, ", rows,
            "), possibly because 'segment_ids' input is not sorted."));
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, OutputShape(data, 1, rows)));
    const int64_t inner = InnerElements(data, 1);
    T* o = out->data<T>();
    std::fill_n(o, out->NumElements(), Reducer<T, kind>::Start());
    std::vector<int64_t> counts(rows, 0);
    FoldRows<T, kind>(seg, data.data<T>(), inner, o, &counts);
    for (int64_t r = 0; r < rows; ++r) {
      T* row = o + r * inner;
      if (counts[r] == 0) {
        std::fill_n(row, inner, kind == Kind::kProd ? T(1) : T(0));
      } else if (kind == Kind::kMean) {
        for (int64_t k = 0; k < inner; ++k) row[k] /= static_cast<T>(counts[r]);
      }
    }
    return absl::OkStatus();
  }
};

// UnsortedSegmentMax/Min/Prod: ids of any order whose shape prefixes data's;
// negative ids dropped; an empty segment keeps the reducer's start.
template <typename T, Kind kind>
class UnsortedSegmentReductionOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    const Tensor& num = ctx->input(2);
    if (num.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_segments should be a scalar, not shape ", num.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(internal::SegmentSumPlan plan, internal::PlanUnsortedSegmentSum(*ctx));
    const int64_t rows = plan.num_segments;
    ASSIGN_OR_RETURN(std::vector<int64_t> seg, internal::ReadInts(ids, "segment_ids"));
    for (size_t i = 0; i < seg.size(); ++i) {
      if (seg[i] >= rows) {
        return absl::InvalidArgumentError(absl::StrCat("segment_ids[", i, "] = ", seg[i],
                                                       " is out of range [0, ", rows, ")"));
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    T* o = out->data<T>();
    std::fill_n(o, out->NumElements(), Reducer<T, kind>::Start());
    std::vector<int64_t> counts(rows, 0);
    FoldRows<T, kind>(seg, data.data<T>(), plan.inner, o, &counts);
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterFor(KernelRegistry* k) {
  const DataType t = DataTypeToEnum<T>::value;
  auto def = [t](const char* op) { return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", t); };
  k->Register<SegmentReductionOp<T, Kind::kSum>>(def("SegmentSum"));
  k->Register<SegmentReductionOp<T, Kind::kMax>>(def("SegmentMax"));
  k->Register<SegmentReductionOp<T, Kind::kMin>>(def("SegmentMin"));
  k->Register<SegmentReductionOp<T, Kind::kMean>>(def("SegmentMean"));
  k->Register<SegmentReductionOp<T, Kind::kProd>>(def("SegmentProd"));
  k->Register<UnsortedSegmentReductionOp<T, Kind::kMax>>(def("UnsortedSegmentMax"));
  k->Register<UnsortedSegmentReductionOp<T, Kind::kMin>>(def("UnsortedSegmentMin"));
  k->Register<UnsortedSegmentReductionOp<T, Kind::kProd>>(def("UnsortedSegmentProd"));
}

}  // namespace

void RegisterSegmentReductionKernels(KernelRegistry* k) {
  RegisterFor<float>(k);
  RegisterFor<double>(k);
  RegisterFor<int32_t>(k);
  RegisterFor<int64_t>(k);
}

}  // namespace sluice
