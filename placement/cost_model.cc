#include "placement/cost_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "graph/types.h"
#include "placement/device_name.h"

namespace sluice {
namespace {

// ---------------------------------------------------------------------------
// Device specs.

absl::Status BadItem(absl::string_view item, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("device spec '", item, "': ", why));
}

// "1.5GiB", "64M", "1000": bytes. False on a malformed or negative size.
bool ParseBytes(absl::string_view text, int64_t* out) {
  size_t end = 0;
  while (end < text.size() && (absl::ascii_isdigit(text[end]) || text[end] == '.')) ++end;
  double number;
  if (end == 0 || !absl::SimpleAtod(text.substr(0, end), &number)) return false;
  const std::string suffix = absl::AsciiStrToLower(text.substr(end));
  static const std::pair<const char*, double> kSuffixes[] = {
      {"", 1.0},          {"b", 1.0},
      {"k", 1e3},         {"kb", 1e3},          {"kib", 1024.0},
      {"m", 1e6},         {"mb", 1e6},          {"mib", 1024.0 * 1024},
      {"g", 1e9},         {"gb", 1e9},          {"gib", 1024.0 * 1024 * 1024},
      {"t", 1e12},        {"tb", 1e12},         {"tib", 1024.0 * 1024 * 1024 * 1024},
  };
  for (const auto& [name, scale] : kSuffixes) {
    if (suffix != name) continue;
    const double bytes = std::round(number * scale);
    if (!(bytes >= 0) || bytes > 9e18) return false;
    *out = static_cast<int64_t>(bytes);
    return true;
  }
  return false;
}

absl::Status ApplyOption(absl::string_view item, absl::string_view option, DeviceSpec* spec) {
  std::pair<absl::string_view, absl::string_view> kv =
      absl::StrSplit(option, absl::MaxSplits('=', 1));
  const absl::string_view key = absl::StripAsciiWhitespace(kv.first);
  const absl::string_view value = absl::StripAsciiWhitespace(kv.second);
  if (option.find('=') == absl::string_view::npos || key.empty() || value.empty()) {
    return BadItem(item, absl::StrCat("option '", option, "' is not key=value"));
  }
  if (key == "mem") {
    if (!ParseBytes(value, &spec->memory_bytes)) {
      return BadItem(item, absl::StrCat("mem '", value,
                                        "' is not a size in bytes (e.g. 512M, 2GiB, 1000000)"));
    }
    return absl::OkStatus();
  }
  double number;
  const bool parsed = absl::SimpleAtod(value, &number) && std::isfinite(number);
  if (key == "gflops" || key == "gbps") {
    if (!parsed || number <= 0) {
      return BadItem(item, absl::StrCat(key, " '", value, "' is not a positive number"));
    }
    (key == "gflops" ? spec->flops_per_second : spec->link_bytes_per_second) = number * 1e9;
    return absl::OkStatus();
  }
  if (key == "latency_us") {
    if (!parsed || number < 0) {
      return BadItem(item, absl::StrCat(key, " '", value, "' is not a number >= 0"));
    }
    spec->link_latency_seconds = number * 1e-6;
    return absl::OkStatus();
  }
  return BadItem(item,
                 absl::StrCat("unknown key '", key, "' (known: mem, gflops, gbps, latency_us)"));
}

absl::StatusOr<DeviceSpec> ParseOneSpec(absl::string_view item) {
  absl::string_view name = item;
  absl::string_view options;
  const size_t brace = item.find('{');
  if (brace != absl::string_view::npos) {
    if (item.back() != '}') return BadItem(item, "options must end with '}'");
    name = item.substr(0, brace);
    options = item.substr(brace + 1, item.size() - brace - 2);
  } else if (item.find('}') != absl::string_view::npos) {
    return BadItem(item, "'}' without '{'");
  }
  name = absl::StripAsciiWhitespace(name);
  if (name.empty()) return BadItem(item, "no device name");
  const std::string full = name[0] == '/' ? std::string(name) : absl::StrCat("/", name);
  absl::StatusOr<DeviceName> parsed = DeviceName::Parse(full);
  if (!parsed.ok()) return BadItem(item, parsed.status().message());
  if (!parsed->type) return BadItem(item, "the device name has no device type (CPU:0, GPU:1, ...)");
  DeviceSpec spec;
  spec.name = parsed->ToString();
  if (!options.empty()) {
    for (absl::string_view option : absl::StrSplit(options, ';')) {
      if (absl::StripAsciiWhitespace(option).empty()) continue;
      RETURN_IF_ERROR(ApplyOption(item, option, &spec));
    }
  }
  return spec;
}

// ---------------------------------------------------------------------------
// Node costs.

// How an op's FLOPs are counted.
enum class FlopRule {
  kNone,          // shape and metadata ops, variables, control
  kPerOutput,     // `factor` per element of output 0
  kPerInput,      // `factor` per element of input 0 (reductions, losses, optimizers)
  kMatMul,
  kBatchMatMul,
  kConv2D,
  kConv2DBackpropInput,
  kConv2DBackpropFilter,
  kPool,          // one per window element per output element
  kAddN,          // N-1 per output element
};

struct FlopEntry {
  FlopRule rule;
  double factor = 1;
};

const absl::flat_hash_map<std::string, FlopEntry>& FlopTable() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string, FlopEntry>;
    for (const char* op :
         {"Const", "Placeholder", "PlaceholderWithDefault", "Identity", "StopGradient",
          "PreventGradient", "Reshape", "Shape", "Size", "Rank", "ExpandDims", "Squeeze", "NoOp",
          "VariableV2", "Variable", "IsVariableInitialized", "BroadcastGradientArgs",
          "ConcatOffset", "InvertPermutation", "_Send", "_Recv", "Send", "Recv"}) {
      (*t)[op] = {FlopRule::kNone, 0};
    }
    for (const char* op : {"Exp", "Log", "Tanh", "Sigmoid", "Sqrt", "Rsqrt", "Pow",
                           "Reciprocal", "TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad",
                           "ReciprocalGrad", "RealDiv", "FloorDiv"}) {
      (*t)[op] = {FlopRule::kPerOutput, 4};
    }
    for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal",
                           "RandomUniformInt"}) {
      (*t)[op] = {FlopRule::kPerOutput, 8};
    }
    for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod", "ArgMax", "ArgMin",
                           "BiasAddGrad", "UnsortedSegmentSum"}) {
      (*t)[op] = {FlopRule::kPerInput, 1};
    }
    for (const char* op : {"Softmax", "LogSoftmax", "SoftmaxCrossEntropyWithLogits",
                           "SparseSoftmaxCrossEntropyWithLogits"}) {
      (*t)[op] = {FlopRule::kPerInput, 5};
    }
    (*t)["ApplyGradientDescent"] = {FlopRule::kPerInput, 2};
    (*t)["ApplyMomentum"] = {FlopRule::kPerInput, 4};
    (*t)["ApplyAdam"] = {FlopRule::kPerInput, 12};
    (*t)["MatMul"] = {FlopRule::kMatMul};
    (*t)["BatchMatMul"] = {FlopRule::kBatchMatMul};
    (*t)["BatchMatMulV2"] = {FlopRule::kBatchMatMul};
    (*t)["Conv2D"] = {FlopRule::kConv2D};
    (*t)["Conv2DBackpropInput"] = {FlopRule::kConv2DBackpropInput};
    (*t)["Conv2DBackpropFilter"] = {FlopRule::kConv2DBackpropFilter};
    (*t)["MaxPool"] = {FlopRule::kPool};
    (*t)["MaxPoolGrad"] = {FlopRule::kPool};
    (*t)["AvgPool"] = {FlopRule::kPool};
    (*t)["AddN"] = {FlopRule::kAddN};
    return t;
  }();
  return *table;
}

