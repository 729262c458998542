// Generic CPU kernel shells for the adaptive training ops (Adagrad,
// AdagradDA, ProximalAdagrad, Adadelta, RMSProp, CenteredRMSProp, Ftrl, FtrlV2, AdaMax,
// AdamWithAmsgrad, KerasMomentum, AddSign, PowerSign) in their
// dense ("Apply*") and sparse ("SparseApply*") forms; the ref and the
// Resource forms share each shell (internal::VarInput reads either). The
// GPU's row updates (ops/gpu/sparse_training_kernels.cc) share the helpers
// that read, lock and check (ReadFlag, ReadVars, BeginAll, CheckSparseShapes).
//
// A shell reads the inputs, checks them, locks every updated variable in
// address order for the whole update, writes copy-on-write (dense forms) or
// in place (sparse forms; internal::VarUpdate) and hands the arithmetic to a
// `Rule`:
//
//   struct AdagradRule {
//     static constexpr int kVars = 2;                 // inputs 0..1: var, accum
//     static constexpr int kGrad = 3;                 // grad's input (dense form)
//     static constexpr std::array<int, 1> kScalars{2};  // lr (dense positions)
//     static constexpr const char* kFlag = "update_slots";  // or nullptr
//     template <typename T>
//     static absl::Status Check(OpKernelContext* ctx, const T* s);   // hyper values
//     template <typename T, bool kSparse>
//     static void Update(const T* s, bool flag, T* const* v, const T* g, int64_t n);
//   };
//
// Update() applies one step to `n` contiguous elements of each variable
// (v[0] is var, v[1..] the slots) with gradient `g`. The dense shell calls it
// once over the whole variables; the sparse shell once per index, on that
// row, in the order of `indices`, so duplicate indices apply one after the
// other as TensorFlow's CPU kernels do. kSparse lets a rule follow
// TensorFlow's sparse formula where it is written differently.
//
// In a sparse form the input `indices` follows `grad`; the scalars after grad
// move up by one (TensorFlow's layout for every SparseApply* op).
//
// Errors: those of ops/state/state_ops.h's helpers; sparse forms add
// InvalidArgument for indices that are not a vector, a var of rank 0, a grad
// whose first dimension is not the number of indices or whose other dimensions
// differ from var's, and "Index I at offset K in indices is out of range"
// (checked before anything is written).
// Thread-safety: kernels are thread-safe. Ownership: nothing is kept.
#ifndef SLUICE_OPS_TRAINING_TRAINING_APPLY_SHELL_H_
#define SLUICE_OPS_TRAINING_TRAINING_APPLY_SHELL_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/state/state_ops.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {
namespace internal {

// The base of a Rule whose hyper-parameters take any value.
struct NoCheck {
  template <typename T>
  static absl::Status Check(OpKernelContext*, const T*) {
    return absl::OkStatus();
  }
};

// -1, 0 or 1 (TensorFlow's sign: 0 for 0).
template <typename T>
T Sign(T x) {
  return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
}

// The scalar hyper-parameters of `Rule`, those after grad moved up by
// `shift`; an int64 one (AdagradDA's global_step) converted to T.
// InvalidArgument naming the argument when one is not a scalar.
template <typename Rule, typename T>
absl::StatusOr<std::array<T, Rule::kScalars.size()>> ReadHyper(OpKernelContext* ctx, int shift) {
  std::array<T, Rule::kScalars.size()> s{};
  for (size_t i = 0; i < s.size(); ++i) {
    const int input = Rule::kScalars[i] > Rule::kGrad ? Rule::kScalars[i] + shift
                                                      : Rule::kScalars[i];
    RETURN_IF_ERROR(CheckScalarInput(ctx, input));
    const Tensor& t = ctx->input(input);
    s[i] = t.dtype() == DT_INT64 ? static_cast<T>(t.scalar<int64_t>()) : t.scalar<T>();
  }
  return s;
}

template <typename Rule>
absl::StatusOr<bool> ReadFlag(const OpKernelConstruction& ctx) {
  if (Rule::kFlag == nullptr) return false;
  return ctx.GetAttr<bool>(Rule::kFlag);
}

// The variables of `Rule` (inputs 0..kVars-1), checked distinct.
template <typename Rule, typename T>
absl::StatusOr<std::array<Var*, Rule::kVars>> ReadVars(OpKernelContext* ctx) {
  std::array<Var*, Rule::kVars> vars{};
  for (int i = 0; i < Rule::kVars; ++i) {
    ASSIGN_OR_RETURN(vars[i], VarInputOf<T>(ctx, i));
  }
  RETURN_IF_ERROR(CheckDistinct(ctx, vars));
  return vars;
}

// Begins a copy-on-write update of every variable (locks held by the caller;
// `in_place`: the sparse forms', VarUpdate::BeginInPlace) and checks the
// slots' shapes against var's.
template <int N>
absl::Status BeginAll(OpKernelContext* ctx, const std::array<Var*, N>& vars,
                      std::array<VarUpdate, N>* u, bool in_place = false) {
  for (int i = 0; i < N; ++i) {
    ASSIGN_OR_RETURN((*u)[i], in_place ? VarUpdate::BeginInPlace(vars[i])
                                       : VarUpdate::Begin(vars[i], ctx->device()));
    if (i > 0) RETURN_IF_ERROR(CheckSameShape(ctx, *vars[0], (*u)[0].shape(), i, (*u)[i].shape()));
  }
  return absl::OkStatus();
}

template <typename T, int N>
std::array<T*, N> DataOf(const std::array<VarUpdate, N>& u) {
  std::array<T*, N> p{};
  for (int i = 0; i < N; ++i) p[i] = u[i].template data<T>();
  return p;
}

template <int N>
void CommitAll(std::array<VarUpdate, N>* u) {
  for (VarUpdate& x : *u) x.Commit();
}

// Checks a sparse update's shapes: indices a vector, var of rank >= 1, grad
// shaped [len(indices)] + var.shape[1:].
absl::Status CheckSparseShapes(OpKernelContext* ctx, const Var& var, const TensorShape& var_shape,
                               int grad_input);

// InvalidArgument for the first index outside [0, rows).
template <typename Index>
absl::Status CheckIndices(OpKernelContext* ctx, const Tensor& indices, int64_t rows) {
  const Index* idx = indices.data<Index>();
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    if (idx[i] < 0 || idx[i] >= rows) {
      return absl::InvalidArgumentError(absl::StrCat(ctx->node().op(), ": Index ", idx[i],
                                                     " at offset ", i,
                                                     " in indices is out of range"));
    }
  }
  return absl::OkStatus();
}

