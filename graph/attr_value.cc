#include "graph/attr_value.h"

#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace sluice {

AttrValue MakeAttr(int64_t v) {
  AttrValue a;
  a.set_i(v);
  return a;
}
AttrValue MakeAttr(float v) {
  AttrValue a;
  a.set_f(v);
  return a;
}
AttrValue MakeAttr(bool v) {
  AttrValue a;
  a.set_b(v);
  return a;
}
AttrValue MakeAttr(absl::string_view v) {
  AttrValue a;
  a.set_s(std::string(v));
  return a;
}
AttrValue MakeAttr(DataType v) {
  AttrValue a;
  a.set_type(v);
  return a;
}
AttrValue MakeAttr(const TensorShape& v) {
  AttrValue a;
  v.ToProto(a.mutable_shape());
  return a;
}
AttrValue MakeAttr(const ::tensorflow::TensorProto& v) {
  AttrValue a;
  *a.mutable_tensor() = v;
  return a;
}
AttrValue MakeAttr(absl::Span<const int64_t> v) {
  AttrValue a;
  auto* list = a.mutable_list();
  for (int64_t x : v) list->add_i(x);
  return a;
}
AttrValue MakeAttr(absl::Span<const int32_t> v) {
  AttrValue a;
  auto* list = a.mutable_list();
  for (int32_t x : v) list->add_i(x);
  return a;
}
AttrValue MakeAttr(absl::Span<const float> v) {
  AttrValue a;
  auto* list = a.mutable_list();
  for (float x : v) list->add_f(x);
  return a;
}
AttrValue MakeAttr(absl::Span<const DataType> v) {
  AttrValue a;
  auto* list = a.mutable_list();
  for (DataType x : v) list->add_type(x);
  return a;
}
AttrValue MakeAttr(absl::Span<const std::string> v) {
  AttrValue a;
  auto* list = a.mutable_list();
  for (const std::string& x : v) list->add_s(x);
  return a;
}
AttrValue MakeAttr(absl::Span<const TensorShape> v) {
  AttrValue a;
  auto* list = a.mutable_list();
  for (const TensorShape& x : v) x.ToProto(list->add_shape());
  return a;
}

AttrValue MakeAttr(const NameAttrList& v) {
  AttrValue a;
  *a.mutable_func() = v;
  return a;
}
AttrValue MakeAttr(absl::Span<const NameAttrList> v) {
  AttrValue a;
  auto* list = a.mutable_list();
  for (const NameAttrList& x : v) *list->add_func() = x;
  return a;
}

namespace {

absl::Status KindError(const AttrValue& value, absl::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat("holds ", AttrValueKind(value), ", expected ", want));
}

}  // namespace

std::string AttrValueKind(const AttrValue& value) {
  switch (value.value_case()) {
    case AttrValue::kS: return "string";
    case AttrValue::kI: return "int";
    case AttrValue::kF: return "float";
    case AttrValue::kB: return "bool";
    case AttrValue::kType: return "type";
    case AttrValue::kShape: return "shape";
    case AttrValue::kTensor: return "tensor";
    case AttrValue::kFunc: return "func";
    case AttrValue::kPlaceholder: return "placeholder";
    case AttrValue::kList: {
      const auto& l = value.list();
      if (l.s_size()) return "list(string)";
      if (l.i_size()) return "list(int)";
      if (l.f_size()) return "list(float)";
      if (l.b_size()) return "list(bool)";
      if (l.type_size()) return "list(type)";
      if (l.shape_size()) return "list(shape)";
      if (l.tensor_size()) return "list(tensor)";
      if (l.func_size()) return "list(func)";
      return "list";
    }
    default: return "nothing";
  }
}

