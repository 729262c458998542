// Tensors as bytes (tf.io.serialize_tensor, tf.io.parse_tensor): what a
// pipeline stores in a TFRecord or an Example's bytes feature and reads
// back, under TensorFlow's names, inputs and attrs:
//   SerializeTensor  any tensor T -> a string scalar: its TensorProto
//                    (dtype, shape, and the values as tensor_content;
//                    strings as string_val), the bytes TensorFlow writes
//   ParseTensor      a string scalar -> the tensor of dtype out_type; any
//                    TensorProto TensorFlow reads (tensor_content or the
//                    typed *_val fields, repeated to fill as TensorFlow
//                    does)
// No gradients. Errors (InvalidArgument, TensorFlow's texts): serialized
// not a scalar, bytes that are not a TensorProto, a parsed dtype other than
// out_type, a proto whose content does not fit its shape; variant and
// resource tensors cannot be serialized (Unimplemented).
//
//   Output bytes = ops::SerializeTensor(s, image);
//   Output back = ops::ParseTensor(s, bytes, DT_UINT8);
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_PARSING_TENSOR_SERIALIZATION_OPS_H_
#define SLUICE_OPS_PARSING_TENSOR_SERIALIZATION_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterTensorSerializationOps(OpRegistry* ops);
void RegisterTensorSerializationKernels(KernelRegistry* kernels);

namespace ops {

Output SerializeTensor(const Scope& scope, Input tensor,
                       std::source_location loc = std::source_location::current());
Output ParseTensor(const Scope& scope, Input serialized, DataType out_type,
                   std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_PARSING_TENSOR_SERIALIZATION_OPS_H_
