#include "runtime/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "runtime/thread_spare.h"

namespace sluice {

TensorBuffer::TensorBuffer(Allocator* allocator, size_t bytes, int64_t num_objects,
                           Objects kind)
    : owner_(allocator->weak_from_this().lock()),
      allocator_(allocator),
      size_(bytes),
      data_(allocator->AllocateRaw(kTensorAlignment, bytes)) {
  if (data_ == nullptr || num_objects <= 0 || kind == Objects::kNone) return;
  if (kind == Objects::kStrings) {
    auto* s = static_cast<std::string*>(data_);
    for (int64_t i = 0; i < num_objects; ++i) new (s + i) std::string();
  } else {
    auto* v = static_cast<Variant*>(data_);
    for (int64_t i = 0; i < num_objects; ++i) new (v + i) Variant();
  }
  num_objects_ = num_objects;
  kind_ = kind;
}

TensorBuffer::~TensorBuffer() {
  if (kind_ == Objects::kStrings) {
    auto* s = static_cast<std::string*>(data_);
    for (int64_t i = 0; i < num_objects_; ++i) s[i].~basic_string();
  } else if (kind_ == Objects::kVariants) {
    auto* v = static_cast<Variant*>(data_);
    for (int64_t i = 0; i < num_objects_; ++i) v[i].~Variant();
  }
  allocator_->DeallocateRaw(data_, size_);
}

Tensor::Tensor(DataType dtype, const TensorShape& shape) {
  absl::StatusOr<Tensor> t = Allocate(DefaultCpuAllocator(), dtype, shape);
  if (!t.ok()) {
    std::cerr << "Tensor: " << t.status() << "\n";
    std::abort();  // an internal invariant: callers pass fully defined shapes
  }
  *this = *std::move(t);
}

namespace {

// Why Allocate refuses `dtype` and `shape` (which it does when the element
// count or byte count is out of bounds). Out of line, as the next: every
// kernel output is allocated, and the StrCat frames inline made the common
// path slower.
ABSL_ATTRIBUTE_NOINLINE absl::Status Unallocatable(DataType dtype, const TensorShape& shape) {
  if (!shape.IsFullyDefined()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot allocate a tensor of partly unknown shape ", shape.DebugString()));
  }
  const size_t elem = ElementBytes(BaseType(dtype));
  if (elem == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot allocate a tensor of type ", DataTypeName(dtype)));
  }
  const int64_t n = shape.num_elements();
  if (n < 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot allocate a tensor of shape ",
                                                   shape.DebugString(), ": more than ",
                                                   TensorShape::kMaxElements, " elements"));
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "cannot allocate a ", DataTypeName(BaseType(dtype)), " tensor of shape ",
      shape.DebugString(), ": ", n, " elements of ", elem, " bytes exceed the largest tensor, ",
      Tensor::kMaxTensorBytes, " bytes"));
}

ABSL_ATTRIBUTE_NOINLINE absl::Status OutOfMemory(Allocator* allocator, size_t bytes,
                                                 DataType dtype, const TensorShape& shape) {
  AllocatorStats s = allocator->GetStats();
  std::string free_part =
      s.bytes_limit > 0
          ? absl::StrCat(s.bytes_limit - s.bytes_in_use, " bytes free of ", s.bytes_limit)
          : absl::StrCat(s.bytes_in_use, " bytes in use, no limit");
  if (s.largest_free_block > 0) {
    absl::StrAppend(&free_part, ", largest free block ", s.largest_free_block);
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "out of memory on ", allocator->Name(), ": allocating ", bytes, " bytes for a ",
      DataTypeName(dtype), " tensor of shape ", shape.DebugString(), " (", free_part, ")"));
}

// Freed control blocks of one type (ControlBlockAllocator's), kept one per
// thread (thread_spare.h says why).
template <typename T>
struct ControlBlocks {
  static void Free(void* p) { ::operator delete(p); }
};

