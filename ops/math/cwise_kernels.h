// The element-wise math kernels, written once for every device (the pattern
// of ops/training/training_kernels.h): unary and binary arithmetic with NumPy
// broadcasting, comparisons, the *Grad helpers, AddN, Select, SelectV2 and
// Cast. The shell checks the shapes (ops/math/internal/math_kernel_checks.h,
// ops/math/internal/broadcast.h), hands an input through where the op is the
// identity, and allocates or forwards the output (an input as large as the
// output, of its type, is read at exactly the output's offsets, so its
// buffer may be reused). A device's `Impl` does the arithmetic, told which
// function by a descriptor fixed at registration:
//
//   struct CpuCwiseImpl {                        // ops/math/math_kernels.cc
//     using UnaryFn = ...;  static absl::Status Unary(ctx, UnaryFn, x, y);
//     using BinaryFn = ...; static absl::Status Binary(ctx, BinaryFn, shapes, x, y, out);
//     using AddNFn = ...;   static absl::Status AddN(ctx, AddNFn, out);
//     using SelectFn = ...; static absl::Status Select(ctx, SelectFn, mode, cond, t, e, out);
//                           static absl::Status SelectV2(ctx, SelectFn, plan, cond, t, e, out);
//     using CastFn = ...;   static absl::Status Cast(ctx, CastFn, x, y);
//     static constexpr bool kConditionOnHost;  // Select* may read a scalar cond
//   };
//   k->Register(def, [] { return std::make_unique<UnaryOp<CpuCwiseImpl>>(&Neg<float>); });
//
// The CPU's descriptors are function pointers to loops instantiated per type
// and functor; a GPU's name a CUDA kernel and read the type from the tensor.
// Every Impl function is called with at least one output element.
#ifndef SLUICE_OPS_MATH_CWISE_KERNELS_H_
#define SLUICE_OPS_MATH_CWISE_KERNELS_H_

#include <cstdint>
#include <utility>

#include "base/status_macros.h"
#include "graph/types.h"
#include "ops/math/internal/broadcast.h"
#include "ops/math/internal/math_kernel_checks.h"
#include "runtime/kernel.h"

namespace sluice {

// How a binary op's operands meet: equal shapes, a scalar on one side (of
// no more dimensions than the other), or a general broadcast (`plan`).
// `out_shape` points at x's or y's shape, or at plan.out_shape: no shape is
// copied on the way (this runs for every Add and Mul), and the struct is
// filled in place and never copied.
struct BinaryShapes {
  enum class Kind { kSame, kScalarY, kScalarX, kBroadcast };

  BinaryShapes() = default;
  BinaryShapes(const BinaryShapes&) = delete;
  BinaryShapes& operator=(const BinaryShapes&) = delete;

  Kind kind = Kind::kSame;
  const TensorShape* out_shape = nullptr;
  internal::BroadcastPlan<2> plan;  // kBroadcast only
};

// Classifies x (op) y into *s; InvalidArgument for shapes that do not
// broadcast. x and y must outlive *s.
inline absl::Status ClassifyBinaryShapes(const Tensor& x, const Tensor& y, BinaryShapes* s) {
  if (x.shape() == y.shape()) {
    s->kind = BinaryShapes::Kind::kSame;
    s->out_shape = &x.shape();
  } else if (y.NumElements() == 1 && y.dims() <= x.dims()) {
    s->kind = BinaryShapes::Kind::kScalarY;
    s->out_shape = &x.shape();
  } else if (x.NumElements() == 1 && x.dims() <= y.dims()) {
    s->kind = BinaryShapes::Kind::kScalarX;
    s->out_shape = &y.shape();
  } else {
    s->kind = BinaryShapes::Kind::kBroadcast;
    ASSIGN_OR_RETURN(s->plan, internal::MakeBroadcastPlan<2>({&x.shape(), &y.shape()}));
    s->out_shape = &s->plan.out_shape;
  }
  return absl::OkStatus();
}

template <typename Impl>
class UnaryOp : public OpKernel {
 public:
  explicit UnaryOp(typename Impl::UnaryFn fn) : fn_(fn) {}

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    if (x.NumElements() == 0) return absl::OkStatus();
    return Impl::Unary(ctx, fn_, x, y);
  }
  bool IsExpensive() const override { return false; }

 private:
  const typename Impl::UnaryFn fn_;
};

