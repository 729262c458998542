#include "graph/op_def.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

absl::string_view Trim(absl::string_view s) { return absl::StripAsciiWhitespace(s); }

// Splits "name: rest" at the first ':'.
absl::Status SplitNameKind(absl::string_view spec, absl::string_view* name,
                           absl::string_view* rest) {
  size_t colon = spec.find(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError("expected 'name: kind'");
  }
  *name = Trim(spec.substr(0, colon));
  *rest = Trim(spec.substr(colon + 1));
  if (name->empty()) return absl::InvalidArgumentError("empty name");
  return absl::OkStatus();
}

bool IsListKind(absl::string_view kind) { return absl::StartsWith(kind, "list("); }

// "{float, double}" or "{'SAME', 'VALID'}" -> allowed values of kind
// "type" or "string".
absl::StatusOr<std::pair<std::string, AttrValue>> ParseSet(absl::string_view set) {
  set = Trim(set);
  if (!absl::ConsumePrefix(&set, "{") || !absl::ConsumeSuffix(&set, "}")) {
    return absl::InvalidArgumentError("bad set");
  }
  AttrValue allowed;
  std::string kind;
  for (absl::string_view item : absl::StrSplit(set, ',')) {
    item = Trim(item);
    if (item.empty()) continue;
    if (item.front() == '\'' || item.front() == '"') {
      if (item.size() < 2) return absl::InvalidArgumentError("bad string in set");
      kind = "string";
      allowed.mutable_list()->add_s(std::string(item.substr(1, item.size() - 2)));
    } else {
      kind = "type";
      ASSIGN_OR_RETURN(DataType t, DataTypeFromString(item));
      allowed.mutable_list()->add_type(t);
    }
  }
  if (kind.empty()) return absl::InvalidArgumentError("empty set");
  return std::make_pair(kind, allowed);
}

absl::StatusOr<AttrValue> ParseScalarDefault(absl::string_view kind, absl::string_view text) {
  text = Trim(text);
  if (kind == "int") {
    int64_t v;
    if (!absl::SimpleAtoi(text, &v)) return absl::InvalidArgumentError("bad int default");
    return MakeAttr(v);
  }
  if (kind == "float") {
    float v;
    if (!absl::SimpleAtof(text, &v)) return absl::InvalidArgumentError("bad float default");
    return MakeAttr(v);
  }
  if (kind == "bool") {
    if (text == "true") return MakeAttr(true);
    if (text == "false") return MakeAttr(false);
    return absl::InvalidArgumentError("bad bool default");
  }
  if (kind == "string") {
    if (text.size() < 2 || (text.front() != '\'' && text.front() != '"')) {
      return absl::InvalidArgumentError("string default must be quoted");
    }
    return MakeAttr(text.substr(1, text.size() - 2));
  }
  if (kind == "type") {
    ASSIGN_OR_RETURN(DataType t, DataTypeFromString(text));
    return MakeAttr(t);
  }
  if (kind == "shape") {
    if (text == "unknown" || text == "<unknown>") return MakeAttr(TensorShape::Unknown());
    if (!absl::ConsumePrefix(&text, "[") || !absl::ConsumeSuffix(&text, "]")) {
      return absl::InvalidArgumentError("bad shape default");
    }
    TensorShape s;
    for (absl::string_view d : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
      int64_t v;
      if (!absl::SimpleAtoi(Trim(d), &v)) return absl::InvalidArgumentError("bad shape default");
      s.AddDim(v);
    }
    return MakeAttr(s);
  }
  return absl::InvalidArgumentError(absl::StrCat("no default allowed for kind ", kind));
}