// The allocator std::allocate_shared rebinds to TensorBuffer's control
// block: a tensor allocated and freed per step or per kernel output takes
// the block its thread freed last instead of a malloc and a free.
template <typename T>
struct ControlBlockAllocator {
  using value_type = T;
  ControlBlockAllocator() = default;
  template <typename U>
  ControlBlockAllocator(const ControlBlockAllocator<U>&) {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    if (n != 1) return static_cast<T*>(::operator new(n * sizeof(T)));
    void* p = ThreadSpare<ControlBlocks<T>>::Take();
    return static_cast<T*>(p != nullptr ? p : ::operator new(sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    if (n != 1) {
      ::operator delete(p);
    } else if (!ThreadSpare<ControlBlocks<T>>::Keep(p)) {
      ControlBlocks<T>::Free(p);
    }
  }
  template <typename U>
  bool operator==(const ControlBlockAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const ControlBlockAllocator<U>&) const {
    return false;
  }
};

}  // namespace

absl::StatusOr<Tensor> Tensor::Allocate(Allocator* allocator, DataType dtype, TensorShape shape) {
  const int64_t n = shape.num_elements();  // -1: a dimension unknown, or too many elements
  const size_t elem = ElementBytes(BaseType(dtype));
  // The byte count, checked: a shape from the wire ([2^59 + 1] strings) must
  // not wrap to a small buffer that its elements are then constructed into.
  size_t bytes = 0;
  if (n < 0 || elem == 0 || __builtin_mul_overflow(static_cast<size_t>(n), elem, &bytes) ||
      bytes > kMaxTensorBytes) {
    return Unallocatable(dtype, shape);
  }
  Tensor t;
  t.dtype_ = BaseType(dtype);
  t.shape_ = std::move(shape);
  t.num_elements_ = n;
  const TensorBuffer::Objects kind = HoldsStrings(t.dtype_)    ? TensorBuffer::Objects::kStrings
                                     : HoldsVariants(t.dtype_) ? TensorBuffer::Objects::kVariants
                                                               : TensorBuffer::Objects::kNone;
  t.buffer_ = std::allocate_shared<TensorBuffer>(ControlBlockAllocator<TensorBuffer>(), allocator,
                                                 bytes, n, kind);
  if (t.buffer_->data() == nullptr) return OutOfMemory(allocator, bytes, dtype, t.shape_);
  return t;
}

absl::StatusOr<Tensor> Tensor::Reshaped(const TensorShape& shape) const {
  if (!shape.IsFullyDefined() || shape.num_elements() != num_elements_) {
    return absl::InvalidArgumentError(absl::StrCat("cannot reshape a tensor of shape ",
                                                   shape_.DebugString(), " into ",
                                                   shape.DebugString()));
  }
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::DeepCopy(Allocator* allocator) const {
  if (on_device()) return Tensor();  // a device copies its own memory
  if (!IsInitialized()) return Tensor();
  absl::StatusOr<Tensor> t =
      Allocate(allocator ? allocator : DefaultCpuAllocator(), dtype_, shape_);
  if (!t.ok()) return Tensor();
  if (HoldsStrings(dtype_)) {
    const std::string* src = data<std::string>();
    std::string* dst = t->data<std::string>();
    for (int64_t i = 0; i < num_elements_; ++i) dst[i] = src[i];
  } else if (HoldsVariants(dtype_)) {
    const Variant* src = data<Variant>();
    Variant* dst = t->data<Variant>();
    for (int64_t i = 0; i < num_elements_; ++i) dst[i] = src[i];
  } else if (TotalBytes() > 0) {
    std::memcpy(t->raw_data(), raw_data(), TotalBytes());
  }
  return *std::move(t);
}

namespace {

template <typename T>
void FillFrom(Tensor* t, const google::protobuf::RepeatedField<T>& values) {
  auto* d = static_cast<std::remove_cv_t<T>*>(t->raw_data());
  const int64_t n = t->NumElements();
  for (int64_t i = 0; i < n; ++i) {
    d[i] = values.empty() ? T() : values[std::min<int64_t>(i, values.size() - 1)];
  }
}

template <typename To, typename From>
void FillCast(Tensor* t, const google::protobuf::RepeatedField<From>& values) {
  To* d = t->data<To>();
  const int64_t n = t->NumElements();
  for (int64_t i = 0; i < n; ++i) {
    d[i] = values.empty() ? To() : static_cast<To>(values[std::min<int64_t>(i, values.size() - 1)]);
  }
}

void FillStrings(Tensor* t, const google::protobuf::RepeatedPtrField<std::string>& values) {
  absl::Span<std::string> d = t->flat<std::string>();
  if (values.empty()) return;  // already empty strings
  for (size_t i = 0; i < d.size(); ++i) {
    d[i] = values[std::min<int64_t>(static_cast<int64_t>(i), values.size() - 1)];
  }
}

bool ReadVarint32(absl::string_view* in, uint32_t* v) {
  uint32_t result = 0;
  for (int shift = 0; shift <= 28 && !in->empty(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>((*in)[0]);
    in->remove_prefix(1);
    result |= static_cast<uint32_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

// TensorFlow's tensor_content for strings: n varint32 lengths, then the bytes.
absl::Status DecodeStringContent(absl::string_view content, Tensor* t) {
  absl::Span<std::string> d = t->flat<std::string>();
  std::vector<uint32_t> lengths(d.size());
  for (uint32_t& len : lengths) {
    if (!ReadVarint32(&content, &len)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "string tensor proto content is truncated: cannot read the lengths of ", d.size(),
          " strings"));
    }
  }
  for (size_t i = 0; i < d.size(); ++i) {
    if (content.size() < lengths[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("string tensor proto content is truncated in string ", i));
    }
    d[i].assign(content.data(), lengths[i]);
    content.remove_prefix(lengths[i]);
  }
  if (!content.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("string tensor proto content has ",
                                                   content.size(), " bytes past its strings"));
  }
  return absl::OkStatus();
}

template <typename T>
void AppendValues(const Tensor& t, int max, std::vector<std::string>* out) {
  const T* d = t.data<T>();
  for (int64_t i = 0; i < t.NumElements() && i < max; ++i) {
    if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
      out->push_back(absl::StrCat(static_cast<int>(d[i])));
    } else if constexpr (std::is_same_v<T, bool>) {
      out->push_back(d[i] ? "True" : "False");
    } else if constexpr (std::is_same_v<T, std::string>) {
      out->push_back(absl::StrCat("\"", absl::CEscape(d[i]), "\""));
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      out->push_back(absl::StrCat(d[i].ToFloat()));
    } else {
      out->push_back(absl::StrCat(d[i]));
    }
  }
}

std::vector<std::string> ValueStrings(const Tensor& t, int max) {
  std::vector<std::string> v;
  switch (t.dtype()) {
    case DT_FLOAT: AppendValues<float>(t, max, &v); break;
    case DT_DOUBLE: AppendValues<double>(t, max, &v); break;
    case DT_INT32: AppendValues<int32_t>(t, max, &v); break;
    case DT_INT64: AppendValues<int64_t>(t, max, &v); break;
    case DT_UINT8: AppendValues<uint8_t>(t, max, &v); break;
    case DT_INT8: AppendValues<int8_t>(t, max, &v); break;
    case DT_INT16: AppendValues<int16_t>(t, max, &v); break;
    case DT_UINT16: AppendValues<uint16_t>(t, max, &v); break;
    case DT_BOOL: AppendValues<bool>(t, max, &v); break;
    case DT_HALF: AppendValues<Half>(t, max, &v); break;
    case DT_BFLOAT16: AppendValues<BFloat16>(t, max, &v); break;
    case DT_STRING:
    case DT_RESOURCE: AppendValues<std::string>(t, max, &v); break;
    case ::tensorflow::DT_VARIANT:
      for (int64_t i = 0; i < t.NumElements() && i < max; ++i) {
        v.push_back(t.data<Variant>()[i].DebugString());
      }
      break;
    default: break;
  }
  return v;
}

}  // namespace

absl::StatusOr<Tensor> Tensor::FromProto(const ::tensorflow::TensorProto& proto,
                                         Allocator* allocator) {
  ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(proto.tensor_shape()));
  if (!shape.IsFullyDefined()) {
    return absl::InvalidArgumentError("tensor proto has a partly unknown shape");
  }
  if (HoldsVariants(proto.dtype())) {
    return absl::UnimplementedError(
        "variant tensors (datasets, optionals) cannot be read from a tensor proto");
  }
  ASSIGN_OR_RETURN(Tensor t, Allocate(allocator ? allocator : DefaultCpuAllocator(),
                                      proto.dtype(), shape));
  const std::string& content = proto.tensor_content();
  if (HoldsStrings(t.dtype())) {
    if (!content.empty()) {
      RETURN_IF_ERROR(DecodeStringContent(content, &t));
    } else {
      FillStrings(&t, proto.string_val());
    }
    return t;
  }
  if (!content.empty()) {
    if (content.size() != t.TotalBytes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor proto content has ", content.size(), " bytes; a ", DataTypeName(t.dtype()),
          " tensor of shape ", shape.DebugString(), " needs ", t.TotalBytes()));
    }
    std::memcpy(t.raw_data(), content.data(), content.size());
    return t;
  }
  switch (t.dtype()) {
    case DT_FLOAT: FillFrom(&t, proto.float_val()); break;
    case DT_DOUBLE: FillFrom(&t, proto.double_val()); break;
    case DT_INT32: FillFrom(&t, proto.int_val()); break;
    case DT_INT64: FillCast<int64_t>(&t, proto.int64_val()); break;
    case DT_UINT8: FillCast<uint8_t>(&t, proto.int_val()); break;
    case DT_INT8: FillCast<int8_t>(&t, proto.int_val()); break;
    case DT_INT16: FillCast<int16_t>(&t, proto.int_val()); break;
    case DT_UINT16: FillCast<uint16_t>(&t, proto.int_val()); break;
    case DT_BOOL: FillFrom(&t, proto.bool_val()); break;
    case DT_HALF:
    case DT_BFLOAT16: FillCast<uint16_t>(&t, proto.half_val()); break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("tensor protos of type ", DataTypeName(t.dtype()), " are not supported"));
  }
  return t;
}

