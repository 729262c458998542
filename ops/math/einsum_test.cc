// Einsum: values against a loop-by-loop reference (every label's values
// enumerated), with static shapes and with shapes known only at run time;
// gradients against central differences; the lowering's shape (one
// BatchMatMulV2, no run-time Shape when the shapes are static); bad
// equations each a clear error.
#include "ops/math/einsum.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "builtin_session.h"
#include "graph/function_inline.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/gradient_checker.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

// Deterministic values in [-1, 1).
Tensor Values(const std::vector<int64_t>& dims, int seed) {
  TensorShape shape(dims);
  std::vector<double> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = ((i * 37 + seed * 11) % 23) / 11.5 - 1.0;
  return Tensor::FromVector<double>(v, shape);
}

// The reference: for each assignment of every label, out[out labels] +=
// product of the operands at their labels (a dim of size 1 broadcasts).
// `equation` uses letters only; "..." is written out as letters.
Tensor Reference(const std::string& equation, const std::vector<Tensor>& in) {
  const std::vector<std::string> sides = absl::StrSplit(equation, "->");
  const std::vector<std::string> terms = absl::StrSplit(sides[0], ',');
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i) {
    for (size_t d = 0; d < terms[i].size(); ++d) {
      size[terms[i][d]] = std::max(size[terms[i][d]], in[i].dim_size(static_cast<int>(d)));
    }
  }
  std::vector<int64_t> out_dims;
  for (char c : sides[1]) out_dims.push_back(size[c]);
  Tensor out = Tensor::FromVector<double>(
      std::vector<double>(TensorShape(out_dims).num_elements(), 0.0), TensorShape(out_dims));
  std::vector<char> labels;
  for (const auto& [c, n] : size) labels.push_back(c);
  std::map<char, int64_t> at;
  auto offset = [&](const std::string& term, const TensorShape& shape) {
    int64_t o = 0;
    for (size_t d = 0; d < term.size(); ++d) {
      const int64_t n = shape.dim(static_cast<int>(d));
      o = o * n + (n == 1 ? 0 : at[term[d]]);
    }
    return o;
  };
  std::function<void(size_t)> loop = [&](size_t k) {
    if (k == labels.size()) {
      double p = 1;
      for (size_t i = 0; i < terms.size(); ++i) {
        p *= in[i].data<double>()[offset(terms[i], in[i].shape())];
      }
      out.data<double>()[offset(sides[1], out.shape())] += p;
      return;
    }
    for (at[labels[k]] = 0; at[labels[k]] < size[labels[k]]; ++at[labels[k]]) loop(k + 1);
  };
  loop(0);
  return out;
}

struct Case {
  std::string equation;
  std::vector<std::vector<int64_t>> dims;
  std::string reference;  // the equation with "..." written out; empty: the same
};

std::vector<Case> Cases() {
  return {
      {"ij,jk->ik", {{2, 3}, {3, 4}}, ""},
      {"ij->ji", {{2, 3}}, ""},
      {"ij->i", {{2, 3}}, ""},
      {"ij->", {{2, 3}}, ""},
      {"ij->ij", {{2, 3}}, ""},
      {"bqhd,bkhd->bhqk", {{2, 3, 2, 4}, {2, 5, 2, 4}}, ""},  // attention logits
      {"bhqk,bkhd->bqhd", {{2, 2, 3, 5}, {2, 5, 2, 4}}, ""},  // attention output
      {"abc,cde->abde", {{2, 3, 4}, {4, 2, 3}}, ""},          // EinsumDense
      {"i,j->ij", {{3}, {4}}, ""},                            // outer product
      {"ij,ij->i", {{3, 4}, {3, 4}}, ""},                     // row dots
      {"abc,bd->db", {{2, 3, 4}, {3, 5}}, ""},                // a, c summed first
      {"ijk,k->ij", {{2, 3, 4}, {4}}, ""},
      {"...ij,...jk->...ik", {{2, 1, 2, 3}, {3, 3, 2}}, "xyij,yjk->xyik"},  // broadcast
      {"b...,b...->...b", {{2, 3, 4}, {2, 1, 4}}, "bxy,bxy->xyb"},
  };
}

