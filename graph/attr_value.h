// Node attributes: building AttrValue protos from C++ values and reading them
// back with type checks.
//
//   AttrMap attrs;
//   attrs["transpose_a"] = MakeAttr(true);
//   attrs["T"] = MakeAttr(DT_FLOAT);
//   ASSIGN_OR_RETURN(bool ta, GetAttr<bool>(attrs, "transpose_a"));
//   ASSIGN_OR_RETURN(auto perm, GetAttr<std::vector<int64_t>>(attrs, "perm"));
//
// Errors: NotFound when the attr is absent, InvalidArgument when it holds
// another kind of value; both name the attr. Thread-safe: pure functions.
#ifndef SLUICE_GRAPH_ATTR_VALUE_H_
#define SLUICE_GRAPH_ATTR_VALUE_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "google/protobuf/map.h"
#include "graph/proto/attr_value.pb.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"

namespace sluice {

using AttrValue = ::tensorflow::AttrValue;
using AttrMap = ::google::protobuf::Map<std::string, AttrValue>;
// A function-valued attr: a library function's name and the attrs it is
// instantiated with (TensorFlow's NameAttrList; attr kind "func").
using NameAttrList = ::tensorflow::NameAttrList;

AttrValue MakeAttr(int64_t v);
inline AttrValue MakeAttr(int v) { return MakeAttr(static_cast<int64_t>(v)); }
AttrValue MakeAttr(float v);
AttrValue MakeAttr(bool v);
AttrValue MakeAttr(absl::string_view v);
inline AttrValue MakeAttr(const char* v) { return MakeAttr(absl::string_view(v)); }
inline AttrValue MakeAttr(const std::string& v) { return MakeAttr(absl::string_view(v)); }
AttrValue MakeAttr(DataType v);
AttrValue MakeAttr(const TensorShape& v);
AttrValue MakeAttr(const ::tensorflow::TensorProto& v);
AttrValue MakeAttr(absl::Span<const int64_t> v);
AttrValue MakeAttr(absl::Span<const int32_t> v);
AttrValue MakeAttr(absl::Span<const float> v);
AttrValue MakeAttr(absl::Span<const DataType> v);
AttrValue MakeAttr(absl::Span<const std::string> v);
AttrValue MakeAttr(absl::Span<const TensorShape> v);
inline AttrValue MakeAttr(const std::vector<int64_t>& v) { return MakeAttr(absl::MakeConstSpan(v)); }
inline AttrValue MakeAttr(const std::vector<int32_t>& v) { return MakeAttr(absl::MakeConstSpan(v)); }
inline AttrValue MakeAttr(const std::vector<float>& v) { return MakeAttr(absl::MakeConstSpan(v)); }
inline AttrValue MakeAttr(const std::vector<DataType>& v) { return MakeAttr(absl::MakeConstSpan(v)); }
inline AttrValue MakeAttr(const std::vector<std::string>& v) { return MakeAttr(absl::MakeConstSpan(v)); }
inline AttrValue MakeAttr(const std::vector<TensorShape>& v) { return MakeAttr(absl::MakeConstSpan(v)); }
inline AttrValue MakeAttr(const AttrValue& v) { return v; }
AttrValue MakeAttr(const NameAttrList& v);
AttrValue MakeAttr(absl::Span<const NameAttrList> v);
inline AttrValue MakeAttr(const std::vector<NameAttrList>& v) { return MakeAttr(absl::MakeConstSpan(v)); }

// Supported T: int64_t, int32_t (range-checked), float, bool, std::string,
// DataType, TensorShape, tensorflow::TensorProto, std::vector<int64_t>,
// std::vector<int32_t>, std::vector<float>, std::vector<DataType>,
// std::vector<std::string>, std::vector<TensorShape>, NameAttrList ("func"),
// std::vector<NameAttrList> ("list(func)").
template <typename T>
absl::StatusOr<T> GetAttr(const AttrMap& attrs, absl::string_view name);

// Reads a single attr value as T (same T as above).
template <typename T>
absl::StatusOr<T> AttrValueAs(const AttrValue& value);

// "int", "list(int)", "type", ... : the kind of value `value` holds, in op
// spec spelling; an empty list answers "list".
std::string AttrValueKind(const AttrValue& value);

// Short human-readable form: "true", "DT_FLOAT"→"float", "[1,2]", "'SAME'".
std::string AttrValueDebugString(const AttrValue& value);

}  // namespace sluice

#endif  // SLUICE_GRAPH_ATTR_VALUE_H_