// The dense form of `Rule` ("Apply*" and "ResourceApply*").
template <typename Rule, typename T>
class DenseApplyOp : public internal::VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(flag_, ReadFlag<Rule>(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(auto vars, (ReadVars<Rule, T>(ctx)));
    ASSIGN_OR_RETURN(const auto s, (ReadHyper<Rule, T>(ctx, 0)));
    RETURN_IF_ERROR(Rule::template Check<T>(ctx, s.data()));
    const Tensor& grad = ctx->input(Rule::kGrad);
    VarLockSet lock(vars);
    std::array<VarUpdate, Rule::kVars> u;
    RETURN_IF_ERROR(BeginAll<Rule::kVars>(ctx, vars, &u));
    RETURN_IF_ERROR(CheckSameShape(ctx, *vars[0], u[0].shape(), Rule::kGrad, grad.shape()));
    const std::array<T*, Rule::kVars> p = DataOf<T, Rule::kVars>(u);
    Rule::template Update<T, false>(s.data(), flag_, p.data(), grad.data<T>(), u[0].size());
    CommitAll<Rule::kVars>(&u);
    SetRefOutput(ctx, 0, vars[0]);
    return absl::OkStatus();
  }

 private:
  bool flag_ = false;
};

// The sparse form of `Rule` ("SparseApply*" and "ResourceSparseApply*").
template <typename Rule, typename T, typename Index>
class SparseApplyOp : public internal::VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(flag_, ReadFlag<Rule>(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(auto vars, (ReadVars<Rule, T>(ctx)));
    ASSIGN_OR_RETURN(const auto s, (ReadHyper<Rule, T>(ctx, 1)));
    RETURN_IF_ERROR(Rule::template Check<T>(ctx, s.data()));
    const Tensor& grad = ctx->input(Rule::kGrad);
    const Tensor& indices = ctx->input(Rule::kGrad + 1);
    VarLockSet lock(vars);
    std::array<VarUpdate, Rule::kVars> u;
    RETURN_IF_ERROR(BeginAll<Rule::kVars>(ctx, vars, &u, /*in_place=*/true));
    RETURN_IF_ERROR(CheckSparseShapes(ctx, *vars[0], u[0].shape(), Rule::kGrad));
    const int64_t rows = u[0].shape().dim(0);
    RETURN_IF_ERROR(CheckIndices<Index>(ctx, indices, rows));
    const int64_t inner = rows == 0 ? 0 : u[0].size() / rows;
    const std::array<T*, Rule::kVars> p = DataOf<T, Rule::kVars>(u);
    const Index* idx = indices.data<Index>();
    const T* g = grad.data<T>();
    std::array<T*, Rule::kVars> row{};
    for (int64_t i = 0; i < indices.NumElements(); ++i) {
      for (int k = 0; k < Rule::kVars; ++k) row[k] = p[k] + static_cast<int64_t>(idx[i]) * inner;
      Rule::template Update<T, true>(s.data(), flag_, row.data(), g + i * inner, inner);
    }
    CommitAll<Rule::kVars>(&u);
    SetRefOutput(ctx, 0, vars[0]);
    return absl::OkStatus();
  }

 private:
  bool flag_ = false;
};