// Sizes a shape with unknown parts replaced by a guess; records the guess.
class Sizer {
 public:
  explicit Sizer(int64_t unknown_dim) : unknown_dim_(unknown_dim) {}

  int64_t Dim(const TensorShape& shape, int i) {
    if (shape.unknown_rank() || i < 0 || i >= shape.rank()) {
      guessed_ = true;
      return unknown_dim_;
    }
    if (shape.dim(i) < 0) {
      guessed_ = true;
      return unknown_dim_;
    }
    return shape.dim(i);
  }
  // Dimension counted from the end: Dim(shape, rank - 1 - back).
  int64_t DimFromEnd(const TensorShape& shape, int back) {
    if (shape.unknown_rank()) return Dim(shape, -1);
    return Dim(shape, shape.rank() - 1 - back);
  }
  double Elements(const TensorShape& shape) {
    if (shape.unknown_rank()) {
      guessed_ = true;
      return static_cast<double>(unknown_dim_);
    }
    double n = 1;
    for (int i = 0; i < shape.rank(); ++i) n *= static_cast<double>(Dim(shape, i));
    return n;
  }
  bool guessed() const { return guessed_; }

 private:
  int64_t unknown_dim_;
  bool guessed_ = false;
};

const TensorShape& UnknownShape() {
  static const auto* unknown = new TensorShape(TensorShape::Unknown());
  return *unknown;
}

