// GatherNd's slice arithmetic on the GPU (ops/gpu/nd_index.h) against the
// CPU kernel: params whose values are their own flat positions, so that
// the CPU's output says which slice each index row took.
#include "ops/gpu/nd_index.h"

#include <memory>
#include <random>
#include <vector>

#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/array/index_ops.h"
#include "ops/builtins.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

TEST(NdIndexTest, SlicesAreTheCpuGatherNds) {
  std::mt19937 rng(4);
  const TensorShape params_shape({4, 3, 5, 2});
  for (int depth = 1; depth <= 4; ++depth) {
    SCOPED_TRACE(depth);
    gpu::NdIndexGeometry g;
    g.depth = depth;
    g.slice = 1;
    for (int d = 0; d < depth; ++d) g.dims[d] = params_shape.dim(d);
    for (int d = depth; d < params_shape.rank(); ++d) g.slice *= params_shape.dim(d);
    g.rows = 7;
    std::vector<int64_t> idx(g.rows * depth);
    for (int64_t r = 0; r < g.rows; ++r) {
      for (int d = 0; d < depth; ++d) {
        idx[r * depth + d] = std::uniform_int_distribution<int64_t>(0, g.dims[d] - 1)(rng);
      }
    }
    Tensor params(DT_FLOAT, params_shape);
    for (int64_t i = 0; i < params.NumElements(); ++i) params.data<float>()[i] = i;
    absl::StatusOr<Tensor> indices =
        Tensor::FromVector(idx).Reshaped(TensorShape({g.rows, depth}));
    ASSERT_TRUE(indices.ok()) << indices.status();
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output y = ops::GatherNd(s, ops::Const(s, params), ops::Const(s, *indices));
    ASSERT_TRUE(s.ok()) << s.status();
    absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
    ASSERT_TRUE(sess.ok()) << sess.status();
    absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({}, {y}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].NumElements(), g.rows * g.slice);
    for (int64_t r = 0; r < g.rows; ++r) {
      const int64_t slice = gpu::NdSliceOf(idx.data() + r * depth, g);
      ASSERT_GE(slice, 0);
      for (int64_t k = 0; k < g.slice; ++k) {
        EXPECT_EQ((*out)[0].data<float>()[r * g.slice + k], slice * g.slice + k)
            << "row " << r << " element " << k;
      }
    }
  }
}

TEST(NdIndexTest, AnIndexOutOfItsDimensionIsNoSlice) {
  gpu::NdIndexGeometry g;
  g.depth = 2;
  g.dims[0] = 4;
  g.dims[1] = 3;
  const std::vector<int32_t> rows = {3, 2, 4, 0, 0, 3, -1, 0, 2, 1};
  EXPECT_EQ(gpu::NdSliceOf(rows.data(), g), 11);
  EXPECT_EQ(gpu::NdSliceOf(rows.data() + 2, g), -1);  // 4 >= 4
  EXPECT_EQ(gpu::NdSliceOf(rows.data() + 4, g), -1);  // 3 >= 3
  EXPECT_EQ(gpu::NdSliceOf(rows.data() + 6, g), -1);  // negative
  EXPECT_EQ(gpu::NdSliceOf(rows.data() + 8, g), 7);
}

}  // namespace
}  // namespace sluice
