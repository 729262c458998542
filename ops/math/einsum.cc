#include "ops/math/einsum.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "graph/graph.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/lowering.h"
#include "ops/math/batch_matmul_ops.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

// Labels: 'a'..'z' are 0..25, 'A'..'Z' 26..51; the dimensions "..." stands
// for are kEllipsis + their place in the broadcast "..." (right-aligned, so
// that an operand with fewer of them broadcasts against the other's last).
constexpr int kEllipsis = 100;
constexpr int kEllipsisMark = -1;  // where "..." stood in a parsed term

std::string LabelName(int label) {
  if (label >= kEllipsis) return absl::StrCat("...[", label - kEllipsis, "]");
  return std::string(1, static_cast<char>(label < 26 ? 'a' + label : 'A' + label - 26));
}

absl::Status Bad(absl::string_view equation, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("Einsum '", equation, "': ", why));
}

// An equation's labels, one per dimension of each operand and the output.
struct Equation {
  std::vector<std::vector<int>> in;
  std::vector<int> out;
};

absl::StatusOr<std::vector<int>> ParseTerm(absl::string_view term, absl::string_view equation) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c >= 'a' && c <= 'z') {
      labels.push_back(c - 'a');
    } else if (c >= 'A' && c <= 'Z') {
      labels.push_back(26 + c - 'A');
    } else if (!ellipsis && term.substr(i, 3) == "...") {
      ellipsis = true;
      labels.push_back(kEllipsisMark);
      i += 2;
    } else {
      return Bad(equation, absl::StrCat("'", term, "' holds '", term.substr(i, 1),
                                        "': a term is letters and at most one '...'"));
    }
  }
  return labels;
}

// Parses `equation` for operands of `ranks` (-1: unknown). FailedPrecondition
// when an operand with "..." has an unknown rank (its labels cannot be
// known yet).
absl::StatusOr<Equation> ParseEquation(absl::string_view equation, const std::vector<int>& ranks) {
  const size_t arrow = equation.find("->");
  if (arrow == absl::string_view::npos || equation.find("->", arrow + 1) != absl::string_view::npos) {
    return Bad(equation, "needs exactly one '->'");
  }
  const std::vector<absl::string_view> terms = absl::StrSplit(equation.substr(0, arrow), ',');
  if (terms.size() != ranks.size()) {
    return Bad(equation, absl::StrCat(terms.size(), " operands in the equation, ", ranks.size(),
                                      " inputs"));
  }
  if (ranks.size() > 2) {
    return absl::UnimplementedError(absl::StrCat("Einsum '", equation, "': ", ranks.size(),
                                                 " operands (one or two are taken)"));
  }
  std::vector<std::vector<int>> raw;
  std::vector<int> own_ellipsis(ranks.size(), 0);
  int ellipsis_dims = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<int> t, ParseTerm(terms[i], equation));
    const bool has = std::find(t.begin(), t.end(), kEllipsisMark) != t.end();
    const int letters = static_cast<int>(t.size()) - (has ? 1 : 0);
    if (has) {
      if (ranks[i] < 0) {
        return absl::FailedPreconditionError(absl::StrCat(
            "Einsum '", equation, "': operand ", i, " has '...' and an unknown rank"));
      }
      if (ranks[i] < letters) {
        return Bad(equation, absl::StrCat("operand ", i, " has rank ", ranks[i], ", fewer than its ",
                                          letters, " labels"));
      }
      own_ellipsis[i] = ranks[i] - letters;
      ellipsis_dims = std::max(ellipsis_dims, own_ellipsis[i]);
    } else if (ranks[i] >= 0 && ranks[i] != letters) {
      return Bad(equation, absl::StrCat("operand ", i, " has rank ", ranks[i], ", not its ",
                                        letters, " labels"));
    }
    raw.push_back(std::move(t));
  }
  Equation e;
  for (size_t i = 0; i < raw.size(); ++i) {
    std::vector<int> labels;
    for (int l : raw[i]) {
      if (l != kEllipsisMark) {
        labels.push_back(l);
        continue;
      }
      for (int j = 0; j < own_ellipsis[i]; ++j) {
        labels.push_back(kEllipsis + ellipsis_dims - own_ellipsis[i] + j);
      }
    }
    std::set<int> seen;
    for (int l : labels) {
      if (!seen.insert(l).second) {
        return absl::UnimplementedError(absl::StrCat(
            "Einsum '", equation, "': operand ", i, " repeats label '", LabelName(l),
            "' (a diagonal)"));
      }
    }
    e.in.push_back(std::move(labels));
  }
  ASSIGN_OR_RETURN(std::vector<int> out, ParseTerm(equation.substr(arrow + 2), equation));
  const bool out_has = std::find(out.begin(), out.end(), kEllipsisMark) != out.end();
  if (ellipsis_dims > 0 && !out_has) {
    return Bad(equation, "the operands' '...' dimensions must appear in the output as '...'");
  }
  std::set<int> seen;
  for (int l : out) {
    if (l == kEllipsisMark) {
      for (int j = 0; j < ellipsis_dims; ++j) e.out.push_back(kEllipsis + j);
      continue;
    }
    if (!seen.insert(l).second) {
      return Bad(equation, absl::StrCat("the output repeats label '", LabelName(l), "'"));
    }
    bool found = false;
    for (const std::vector<int>& in : e.in) {
      found = found || std::find(in.begin(), in.end(), l) != in.end();
    }
    if (!found) {
      return Bad(equation, absl::StrCat("output label '", LabelName(l), "' is in no operand"));
    }
    e.out.push_back(l);
  }
  return e;
}