absl::StatusOr<AttrValue> ParseDefault(absl::string_view kind, absl::string_view text) {
  if (!IsListKind(kind)) return ParseScalarDefault(kind, text);
  absl::string_view inner = kind.substr(5, kind.size() - 6);
  text = Trim(text);
  if (!absl::ConsumePrefix(&text, "[") || !absl::ConsumeSuffix(&text, "]")) {
    return absl::InvalidArgumentError("list default must be [..]");
  }
  AttrValue out;
  out.mutable_list();  // present even when empty
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    ASSIGN_OR_RETURN(AttrValue v, ParseScalarDefault(inner, item));
    auto* l = out.mutable_list();
    switch (v.value_case()) {
      case AttrValue::kI: l->add_i(v.i()); break;
      case AttrValue::kF: l->add_f(v.f()); break;
      case AttrValue::kB: l->add_b(v.b()); break;
      case AttrValue::kS: l->add_s(v.s()); break;
      case AttrValue::kType: l->add_type(v.type()); break;
      case AttrValue::kShape: *l->add_shape() = v.shape(); break;
      default: return absl::InvalidArgumentError("unsupported list default");
    }
  }
  return out;
}

absl::StatusOr<AttrDef> ParseAttr(absl::string_view spec) {
  absl::string_view name, rest;
  RETURN_IF_ERROR(SplitNameKind(spec, &name, &rest));
  AttrDef def;
  def.name = std::string(name);
  absl::string_view default_text;
  size_t eq = rest.find('=');
  // ">=" is a minimum, not a default.
  while (eq != absl::string_view::npos && eq > 0 && rest[eq - 1] == '>') {
    eq = rest.find('=', eq + 1);
  }
  if (eq != absl::string_view::npos) {
    default_text = Trim(rest.substr(eq + 1));
    rest = Trim(rest.substr(0, eq));
  }
  size_t ge = rest.find(">=");
  if (ge != absl::string_view::npos) {
    int64_t min;
    if (!absl::SimpleAtoi(Trim(rest.substr(ge + 2)), &min)) {
      return absl::InvalidArgumentError("bad minimum");
    }
    def.has_minimum = true;
    def.minimum = min;
    rest = Trim(rest.substr(0, ge));
  }
  if (!rest.empty() && rest.front() == '{') {
    ASSIGN_OR_RETURN(auto kind_allowed, ParseSet(rest));
    def.type = kind_allowed.first;
    def.allowed_values = kind_allowed.second;
  } else if (absl::StartsWith(rest, "list({")) {
    ASSIGN_OR_RETURN(auto kind_allowed, ParseSet(rest.substr(5, rest.size() - 6)));
    def.type = absl::StrCat("list(", kind_allowed.first, ")");
    def.allowed_values = kind_allowed.second;
  } else {
    static constexpr absl::string_view kKinds[] = {
        "int", "float", "bool", "string", "type", "shape", "tensor", "func",
        "list(int)", "list(float)", "list(bool)", "list(string)", "list(type)",
        "list(shape)", "list(tensor)", "list(func)"};
    bool known = false;
    for (absl::string_view k : kKinds) known |= (rest == k);
    if (!known) return absl::InvalidArgumentError(absl::StrCat("unknown attr kind '", rest, "'"));
    def.type = std::string(rest);
  }
  if (!default_text.empty()) {
    ASSIGN_OR_RETURN(AttrValue d, ParseDefault(def.type, default_text));
    RETURN_IF_ERROR(ValidateAttrValue(def, d));
    def.default_value = std::move(d);
  }
  return def;
}

absl::StatusOr<ArgDef> ParseArg(absl::string_view spec, const std::vector<AttrDef>& attrs) {
  absl::string_view name, rest;
  RETURN_IF_ERROR(SplitNameKind(spec, &name, &rest));
  ArgDef arg;
  arg.name = std::string(name);
  if (absl::ConsumePrefix(&rest, "Ref(")) {
    if (!absl::ConsumeSuffix(&rest, ")")) return absl::InvalidArgumentError("bad Ref(...)");
    arg.is_ref = true;
    rest = Trim(rest);
  }
  auto find_attr = [&](absl::string_view n) -> const AttrDef* {
    for (const AttrDef& a : attrs) {
      if (a.name == n) return &a;
    }
    return nullptr;
  };
  size_t star = rest.find('*');
  if (star != absl::string_view::npos) {
    absl::string_view n = Trim(rest.substr(0, star));
    const AttrDef* na = find_attr(n);
    if (na == nullptr || na->type != "int") {
      return absl::InvalidArgumentError(absl::StrCat("'", n, "' must be an int attr"));
    }
    arg.number_attr = std::string(n);
    rest = Trim(rest.substr(star + 1));
  }
  if (const AttrDef* a = find_attr(rest)) {
    if (a->type == "type") {
      arg.type_attr = std::string(rest);
    } else if (a->type == "list(type)" && arg.number_attr.empty()) {
      arg.type_list_attr = std::string(rest);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("attr '", rest, "' of kind ", a->type, " cannot type an argument"));
    }
    return arg;
  }
  absl::StatusOr<DataType> t = DataTypeFromString(rest);
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", rest, "' is neither a type nor a declared type attr"));
  }
  arg.type = *t;
  return arg;
}

}  // namespace