void Tensor::ToProto(::tensorflow::TensorProto* proto) const {
  proto->Clear();
  proto->set_dtype(dtype_);
  shape_.ToProto(proto->mutable_tensor_shape());
  if (HoldsStrings(dtype_)) {
    for (const std::string& v : flat<std::string>()) proto->add_string_val(v);
    return;
  }
  if (on_device()) return;  // no values: callers copy device tensors to the host first
  if (HoldsVariants(dtype_)) return;  // objects: a proto carries only dtype and shape
  if (TotalBytes() > 0) proto->set_tensor_content(raw_data(), TotalBytes());
}

std::string Tensor::SummarizeValue(int max_entries) const {
  if (!IsInitialized()) return "<uninitialized>";
  if (on_device()) return absl::StrCat("<in device memory of ", buffer_->allocator()->Name(), ">");
  std::vector<std::string> v = ValueStrings(*this, max_entries);
  std::string body = absl::StrJoin(v, " ");
  if (num_elements_ > max_entries) absl::StrAppend(&body, " ...");
  if (shape_.rank() == 0) return body;
  return absl::StrCat("[", body, "]");
}

std::string Tensor::DebugString(int max_entries) const {
  if (!IsInitialized()) return "Tensor<uninitialized>";
  return absl::StrCat(DataTypeName(dtype_), " ", shape_.DebugString(), " ",
                      SummarizeValue(max_entries));
}

}  // namespace sluice
