#include "graph/scope.h"

#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"

namespace sluice {

// ---------------------------------------------------------------- Output

DataType Output::dtype() const { return node ? node->output_type(index) : DT_INVALID; }

const TensorShape& Output::shape() const {
  static const TensorShape* const kUnknown = new TensorShape(TensorShape::Unknown());
  return node ? node->output_shape(index) : *kUnknown;
}

std::string Output::name() const {
  if (!node) return "<invalid>";
  return absl::StrCat(node->name(), ":", index);
}

// ---------------------------------------------------------------- Input

namespace {

template <typename T>
::tensorflow::TensorProto MakeLiteral(DataType dtype, std::initializer_list<T> values,
                                      bool scalar) {
  ::tensorflow::TensorProto p;
  p.set_dtype(dtype);
  if (!scalar) p.mutable_tensor_shape()->add_dim()->set_size(values.size());
  for (T v : values) {
    if constexpr (std::is_same_v<T, float>) p.add_float_val(v);
    if constexpr (std::is_same_v<T, double>) p.add_double_val(v);
    if constexpr (std::is_same_v<T, int32_t>) p.add_int_val(v);
    if constexpr (std::is_same_v<T, int64_t>) p.add_int64_val(v);
    if constexpr (std::is_same_v<T, bool>) p.add_bool_val(v);
  }
  return p;
}

// The literal's values as doubles (int64 kept exact up to 2^53).
std::vector<double> LiteralValues(const ::tensorflow::TensorProto& p) {
  std::vector<double> v;
  for (float x : p.float_val()) v.push_back(x);
  for (double x : p.double_val()) v.push_back(x);
  for (int32_t x : p.int_val()) v.push_back(x);
  for (int64_t x : p.int64_val()) v.push_back(static_cast<double>(x));
  for (bool x : p.bool_val()) v.push_back(x ? 1 : 0);
  return v;
}

absl::StatusOr<::tensorflow::TensorProto> ConvertLiteral(const ::tensorflow::TensorProto& p,
                                                         DataType to) {
  if (p.dtype() == to) return p;
  if (p.dtype() == DT_STRING || to == DT_STRING) {
    return absl::InvalidArgumentError(absl::StrCat("a ", DataTypeName(p.dtype()),
                                                   " literal cannot become ", DataTypeName(to)));
  }
  if (!p.tensor_content().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("a ", DataTypeName(p.dtype()),
                                                   " literal tensor cannot become ",
                                                   DataTypeName(to)));
  }
  ::tensorflow::TensorProto out;
  out.set_dtype(to);
  *out.mutable_tensor_shape() = p.tensor_shape();
  for (double x : LiteralValues(p)) {
    switch (to) {
      case DT_FLOAT: out.add_float_val(static_cast<float>(x)); break;
      case DT_DOUBLE: out.add_double_val(x); break;
      case DT_INT32:
      case DT_INT8:
      case DT_UINT8:
      case DT_INT16: out.add_int_val(static_cast<int32_t>(x)); break;
      case DT_INT64: out.add_int64_val(static_cast<int64_t>(x)); break;
      case DT_BOOL: out.add_bool_val(x != 0); break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("a literal cannot become ", DataTypeName(to)));
    }
  }
  return out;
}

}  // namespace

Input::Input(float v) : is_literal_(true), literal_(MakeLiteral<float>(DT_FLOAT, {v}, true)) {}
Input::Input(double v)
    : is_literal_(true), literal_(MakeLiteral<double>(DT_DOUBLE, {v}, true)) {}
Input::Input(int32_t v)
    : is_literal_(true), literal_(MakeLiteral<int32_t>(DT_INT32, {v}, true)) {}
Input::Input(int64_t v)
    : is_literal_(true), literal_(MakeLiteral<int64_t>(DT_INT64, {v}, true)) {}
Input::Input(bool v) : is_literal_(true), literal_(MakeLiteral<bool>(DT_BOOL, {v}, true)) {}
Input::Input(std::initializer_list<float> v)
    : is_literal_(true), literal_(MakeLiteral<float>(DT_FLOAT, v, false)) {}
