// TensorFlow 2's list ops (tensorflow/core/ops/list_ops.cc), over the
// TensorList values of tensor_list.h, with TensorFlow's names, inputs and
// attrs and CPU kernels:
//   EmptyTensorList, TensorListReserve, TensorListFromTensor,
//   TensorListPushBack, TensorListPopBack, TensorListLength,
//   TensorListElementShape, TensorListGetItem, TensorListSetItem,
//   TensorListResize, TensorListStack, TensorListGather,
//   TensorListScatter, TensorListScatterV2, TensorListScatterIntoExistingList.
// These are what tf.TensorArray inside a tf.function, a Keras RNN layer and
// the gradient of a while_v2 loop (its accumulators: EmptyTensorList,
// TensorListPushBack, TensorListPopBack) write into graphs.
//
// Gradients (tensor_list_grad.cc, RegisterTensorListGradients in
// control_flow_gradients.h), as TensorFlow's list_grad.py: PushBack and
// PopBack, GetItem and SetItem, Stack and FromTensor, Gather and the
// Scatters are each other's; Resize resizes back. As in TensorFlow, a
// Gather's gradient keeps one gradient per index: a Gather reading one
// element twice gets the gradient of only one read.
//
// AddN and ZerosLike of lists (what gradients of lists need) have their
// kernels here too.
//
// A list is a host object (a variant never enters device memory); on a
// device with its own memory (a GPU: RegisterTensorListDeviceKernels) the
// lists, shapes, indices and lengths stay in host memory and the elements
// in the device's, moved and cleared by TensorArrayDeviceOps, so a loop over
// lists on a GPU copies nothing between them per iteration.
//
// Errors: InvalidArgument naming the op: a wrong element dtype or shape, an
// index outside the list, a pop from an empty list, reading an element never
// set whose shape is not known, Stack of a list whose length differs from
// num_elements. Thread-safety: kernels are thread-safe.
#ifndef SLUICE_OPS_CONTROL_FLOW_TENSOR_LIST_OPS_H_
#define SLUICE_OPS_CONTROL_FLOW_TENSOR_LIST_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "ops/control_flow/tensor_array.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterTensorListOps(OpRegistry* ops);
void RegisterTensorListKernels(KernelRegistry* kernels);
// For a device whose memory the host cannot touch, elements of
// `device_types`.
void RegisterTensorListDeviceKernels(KernelRegistry* kernels, const std::string& device_type,
                                     const std::vector<DataType>& device_types,
                                     const TensorArrayDeviceOps* device_ops);

}  // namespace sluice

#endif  // SLUICE_OPS_CONTROL_FLOW_TENSOR_LIST_OPS_H_
