// The CPU kernels of the sequence ops: Range and LinSpace (TensorFlow's
// sequence_ops.cc).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/math/internal/math_kernel_util.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// Range (TensorFlow's sequence_ops.cc): start, start + delta, ... up to
// but excluding limit.
template <typename T>
class RangeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const char* names[] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; ++i) {
      if (ctx->input(i).dims() != 0) {
        return absl::InvalidArgumentError(absl::StrCat("Range: ", names[i], " must be a scalar, not shape ",
                                                       ctx->input(i).shape().DebugString()));
      }
    }
    const T start = ctx->input(0).scalar<T>();
    const T limit = ctx->input(1).scalar<T>();
    const T delta = ctx->input(2).scalar<T>();
    if (delta == T(0)) return absl::InvalidArgumentError("Range: delta must not be 0");
    if (delta > T(0) && start > limit) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Range: start (", start, ") must be <= limit (", limit, ") when delta > 0"));
    }
    if (delta < T(0) && start < limit) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Range: start (", start, ") must be >= limit (", limit, ") when delta < 0"));
    }
    int64_t size;
    if constexpr (std::is_integral_v<T>) {
      const uint64_t span = limit >= start ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                           : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
      const uint64_t step = delta > 0 ? static_cast<uint64_t>(delta) : 0 - static_cast<uint64_t>(delta);
      size = static_cast<int64_t>((span + step - 1) / step);
    } else {
      const double n = std::ceil(std::abs((static_cast<double>(limit) - start) / delta));
      if (!(n < static_cast<double>(std::numeric_limits<int64_t>::max()))) {
        return absl::InvalidArgumentError("Range: the result would have too many elements");
      }
      size = static_cast<int64_t>(n);
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({size})));
    absl::Span<T> v = out->flat<T>();
    T value = start;
    for (int64_t i = 0; i < size; ++i) {
      v[i] = value;
      value += delta;
    }
    return absl::OkStatus();
  }
};

template <typename T>
class LinSpaceOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const char* names[] = {"start", "stop", "num"};
    for (int i = 0; i < 3; ++i) {
      if (ctx->input(i).dims() != 0) {
        return absl::InvalidArgumentError(absl::StrCat("LinSpace: ", names[i],
                                                       " must be a scalar, not shape ",
                                                       ctx->input(i).shape().DebugString()));
      }
    }
    const T start = ctx->input(0).scalar<T>();
    const T stop = ctx->input(1).scalar<T>();
    const Tensor& n = ctx->input(2);
    const int64_t num = n.dtype() == DT_INT64 ? n.scalar<int64_t>() : int64_t{n.scalar<int32_t>()};
    if (num <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("LinSpace: num must be positive, got ", num));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({num})));
    T* v = out->data<T>();
    if (num == 1) {
      v[0] = start;
      return absl::OkStatus();
    }
    const T step = (stop - start) / static_cast<T>(num - 1);
    for (int64_t i = 0; i + 1 < num; ++i) v[i] = start + step * static_cast<T>(i);
    v[num - 1] = stop;  // exactly, as TensorFlow
    return absl::OkStatus();
  }
};

template <typename... Ts>
void RegisterRange(KernelRegistry* k) {
  (k->Register<RangeOp<Ts>>(
       KernelDef("Range", kDeviceTypeCpu).TypeConstraint("Tidx", DataTypeToEnum<Ts>::value)),
   ...);
}

}  // namespace

namespace internal {

void RegisterSequenceKernels(KernelRegistry* k) {
  RegisterRange<float, double, int32_t, int64_t>(k);
  k->Register<LinSpaceOp<float>>(KernelDef("LinSpace", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  k->Register<LinSpaceOp<double>>(KernelDef("LinSpace", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
}

}  // namespace internal
}  // namespace sluice
