// Fake quantization for quantization-aware training (tf.quantization.
// fake_quant_with_min_max_args / _vars / _vars_per_channel, what
// tf.contrib.quantize and the Model Optimization Toolkit insert), under
// TensorFlow's names, inputs and attrs, with TensorFlow's arithmetic:
//   FakeQuantWithMinMaxArgs(inputs) attrs min (-6), max (6), num_bits (8),
//       narrow_range (false)
//   FakeQuantWithMinMaxVars(inputs, min, max)          min, max scalars
//   FakeQuantWithMinMaxVarsPerChannel(inputs, min, max) per last dimension
// The range is nudged so that 0 is exactly representable: scale = (max -
// min) / (qmax - qmin) with qmin = narrow_range ? 1 : 0, qmax = 2^bits - 1;
// the zero point min-derived, rounded and clamped to [qmin, qmax]; inputs
// are clamped to the nudged range and rounded to the nearest step (floor of
// x / scale + 0.5; the Args form multiplies by 1 / scale, as TensorFlow's).
// Their gradient ops (...Gradient) pass the incoming gradient where the
// input lies in the nudged range; the Vars forms also give min's (the sum
// below the range) and max's (the sum above) - the straight-through
// estimator. float only.
//
//   Output q = ops::FakeQuantWithMinMaxVars(s, activations, min_var, max_var);
//
// Errors (InvalidArgument): num_bits outside [2, 16]; the Args form's min
// not below max; min and max not scalars (Vars) or not [d] for inputs
// [..., d] (PerChannel); a gradient whose shape differs from the input's.
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_NN_FAKE_QUANT_OPS_H_
#define SLUICE_OPS_NN_FAKE_QUANT_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterFakeQuantOps(OpRegistry* ops);
absl::Status RegisterFakeQuantGradients(OpRegistry* ops);
void RegisterFakeQuantKernels(KernelRegistry* kernels);

namespace ops {

struct FakeQuantAttrs {
  int64_t num_bits = 8;
  bool narrow_range = false;
};
Output FakeQuantWithMinMaxArgs(const Scope& scope, Input inputs, float min = -6.0f,
                               float max = 6.0f, const FakeQuantAttrs& attrs = {},
                               std::source_location loc = std::source_location::current());
Output FakeQuantWithMinMaxVars(const Scope& scope, Input inputs, Input min, Input max,
                               const FakeQuantAttrs& attrs = {},
                               std::source_location loc = std::source_location::current());
Output FakeQuantWithMinMaxVarsPerChannel(const Scope& scope, Input inputs, Input min, Input max,
                                         const FakeQuantAttrs& attrs = {},
                                         std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_FAKE_QUANT_OPS_H_
