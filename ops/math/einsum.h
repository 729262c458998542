// Einsum (TensorFlow's op behind tf.einsum and Keras' MultiHeadAttention and
// EinsumDense): a contraction of one or two tensors written as an equation
// with one letter per dimension.
//
//   Output scores = ops::Einsum(s, {q, k}, "bqhd,bkhd->bhqk");  // attention logits
//   Output xt = ops::Einsum(s, {x}, "ij->ji");
//
// "..." stands for leading dimensions that broadcast, NumPy's way (an
// operand's rank must be known where it has "..."). A label in both operands
// and the output is a batch dimension; in both operands only, it is summed
// over in the product; in one operand only and not the output, it is summed
// first. Labels other than "..." must have the same size wherever they
// appear.
//
// Einsum has no kernel. Sessions (and AddGradients, on the path it
// differentiates) lower it before placement (OpDef::lower_fn), as
// TensorFlow's kernel computes it: Sum of the labels one operand alone has,
// Transpose of each operand to [batch, free, summed] (or [batch, summed,
// free]), Reshape to three dimensions, one BatchMatMulV2 (its batch
// dimensions broadcast), Reshape and Transpose to the output's order. Steps
// with nothing to do are left out; sizes come from the static shapes where
// they are known and from Shape at run time where not. So Einsum runs on
// every device those ops run on, and its gradient is theirs.
//
// Errors, InvalidArgument naming the equation (from the shape function,
// when the node is built or imported): not exactly one "->"; another
// number of operands than inputs; a character other than a letter or one
// "..." per term; a rank other than an operand's labels; a label of two
// sizes; an output label in no operand, or twice; "..." in an operand but
// not in the output. Unimplemented: a label twice in one operand (a
// diagonal); more than two operands (TensorFlow's op takes one or two).
#ifndef SLUICE_OPS_MATH_EINSUM_H_
#define SLUICE_OPS_MATH_EINSUM_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"

namespace sluice {

// The op, its shape function and its lowering.
absl::Status RegisterEinsumOps(OpRegistry* ops);

namespace ops {

Output Einsum(const Scope& scope, const std::vector<Output>& inputs, const std::string& equation,
              std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_EINSUM_H_