Input::Input(std::initializer_list<double> v)
    : is_literal_(true), literal_(MakeLiteral<double>(DT_DOUBLE, v, false)) {}
Input::Input(std::initializer_list<int32_t> v)
    : is_literal_(true), literal_(MakeLiteral<int32_t>(DT_INT32, v, false)) {}
Input::Input(std::initializer_list<int64_t> v)
    : is_literal_(true), literal_(MakeLiteral<int64_t>(DT_INT64, v, false)) {}
Input::Input(const char* v) : Input(std::string(v)) {}
Input::Input(const std::string& v) : is_literal_(true) {
  literal_.set_dtype(DT_STRING);
  literal_.add_string_val(v);
}
Input::Input(std::initializer_list<std::string> v) : is_literal_(true) {
  literal_.set_dtype(DT_STRING);
  literal_.mutable_tensor_shape()->add_dim()->set_size(v.size());
  for (const std::string& s : v) literal_.add_string_val(s);
}
Input::Input(::tensorflow::TensorProto literal)
    : is_literal_(true), literal_(std::move(literal)) {}

// ---------------------------------------------------------------- Scope

struct Scope::Shared {
  std::unique_ptr<Graph> owned;
  Graph* graph = nullptr;
  absl::Status status;
};

Scope::Scope(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

Scope Scope::NewRootScope(const OpRegistry* registry) {
  auto shared = std::make_shared<Shared>();
  shared->owned = std::make_unique<Graph>(registry);
  shared->graph = shared->owned.get();
  return Scope(std::move(shared));
}

Scope Scope::NewRootScope(Graph* graph) {
  auto shared = std::make_shared<Shared>();
  shared->graph = graph;
  return Scope(std::move(shared));
}

Scope Scope::NewSubScope(absl::string_view name) const {
  Scope s = *this;
  s.op_name_.clear();
  if (!name.empty()) s.prefix_ = absl::StrCat(prefix_, name, "/");
  return s;
}

Scope Scope::WithOpName(absl::string_view name) const {
  Scope s = *this;
  s.op_name_ = std::string(name);
  return s;
}

Scope Scope::WithDevice(absl::string_view device) const {
  Scope s = *this;
  s.device_ = std::string(device);
  return s;
}

Scope Scope::ColocateWith(const Node* node) const {
  Scope s = *this;
  if (node == nullptr) return s;
  std::vector<std::string> names = node->ColocationNames();
  if (names.empty()) names.push_back(node->name());
  for (const std::string& n : names) s.colocation_.push_back(absl::StrCat("loc:@", n));
  // The colocation decides the device: an enclosing device scope would only
  // contradict it (TensorFlow drops it too). WithDevice after this still pins.
  s.device_.clear();
  return s;
}

Scope Scope::ClearColocation() const {
  Scope s = *this;
  s.colocation_.clear();
  return s;
}

Scope Scope::WithControlDependencies(absl::Span<const Output> deps) const {
  Scope s = *this;
  for (const Output& o : deps) {
    if (o.node) s.control_deps_.push_back(o.node);
  }
  return s;
}

Scope Scope::WithControlDependencies(absl::Span<Node* const> deps) const {
  Scope s = *this;
  for (Node* n : deps) {
    if (n) s.control_deps_.push_back(n);
  }
  return s;
}

Scope Scope::WithNoControlDependencies() const {
  Scope s = *this;
  s.control_deps_.clear();
  return s;
}

Graph* Scope::graph() const { return shared_->graph; }
const OpRegistry* Scope::registry() const { return shared_->graph->registry(); }
bool Scope::ok() const { return shared_->status.ok(); }
absl::Status Scope::status() const { return shared_->status; }

void Scope::UpdateStatus(const absl::Status& status) const {
  if (shared_->status.ok()) shared_->status = status;
}

std::string Scope::GetUniqueNameForOp(absl::string_view default_name) const {
  return graph()->NewName(
      absl::StrCat(prefix_, op_name_.empty() ? std::string(default_name) : op_name_));
}

OpBuilder Scope::Op(absl::string_view op, std::source_location loc) const {
  return OpBuilder(*this, std::string(op), loc);
}

absl::StatusOr<GraphDef> Scope::ToGraphDef() const {
  RETURN_IF_ERROR(status());
  GraphDef def;
  graph()->ToGraphDef(&def);
  return def;
}

// ---------------------------------------------------------------- OpBuilder

OpBuilder::OpBuilder(const Scope& scope, std::string op, std::source_location loc)
    : scope_(scope), op_(std::move(op)), loc_(loc) {}

OpBuilder& OpBuilder::Input(const sluice::Input& input) {
  if (!input.is_literal() && !input.output().valid()) has_invalid_input_ = true;
  inputs_.push_back({input});
  is_list_.push_back(false);
  return *this;
}

OpBuilder& OpBuilder::InputList(absl::Span<const sluice::Input> inputs) {
  for (const sluice::Input& in : inputs) {
    if (!in.is_literal() && !in.output().valid()) has_invalid_input_ = true;
  }
  inputs_.emplace_back(inputs.begin(), inputs.end());
  is_list_.push_back(true);
  return *this;
}

OpBuilder& OpBuilder::InputList(absl::Span<const Output> inputs) {
  std::vector<sluice::Input> list;
  for (const Output& o : inputs) {
    if (!o.valid()) has_invalid_input_ = true;
    list.emplace_back(o);
  }
  inputs_.push_back(std::move(list));
  is_list_.push_back(true);
  return *this;
}

OpBuilder& OpBuilder::SetAttr(absl::string_view name, AttrValue value) {
  attrs_[std::string(name)] = std::move(value);
  return *this;
}

OpBuilder& OpBuilder::ControlInput(Node* node) {
  if (node) control_inputs_.push_back(node);
  return *this;
}

OpBuilder& OpBuilder::DefaultName(absl::string_view name) {
  default_name_ = std::string(name);
  return *this;
}

absl::StatusOr<Node*> OpBuilder::Build() {
  Graph* graph = scope_.graph();
  const OpDef* op_def = graph->FindOp(op_);  // a registered op or a library function
  if (op_def == nullptr) return absl::NotFoundError(absl::StrCat("unknown op '", op_, "'"));
  if (inputs_.size() != op_def->inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("expects ", op_def->inputs.size(),
                                                   " inputs, got ", inputs_.size()));
  }
  // Type and number attrs from the inputs that are already tensors.
  for (size_t a = 0; a < inputs_.size(); ++a) {
    const ArgDef& arg = op_def->inputs[a];
    const std::vector<sluice::Input>& list = inputs_[a];
    if (!arg.number_attr.empty() && !attrs_.contains(arg.number_attr)) {
      attrs_[arg.number_attr] = MakeAttr(static_cast<int64_t>(list.size()));
    }
    if (!arg.type_list_attr.empty() && !attrs_.contains(arg.type_list_attr)) {
      std::vector<DataType> types;
      for (const sluice::Input& in : list) {
        types.push_back(in.is_literal() ? in.literal().dtype() : BaseType(in.output().dtype()));
      }
      attrs_[arg.type_list_attr] = MakeAttr(types);
    }
    if (!arg.type_attr.empty() && !attrs_.contains(arg.type_attr)) {
      for (const sluice::Input& in : list) {
        if (!in.is_literal()) {
          attrs_[arg.type_attr] = MakeAttr(BaseType(in.output().dtype()));
          break;
        }
      }
    }
  }
  // Literals become Consts of the type their argument needs.
  std::vector<std::vector<Output>> resolved(inputs_.size());
  Scope const_scope = scope_.WithOpName("").ClearColocation();
  for (size_t a = 0; a < inputs_.size(); ++a) {
    const ArgDef& arg = op_def->inputs[a];
    for (const sluice::Input& in : inputs_[a]) {
      if (!in.is_literal()) {
        resolved[a].push_back(in.output());
        continue;
      }
      DataType want = arg.type;
      if (!arg.type_attr.empty()) {
        auto it = attrs_.find(arg.type_attr);
        if (it == attrs_.end()) {
          attrs_[arg.type_attr] = MakeAttr(in.literal().dtype());
          want = in.literal().dtype();
        } else {
          want = it->second.type();
        }
      } else if (want == DT_INVALID) {
        want = in.literal().dtype();
      }
      ASSIGN_OR_RETURN(::tensorflow::TensorProto literal, ConvertLiteral(in.literal(), want));
      NodeDef def;
      def.set_name(const_scope.GetUniqueNameForOp("Const"));
      def.set_op("Const");
      def.set_device(scope_.device());
      (*def.mutable_attr())["dtype"] = MakeAttr(want);
      (*def.mutable_attr())["value"] = MakeAttr(literal);
      ASSIGN_OR_RETURN(Node* c, graph->AddNode(std::move(def)));
      // The scope's control dependencies hold for the literal too (as in
      // TensorFlow), which is what puts a literal into a cond branch or a
      // loop body (ops/control_flow/control_flow_builders.h).
      for (Node* dep : scope_.control_deps_) graph->AddControlEdge(dep, c);
      RETURN_IF_ERROR(InferShapes(c));
      resolved[a].push_back(Output(c, 0));
    }
  }
  NodeDef def;
  def.set_name(scope_.GetUniqueNameForOp(default_name_.empty() ? op_ : default_name_));
  def.set_op(op_);
  def.set_device(scope_.device());
  *def.mutable_attr() = attrs_;
  ASSIGN_OR_RETURN(Node* node, graph->AddNode(std::move(def)));
  auto fail = [&](const absl::Status& s) {
    graph->RemoveNode(node);
    return s;
  };
  int slot = 0;
  for (const std::vector<Output>& list : resolved) {
    for (const Output& o : list) {
      absl::Status s = graph->AddEdge(o.node, o.index, node, slot++);
      if (!s.ok()) return fail(s);
    }
  }
  for (Node* c : control_inputs_) graph->AddControlEdge(c, node);
  absl::Status s = InferShapes(node);
  if (!s.ok()) return fail(s);
  return node;
}

