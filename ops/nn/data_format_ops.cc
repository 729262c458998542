// DataFormatDimMap and DataFormatVecPermute: definitions, CPU kernels and
// wrappers (ops/nn/data_format_ops.h).
#include "ops/nn/data_format_ops.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// The two formats, checked: the same letters in another order.
absl::Status ReadFormats(const OpKernelConstruction& ctx, std::string* src, std::string* dst) {
  ASSIGN_OR_RETURN(*src, ctx.GetAttr<std::string>("src_format"));
  ASSIGN_OR_RETURN(*dst, ctx.GetAttr<std::string>("dst_format"));
  std::string a = *src, b = *dst;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if ((src->size() != 4 && src->size() != 5) || a != b ||
      std::adjacent_find(a.begin(), a.end()) != a.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Destination and source format must be permutations of each other, of 4 or "
                     "5 letters: got src_format ", *src, " and dst_format ", *dst));
  }
  return absl::OkStatus();
}

template <typename T>
class DimMapOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return ReadFormats(ctx, &src_, &dst_); }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int64_t rank = static_cast<int64_t>(src_.size());
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      const int64_t v = x.data<T>()[i];
      if (v < -rank || v >= rank) {
        return absl::InvalidArgumentError(
            absl::StrCat("DataFormatDimMap: dimension ", v, " is not in [", -rank, ", ", rank, ")"));
      }
      y->data<T>()[i] = static_cast<T>(dst_.find(src_[(v + rank) % rank]));
    }
    return absl::OkStatus();
  }

 private:
  std::string src_, dst_;
};

template <typename T>
class VecPermuteOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override { return ReadFormats(ctx, &src_, &dst_); }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int64_t full = static_cast<int64_t>(src_.size());
    const int64_t n = x.dims() >= 1 ? x.dim_size(0) : -1;
    const bool rows = x.dims() == 2;
    if ((x.dims() != 1 && !(rows && x.dim_size(1) == 2)) || (n != full && n != full - 2)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "DataFormatVecPermute: input must be a vector of ", full, " or ", full - 2,
          " entries or a [", full, ", 2] tensor, got shape ", x.shape().DebugString()));
    }
    // With one entry per spatial dimension, only the spatial letters count.
    auto letters = [n, full](const std::string& f) {
      if (n == full) return f;
      std::string spatial;
      for (char c : f) {
        if (c != 'N' && c != 'C') spatial.push_back(c);
      }
      return spatial;
    };
    const std::string src = letters(src_), dst = letters(dst_);
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    const int64_t width = rows ? 2 : 1;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t from = static_cast<int64_t>(src.find(dst[i]));
      for (int64_t j = 0; j < width; ++j) y->data<T>()[i * width + j] = x.data<T>()[from * width + j];
    }
    return absl::OkStatus();
  }

 private:
  std::string src_, dst_;
};

OpDefBuilder Format(const char* name) {
  OpDefBuilder b(name);
  b.Input("x: T")
      .Output("y: T")
      .Attr("T: {int32, int64} = int32")
      .Attr("src_format: string = 'NHWC'")
      .Attr("dst_format: string = 'NCHW'")
      .SetShapeFn([](InferenceContext* c) {
        c->set_output(0, c->input(0));
        return absl::OkStatus();
      });
  return b;
}

}  // namespace

absl::Status RegisterDataFormatOps(OpRegistry* ops) {
  for (const char* op : {"DataFormatDimMap", "DataFormatVecPermute"}) {
    RETURN_IF_ERROR(ops->Register(Format(op)));
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

void RegisterDataFormatKernels(KernelRegistry* k) {
  auto on = [](const char* op, DataType t) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", t);
  };
  k->Register<DimMapOp<int32_t>>(on("DataFormatDimMap", DT_INT32));
  k->Register<DimMapOp<int64_t>>(on("DataFormatDimMap", DT_INT64));
  k->Register<VecPermuteOp<int32_t>>(on("DataFormatVecPermute", DT_INT32));
  k->Register<VecPermuteOp<int64_t>>(on("DataFormatVecPermute", DT_INT64));
}

namespace ops {

Output DataFormatDimMap(const Scope& s, Input x, const std::string& src_format,
                        const std::string& dst_format, std::source_location loc) {
  return s.Op("DataFormatDimMap", loc).Input(x).Attr("src_format", src_format)
      .Attr("dst_format", dst_format).Finalize1();
}

Output DataFormatVecPermute(const Scope& s, Input x, const std::string& src_format,
                            const std::string& dst_format, std::source_location loc) {
  return s.Op("DataFormatVecPermute", loc).Input(x).Attr("src_format", src_format)
      .Attr("dst_format", dst_format).Finalize1();
}

}  // namespace ops
}  // namespace sluice