// `same_type`: the output has the inputs' type (not a comparison's bool),
// so an input's buffer may become the output.
template <typename Impl>
class BinaryOp : public OpKernel {
 public:
  BinaryOp(typename Impl::BinaryFn fn, bool same_type) : fn_(fn), same_type_(same_type) {}

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    BinaryShapes shapes;
    RETURN_IF_ERROR(ClassifyBinaryShapes(x, y, &shapes));
    const TensorShape& out_shape = *shapes.out_shape;
    const int64_t n = out_shape.num_elements();
    Tensor* out;
    if (same_type_ && x.NumElements() == n) {
      ASSIGN_OR_RETURN(out, ctx->forward_input_or_allocate_output(0, 0, out_shape));
    } else if (same_type_ && y.NumElements() == n) {
      ASSIGN_OR_RETURN(out, ctx->forward_input_or_allocate_output(1, 0, out_shape));
    } else {
      ASSIGN_OR_RETURN(out, ctx->allocate_output(0, out_shape));
    }
    if (n == 0) return absl::OkStatus();
    return Impl::Binary(ctx, fn_, shapes, x, y, out);
  }
  bool IsExpensive() const override { return false; }

 private:
  const typename Impl::BinaryFn fn_;
  const bool same_type_;
};

template <typename Impl>
class AddNOp : public OpKernel {
 public:
  explicit AddNOp(typename Impl::AddNFn fn) : fn_(fn) {}

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& first = ctx->input(0);
    RETURN_IF_ERROR(internal::CheckAddNShapes(*ctx));
    if (ctx->num_inputs() == 1) {
      ctx->set_output(0, first);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, first.shape()));
    if (first.NumElements() == 0) return absl::OkStatus();
    return Impl::AddN(ctx, fn_, out);
  }
  bool IsExpensive() const override { return false; }

 private:
  const typename Impl::AddNFn fn_;
};

// Select(cond, t, e): cond a scalar, of t's shape, or a vector of t's rows.
template <typename Impl>
class SelectOp : public OpKernel {
 public:
  explicit SelectOp(typename Impl::SelectFn fn) : fn_(fn) {}

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    ASSIGN_OR_RETURN(internal::SelectCondition mode, internal::CheckSelectShapes(cond, t, e));
    if (Impl::kConditionOnHost && mode == internal::SelectCondition::kScalar) {
      ctx->set_output(0, *cond.data<bool>() ? t : e);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(1, 0, t.shape()));
    if (t.NumElements() == 0) return absl::OkStatus();
    return Impl::Select(ctx, fn_, mode, cond, t, e, out);
  }
  bool IsExpensive() const override { return false; }

 private:
  const typename Impl::SelectFn fn_;
};

// SelectV2(cond, t, e): the three broadcast together.
template <typename Impl>
class SelectV2Op : public OpKernel {
 public:
  explicit SelectV2Op(typename Impl::SelectFn fn) : fn_(fn) {}

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    if (cond.dims() == 0 && t.shape() == e.shape()) {
      // Select with a scalar condition: no broadcast to plan.
      if (Impl::kConditionOnHost) {
        ctx->set_output(0, *cond.data<bool>() ? t : e);
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(1, 0, t.shape()));
      if (out->NumElements() == 0) return absl::OkStatus();
      return Impl::Select(ctx, fn_, internal::SelectCondition::kScalar, cond, t, e, out);
    }
    ASSIGN_OR_RETURN(internal::BroadcastPlan<3> plan,
                     internal::MakeBroadcastPlan<3>({&cond.shape(), &t.shape(), &e.shape()}));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Impl::SelectV2(ctx, fn_, plan, cond, t, e, out);
  }
  bool IsExpensive() const override { return false; }

 private:
  const typename Impl::SelectFn fn_;
};

// Cast(x; SrcT, DstT): to the same type it hands x through.
template <typename Impl>
class CastOp : public OpKernel {
 public:
  explicit CastOp(typename Impl::CastFn fn) : fn_(fn) {}

  absl::Status Init(const OpKernelConstruction& ctx) override {
    same_type_ = BaseType(ctx.input_type(0)) == BaseType(ctx.output_type(0));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (same_type_) {
      ctx->set_output(0, x);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    if (x.NumElements() == 0) return absl::OkStatus();
    return Impl::Cast(ctx, fn_, x, y);
  }
  bool IsExpensive() const override { return false; }

 private:
  const typename Impl::CastFn fn_;
  bool same_type_ = false;
};

}  // namespace sluice

#endif  // SLUICE_OPS_MATH_CWISE_KERNELS_H_