// The inferred shape of input `i` (unknown while unconnected).
const TensorShape& InputShape(const Node& node, int i) {
  if (i >= node.num_inputs()) return UnknownShape();
  const Edge* e = node.input_edge(i);
  if (e == nullptr) return UnknownShape();
  return e->src->output_shape(e->src_output);
}

const TensorShape& OutputShape(const Node& node, int i) {
  return i < node.num_outputs() ? node.output_shape(i) : UnknownShape();
}

bool BoolAttr(const Node& node, absl::string_view name) {
  absl::StatusOr<bool> v = node.GetAttr<bool>(name);
  return v.ok() && *v;
}

// Height, width and input channels of a [H, W, Cin, Cout] filter.
double FilterWindowTimesCin(Sizer& sz, const TensorShape& filter) {
  return static_cast<double>(sz.Dim(filter, 0)) * sz.Dim(filter, 1) * sz.Dim(filter, 2);
}

double NodeFlops(const Node& node, Sizer& sz) {
  const auto& table = FlopTable();
  auto it = table.find(node.op());
  const FlopEntry entry = it == table.end() ? FlopEntry{FlopRule::kPerOutput, 1} : it->second;
  switch (entry.rule) {
    case FlopRule::kNone:
      return 0;
    case FlopRule::kPerOutput:
      return node.num_outputs() == 0 ? 0 : entry.factor * sz.Elements(OutputShape(node, 0));
    case FlopRule::kPerInput:
      return entry.factor * sz.Elements(InputShape(node, 0));
    case FlopRule::kMatMul: {
      // out [M, N]; K is a's inner dimension.
      const TensorShape& a = InputShape(node, 0);
      const int64_t k = BoolAttr(node, "transpose_a") ? sz.Dim(a, 0) : sz.Dim(a, 1);
      return 2.0 * sz.Elements(OutputShape(node, 0)) * k;
    }
    case FlopRule::kBatchMatMul: {
      const TensorShape& a = InputShape(node, 0);
      const bool adj = BoolAttr(node, "adj_x") || BoolAttr(node, "transpose_a");
      const int64_t k = adj ? sz.DimFromEnd(a, 1) : sz.DimFromEnd(a, 0);
      return 2.0 * sz.Elements(OutputShape(node, 0)) * k;
    }
    case FlopRule::kConv2D:
      return 2.0 * sz.Elements(OutputShape(node, 0)) *
             FilterWindowTimesCin(sz, InputShape(node, 1));
    case FlopRule::kConv2DBackpropInput:
      // As many multiply-adds as the forward convolution: out_backprop x window x Cin.
      return 2.0 * sz.Elements(InputShape(node, 2)) *
             FilterWindowTimesCin(sz, InputShape(node, 1));
    case FlopRule::kConv2DBackpropFilter:
      // The output is the filter's gradient, shaped like the filter.
      return 2.0 * sz.Elements(InputShape(node, 2)) *
             FilterWindowTimesCin(sz, OutputShape(node, 0));
    case FlopRule::kPool: {
      double window = 1;
      absl::StatusOr<std::vector<int64_t>> ksize = node.GetAttr<std::vector<int64_t>>("ksize");
      if (ksize.ok()) {
        for (int64_t k : *ksize) window *= static_cast<double>(std::max<int64_t>(k, 1));
      }
      return window * sz.Elements(OutputShape(node, 0));
    }
    case FlopRule::kAddN:
      return std::max(0, node.num_inputs() - 1) * sz.Elements(OutputShape(node, 0));
  }
  return 0;
}

int64_t TensorBytes(Sizer& sz, const TensorShape& shape, DataType type) {
  return static_cast<int64_t>(sz.Elements(shape)) * DataTypeSize(BaseType(type));
}