// The size of each label over the operands' known dims (-1: unknown); a
// "..." dimension of size 1 broadcasts. InvalidArgument for a label of two
// sizes.
absl::StatusOr<std::map<int, int64_t>> LabelSizes(absl::string_view equation, const Equation& e,
                                                   const std::vector<TensorShape>& shapes) {
  std::map<int, int64_t> size;
  for (size_t i = 0; i < e.in.size(); ++i) {
    for (size_t d = 0; d < e.in[i].size(); ++d) {
      const int l = e.in[i][d];
      const int64_t n = shapes[i].rank() < 0 ? -1 : shapes[i].dim(static_cast<int>(d));
      auto [it, fresh] = size.emplace(l, n);
      const int64_t m = it->second;
      if (fresh || m == n) continue;
      if (l < kEllipsis) {  // the same size everywhere; unknown takes the other
        if (m >= 0 && n >= 0) {
          return Bad(equation, absl::StrCat("label '", LabelName(l), "' is ", m,
                                            " in one operand and ", n, " in another"));
        }
        it->second = m < 0 ? n : m;
      } else if (m >= 0 && n >= 0) {  // "...": NumPy broadcasting (1 with 0 is 0)
        if (m != 1 && n != 1) {
          return Bad(equation, absl::StrCat("'...' dimensions of ", m, " and ", n,
                                            " do not broadcast"));
        }
        it->second = m == 1 ? n : m;
      } else {
        // Unknown against 1 stays unknown; against another size, that size.
        const int64_t known = m < 0 ? n : m;
        it->second = known == 1 ? -1 : known;
      }
    }
  }
  return size;
}

absl::Status EinsumShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(std::string equation, c->GetAttr<std::string>("equation"));
  std::vector<int> ranks;
  std::vector<TensorShape> shapes;
  for (int i = 0; i < c->num_inputs(); ++i) {
    shapes.push_back(c->input(i));
    ranks.push_back(c->input(i).rank());
  }
  absl::StatusOr<Equation> e = ParseEquation(equation, ranks);
  if (absl::IsFailedPrecondition(e.status())) {  // an operand's rank is not known yet
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(e.status());
  ASSIGN_OR_RETURN(auto sizes, LabelSizes(equation, *e, shapes));
  std::vector<int64_t> dims;
  for (int l : e->out) dims.push_back(sizes.count(l) ? sizes[l] : -1);
  c->set_output(0, TensorShape(dims));
  return absl::OkStatus();
}

// ---- Lowering ----------------------------------------------------------------

// One operand on its way to the product: the tensor, its labels and its
// static dims (-1 unknown), kept in step as it is summed and transposed.
struct Operand {
  Output x;
  std::vector<int> labels;
  std::vector<int64_t> dims;
};

bool Has(const std::vector<int>& labels, int l) {
  return std::find(labels.begin(), labels.end(), l) != labels.end();
}

class EinsumLowering {
 public:
  explicit EinsumLowering(const Scope& s) : s_(s) {}