const AttrDef* OpDef::FindAttr(absl::string_view attr_name) const {
  for (const AttrDef& a : attrs) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

OpDefBuilder::OpDefBuilder(std::string name) : name_(std::move(name)) {}

OpDefBuilder& OpDefBuilder::Input(std::string spec) {
  input_specs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string spec) {
  output_specs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(std::string spec) {
  attr_specs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsStateful() {
  is_stateful_ = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsCommutative() {
  is_commutative_ = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetAllowsUninitializedInput() {
  allows_uninitialized_input_ = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsVariable() {
  is_variable_ = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsPlaceholder() {
  is_placeholder_ = true;
  return *this;
}

OpDefBuilder& OpDefBuilder::SetAllowedInGraphFiles() {
  allowed_in_graph_files_ = true;
  return *this;
}

OpDefBuilder& OpDefBuilder::SetControlFlowRole(ControlFlowRole role) {
  control_flow_ = role;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetCallsFunction(std::string attr) {
  call_function_attr_ = std::move(attr);
  return *this;
}

OpDefBuilder& OpDefBuilder::SetShapeFn(ShapeFn fn) {
  shape_fn_ = std::move(fn);
  return *this;
}

OpDefBuilder& OpDefBuilder::SetAttrDefault(std::string attr, AttrValue value) {
  attr_defaults_.emplace_back(std::move(attr), std::move(value));
  return *this;
}

absl::StatusOr<OpDef> OpDefBuilder::Build() const {
  OpDef def;
  def.name = name_;
  def.is_stateful = is_stateful_;
  def.is_commutative = is_commutative_;
  def.allows_uninitialized_input = allows_uninitialized_input_;
  def.is_variable = is_variable_;
  def.is_placeholder = is_placeholder_;
  def.allowed_in_graph_files = allowed_in_graph_files_;
  def.control_flow = control_flow_;
  def.call_function_attr = call_function_attr_;
  def.shape_fn = shape_fn_;
  auto context = [&](absl::string_view what, const std::string& spec) {
    return absl::StrCat("op '", name_, "' ", what, " \"", spec, "\"");
  };
  for (const std::string& spec : attr_specs_) {
    absl::StatusOr<AttrDef> a = ParseAttr(spec);
    if (!a.ok()) return AddContext(a.status(), context("attr", spec));
    if (def.FindAttr(a->name) != nullptr) {
      return absl::InvalidArgumentError(context("declares attr twice:", spec));
    }
    def.attrs.push_back(*std::move(a));
  }
  for (const auto& [attr_name, value] : attr_defaults_) {
    // A named copy: clang 14 cannot capture a structured binding.
    const std::string& attr = attr_name;
    auto it = std::find_if(def.attrs.begin(), def.attrs.end(),
                           [&](const AttrDef& a) { return a.name == attr; });
    if (it == def.attrs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("op '", name_, "' has no attr '", attr, "' to give a default"));
    }
    it->default_value = value;
  }
  if (!call_function_attr_.empty()) {
    const AttrDef* f = def.FindAttr(call_function_attr_);
    if (f == nullptr || f->type != "func") {
      return absl::InvalidArgumentError(absl::StrCat(
          "op '", name_, "' calls the function of attr '", call_function_attr_,
          "', which is not a func attr of the op"));
    }
  }
  for (const std::string& spec : input_specs_) {
    absl::StatusOr<ArgDef> a = ParseArg(spec, def.attrs);
    if (!a.ok()) return AddContext(a.status(), context("input", spec));
    def.inputs.push_back(*std::move(a));
  }
  for (const std::string& spec : output_specs_) {
    absl::StatusOr<ArgDef> a = ParseArg(spec, def.attrs);
    if (!a.ok()) return AddContext(a.status(), context("output", spec));
    def.outputs.push_back(*std::move(a));
  }
  return def;
}

namespace {

bool IsKnownAttrKind(absl::string_view kind) {
  static constexpr absl::string_view kKinds[] = {
      "int", "float", "bool", "string", "type", "shape", "tensor", "func",
      "list(int)", "list(float)", "list(bool)", "list(string)", "list(type)",
      "list(shape)", "list(tensor)", "list(func)"};
  for (absl::string_view k : kKinds) {
    if (kind == k) return true;
  }
  return false;
}

absl::StatusOr<ArgDef> ArgFromProto(const ::tensorflow::OpDef::ArgDef& proto,
                                    const std::vector<AttrDef>& attrs) {
  ArgDef arg;
  arg.name = proto.name();
  arg.is_ref = proto.is_ref();
  if (arg.name.empty()) return absl::InvalidArgumentError("an argument has no name");
  auto context = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("argument '", arg.name, "' ", what));
  };
  auto attr_kind = [&](const std::string& name) -> std::string {
    for (const AttrDef& a : attrs) {
      if (a.name == name) return a.type;
    }
    return "";
  };
  int typings = (proto.type() != DT_INVALID) + !proto.type_attr().empty() +
                !proto.type_list_attr().empty();
  if (typings != 1) {
    return context("needs exactly one of type, type_attr and type_list_attr");
  }
  if (proto.type() != DT_INVALID) {
    if (!::tensorflow::DataType_IsValid(proto.type()) || IsRefType(proto.type())) {
      return context(absl::StrCat("has an unknown type (", static_cast<int>(proto.type()), ")"));
    }
    arg.type = proto.type();
  }
  if (!proto.type_attr().empty()) {
    if (attr_kind(proto.type_attr()) != "type") {
      return context(absl::StrCat("is typed by '", proto.type_attr(),
                                  "', which is not a type attr of the signature"));
    }
    arg.type_attr = proto.type_attr();
  }
  if (!proto.type_list_attr().empty()) {
    if (attr_kind(proto.type_list_attr()) != "list(type)") {
      return context(absl::StrCat("is typed by '", proto.type_list_attr(),
                                  "', which is not a list(type) attr of the signature"));
    }
    if (!proto.number_attr().empty()) return context("has both number_attr and type_list_attr");
    arg.type_list_attr = proto.type_list_attr();
  }
  if (!proto.number_attr().empty()) {
    if (attr_kind(proto.number_attr()) != "int") {
      return context(absl::StrCat("is counted by '", proto.number_attr(),
                                  "', which is not an int attr of the signature"));
    }
    arg.number_attr = proto.number_attr();
  }
  return arg;
}

}  // namespace

absl::StatusOr<OpDef> OpDefFromSignature(const ::tensorflow::OpDef& signature) {
  OpDef def;
  def.name = signature.name();
  def.is_stateful = signature.is_stateful();
  def.is_commutative = signature.is_commutative();
  def.allows_uninitialized_input = signature.allows_uninitialized_input();
  def.is_function = true;
  def.control_outputs.assign(signature.control_output().begin(), signature.control_output().end());
  auto fail = [&](const absl::Status& s) {
    return AddContext(s, absl::StrCat("signature of function '", signature.name(), "'"));
  };
  if (def.name.empty()) return absl::InvalidArgumentError("a function signature has no name");
  for (const auto& a : signature.attr()) {
    AttrDef attr;
    attr.name = a.name();
    attr.type = a.type();
    if (attr.name.empty()) return fail(absl::InvalidArgumentError("an attr has no name"));
    if (!IsKnownAttrKind(attr.type)) {
      return fail(absl::InvalidArgumentError(
          absl::StrCat("attr '", attr.name, "' has unknown kind '", attr.type, "'")));
    }
    if (def.FindAttr(attr.name) != nullptr) {
      return fail(absl::InvalidArgumentError(absl::StrCat("attr '", attr.name, "' twice")));
    }
    if (a.has_allowed_values()) attr.allowed_values = a.allowed_values();
    attr.has_minimum = a.has_minimum();
    attr.minimum = a.minimum();
    if (a.has_default_value()) {
      absl::Status s = ValidateAttrValue(attr, a.default_value());
      if (!s.ok()) return fail(AddContext(s, "default value"));
      attr.default_value = a.default_value();
    }
    def.attrs.push_back(std::move(attr));
  }
  absl::flat_hash_set<std::string> names;
  for (const auto& a : signature.input_arg()) {
    absl::StatusOr<ArgDef> arg = ArgFromProto(a, def.attrs);
    if (!arg.ok()) return fail(arg.status());
    if (!names.insert(arg->name).second) {
      return fail(absl::InvalidArgumentError(absl::StrCat("argument '", arg->name, "' twice")));
    }
    def.inputs.push_back(*std::move(arg));
  }
  names.clear();
  for (const auto& a : signature.output_arg()) {
    absl::StatusOr<ArgDef> arg = ArgFromProto(a, def.attrs);
    if (!arg.ok()) return fail(arg.status());
    if (!names.insert(arg->name).second) {
      return fail(absl::InvalidArgumentError(absl::StrCat("output '", arg->name, "' twice")));
    }
    def.outputs.push_back(*std::move(arg));
  }
  return def;
}

absl::Status ValidateAttrValue(const AttrDef& def, const AttrValue& value) {
  std::string kind = AttrValueKind(value);
  bool list_def = IsListKind(def.type);
  bool kind_ok = kind == def.type ||
                 (list_def && (kind == "list" || value.value_case() == AttrValue::VALUE_NOT_SET));
  if (!kind_ok) {
    return absl::InvalidArgumentError(absl::StrCat("attr '", def.name, "' holds ", kind,
                                                   ", expected ", def.type));
  }
  if (def.type == "func" && value.func().name().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("attr '", def.name, "' names no function"));
  }
  if (def.type == "list(func)") {
    for (const auto& f : value.list().func()) {
      if (f.name().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("attr '", def.name, "' holds a function with no name"));
      }
    }
  }
  if (def.allowed_values.has_value()) {
    const auto& allowed = def.allowed_values->list();
    if (def.type == "type" || def.type == "list(type)") {
      std::vector<int> types;
      if (def.type == "type") {
        types.push_back(value.type());
      } else {
        types.assign(value.list().type().begin(), value.list().type().end());
      }
      for (int t : types) {
        bool found = false;
        for (int a : allowed.type()) found |= (a == t);
        if (!found) {
          return absl::InvalidArgumentError(
              absl::StrCat("attr '", def.name, "' has type ",
                           DataTypeName(static_cast<DataType>(t)), ", not one of ",
                           AttrValueDebugString(*def.allowed_values)));
        }
      }
    } else if (def.type == "string") {
      bool found = false;
      for (const std::string& a : allowed.s()) found |= (a == value.s());
      if (!found) {
        return absl::InvalidArgumentError(absl::StrCat("attr '", def.name, "' is '", value.s(),
                                                       "', not one of ",
                                                       AttrValueDebugString(*def.allowed_values)));
      }
    }
  }
  if (def.has_minimum) {
    int64_t got = 0;
    if (def.type == "int") {
      got = value.i();
    } else {
      const auto& l = value.list();
      got = l.i_size() + l.f_size() + l.b_size() + l.s_size() + l.type_size() + l.shape_size() +
            l.tensor_size() + l.func_size();
    }
    if (got < def.minimum) {
      return absl::InvalidArgumentError(absl::StrCat("attr '", def.name, "' is ", got,
                                                     ", less than its minimum ", def.minimum));
    }
  }
  return absl::OkStatus();
}

}  // namespace sluice