NodeCost ComputeNodeCost(const Node& node, int64_t unknown_dim) {
  Sizer sz(unknown_dim);
  NodeCost cost;
  cost.flops = NodeFlops(node, sz);
  cost.output_bytes.reserve(node.num_outputs());
  for (int i = 0; i < node.num_outputs(); ++i) {
    const int64_t bytes = TensorBytes(sz, node.output_shape(i), node.output_type(i));
    cost.output_bytes.push_back(bytes);
    if (IsRefType(node.output_type(i))) cost.ref_output_bytes += bytes;
  }
  if (node.op_def().is_variable) {
    absl::StatusOr<TensorShape> shape = node.GetAttr<TensorShape>("shape");
    absl::StatusOr<DataType> dtype = node.GetAttr<DataType>("dtype");
    const TensorShape& s =
        shape.ok() && !shape->unknown_rank() ? *shape : OutputShape(node, 0);
    const DataType t = dtype.ok() ? *dtype : (node.num_outputs() > 0 ? node.output_type(0)
                                                                      : DT_FLOAT);
    cost.persistent_bytes = TensorBytes(sz, s, t);
  }
  cost.shapes_known = !sz.guessed();
  return cost;
}

}  // namespace

absl::StatusOr<std::vector<DeviceSpec>> ParseDeviceSpecs(absl::string_view spec) {
  std::vector<std::string> items;
  int depth = 0;
  std::string current;
  for (char c : spec) {
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (c == ',' && depth <= 0) {
      items.push_back(std::move(current));
      current.clear();
      continue;
    }
    current.push_back(c);
  }
  items.push_back(std::move(current));
  std::vector<DeviceSpec> out;
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < items.size(); ++i) {
    absl::string_view item = absl::StripAsciiWhitespace(items[i]);
    if (item.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("device spec list '", spec, "': item ",
                                                     i + 1, " is empty"));
    }
    ASSIGN_OR_RETURN(DeviceSpec d, ParseOneSpec(item));
    if (!seen.insert(d.name).second) {
      return BadItem(item, absl::StrCat("device ", d.name, " is listed twice"));
    }
    out.push_back(std::move(d));
  }
  return out;
}

int64_t NodeCost::total_output_bytes() const {
  int64_t total = 0;
  for (int64_t b : output_bytes) total += b;
  return total;
}

const Node* AdoptingAssign(const Node& node, int output) {
  if (IsRefType(node.output_type(output))) return nullptr;
  const Edge* only = nullptr;
  for (const Edge* e : node.out_edges()) {
    if (e->IsControl() || e->src_output != output) continue;
    if (only != nullptr) return nullptr;
    only = e;
  }
  if (only == nullptr || only->dst->op() != "Assign" || only->dst_input != 1) return nullptr;
  return only->dst;
}

absl::StatusOr<CostModel> CostModel::Build(const Graph& graph, const CostModelOptions& options) {
  if (options.unknown_dim < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("cost model: unknown_dim must be >= 1, got ", options.unknown_dim));
  }
  CostModel model;
  model.costs_.resize(graph.num_node_ids());
  for (const Node* node : graph.nodes()) {
    NodeCost& cost = model.costs_[node->id()];
    cost = ComputeNodeCost(*node, options.unknown_dim);
    // An initial value becomes the variable's storage: counted once, as the variable.
    for (int i = 0; i < node->num_outputs(); ++i) {
      if (AdoptingAssign(*node, i) != nullptr) cost.ref_output_bytes += cost.output_bytes[i];
    }
  }
  return model;
}

double CostModel::ComputeSeconds(const Node& node, const DeviceSpec& device) const {
  const double flops = costs_[node.id()].flops;
  if (flops <= 0) return 0;
  const double speed = device.flops_per_second > 0 ? device.flops_per_second : 1e9;
  return std::max(1e-6, flops / speed);
}

double CostModel::TransferSeconds(int64_t bytes, const DeviceSpec& from, const DeviceSpec& to) {
  if (&from == &to || from.name == to.name) return 0;
  double bandwidth = std::min(from.link_bytes_per_second, to.link_bytes_per_second);
  if (!(bandwidth > 0)) bandwidth = 1e9;
  const double latency = std::max(from.link_latency_seconds, to.link_latency_seconds);
  return latency + static_cast<double>(std::max<int64_t>(bytes, 0)) / bandwidth;
}

}  // namespace sluice