  // Sums away the operand's labels that are not in `keep`.
  void SumAway(Operand* o, const std::set<int>& keep) const {
    std::vector<int32_t> axes;
    Operand kept{Output(), {}, {}};
    for (size_t d = 0; d < o->labels.size(); ++d) {
      if (keep.count(o->labels[d])) {
        kept.labels.push_back(o->labels[d]);
        kept.dims.push_back(o->dims[d]);
      } else {
        axes.push_back(static_cast<int32_t>(d));
      }
    }
    if (axes.empty()) return;
    kept.x = ops::Sum(s_, o->x, ops::Const(s_, axes));
    *o = std::move(kept);
  }

  // Transposes the operand so that its labels are `order`.
  void Permute(Operand* o, const std::vector<int>& order) const {
    if (o->labels == order) return;
    std::vector<int32_t> perm;
    std::vector<int64_t> dims;
    for (int l : order) {
      const size_t d = std::find(o->labels.begin(), o->labels.end(), l) - o->labels.begin();
      perm.push_back(static_cast<int32_t>(d));
      dims.push_back(o->dims[d]);
    }
    o->x = ops::Transpose(s_, o->x, ops::Const(s_, perm));
    o->labels = order;
    o->dims = std::move(dims);
  }

  // dims[begin, end) of the operand as a 1-D int32 tensor: a constant when
  // they are known, else sliced from its shape at run time.
  Output Dims(const Operand& o, int begin, int end) const {
    if (Known(o, begin, end)) {
      return ops::Const(s_, std::vector<int32_t>(o.dims.begin() + begin, o.dims.begin() + end));
    }
    return ops::Slice(s_, ShapeOf(o), ops::Const(s_, std::vector<int32_t>{begin}),
                      ops::Const(s_, std::vector<int32_t>{end - begin}));
  }

  // The product of dims[begin, end) as a [1] int32 tensor (1 when empty).
  Output Product(const Operand& o, int begin, int end) const {
    if (Known(o, begin, end)) {
      int64_t n = 1;
      for (int d = begin; d < end; ++d) n *= o.dims[d];
      return ops::Const(s_, std::vector<int32_t>{static_cast<int32_t>(n)});
    }
    return ops::Prod(s_, Dims(o, begin, end), ops::Const(s_, std::vector<int32_t>{0}),
                     {.keep_dims = true});
  }

  Output Reshape(const Output& x, std::vector<Output> pieces) const {
    return ops::Reshape(s_, x, ops::ConcatV2(s_, pieces, ops::Const(s_, 0)));
  }

  const Scope& scope() const { return s_; }

 private:
  static bool Known(const Operand& o, int begin, int end) {
    for (int d = begin; d < end; ++d) {
      if (o.dims[d] < 0) return false;
    }
    return true;
  }

  Output ShapeOf(const Operand& o) const {
    auto it = shapes_.find(o.x.node);
    if (it != shapes_.end() && it->second.first == o.x.index) return it->second.second;
    Output shape = ops::Shape(s_, o.x);
    shapes_[o.x.node] = {o.x.index, shape};
    return shape;
  }

  const Scope& s_;
  mutable std::map<Node*, std::pair<int, Output>> shapes_;  // one Shape per tensor
};

Operand MakeOperand(const Output& x, const std::vector<int>& labels) {
  Operand o{x, labels, std::vector<int64_t>(labels.size(), -1)};
  const TensorShape& shape = x.shape();
  if (shape.rank() == static_cast<int>(labels.size())) o.dims = shape.dims();
  return o;
}

// "ij->ji", "ij->i": sums, then transposes.
Output LowerOne(const EinsumLowering& b, Operand a, const std::vector<int>& out) {
  b.SumAway(&a, std::set<int>(out.begin(), out.end()));
  b.Permute(&a, out);
  return a.x;
}

