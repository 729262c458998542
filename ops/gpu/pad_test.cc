// Pad's index arithmetic on the GPU (ops/gpu/pad.cu.h, PadSource) against
// the CPU's Pad: an input whose values are their own flat positions plus
// one, padded with zeros, so the CPU's output says where each element came
// from (0: the padding).
#include "ops/gpu/pad.cu.h"

#include <memory>
#include <vector>

#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_layout_ops.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

TEST(PadTest, SourcesAreTheCpuPads) {
  struct Case {
    TensorShape x;
    std::vector<int32_t> paddings;
  };
  for (const Case& c : {Case{TensorShape({5}), {2, 3}}, Case{TensorShape({3, 4}), {0, 0, 1, 2}},
                        Case{TensorShape({2, 3, 4, 5}), {1, 0, 1, 1, 2, 0, 0, 3}},
                        Case{TensorShape({2, 3}), {0, 0, 0, 0}}}) {
    SCOPED_TRACE(c.x.DebugString());
    Tensor x(DT_FLOAT, c.x);
    for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] = i + 1;
    absl::StatusOr<Tensor> paddings =
        Tensor::FromVector(c.paddings).Reshaped(TensorShape({c.x.rank(), 2}));
    ASSERT_TRUE(paddings.ok()) << paddings.status();
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output y = ops::Pad(s, ops::Const(s, x), ops::Const(s, *paddings));
    ASSERT_TRUE(s.ok()) << s.status();
    absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
    ASSERT_TRUE(sess.ok()) << sess.status();
    absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({}, {y}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& padded = (*out)[0];
    gpu::PadGeometry g;
    g.rank = c.x.rank();
    for (int d = 0; d < g.rank; ++d) {
      g.in_dims[d] = c.x.dim(d);
      g.out_dims[d] = padded.dim_size(d);
      g.before[d] = c.paddings[2 * d];
    }
    for (int64_t o = 0; o < padded.NumElements(); ++o) {
      EXPECT_EQ(gpu::PadSource(g, o) + 1, padded.data<float>()[o]) << "output element " << o;
    }
  }
}

}  // namespace
}  // namespace sluice