// Which forms of a training op exist: most have a ref ("Apply*") and a
// resource ("ResourceApply*") form; a few that TensorFlow added with Keras
// (KerasMomentum, AdamWithAmsgrad) have only the resource form.
enum class ApplyForms { kRefAndResource, kResourceOnly };

// Registers only the sparse forms (SparseApply, ResourceSparseApply) of
// `op` with `Rule`'s arithmetic for float and double, int32 and int64
// indices: alone for an op whose dense forms have kernels of their own
// (Momentum).
template <typename Rule>
void RegisterSparseApplyRule(KernelRegistry* kernels, const char* op,
                             ApplyForms forms = ApplyForms::kRefAndResource) {
  auto sparse = [&]<typename T, typename Index>() {
    constexpr DataType kType = DataTypeToEnum<T>::value;
    constexpr DataType kIndex = DataTypeToEnum<Index>::value;
    for (const char* prefix : {"ResourceSparseApply", "SparseApply"}) {
      if (forms == ApplyForms::kResourceOnly && prefix[0] != 'R') continue;
      kernels->Register<SparseApplyOp<Rule, T, Index>>(
          KernelDef(absl::StrCat(prefix, op), kDeviceTypeCpu)
              .TypeConstraint("T", kType)
              .TypeConstraint("Tindices", kIndex));
    }
  };
  sparse.template operator()<float, int32_t>();
  sparse.template operator()<float, int64_t>();
  sparse.template operator()<double, int32_t>();
  sparse.template operator()<double, int64_t>();
}

// Registers only the dense forms (Apply, ResourceApply) of `op` with
// `Rule`'s arithmetic for float and double: for an op without sparse forms
// (AdaMax, AddSign, PowerSign, AdamWithAmsgrad).
template <typename Rule>
void RegisterDenseApplyRule(KernelRegistry* kernels, const char* op,
                            ApplyForms forms = ApplyForms::kRefAndResource) {
  auto dense = [&]<typename T>() {
    constexpr DataType kType = DataTypeToEnum<T>::value;
    for (const char* prefix : {"ResourceApply", "Apply"}) {
      if (forms == ApplyForms::kResourceOnly && prefix[0] != 'R') continue;
      kernels->Register<DenseApplyOp<Rule, T>>(
          KernelDef(absl::StrCat(prefix, op), kDeviceTypeCpu).TypeConstraint("T", kType));
    }
  };
  dense.template operator()<float>();
  dense.template operator()<double>();
}

// Registers `op`'s dense and sparse forms (Apply, ResourceApply, SparseApply,
// ResourceSparseApply, or only the Resource ones; `op` without the prefix,
// e.g. "Adagrad") with `Rule`'s arithmetic for float and double, int32 and
// int64 indices.
template <typename Rule>
void RegisterApplyRule(KernelRegistry* kernels, const char* op,
                       ApplyForms forms = ApplyForms::kRefAndResource) {
  RegisterDenseApplyRule<Rule>(kernels, op, forms);
  RegisterSparseApplyRule<Rule>(kernels, op, forms);
}

// Kernels of the adaptive rules (training_kernels_adaptive.cc), of FTRL
// (training_kernels_ftrl.cc), of the rules Keras's optimizers added
// (training_kernels_keras.cc) and of the sign rules
// (training_kernels_sign.cc); RegisterTrainingKernels calls them all.
void RegisterAdaptiveTrainingKernels(KernelRegistry* kernels);
void RegisterFtrlTrainingKernels(KernelRegistry* kernels);
void RegisterKerasTrainingKernels(KernelRegistry* kernels);
void RegisterSignTrainingKernels(KernelRegistry* kernels);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_TRAINING_TRAINING_APPLY_SHELL_H_