Node* OpBuilder::Finalize() {
  if (!scope_.ok()) return nullptr;
  if (has_invalid_input_) {
    scope_.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat(op_, " at ", loc_.file_name(), ":", loc_.line(),
                     ": an input is invalid (an Output that was never built)")));
    return nullptr;
  }
  for (Node* dep : scope_.control_deps_) control_inputs_.push_back(dep);
  if (!scope_.colocation_.empty() && !attrs_.contains("_class")) {
    attrs_["_class"] = MakeAttr(scope_.colocation_);
  }
  absl::StatusOr<Node*> node = Build();
  if (!node.ok()) {
    scope_.UpdateStatus(AddContext(
        node.status(), absl::StrCat(op_, " in scope '", scope_.name_prefix(), "' at ",
                                    loc_.file_name(), ":", loc_.line())));
    return nullptr;
  }
  return *node;
}

Output OpBuilder::Finalize1() {
  Node* n = Finalize();
  return n ? Output(n, 0) : Output();
}

std::vector<Output> OpBuilder::FinalizeAll() {
  Node* n = Finalize();
  std::vector<Output> out;
  if (n == nullptr) {
    const OpDef* def = scope_.graph()->FindOp(op_);
    size_t count = 1;
    if (def != nullptr) {
      absl::StatusOr<NodeTypes> types = ComputeNodeTypes(*def, attrs_);
      count = types.ok() ? types->outputs.size() : def->outputs.size();
    }
    return std::vector<Output>(count);
  }
  for (int i = 0; i < n->num_outputs(); ++i) out.emplace_back(n, i);
  return out;
}

}  // namespace sluice