template <>
absl::StatusOr<int64_t> AttrValueAs<int64_t>(const AttrValue& v) {
  if (v.value_case() != AttrValue::kI) return KindError(v, "int");
  return v.i();
}
template <>
absl::StatusOr<int32_t> AttrValueAs<int32_t>(const AttrValue& v) {
  if (v.value_case() != AttrValue::kI) return KindError(v, "int");
  if (v.i() > std::numeric_limits<int32_t>::max() || v.i() < std::numeric_limits<int32_t>::min()) {
    return absl::InvalidArgumentError(absl::StrCat("value ", v.i(), " does not fit in int32"));
  }
  return static_cast<int32_t>(v.i());
}
template <>
absl::StatusOr<float> AttrValueAs<float>(const AttrValue& v) {
  if (v.value_case() != AttrValue::kF) return KindError(v, "float");
  return v.f();
}
template <>
absl::StatusOr<bool> AttrValueAs<bool>(const AttrValue& v) {
  if (v.value_case() != AttrValue::kB) return KindError(v, "bool");
  return v.b();
}
template <>
absl::StatusOr<std::string> AttrValueAs<std::string>(const AttrValue& v) {
  if (v.value_case() != AttrValue::kS) return KindError(v, "string");
  return v.s();
}
template <>
absl::StatusOr<DataType> AttrValueAs<DataType>(const AttrValue& v) {
  if (v.value_case() != AttrValue::kType) return KindError(v, "type");
  return v.type();
}
template <>
absl::StatusOr<TensorShape> AttrValueAs<TensorShape>(const AttrValue& v) {
  if (v.value_case() != AttrValue::kShape) return KindError(v, "shape");
  return TensorShape::FromProto(v.shape());
}
template <>
absl::StatusOr<::tensorflow::TensorProto> AttrValueAs<::tensorflow::TensorProto>(
    const AttrValue& v) {
  if (v.value_case() != AttrValue::kTensor) return KindError(v, "tensor");
  return v.tensor();
}

template <>
absl::StatusOr<NameAttrList> AttrValueAs<NameAttrList>(const AttrValue& v) {
  if (v.value_case() != AttrValue::kFunc) return KindError(v, "func");
  return v.func();
}

// An empty list may arrive as an unset value (a default of "[]" written by
// another producer), so lists accept kList and VALUE_NOT_SET.
#define SLUICE_LIST_ATTR_(TYPE, FIELD, KIND)                                   \
  template <>                                                                 \
  absl::StatusOr<std::vector<TYPE>> AttrValueAs<std::vector<TYPE>>(           \
      const AttrValue& v) {                                                   \
    if (v.value_case() != AttrValue::kList &&                                 \
        v.value_case() != AttrValue::VALUE_NOT_SET) {                         \
      return KindError(v, KIND);                                              \
    }                                                                         \
    std::vector<TYPE> out;                                                    \
    for (const auto& x : v.list().FIELD()) out.push_back(static_cast<TYPE>(x)); \
    return out;                                                               \
  }

SLUICE_LIST_ATTR_(int64_t, i, "list(int)")
SLUICE_LIST_ATTR_(int32_t, i, "list(int)")
SLUICE_LIST_ATTR_(float, f, "list(float)")
SLUICE_LIST_ATTR_(DataType, type, "list(type)")
SLUICE_LIST_ATTR_(std::string, s, "list(string)")
SLUICE_LIST_ATTR_(NameAttrList, func, "list(func)")
#undef SLUICE_LIST_ATTR_

template <>
absl::StatusOr<std::vector<TensorShape>> AttrValueAs<std::vector<TensorShape>>(
    const AttrValue& v) {
  if (v.value_case() != AttrValue::kList && v.value_case() != AttrValue::VALUE_NOT_SET) {
    return KindError(v, "list(shape)");
  }
  std::vector<TensorShape> out;
  for (const auto& p : v.list().shape()) {
    ASSIGN_OR_RETURN(TensorShape s, TensorShape::FromProto(p));
    out.push_back(std::move(s));
  }
  return out;
}

template <typename T>
absl::StatusOr<T> GetAttr(const AttrMap& attrs, absl::string_view name) {
  auto it = attrs.find(std::string(name));
  if (it == attrs.end()) {
    return absl::NotFoundError(absl::StrCat("attr '", name, "' is missing"));
  }
  absl::StatusOr<T> v = AttrValueAs<T>(it->second);
  if (!v.ok()) return AddContext(v.status(), absl::StrCat("attr '", name, "'"));
  return v;
}

