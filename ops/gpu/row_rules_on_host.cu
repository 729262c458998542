// The GPU row rules run on the host (ops/gpu/row_rules_on_host.cu.h): the
// kernel's loop of ops/gpu/sparse_training.cu with one "thread".
#include <cstdint>

#include "ops/gpu/row_rules.cu.h"
#include "ops/gpu/row_rules_on_host.cu.h"

namespace sluice::gpu {
namespace {

template <typename T, typename Index>
struct HostLoop {
  template <RowRule kRule>
  void operator()() const {
    T h[kMaxRowHyper];
    for (int k = 0; k < kMaxRowHyper; ++k) h[k] = u.hyper[k] == nullptr ? T(0) : *u.hyper[k];
    const bool sparse = indices != nullptr;
    for (int64_t k = 0; k < n * inner; ++k) {
      const int64_t at = row_rules::RowTarget(indices, k, rows, inner);
      if (at < 0) continue;
      row_rules::ApplyRowRule<kRule>(u, h, at, u.grad[k], sparse);
    }
  }

  const RowUpdate<T>& u;
  int64_t rows;
  int64_t inner;
  const Index* indices;
  int64_t n;
};

}  // namespace

template <typename T, typename Index>
void RunRowUpdateOnHost(const RowUpdate<T>& u, int64_t rows, int64_t inner, const Index* indices,
                        int64_t n) {
  if (inner <= 0) return;
  (void)row_rules::VisitRowRule(u.rule, HostLoop<T, Index>{u, rows, inner, indices, n});
}

template void RunRowUpdateOnHost<float, int32_t>(const RowUpdate<float>&, int64_t, int64_t,
                                                 const int32_t*, int64_t);
template void RunRowUpdateOnHost<float, int64_t>(const RowUpdate<float>&, int64_t, int64_t,
                                                 const int64_t*, int64_t);
template void RunRowUpdateOnHost<double, int32_t>(const RowUpdate<double>&, int64_t, int64_t,
                                                  const int32_t*, int64_t);
template void RunRowUpdateOnHost<double, int64_t>(const RowUpdate<double>&, int64_t, int64_t,
                                                  const int64_t*, int64_t);

}  // namespace sluice::gpu
