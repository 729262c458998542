// Definitions, wrappers and CPU kernels of LowerBound and UpperBound.
#include "ops/array/sorted_search_ops.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

absl::Status SearchShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 2));
  RETURN_IF_ERROR(c->WithRank(1, 2));
  const TensorShape& sorted = c->input(0);
  const TensorShape& values = c->input(1);
  if (!sorted.unknown_rank() && !values.unknown_rank() && sorted.dim(0) >= 0 &&
      values.dim(0) >= 0 && sorted.dim(0) != values.dim(0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Leading dim_size of both tensors must match: sorted_inputs ",
                     sorted.DebugString(), ", values ", values.DebugString()));
  }
  c->set_output(0, values);
  return absl::OkStatus();
}

template <typename T, typename Out, bool kUpper>
class SortedSearchOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& sorted = ctx->input(0);
    const Tensor& values = ctx->input(1);
    if (sorted.dims() != 2 || values.dims() != 2 || sorted.dim_size(0) != values.dim_size(0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Leading dim_size of both tensors must match (rank 2 "
                       "each): sorted_inputs ",
                       sorted.shape().DebugString(), ", values ", values.shape().DebugString()));
    }
    const int64_t n = sorted.dim_size(1);
    if (n > std::numeric_limits<Out>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("sorted_inputs has ", n, " columns, more than out_type holds"));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, values.shape()));
    const T* s = sorted.data<T>();
    const T* v = values.data<T>();
    Out* o = out->data<Out>();
    const int64_t m = values.dim_size(1);
    for (int64_t b = 0; b < values.dim_size(0); ++b) {
      const T* row = s + b * n;
      for (int64_t j = 0; j < m; ++j) {
        const T x = v[b * m + j];
        const T* at =
            kUpper ? std::upper_bound(row, row + n, x) : std::lower_bound(row, row + n, x);
        o[b * m + j] = static_cast<Out>(at - row);
      }
    }
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterFor(KernelRegistry* k) {
  const DataType t = DataTypeToEnum<T>::value;
  auto def = [t](const char* op, DataType out) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", t).TypeConstraint("out_type", out);
  };
  k->Register<SortedSearchOp<T, int32_t, false>>(def("LowerBound", DT_INT32));
  k->Register<SortedSearchOp<T, int64_t, false>>(def("LowerBound", DT_INT64));
  k->Register<SortedSearchOp<T, int32_t, true>>(def("UpperBound", DT_INT32));
  k->Register<SortedSearchOp<T, int64_t, true>>(def("UpperBound", DT_INT64));
}

}  // namespace

absl::Status RegisterSortedSearchOps(OpRegistry* ops) {
  for (const char* name : {"LowerBound", "UpperBound"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("sorted_inputs: T")
                                      .Input("values: T")
                                      .Output("output: out_type")
                                      .Attr("T: type")
                                      .Attr("out_type: {int32, int64} = DT_INT32")
                                      .SetShapeFn(SearchShape)));
    RETURN_IF_ERROR(ops->SetNoGradient(name));
  }
  return absl::OkStatus();
}

void RegisterSortedSearchKernels(KernelRegistry* k) {
  RegisterFor<float>(k);
  RegisterFor<double>(k);
  RegisterFor<int32_t>(k);
  RegisterFor<int64_t>(k);
}

namespace ops {

Output LowerBound(const Scope& s, Input sorted_inputs, Input values, DataType out_type,
                  std::source_location loc) {
  return s.Op("LowerBound", loc)
      .Input(sorted_inputs)
      .Input(values)
      .Attr("out_type", out_type)
      .Finalize1();
}

Output UpperBound(const Scope& s, Input sorted_inputs, Input values, DataType out_type,
                  std::source_location loc) {
  return s.Op("UpperBound", loc)
      .Input(sorted_inputs)
      .Input(values)
      .Attr("out_type", out_type)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
