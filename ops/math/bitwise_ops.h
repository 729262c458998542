// Bitwise ops on integers (tf.bitwise), under TensorFlow's names, inputs and
// attrs: BitwiseAnd, BitwiseOr, BitwiseXor (with broadcasting), Invert (~x),
// LeftShift and RightShift (x shifted by y clamped into [0, bits - 1], as
// TensorFlow: a left shift works on the unsigned bits, a right shift of a
// signed value is arithmetic). CPU kernels for int8, uint8, int32 and int64;
// no gradients (as in TensorFlow). Bitcast(input: T) -> output: type
// reinterprets the bytes: the same shape between types of one size, one
// more dimension (in / out) from a wider type, the last dimension (which
// must be out / in) dropped into a wider one (InvalidArgument otherwise);
// tf.random.Generator turns its int64 state into uint64 keys with it.
// PopulationCount(x: T) -> y: uint8 counts each element's set bits.
//
//   Output masked = ops::BitwiseAnd(s, flags, ops::Const(s, 0x0f));
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_MATH_BITWISE_OPS_H_
#define SLUICE_OPS_MATH_BITWISE_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterBitwiseOps(OpRegistry* ops);
void RegisterBitwiseKernels(KernelRegistry* kernels);

namespace ops {

Output BitwiseAnd(const Scope& scope, Input x, Input y,
                  std::source_location loc = std::source_location::current());
Output BitwiseOr(const Scope& scope, Input x, Input y,
                 std::source_location loc = std::source_location::current());
Output BitwiseXor(const Scope& scope, Input x, Input y,
                  std::source_location loc = std::source_location::current());
Output LeftShift(const Scope& scope, Input x, Input y,
                 std::source_location loc = std::source_location::current());
Output RightShift(const Scope& scope, Input x, Input y,
                  std::source_location loc = std::source_location::current());
Output Invert(const Scope& scope, Input x,
              std::source_location loc = std::source_location::current());
Output Bitcast(const Scope& scope, Input input, DataType type,
               std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_BITWISE_OPS_H_
