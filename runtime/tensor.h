// Tensor: a dtype, a fully defined shape and a refcounted, 64-byte aligned
// buffer. Copies share the buffer (Identity and Reshape cost nothing).
//
//   Tensor t(DT_FLOAT, TensorShape({2, 3}));           // default CPU allocator
//   absl::Span<float> v = t.flat<float>();  v[0] = 1;
//   ASSIGN_OR_RETURN(Tensor r, t.Reshaped(TensorShape({3, 2})));   // shares
//   Tensor s = Tensor::Scalar<int32_t>(7);
//   Tensor m = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
//   Tensor w = Tensor::Scalar<std::string>("hello");     // DT_STRING
//   w.flat<std::string>()[0] += " world";
//
// DT_STRING tensors hold std::string elements, constructed empty when the
// buffer is allocated and destroyed when the last sharer lets it go. Their
// bytes are objects, not data: never memcpy raw_data() of a string tensor
// (DeepCopy, FromProto and ToProto copy element by element; kernels that
// move raw bytes register only fixed-size dtypes). TotalBytes() of a string
// tensor is the buffer's size, NumElements() * sizeof(std::string); the
// characters on the heap are not counted.
//
// DT_VARIANT tensors hold Variant elements (runtime/variant.h) the same
// way: objects, built empty and destroyed with the buffer; DeepCopy copies
// them (sharing each value); they never go to a TensorProto or the wire.
//
// Thread-compatible: concurrent reads are safe; a kernel writes only to
// tensors it allocated or to variables under their lock. The buffer is freed
// when the last Tensor sharing it goes away.
#ifndef SLUICE_RUNTIME_TENSOR_H_
#define SLUICE_RUNTIME_TENSOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/proto/tensor.pb.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"
#include "runtime/allocator.h"
#include "runtime/variant.h"

namespace sluice {

// DT_STRING and DT_RESOURCE tensors hold std::string objects (a resource
// handle is the name its device's ResourceMgr keeps the resource under).
inline bool HoldsStrings(DataType dtype) { return dtype == DT_STRING || dtype == DT_RESOURCE; }
// DT_VARIANT tensors hold Variant objects.
inline bool HoldsVariants(DataType dtype) { return dtype == ::tensorflow::DT_VARIANT; }
// Elements that are C++ objects (constructed, destroyed, copied one by one).
inline bool HoldsObjects(DataType dtype) { return HoldsStrings(dtype) || HoldsVariants(dtype); }
// Bytes of one element in a tensor's buffer; 0 for a type no tensor holds.
inline size_t ElementBytes(DataType dtype) {
  if (HoldsStrings(dtype)) return sizeof(std::string);
  if (HoldsVariants(dtype)) return sizeof(Variant);
  return static_cast<size_t>(DataTypeSize(dtype));
}

// A block of memory from an allocator, freed on destruction.
class TensorBuffer {
 public:
  // nullptr data when the allocator refused. With `num_strings` > 0 the
  // buffer (of at least num_strings * sizeof(std::string) bytes) holds that
  // many empty std::string objects, destroyed before the memory is freed.
  // Kinds of object a buffer constructs in place (strings or variants).
  enum class Objects { kNone, kStrings, kVariants };
  TensorBuffer(Allocator* allocator, size_t bytes, int64_t num_objects = 0,
               Objects kind = Objects::kStrings);
  ~TensorBuffer();
  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  Allocator* allocator() const { return allocator_; }

 private:
  std::shared_ptr<Allocator> owner_;  // keeps a shared-owned allocator alive
  Allocator* allocator_;
  size_t size_;
  void* data_;
  int64_t num_objects_ = 0;
  Objects kind_ = Objects::kNone;
};

class Tensor {
 public:
  Tensor() = default;  // uninitialized: dtype DT_INVALID
  // Allocates from the default CPU allocator; CHECK-fails only if the process
  // is out of memory. Kernels use OpKernelContext::allocate_output instead.
  Tensor(DataType dtype, const TensorShape& shape);

  // The most bytes one tensor may take (its element storage; strings count
  // sizeof(std::string) each): 2^46, 64 TiB, past any device's memory and
  // far below where a byte count overflows.
  static constexpr size_t kMaxTensorBytes = size_t{1} << 46;