template absl::StatusOr<int64_t> GetAttr<int64_t>(const AttrMap&, absl::string_view);
template absl::StatusOr<int32_t> GetAttr<int32_t>(const AttrMap&, absl::string_view);
template absl::StatusOr<float> GetAttr<float>(const AttrMap&, absl::string_view);
template absl::StatusOr<bool> GetAttr<bool>(const AttrMap&, absl::string_view);
template absl::StatusOr<std::string> GetAttr<std::string>(const AttrMap&, absl::string_view);
template absl::StatusOr<DataType> GetAttr<DataType>(const AttrMap&, absl::string_view);
template absl::StatusOr<TensorShape> GetAttr<TensorShape>(const AttrMap&, absl::string_view);
template absl::StatusOr<::tensorflow::TensorProto> GetAttr<::tensorflow::TensorProto>(
    const AttrMap&, absl::string_view);
template absl::StatusOr<std::vector<int64_t>> GetAttr<std::vector<int64_t>>(const AttrMap&,
                                                                           absl::string_view);
template absl::StatusOr<std::vector<int32_t>> GetAttr<std::vector<int32_t>>(const AttrMap&,
                                                                           absl::string_view);
template absl::StatusOr<std::vector<float>> GetAttr<std::vector<float>>(const AttrMap&,
                                                                       absl::string_view);
template absl::StatusOr<std::vector<DataType>> GetAttr<std::vector<DataType>>(const AttrMap&,
                                                                             absl::string_view);
template absl::StatusOr<std::vector<std::string>> GetAttr<std::vector<std::string>>(
    const AttrMap&, absl::string_view);
template absl::StatusOr<std::vector<TensorShape>> GetAttr<std::vector<TensorShape>>(
    const AttrMap&, absl::string_view);
template absl::StatusOr<NameAttrList> GetAttr<NameAttrList>(const AttrMap&, absl::string_view);
template absl::StatusOr<std::vector<NameAttrList>> GetAttr<std::vector<NameAttrList>>(
    const AttrMap&, absl::string_view);

namespace {

// "f" or "f[T=float, N=2]" (attrs sorted by name).
std::string FuncDebugString(const NameAttrList& f) {
  if (f.attr().empty()) return f.name();
  std::map<std::string, const AttrValue*> sorted;
  for (const auto& [name, value] : f.attr()) sorted[name] = &value;
  std::vector<std::string> parts;
  for (const auto& [name, value] : sorted) {
    parts.push_back(absl::StrCat(name, "=", AttrValueDebugString(*value)));
  }
  return absl::StrCat(f.name(), "[", absl::StrJoin(parts, ", "), "]");
}

}  // namespace

std::string AttrValueDebugString(const AttrValue& v) {
  switch (v.value_case()) {
    case AttrValue::kS: return absl::StrCat("'", v.s(), "'");
    case AttrValue::kI: return absl::StrCat(v.i());
    case AttrValue::kF: return absl::StrCat(v.f());
    case AttrValue::kB: return v.b() ? "true" : "false";
    case AttrValue::kType: return DataTypeName(v.type());
    case AttrValue::kShape: {
      absl::StatusOr<TensorShape> s = TensorShape::FromProto(v.shape());
      return s.ok() ? s->DebugString() : "<bad shape>";
    }
    case AttrValue::kTensor: return "<tensor>";
    case AttrValue::kFunc: return FuncDebugString(v.func());
    case AttrValue::kPlaceholder: return absl::StrCat("$", v.placeholder());
    case AttrValue::kList: {
      const auto& l = v.list();
      std::vector<std::string> parts;
      for (const auto& x : l.s()) parts.push_back(absl::StrCat("'", x, "'"));
      for (int64_t x : l.i()) parts.push_back(absl::StrCat(x));
      for (float x : l.f()) parts.push_back(absl::StrCat(x));
      for (bool x : l.b()) parts.push_back(x ? "true" : "false");
      for (int x : l.type()) parts.push_back(DataTypeName(static_cast<DataType>(x)));
      for (int k = 0; k < l.shape_size(); ++k) parts.push_back("<shape>");
      for (const auto& f : l.func()) parts.push_back(FuncDebugString(f));
      return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
    }
    default: return "<unset>";
  }
}

}  // namespace sluice
