#include "training/checkpoint/structured_value.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"

namespace sluice {
namespace {

using ::tensorflow::StructuredValue;

std::string Join(const std::string& path, const std::string& part) {
  return path.empty() ? part : absl::StrCat(path, "/", part);
}

void Flatten(const StructuredValue& v, const std::string& path, std::vector<StructureLeaf>* out) {
  auto each = [&](const auto& values) {
    for (int i = 0; i < values.size(); ++i) Flatten(values.Get(i), Join(path, absl::StrCat(i)), out);
  };
  switch (v.kind_case()) {
    case StructuredValue::kListValue:
      each(v.list_value().values());
      return;
    case StructuredValue::kTupleValue:
      each(v.tuple_value().values());
      return;
    case StructuredValue::kNamedTupleValue:
      for (const auto& pair : v.named_tuple_value().values()) {
        Flatten(pair.value(), Join(path, pair.key()), out);
      }
      return;
    case StructuredValue::kDictValue: {
      std::vector<std::string> keys;
      for (const auto& [key, unused] : v.dict_value().fields()) keys.push_back(key);
      std::sort(keys.begin(), keys.end());
      for (const std::string& key : keys) {
        Flatten(v.dict_value().fields().at(key), Join(path, key), out);
      }
      return;
    }
    default:
      out->push_back({path, &v});
  }
}

}  // namespace

std::vector<StructureLeaf> FlattenStructure(const StructuredValue& value) {
  std::vector<StructureLeaf> leaves;
  Flatten(value, "", &leaves);
  return leaves;
}

std::string DescribeLeaf(const StructuredValue& leaf) {
  switch (leaf.kind_case()) {
    case StructuredValue::kTensorSpecValue: {
      const auto& spec = leaf.tensor_spec_value();
      absl::StatusOr<TensorShape> shape = TensorShape::FromProto(spec.shape());
      return absl::StrCat(DataTypeName(static_cast<DataType>(spec.dtype())),
                          shape.ok() ? shape->DebugString() : "<bad shape>");
    }
    case StructuredValue::kTypeSpecValue:
      return leaf.type_spec_value().type_spec_class_name().empty()
                 ? "a composite tensor"
                 : leaf.type_spec_value().type_spec_class_name();
    case StructuredValue::kBoolValue:
      return leaf.bool_value() ? "True" : "False";
    case StructuredValue::kInt64Value:
      return absl::StrCat(leaf.int64_value());
    case StructuredValue::kFloat64Value:
      return absl::StrCat(leaf.float64_value());
    case StructuredValue::kStringValue:
      return absl::StrCat("'", leaf.string_value(), "'");
    case StructuredValue::kNoneValue:
      return "None";
    case StructuredValue::kTensorDtypeValue:
      return DataTypeName(static_cast<DataType>(leaf.tensor_dtype_value()));
    case StructuredValue::kTensorShapeValue: {
      absl::StatusOr<TensorShape> shape = TensorShape::FromProto(leaf.tensor_shape_value());
      return shape.ok() ? shape->DebugString() : "<bad shape>";
    }
    case StructuredValue::kTensorValue:
      return "a tensor constant";
    default:
      return "an empty structure";
  }
}

}  // namespace sluice