  // ResourceExhausted when the allocator refuses or the byte count exceeds
  // kMaxTensorBytes (checked without overflow); InvalidArgument for a
  // shape that is not fully defined or a dtype that cannot be held (a
  // dtype without a fixed size other than DT_STRING).
  // `shape` is taken by value: a temporary moves in without a copy.
  static absl::StatusOr<Tensor> Allocate(Allocator* allocator, DataType dtype, TensorShape shape);

  template <typename T>
  static Tensor Scalar(T value) {
    Tensor t(DataTypeToEnum<T>::value, TensorShape());
    *t.data<T>() = value;
    return t;
  }
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values, const TensorShape& shape);
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values) {
    return FromVector(values, TensorShape({static_cast<int64_t>(values.size())}));
  }

  // TensorProto -> Tensor with TensorFlow's fill rules (tensor_content wins;
  // fewer *_val than elements repeat the last; none gives zeros / empty
  // strings). Strings come from string_val, or from tensor_content in
  // TensorFlow's encoding (every length as a varint32, then the bytes).
  // InvalidArgument on a bad proto (content size mismatch, unsupported dtype).
  static absl::StatusOr<Tensor> FromProto(const ::tensorflow::TensorProto& proto,
                                          Allocator* allocator = nullptr);
  // Writes dtype, shape and tensor_content (string_val for DT_STRING).
  void ToProto(::tensorflow::TensorProto* proto) const;

  bool IsInitialized() const { return dtype_ != DT_INVALID; }
  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.rank(); }
  int64_t dim_size(int i) const { return shape_.dim(i); }
  int64_t NumElements() const { return num_elements_; }
  // Bytes of the buffer; see the note on DT_STRING above.
  size_t TotalBytes() const {  // inline: on every tensor sent and every small kernel
    return static_cast<size_t>(num_elements_) * ElementBytes(dtype_);
  }

  void* raw_data() const { return buffer_ ? buffer_->data() : nullptr; }
  // True when the buffer is device memory (a GPU's): the host must not read
  // or write raw_data(); DebugString shows no values.
  bool on_device() const {
    return buffer_ != nullptr && buffer_->allocator()->memory_kind() == MemoryKind::kDevice;
  }
  // The allocator of the buffer, nullptr for an uninitialized tensor.
  Allocator* buffer_allocator() const { return buffer_ ? buffer_->allocator() : nullptr; }
  template <typename T>
  T* data() const {
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  absl::Span<T> flat() const {
    return absl::Span<T>(data<T>(), static_cast<size_t>(num_elements_));
  }
  template <typename T>
  T& scalar() const {
    return *data<T>();
  }

  // Same buffer, another shape with as many elements; InvalidArgument else.
  absl::StatusOr<Tensor> Reshaped(const TensorShape& shape) const;
  bool SharesBufferWith(const Tensor& other) const {
    return buffer_ != nullptr && buffer_ == other.buffer_;
  }
  // True when no other Tensor shares this buffer (safe to write in place).
  bool RefCountIsOne() const {
    const bool one = buffer_.use_count() == 1;  // a relaxed load in libstdc++
    // Pairs with the release of the other holders' references, so their
    // reads of the buffer happen before our in-place writes.
    std::atomic_thread_fence(std::memory_order_acquire);
    return one;
  }
  // A new buffer holding the same values (strings copied one by one).
  // Uninitialized when the allocator refuses or the tensor is on_device().
  Tensor DeepCopy(Allocator* allocator = nullptr) const;

  // "float [2,3] 1 2 3 4 5 6" with at most `max_entries` values; strings are
  // quoted and C-escaped: string [2] ["a" "b\n"].
  std::string DebugString(int max_entries = 10) const;
  // The values only, NumPy-like: "[[1 2 3] [4 5 6]]", at most `max_entries`.
  std::string SummarizeValue(int max_entries = 10) const;

 private:
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  int64_t num_elements_ = 0;
  std::shared_ptr<TensorBuffer> buffer_;
};

template <typename T>
Tensor Tensor::FromVector(const std::vector<T>& values, const TensorShape& shape) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  T* d = t.data<T>();
  for (int64_t i = 0; i < t.NumElements() && i < static_cast<int64_t>(values.size()); ++i) {
    d[i] = values[i];
  }
  return t;
}

}  // namespace sluice

#endif  // SLUICE_RUNTIME_TENSOR_H_
