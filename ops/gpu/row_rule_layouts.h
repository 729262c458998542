// Where the GPU row updates (ops/gpu/sparse_training_kernels.cc) find each
// rule's arguments in its op: the variables (var, then the slots in
// RowUpdate::slot order), grad, and the scalar hyper-parameters in the
// order the rule reads them (ops/gpu/row_rules.cu.h's h[k]). Positions are
// the dense form's; the sparse forms insert `indices` after grad, moving
// the inputs after it up by one. row_rule_layouts_test.cc checks every
// layout against its op's definition. Plain C++.
//
//   struct XLayout {
//     static constexpr RowRule kRule;         // the element function
//     static constexpr int kVars;             // inputs 0..kVars-1
//     static constexpr int kGrad;             // grad's input
//     static constexpr std::array<int, N> kScalars;  // h[0..N) come from these inputs
//     static constexpr const char* kFlag;     // the bool attr RowUpdate::flag reads, or null
//   };
#ifndef SLUICE_OPS_GPU_ROW_RULE_LAYOUTS_H_
#define SLUICE_OPS_GPU_ROW_RULE_LAYOUTS_H_

#include <array>

#include "ops/gpu/sparse_training.cu.h"

namespace sluice::gpu::row_layouts {

struct MomentumLayout {
  static constexpr RowRule kRule = RowRule::kMomentum;
  static constexpr int kVars = 2;  // var, accum
  static constexpr int kGrad = 3;
  static constexpr std::array<int, 2> kScalars{2, 4};  // lr, momentum
  static constexpr const char* kFlag = "use_nesterov";
};
// Keras's rule (ResourceSparseApplyKerasMomentum; no ref form), laid out as
// Momentum.
struct KerasMomentumLayout : MomentumLayout {
  static constexpr RowRule kRule = RowRule::kKerasMomentum;
};
struct AdagradLayout {
  static constexpr RowRule kRule = RowRule::kAdagrad;
  static constexpr int kVars = 2;  // var, accum
  static constexpr int kGrad = 3;
  static constexpr std::array<int, 1> kScalars{2};  // lr
  static constexpr const char* kFlag = "update_slots";
};
struct AdagradV2Layout {
  static constexpr RowRule kRule = RowRule::kAdagradV2;
  static constexpr int kVars = 2;  // var, accum
  static constexpr int kGrad = 4;
  static constexpr std::array<int, 2> kScalars{2, 3};  // lr, epsilon
  static constexpr const char* kFlag = "update_slots";
};
struct FtrlLayout {
  static constexpr RowRule kRule = RowRule::kFtrl;
  static constexpr int kVars = 3;  // var, accum, linear
  static constexpr int kGrad = 3;
  static constexpr std::array<int, 4> kScalars{4, 5, 6, 7};  // lr, l1, l2, lr_power
  static constexpr const char* kFlag = "multiply_linear_by_lr";
};
struct FtrlV2Layout : FtrlLayout {
  static constexpr RowRule kRule = RowRule::kFtrlV2;
  // lr, l1, l2, l2_shrinkage, lr_power
  static constexpr std::array<int, 5> kScalars{4, 5, 6, 7, 8};
};
struct AdadeltaLayout {
  static constexpr RowRule kRule = RowRule::kAdadelta;
  static constexpr int kVars = 3;  // var, accum, accum_update
  static constexpr int kGrad = 6;
  static constexpr std::array<int, 3> kScalars{3, 4, 5};  // lr, rho, epsilon
  static constexpr const char* kFlag = nullptr;
};
struct RMSPropLayout {
  static constexpr RowRule kRule = RowRule::kRMSProp;
  static constexpr int kVars = 3;  // var, ms, mom
  static constexpr int kGrad = 7;
  static constexpr std::array<int, 4> kScalars{3, 4, 5, 6};  // lr, rho, momentum, epsilon
  static constexpr const char* kFlag = nullptr;
};
struct CenteredRMSPropLayout {
  static constexpr RowRule kRule = RowRule::kCenteredRMSProp;
  static constexpr int kVars = 4;  // var, mg, ms, mom
  static constexpr int kGrad = 8;
  static constexpr std::array<int, 4> kScalars{4, 5, 6, 7};  // lr, rho, momentum, epsilon
  static constexpr const char* kFlag = nullptr;
};
// The rules below have dense forms only.
struct AdaMaxLayout {
  static constexpr RowRule kRule = RowRule::kAdaMax;
  static constexpr int kVars = 3;  // var, m, v
  static constexpr int kGrad = 8;
  // beta1_power, lr, beta1, beta2, epsilon
  static constexpr std::array<int, 5> kScalars{3, 4, 5, 6, 7};
  static constexpr const char* kFlag = nullptr;
};
struct AmsgradLayout {  // ResourceApplyAdamWithAmsgrad (no ref form)
  static constexpr RowRule kRule = RowRule::kAmsgrad;
  static constexpr int kVars = 4;  // var, m, v, vhat
  static constexpr int kGrad = 10;
  // beta1_power, beta2_power, lr, beta1, beta2, epsilon
  static constexpr std::array<int, 6> kScalars{4, 5, 6, 7, 8, 9};
  static constexpr const char* kFlag = nullptr;
};
// AddSign (lr, alpha, sign_decay, beta) and PowerSign (lr, logbase,
// sign_decay, beta), each with var and m.
template <RowRule kSignRule>
struct SignLayout {
  static constexpr RowRule kRule = kSignRule;
  static constexpr int kVars = 2;
  static constexpr int kGrad = 6;
  static constexpr std::array<int, 4> kScalars{2, 3, 4, 5};
  static constexpr const char* kFlag = nullptr;
};

}  // namespace sluice::gpu::row_layouts

#endif  // SLUICE_OPS_GPU_ROW_RULE_LAYOUTS_H_
