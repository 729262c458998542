#include "graph/op_def_proto.h"

namespace sluice {
namespace {

void ArgToProto(const ArgDef& arg, ::tensorflow::OpDef::ArgDef* out) {
  out->set_name(arg.name);
  if (arg.type != DT_INVALID) out->set_type(static_cast<::tensorflow::DataType>(arg.type));
  out->set_type_attr(arg.type_attr);
  out->set_number_attr(arg.number_attr);
  out->set_type_list_attr(arg.type_list_attr);
  out->set_is_ref(arg.is_ref);
}

}  // namespace

::tensorflow::OpDef OpDefToProto(const OpDef& def) {
  ::tensorflow::OpDef out;
  out.set_name(def.name);
  for (const ArgDef& a : def.inputs) ArgToProto(a, out.add_input_arg());
  for (const ArgDef& a : def.outputs) ArgToProto(a, out.add_output_arg());
  for (const std::string& c : def.control_outputs) out.add_control_output(c);
  for (const AttrDef& a : def.attrs) {
    ::tensorflow::OpDef::AttrDef* attr = out.add_attr();
    attr->set_name(a.name);
    attr->set_type(a.type);
    if (a.default_value) *attr->mutable_default_value() = *a.default_value;
    if (a.allowed_values) *attr->mutable_allowed_values() = *a.allowed_values;
    attr->set_has_minimum(a.has_minimum);
    attr->set_minimum(a.minimum);
  }
  out.set_is_stateful(def.is_stateful);
  out.set_is_commutative(def.is_commutative);
  out.set_allows_uninitialized_input(def.allows_uninitialized_input);
  return out;
}

}  // namespace sluice
