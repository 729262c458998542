// TensorFlow's TensorArray ops (the V3 forms tf.TensorArray and
// tf.nn.dynamic_rnn emit), their CPU kernels and typed wrappers:
//
//   auto ta = ops::TensorArrayV3(s, /*size=*/3, DT_FLOAT);         // handle, flow
//   Output flow = ops::TensorArrayScatterV3(s, ta.handle, {0, 1, 2}, x, ta.flow);
//   Output x1 = ops::TensorArrayReadV3(s, ta.handle, 1, flow, DT_FLOAT);
//   Output all = ops::TensorArrayGatherV3(s, ta.handle, {0, 1, 2}, flow, DT_FLOAT);
//
// The handle is a DT_RESOURCE scalar naming an array (ops/control_flow/tensor_array.h)
// in its device's per-step container: an array lives until
// TensorArrayCloseV3 or the end of the step. The float `flow` tensor
// carries no data: threading it from op to op orders the ops, and
// gradients flow along it. TensorArrayGradV3 makes (once per source) the
// array that collects an array's gradients.
//
// The wrappers build nodes laid out as TensorFlow writes them; errors are
// the kernels' (ops/control_flow/tensor_array.h) plus the shape checks of the many-
// element forms, each naming the array. Thread-safety: as Scope.
#ifndef SLUICE_OPS_CONTROL_FLOW_TENSOR_ARRAY_OPS_H_
#define SLUICE_OPS_CONTROL_FLOW_TENSOR_ARRAY_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "ops/control_flow/tensor_array.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterTensorArrayOps(OpRegistry* ops);
void RegisterTensorArrayKernels(KernelRegistry* kernels);
// The same kernels for a device with its own memory (a GPU): elements of
// `device_types` and the flow in device memory, moved and zeroed by
// `device_ops` (which must outlive the registry); handles, indices, sizes
// and lengths in host memory.
void RegisterTensorArrayDeviceKernels(KernelRegistry* kernels, const std::string& device_type,
                                      const std::vector<DataType>& device_types,
                                      const TensorArrayDeviceOps* device_ops);

namespace ops {

struct TensorArrayAttrs {
  TensorShape element_shape = TensorShape::Unknown();
  bool dynamic_size = false;
  bool clear_after_read = true;
  bool identical_element_shapes = false;  // tf.TensorArray's infer_shape
  std::string tensor_array_name;
};

struct TensorArrayOutputs {
  Output handle;
  Output flow;
};

TensorArrayOutputs TensorArrayV3(const Scope& scope, const Input& size, DataType dtype,
                                 const TensorArrayAttrs& attrs = {},
                                 std::source_location loc = std::source_location::current());
// The gradient array of `handle` for gradient computation `source`
// ("gradients", "gradients_1", ...).
TensorArrayOutputs TensorArrayGradV3(const Scope& scope, const Input& handle, const Input& flow_in,
                                     const std::string& source,
                                     std::source_location loc = std::source_location::current());
// TensorArrayGradV3 whose elements are shape_to_prepend (int32 [k]) followed
// by the forward element shapes: the gradient of k stacked arrays at once
// (TensorFlow's pfor / while_v2 write it).
TensorArrayOutputs TensorArrayGradWithShape(
    const Scope& scope, const Input& handle, const Input& flow_in, const Input& shape_to_prepend,
    const std::string& source, std::source_location loc = std::source_location::current());
Output TensorArrayWriteV3(const Scope& scope, const Input& handle, const Input& index,
                          const Input& value, const Input& flow_in,
                          std::source_location loc = std::source_location::current());
Output TensorArrayReadV3(const Scope& scope, const Input& handle, const Input& index,
                         const Input& flow_in, DataType dtype,
                         std::source_location loc = std::source_location::current());
Output TensorArrayGatherV3(const Scope& scope, const Input& handle, const Input& indices,
                           const Input& flow_in, DataType dtype,
                           const TensorShape& element_shape = TensorShape::Unknown(),
                           std::source_location loc = std::source_location::current());
Output TensorArrayScatterV3(const Scope& scope, const Input& handle, const Input& indices,
                            const Input& value, const Input& flow_in,
                            std::source_location loc = std::source_location::current());

struct TensorArrayConcatOutputs {
  Output value;
  Output lengths;  // int64: each element's first dimension
};
TensorArrayConcatOutputs TensorArrayConcatV3(
    const Scope& scope, const Input& handle, const Input& flow_in, DataType dtype,
    const TensorShape& element_shape_except0 = TensorShape::Unknown(),
    std::source_location loc = std::source_location::current());
Output TensorArraySplitV3(const Scope& scope, const Input& handle, const Input& value,
                          const Input& lengths, const Input& flow_in,
                          std::source_location loc = std::source_location::current());
Output TensorArraySizeV3(const Scope& scope, const Input& handle, const Input& flow_in,
                         std::source_location loc = std::source_location::current());
Node* TensorArrayCloseV3(const Scope& scope, const Input& handle,
                         std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_CONTROL_FLOW_TENSOR_ARRAY_OPS_H_
