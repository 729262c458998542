// Variant: one element of a DT_VARIANT tensor, an immutable object of any
// type shared by every tensor that holds it (TensorFlow's `variant` dtype:
// a dataset, an optional, a TensorList).
//
//   struct RangeValue : VariantValue {
//     std::string TypeName() const override { return "Range"; }
//     int64_t n = 0;
//   };
//   Tensor t(DT_VARIANT, TensorShape({}));
//   t.scalar<Variant>() = Variant(std::make_shared<RangeValue>());
//   const RangeValue* r = t.scalar<Variant>().get<RangeValue>();  // nullptr: other type
//
// A variant tensor's elements are objects, not bytes: it never crosses a
// process (the wire and TensorProto refuse it) nor enters device memory.
// Thread-safe: values are const once shared; copies share them. A Variant
// that is its value's sole holder may change it in place (mutable_if_sole):
// nothing else can see the change.
#ifndef SLUICE_RUNTIME_VARIANT_H_
#define SLUICE_RUNTIME_VARIANT_H_

#include <atomic>
#include <memory>
#include <string>
#include <utility>

namespace sluice {

class VariantValue {
 public:
  virtual ~VariantValue() = default;
  // The kind of object, for errors ("expected a Dataset, got TensorList").
  virtual std::string TypeName() const = 0;
  virtual std::string DebugString() const { return TypeName(); }
};

class Variant {
 public:
  Variant() = default;
  explicit Variant(std::shared_ptr<const VariantValue> value) : value_(std::move(value)) {}

  bool empty() const { return value_ == nullptr; }
  // The value as T, or nullptr when it is empty or of another type.
  template <typename T>
  const T* get() const {
    return dynamic_cast<const T*>(value_.get());
  }
  // The value as a mutable T when this Variant is its only holder (as a
  // kernel that forwarded its input's buffer may find); nullptr when it is
  // shared, empty or of another type.
  template <typename T>
  T* mutable_if_sole() {
    if (value_.use_count() != 1) return nullptr;
    // Pairs with the release of the other holders' references, so their
    // reads happen before our writes.
    std::atomic_thread_fence(std::memory_order_acquire);
    return const_cast<T*>(dynamic_cast<const T*>(value_.get()));
  }
  // Shares the value, for holders that outlive the tensor.
  template <typename T>
  std::shared_ptr<const T> share() const {
    return std::dynamic_pointer_cast<const T>(value_);
  }
  std::string TypeName() const { return value_ ? value_->TypeName() : "empty"; }
  std::string DebugString() const { return value_ ? value_->DebugString() : "<empty variant>"; }

 private:
  std::shared_ptr<const VariantValue> value_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_VARIANT_H_
