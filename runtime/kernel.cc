#include "runtime/kernel.h"

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "base/status_macros.h"

namespace sluice {

absl::StatusOr<Tensor*> OpKernelContext::allocate_output(int i, const TensorShape& shape) {
  absl::StatusOr<Tensor> t =
      Tensor::Allocate(output_allocator(i), p_.node->output_type(i), shape);
  if (!t.ok()) {
    return AddContext(t.status(), absl::StrCat("output ", i, " on ", p_.device->name()));
  }
  p_.outputs[i].tensor = *std::move(t);
  return &p_.outputs[i].tensor;
}

absl::StatusOr<Tensor*> OpKernelContext::forward_input_or_allocate_output(
    int in, int out, const TensorShape& shape) {
  Tensor& input = p_.inputs[in].tensor;
  if (p_.inputs[in].ref == nullptr && input.IsInitialized() && input.RefCountIsOne() &&
      input.dtype() == BaseType(p_.node->output_type(out)) &&
      input.NumElements() == shape.num_elements() &&
      input.buffer_allocator()->memory_kind() == output_allocator(out)->memory_kind()) {
    absl::StatusOr<Tensor> reshaped = input.Reshaped(shape);
    if (reshaped.ok()) {
      p_.outputs[out].tensor = *std::move(reshaped);
      return &p_.outputs[out].tensor;
    }
  }
  return allocate_output(out, shape);
}

absl::StatusOr<Tensor> OpKernelContext::allocate_temp(DataType dtype, const TensorShape& shape) {
  return Tensor::Allocate(allocator(), dtype, shape);
}

absl::Status AsyncOpKernel::Compute(OpKernelContext* ctx) {
  absl::Notification done;
  absl::Status result;
  ComputeAsync(ctx, [&](absl::Status s) {
    result = std::move(s);
    done.Notify();
  });
  done.WaitForNotification();
  return result;
}

}  // namespace sluice
