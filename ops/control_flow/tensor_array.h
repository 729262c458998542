// The state behind TensorFlow's TensorArray ops: a list of tensors of one
// dtype, written once per index and read back, with TensorFlow's rules
// (tensorflow/core/kernels/tensor_array.h):
//
//   TensorArray::Options o{.dtype = DT_FLOAT, .size = 3};
//   TensorArray ta("ta", o);
//   RETURN_IF_ERROR(ta.Write(0, x));             // once per index
//   ASSIGN_OR_RETURN(Tensor x0, ta.Read(0));     // then cleared (clear_after_read)
//
// - A write checks the dtype, the index (an array grows only when
//   dynamic_size) and the element shape, which the first write fixes when
//   identical_element_shapes. A second write to an index is an error,
//   except in a gradient array (multiple_writes_aggregate), where it adds.
// - A read of an index never written gives zeros when its shape is known
//   (a gradient array knows the shapes its forward array was written with:
//   an element no gradient reached reads as zeros), and is an error
//   otherwise. With clear_after_read, a second read of an index is an error.
// - Close makes every later use an error naming the array.
//
// Errors are InvalidArgument naming the array and the index. Thread-safe.
#ifndef SLUICE_OPS_CONTROL_FLOW_TENSOR_ARRAY_H_
#define SLUICE_OPS_CONTROL_FLOW_TENSOR_ARRAY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "runtime/resource_mgr.h"
#include "runtime/tensor.h"

namespace sluice {

class Device;

// What an array and its kernels need of a device whose memory the host
// cannot touch (a GPU): its bytes are moved and cleared by the device, in
// the order of its kernels. The host's memory needs none (null).
struct TensorArrayDeviceOps {
  // Copies `rows` rows of `row_elements` elements from src (from row
  // src_row) into *dst (at row dst_row), both in the device's memory.
  absl::Status (*copy_rows)(Device* device, const Tensor& src, int64_t src_row, Tensor* dst,
                            int64_t dst_row, int64_t rows, int64_t row_elements) = nullptr;
  // Fills *t, in the device's memory, with zero bytes.
  absl::Status (*zero)(Device* device, Tensor* t) = nullptr;
  // *sum = a + b element-wise (one dtype and shape, all in the device's
  // memory; *sum is allocated, a buffer of its own): how a gradient array
  // adds two writes to one index. Null, or Unimplemented for a dtype the
  // device cannot add: such writes fail, naming the array.
  absl::Status (*add)(Device* device, const Tensor& a, const Tensor& b, Tensor* sum) = nullptr;
};

class TensorArray : public ResourceBase {
 public:
  struct Options {
    DataType dtype = DT_FLOAT;
    int64_t size = 0;
    TensorShape element_shape = TensorShape::Unknown();  // may be partly known
    bool dynamic_size = false;
    bool clear_after_read = true;
    bool multiple_writes_aggregate = false;  // gradient arrays
    bool identical_element_shapes = false;
    // Where the elements live: the device that made the array and its
    // memory's operations (null: host memory). An unwritten element of a
    // gradient array reads as zeros made there, and two writes to one index
    // are added there (device_ops->add).
    Device* device = nullptr;
    const TensorArrayDeviceOps* device_ops = nullptr;
  };

  // `shapes`: per index, the shape an unwritten element reads as zeros of
  // (a gradient array takes its forward array's written shapes).
  TensorArray(std::string name, Options options, std::vector<TensorShape> shapes = {});

  std::string DebugString() const override;
  const std::string& name() const { return name_; }
  DataType dtype() const { return options_.dtype; }
  bool dynamic_size() const { return options_.dynamic_size; }

  absl::Status Write(int64_t index, const Tensor& value);
  absl::StatusOr<Tensor> Read(int64_t index);
  // Several at once, under one lock (Scatter and Gather).
  absl::Status WriteMany(absl::Span<const int64_t> indices, absl::Span<const Tensor> values);
  absl::StatusOr<std::vector<Tensor>> ReadMany(absl::Span<const int64_t> indices);

  absl::StatusOr<int64_t> Size() const;
  // The element shape as known now (from the op, refined by writes).
  absl::StatusOr<TensorShape> ElementShape() const;
  // What this array's gradient array is made from: the same dtype, this
  // array's current size and element shape, a fixed size, writes that add,
  // and the shape of each element written so far.
  struct GradientSpec {
    Options options;
    std::vector<TensorShape> shapes;
  };
  absl::StatusOr<GradientSpec> Gradient() const;
  void Close();

 private:
  struct Element {
    Tensor value;
    TensorShape shape = TensorShape::Unknown();  // of the value written
    bool written = false;
    bool read = false;
    bool cleared = false;
  };
  absl::Status CheckOpen() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteLocked(int64_t index, const Tensor& value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<Tensor> ReadLocked(int64_t index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Zeros of the array's dtype in its elements' memory.
  absl::StatusOr<Tensor> MakeZeros(const TensorShape& shape) const;
  // a + b (two writes to one index) in a new buffer of the elements' memory.
  absl::StatusOr<Tensor> AddWrites(const Tensor& a, const Tensor& b) const;

  const std::string name_;
  const Options options_;
  mutable absl::Mutex mu_;
  std::vector<Element> elements_ ABSL_GUARDED_BY(mu_);
  TensorShape element_shape_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// Copies `rows` rows of `row_elements` elements each from src (starting at
// row src_row) into dst (at row dst_row); numeric, string and variant dtypes.
void CopyRows(const Tensor& src, int64_t src_row, Tensor* dst, int64_t dst_row, int64_t rows,
              int64_t row_elements);

// a + b (one dtype and shape, host memory) in a new buffer (the stored one
// may be shared with a reader): how two gradients of one element add.
// Float, double, int32 and int64; Unimplemented "<what><dtype>" otherwise.
absl::StatusOr<Tensor> SumOnHost(const Tensor& a, const Tensor& b, absl::string_view what);

}  // namespace sluice

#endif  // SLUICE_OPS_CONTROL_FLOW_TENSOR_ARRAY_H_