void ExpectNear(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    EXPECT_NEAR(got.data<double>()[i], want.data<double>()[i], 1e-12) << what << " [" << i << "]";
  }
}

TEST(EinsumTest, ValuesMatchTheReferenceWithStaticAndRunTimeShapes) {
  for (const Case& c : Cases()) {
    std::vector<Tensor> values;
    for (size_t i = 0; i < c.dims.size(); ++i) values.push_back(Values(c.dims[i], 7 * i + 1));
    const Tensor want = Reference(c.reference.empty() ? c.equation : c.reference, values);
    for (bool static_shapes : {true, false}) {
      Scope s = Scope::NewRootScope(BuiltinOps());
      std::vector<Output> in;
      for (size_t i = 0; i < c.dims.size(); ++i) {
        // Run-time shapes: only the rank is known ("..." needs it).
        std::vector<int64_t> dims = c.dims[i];
        if (!static_shapes) dims.assign(dims.size(), -1);
        in.push_back(ops::Placeholder(s, DT_DOUBLE, {.shape = TensorShape(dims)}));
      }
      Output y = ops::Einsum(s, in, c.equation);
      ASSERT_TRUE(s.ok()) << c.equation << ": " << s.status();
      absl::StatusOr<Tensor> got = EvalWithFeeds(s, in, values, y);
      ASSERT_TRUE(got.ok()) << c.equation << ": " << got.status();
      ExpectNear(*got, want, absl::StrCat(c.equation, static_shapes ? " static" : " run-time"));
    }
  }
}

TEST(EinsumTest, GradientsMatchFiniteDifferences) {
  for (const Case& c : {Case{"bqhd,bkhd->bhqk", {{1, 2, 2, 3}, {1, 3, 2, 3}}, ""},
                        Case{"ij,jk->ik", {{2, 3}, {3, 2}}, ""}, Case{"ij->i", {{2, 3}}, ""},
                        Case{"abc,bd->db", {{2, 3, 2}, {3, 2}}, ""},
                        Case{"...ij,...jk->...ik", {{2, 1, 2, 3}, {3, 3, 2}}, ""}}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    std::vector<Output> in;
    std::vector<Tensor> values;
    for (size_t i = 0; i < c.dims.size(); ++i) {
      in.push_back(ops::Placeholder(s, DT_DOUBLE, {.shape = TensorShape(c.dims[i])}));
      values.push_back(Values(c.dims[i], 5 * i + 2));
    }
    Output y = ops::Einsum(s, in, c.equation);
    absl::StatusOr<double> err = MaxGradientError(s, in, values, y);
    ASSERT_TRUE(err.ok()) << c.equation << ": " << err.status();
    EXPECT_LT(*err, 1e-8) << c.equation;
  }
}

// Lowered with static shapes, attention's logits are two Transposes, one
// BatchMatMulV2 and nothing read at run time; with an unknown batch the
// reshapes read the sizes from Shape.
TEST(EinsumTest, LowersToOneBatchMatMul) {
  for (bool static_batch : {true, false}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    const int64_t b = static_batch ? 2 : -1;
    Output q = ops::Placeholder(s, DT_FLOAT, {.shape = TensorShape({b, 3, 2, 4})});
    Output k = ops::Placeholder(s, DT_FLOAT, {.shape = TensorShape({b, 5, 2, 4})});
    Output y = ops::Einsum(s.WithOpName("logits"), {q, k}, "bqhd,bkhd->bhqk");
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(y.shape(), TensorShape({b, 2, 3, 5}));
    Graph& g = *s.graph();
    absl::StatusOr<int> lowered = InlineFunctionCalls(&g);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    std::map<std::string, int> count;
    for (const Node* n : g.nodes()) ++count[n->op()];
    EXPECT_EQ(count["Einsum"], 0);
    EXPECT_EQ(count["BatchMatMulV2"], 1);
    EXPECT_EQ(count["Transpose"], 2);  // k to [b, h, d, k]; q to [b, h, q, d]
    EXPECT_EQ(count["Reshape"], 0);    // one free and one summed label a side
    EXPECT_EQ(count["Shape"], 0);
    EXPECT_EQ(g.FindNode("logits")->op(), "IdentityN");
  }
  // An EinsumDense kernel with an unknown batch: the result's reshape reads it.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s, DT_FLOAT, {.shape = TensorShape({-1, 3, 4})});
  Output w = ops::Placeholder(s, DT_FLOAT, {.shape = TensorShape({4, 2, 3})});
  ops::Einsum(s, {x, w}, "abc,cde->abde");
  ASSERT_TRUE(InlineFunctionCalls(s.graph()).ok());
  int shapes = 0;
  for (const Node* n : s.graph()->nodes()) shapes += n->op() == "Shape" ? 1 : 0;
  EXPECT_EQ(shapes, 1);
}

