// Queue op definitions, shape functions and wrappers (kernels:
// queue_kernels.cc).
#include "ops/data_flow/queue_ops.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

absl::Status ScalarOutput(InferenceContext* c) {
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

absl::Status NoOutput(InferenceContext*) { return absl::OkStatus(); }

// Dequeue outputs: the queue's shapes are not known here (the handle carries
// none), so each component has an unknown shape.
absl::Status DequeueShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, TensorShape::Unknown());
  return absl::OkStatus();
}

OpDefBuilder QueueHandleOp(const char* name) {
  OpDefBuilder b(name);
  b.Output("handle: resource")
      .Attr("component_types: list(type) >= 1")
      .Attr("shapes: list(shape) >= 0 = []")
      .Attr("capacity: int = -1")
      .Attr("container: string = ''")
      .Attr("shared_name: string = ''")
      .SetIsStateful()
      .SetShapeFn(ScalarOutput);
  return b;
}

}  // namespace

absl::Status RegisterQueueOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(QueueHandleOp("FIFOQueueV2")));
  RETURN_IF_ERROR(ops->Register(QueueHandleOp("RandomShuffleQueueV2")
                                    .Attr("min_after_dequeue: int = 0")
                                    .Attr("seed: int = 0")
                                    .Attr("seed2: int = 0")));
  for (const char* name : {"QueueEnqueueV2", "QueueEnqueueManyV2"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("handle: resource")
                                      .Input("components: Tcomponents")
                                      .Attr("Tcomponents: list(type) >= 1")
                                      .Attr("timeout_ms: int = -1")
                                      .SetIsStateful()
                                      .SetShapeFn(NoOutput)));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("QueueDequeueV2")
                                    .Input("handle: resource")
                                    .Output("components: component_types")
                                    .Attr("component_types: list(type) >= 1")
                                    .Attr("timeout_ms: int = -1")
                                    .SetIsStateful()
                                    .SetShapeFn(DequeueShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("QueueDequeueManyV2")
                                    .Input("handle: resource")
                                    .Input("n: int32")
                                    .Output("components: component_types")
                                    .Attr("component_types: list(type) >= 1")
                                    .Attr("timeout_ms: int = -1")
                                    .SetIsStateful()
                                    .SetShapeFn(DequeueShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("QueueCloseV2")
                                    .Input("handle: resource")
                                    .Attr("cancel_pending_enqueues: bool = false")
                                    .SetIsStateful()
                                    .SetShapeFn(NoOutput)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("QueueSizeV2")
                                    .Input("handle: resource")
                                    .Output("size: int32")
                                    .SetIsStateful()
                                    .SetShapeFn(ScalarOutput)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("QueueIsClosedV2")
                                    .Input("handle: resource")
                                    .Output("is_closed: bool")
                                    .SetIsStateful()
                                    .SetShapeFn(ScalarOutput)));
  for (const char* op : {"FIFOQueueV2", "RandomShuffleQueueV2", "QueueEnqueueV2",
                         "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
                         "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output FIFOQueueV2(const Scope& s, const std::vector<DataType>& component_types,
                   const QueueAttrs& attrs, std::source_location loc) {
  return s.Op("FIFOQueueV2", loc)
      .SetAttr("component_types", MakeAttr(component_types))
      .SetAttr("shapes", MakeAttr(attrs.shapes))
      .Attr("capacity", attrs.capacity)
      .Attr("container", attrs.container)
      .Attr("shared_name", attrs.shared_name)
      .Finalize1();
}

Output RandomShuffleQueueV2(const Scope& s, const std::vector<DataType>& component_types,
                            const RandomShuffleQueueAttrs& attrs, std::source_location loc) {
  return s.Op("RandomShuffleQueueV2", loc)
      .SetAttr("component_types", MakeAttr(component_types))
      .SetAttr("shapes", MakeAttr(attrs.shapes))
      .Attr("capacity", attrs.capacity)
      .Attr("min_after_dequeue", attrs.min_after_dequeue)
      .Attr("seed", attrs.seed)
      .Attr("seed2", attrs.seed2)
      .Attr("container", attrs.container)
      .Attr("shared_name", attrs.shared_name)
      .Finalize1();
}

Node* QueueEnqueueV2(const Scope& s, Input handle, absl::Span<const Output> components,
                     std::source_location loc) {
  return s.Op("QueueEnqueueV2", loc).Input(handle).InputList(components).Finalize();
}

Node* QueueEnqueueManyV2(const Scope& s, Input handle, absl::Span<const Output> components,
                         std::source_location loc) {
  return s.Op("QueueEnqueueManyV2", loc).Input(handle).InputList(components).Finalize();
}

std::vector<Output> QueueDequeueV2(const Scope& s, Input handle,
                                   const std::vector<DataType>& component_types,
                                   std::source_location loc) {
  return s.Op("QueueDequeueV2", loc)
      .Input(handle)
      .SetAttr("component_types", MakeAttr(component_types))
      .FinalizeAll();
}

std::vector<Output> QueueDequeueManyV2(const Scope& s, Input handle, Input n,
                                       const std::vector<DataType>& component_types,
                                       std::source_location loc) {
  return s.Op("QueueDequeueManyV2", loc)
      .Input(handle)
      .Input(n)
      .SetAttr("component_types", MakeAttr(component_types))
      .FinalizeAll();
}

Node* QueueCloseV2(const Scope& s, Input handle, const QueueCloseAttrs& attrs,
                   std::source_location loc) {
  return s.Op("QueueCloseV2", loc)
      .Input(handle)
      .Attr("cancel_pending_enqueues", attrs.cancel_pending_enqueues)
      .Finalize();
}

Output QueueSizeV2(const Scope& s, Input handle, std::source_location loc) {
  return s.Op("QueueSizeV2", loc).Input(handle).Finalize1();
}

Output QueueIsClosedV2(const Scope& s, Input handle, std::source_location loc) {
  return s.Op("QueueIsClosedV2", loc).Input(handle).Finalize1();
}

}  // namespace ops
}  // namespace sluice