// Two operands: sums what one alone has, then [batch, free_a, summed] x
// [batch, summed, free_b] as one BatchMatMulV2, then the output's order.
Output LowerTwo(const EinsumLowering& b, Operand a, Operand c, const std::vector<int>& out) {
  std::set<int> keep_a(out.begin(), out.end()), keep_c(out.begin(), out.end());
  keep_a.insert(c.labels.begin(), c.labels.end());
  keep_c.insert(a.labels.begin(), a.labels.end());
  b.SumAway(&a, keep_a);
  b.SumAway(&c, keep_c);
  std::vector<int> batch, summed, free_a, free_c;
  for (int l : out) {
    if (Has(a.labels, l) && Has(c.labels, l)) batch.push_back(l);
  }
  for (int l : a.labels) {
    if (!Has(c.labels, l)) {
      free_a.push_back(l);
    } else if (!Has(out, l)) {
      summed.push_back(l);
    }
  }
  for (int l : c.labels) {
    if (!Has(a.labels, l)) free_c.push_back(l);
  }
  std::vector<int> a_order = batch, c_order = batch;
  a_order.insert(a_order.end(), free_a.begin(), free_a.end());
  a_order.insert(a_order.end(), summed.begin(), summed.end());
  c_order.insert(c_order.end(), summed.begin(), summed.end());
  c_order.insert(c_order.end(), free_c.begin(), free_c.end());
  b.Permute(&a, a_order);
  b.Permute(&c, c_order);
  const int nb = static_cast<int>(batch.size());
  const int na = static_cast<int>(free_a.size());
  const int ns = static_cast<int>(summed.size());
  const int nc = static_cast<int>(free_c.size());
  // [batch..., M, K] and [batch..., K, N].
  Output a3 = a.x, c3 = c.x;
  if (na != 1 || ns != 1) {
    a3 = b.Reshape(a.x, {b.Dims(a, 0, nb), b.Product(a, nb, nb + na),
                         b.Product(a, nb + na, nb + na + ns)});
  }
  if (ns != 1 || nc != 1) {
    c3 = b.Reshape(c.x, {b.Dims(c, 0, nb), b.Product(c, nb, nb + ns),
                         b.Product(c, nb + ns, nb + ns + nc)});
  }
  Operand product{ops::BatchMatMulV2(b.scope(), a3, c3), batch, {}};
  product.labels.insert(product.labels.end(), free_a.begin(), free_a.end());
  product.labels.insert(product.labels.end(), free_c.begin(), free_c.end());
  if (na != 1 || nc != 1) {
    // The batch dims broadcast: the product's own; the free ones, each operand's.
    Operand batch_dims{product.x, batch, std::vector<int64_t>(nb + 2, -1)};
    for (int d = 0; d < nb; ++d) {
      const int64_t x = a.dims[d], y = c.dims[d];
      batch_dims.dims[d] = x < 0 || y < 0 ? -1 : (x == 1 ? y : x);
    }
    product.x = b.Reshape(product.x, {b.Dims(batch_dims, 0, nb), b.Dims(a, nb, nb + na),
                                      b.Dims(c, nb + ns, nb + ns + nc)});
  }
  product.dims.assign(product.labels.size(), -1);
  b.Permute(&product, out);
  return product.x;
}

absl::StatusOr<std::vector<Node*>> LowerEinsum(Graph* graph, Node* node) {
  ASSIGN_OR_RETURN(std::string equation, node->GetAttr<std::string>("equation"));
  // The equation is checked before the node is taken apart.
  std::vector<Output> inputs(node->num_inputs());
  for (const Edge* e : node->in_edges()) {
    if (!e->IsControl()) inputs[e->dst_input] = Output(e->src, e->src_output);
  }
  std::vector<int> ranks;
  for (const Output& in : inputs) ranks.push_back(in.valid() ? in.shape().rank() : -1);
  ASSIGN_OR_RETURN(Equation e, ParseEquation(equation, ranks));
  ASSIGN_OR_RETURN(Lowering l, BeginLowering(graph, node));
  const EinsumLowering b(l.scope);
  Output y = e.in.size() == 1
                 ? LowerOne(b, MakeOperand(l.inputs[0], e.in[0]), e.out)
                 : LowerTwo(b, MakeOperand(l.inputs[0], e.in[0]),
                            MakeOperand(l.inputs[1], e.in[1]), e.out);
  return FinishLowering(l, {y}, nullptr);
}

}  // namespace

absl::Status RegisterEinsumOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Einsum")
                                    .Input("inputs: N * T")
                                    .Output("output: T")
                                    .Attr("equation: string")
                                    .Attr("N: int >= 1")
                                    .Attr("T: type")
                                    .SetShapeFn(EinsumShape)));
  return ops->SetLowering("Einsum", LowerEinsum);
}

namespace ops {

Output Einsum(const Scope& scope, const std::vector<Output>& inputs, const std::string& equation,
              std::source_location loc) {
  return scope.Op("Einsum", loc).InputList(inputs).Attr("equation", equation).Finalize1();
}

}  // namespace ops
}  // namespace sluice