// The shape function broadcasts "..." as NumPy does: 1 with 0 is 0, an
// unknown size with 1 stays unknown, with another size takes it.
TEST(EinsumTest, InferredShapesBroadcastTheEllipsis) {
  const struct {
    std::vector<int64_t> a, b, want;
  } cases[] = {
      {{0, 3}, {1, 3}, {0}}, {{-1, 3}, {1, 3}, {-1}}, {{1, 3}, {-1, 3}, {-1}},
      {{-1, 3}, {5, 3}, {5}}, {{4, 3}, {1, 3}, {4}},
  };
  for (const auto& c : cases) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output a = ops::Placeholder(s, DT_FLOAT, {.shape = TensorShape(c.a)});
    Output b = ops::Placeholder(s, DT_FLOAT, {.shape = TensorShape(c.b)});
    Output y = ops::Einsum(s, {a, b}, "...i,...i->...");
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(y.shape(), TensorShape(c.want)) << TensorShape(c.a).DebugString() << " "
                                              << TensorShape(c.b).DebugString();
  }
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Einsum(s, {ops::Placeholder(s, DT_FLOAT, {.shape = TensorShape({2, 3})}),
                  ops::Placeholder(s, DT_FLOAT, {.shape = TensorShape({4, 3})})},
              "...i,...i->...");
  EXPECT_TRUE(absl::StrContains(s.status().message(), "of 2 and 4 do not broadcast")) << s.status();
}

TEST(EinsumTest, BadEquationsAreClearErrors) {
  struct Bad {
    std::string equation;
    std::vector<std::vector<int64_t>> dims;
    absl::StatusCode code;
    std::string says;
  };
  for (const Bad& c : std::vector<Bad>{
           {"ij,jk", {{2, 3}, {3, 4}}, absl::StatusCode::kInvalidArgument, "exactly one '->'"},
           {"ij->i->j", {{2, 3}}, absl::StatusCode::kInvalidArgument, "exactly one '->'"},
           {"ij->ij", {{2, 3}, {2, 3}}, absl::StatusCode::kInvalidArgument, "1 operands"},
           {"i#j->ij", {{2, 3}}, absl::StatusCode::kInvalidArgument, "holds '#'"},
           {"ij->ik", {{2, 3}}, absl::StatusCode::kInvalidArgument, "'k' is in no operand"},
           {"ij->ii", {{2, 3}}, absl::StatusCode::kInvalidArgument, "repeats label 'i'"},
           {"ii->i", {{3, 3}}, absl::StatusCode::kUnimplemented, "a diagonal"},
           {"ij->i", {{2, 3, 4}}, absl::StatusCode::kInvalidArgument, "rank 3, not its 2"},
           {"ij,jk->ik", {{2, 3}, {4, 5}}, absl::StatusCode::kInvalidArgument,
            "'j' is 3 in one operand and 4"},
           {"...ij->ij", {{5, 2, 3}}, absl::StatusCode::kInvalidArgument, "must appear in the output"},
       }) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    std::vector<Output> in;
    for (const auto& d : c.dims) in.push_back(ops::Placeholder(s, DT_FLOAT, {.shape = TensorShape(d)}));
    ops::Einsum(s, in, c.equation);
    EXPECT_EQ(s.status().code(), c.code) << c.equation << ": " << s.status();
    EXPECT_TRUE(absl::StrContains(s.status().message(), c.says)) << c.equation << ": " << s.status();
    EXPECT_TRUE(absl::StrContains(s.status().message(), c.equation)) << s.status();
  }
}

}  // namespace
}  // namespace sluice
