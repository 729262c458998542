#include "graph/shape_inference.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {

namespace {
constexpr int64_t kMaxShapeLikeElements = 1 << 16;
}  // namespace

InferenceContext::InferenceContext(const Node& node)
    : node_(node), outputs_(node.num_outputs(), TensorShape::Unknown()) {
  inputs_.reserve(node.num_inputs());
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Edge* e = node.input_edge(i);
    inputs_.push_back(e ? e->src->output_shape(e->src_output) : TensorShape::Unknown());
  }
}

const ::tensorflow::TensorProto* InferenceContext::InputConstant(int i) const {
  const Edge* e = node_.input_edge(i);
  if (e == nullptr || e->src->op() != "Const") return nullptr;
  auto it = e->src->attrs().find("value");
  if (it == e->src->attrs().end() || !it->second.has_tensor()) return nullptr;
  return &it->second.tensor();
}

absl::StatusOr<std::optional<std::vector<int64_t>>> InferenceContext::InputAsInts(int i) const {
  const Edge* e = node_.input_edge(i);
  if (e == nullptr) return std::optional<std::vector<int64_t>>();
  if (const auto* proto = InputConstant(i)) {
    // Shape-like inputs (shapes, axes, perms, begins) are small; a larger
    // constant is read at run time only.
    absl::StatusOr<TensorShape> shape = TensorShape::FromProto(proto->tensor_shape());
    if (!shape.ok() || shape->num_elements() > kMaxShapeLikeElements) {
      return std::optional<std::vector<int64_t>>();
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> v, TensorProtoToInts(*proto));
    return std::optional<std::vector<int64_t>>(std::move(v));
  }
  const Node& src = *e->src;
  if ((src.op() == "Shape" || src.op() == "Size") && src.input_edge(0) != nullptr) {
    const Edge* in = src.input_edge(0);
    const TensorShape& s = in->src->output_shape(in->src_output);
    if (s.IsFullyDefined()) {
      if (src.op() == "Shape") return std::optional<std::vector<int64_t>>(s.dims());
      return std::optional<std::vector<int64_t>>(std::vector<int64_t>{s.num_elements()});
    }
  }
  return std::optional<std::vector<int64_t>>();
}

absl::Status InferenceContext::WithRank(int i, int rank) const {
  const TensorShape& s = inputs_[i];
  if (s.unknown_rank() || s.rank() == rank) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("input ", i, " must have rank ", rank,
                                                 " but has shape ", s.DebugString()));
}

absl::Status InferenceContext::WithRankAtLeast(int i, int rank) const {
  const TensorShape& s = inputs_[i];
  if (s.unknown_rank() || s.rank() >= rank) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("input ", i, " must have rank at least ", rank,
                                                 " but has shape ", s.DebugString()));
}

absl::Status InferShapes(Node* node) {
  const ShapeFn& fn = node->op_def().shape_fn;
  if (!fn) return absl::OkStatus();
  InferenceContext ctx(*node);
  absl::Status s = fn(&ctx);
  if (!s.ok()) return AddContext(s, absl::StrCat("node ", node->DebugName()));
  for (int i = 0; i < node->num_outputs(); ++i) node->set_output_shape(i, ctx.outputs()[i]);
  return absl::OkStatus();
}

absl::StatusOr<TensorShape> BroadcastShapes(const TensorShape& a, const TensorShape& b) {
  if (a.unknown_rank() || b.unknown_rank()) return TensorShape::Unknown();
  int rank = std::max(a.rank(), b.rank());
  TensorShape out = TensorShape::UnknownOfRank(rank);
  for (int i = 0; i < rank; ++i) {
    int ia = a.rank() - rank + i, ib = b.rank() - rank + i;
    int64_t da = ia >= 0 ? a.dim(ia) : 1;
    int64_t db = ib >= 0 ? b.dim(ib) : 1;
    int64_t d;
    if (da == 1) {
      d = db;
    } else if (db == 1) {
      d = da;
    } else if (da < 0) {
      d = db;  // unknown vs known (not 1): must equal the known one
    } else if (db < 0) {
      d = da;
    } else if (da == db) {
      d = da;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("shapes ", a.DebugString(), " and ",
                                                     b.DebugString(),
                                                     " cannot be broadcast together"));
    }
    out.set_dim(i, d);
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> TensorProtoToInts(const ::tensorflow::TensorProto& proto) {
  ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(proto.tensor_shape()));
  int64_t n = shape.num_elements();
  if (n < 0) return absl::InvalidArgumentError("constant has an unknown shape");
  std::vector<int64_t> out(n);
  const std::string& content = proto.tensor_content();
  if (proto.dtype() == DT_INT32) {
    if (!content.empty()) {
      if (content.size() != static_cast<size_t>(n) * 4) {
        return absl::InvalidArgumentError("int32 constant has the wrong content size");
      }
      for (int64_t k = 0; k < n; ++k) {
        int32_t v;
        std::memcpy(&v, content.data() + 4 * k, 4);
        out[k] = v;
      }
      return out;
    }
    for (int64_t k = 0; k < n; ++k) {
      out[k] = proto.int_val_size() == 0 ? 0
                                         : proto.int_val(std::min<int64_t>(k, proto.int_val_size() - 1));
    }
    return out;
  }
  if (proto.dtype() == DT_INT64) {
    if (!content.empty()) {
      if (content.size() != static_cast<size_t>(n) * 8) {
        return absl::InvalidArgumentError("int64 constant has the wrong content size");
      }
      std::memcpy(out.data(), content.data(), 8 * n);
      return out;
    }
    for (int64_t k = 0; k < n; ++k) {
      out[k] = proto.int64_val_size() == 0
                   ? 0
                   : proto.int64_val(std::min<int64_t>(k, proto.int64_val_size() - 1));
    }
    return out;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("expected an int32 or int64 constant, got ", DataTypeName(proto.dtype())));
}

}  // namespace sluice
