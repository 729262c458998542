// ArgMax's and ArgMin's GPU order run on the host
// (ops/gpu/argmax_order_on_host.cu.h).
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "ops/gpu/argmax_order.cu.h"
#include "ops/gpu/argmax_order_on_host.cu.h"

namespace sluice::gpu {
namespace {

template <bool kMin, typename T>
int64_t ArgBest(const T* x, int64_t n, int lanes, uint32_t seed) {
  using argmax_order::Better;
  std::vector<std::pair<T, int64_t>> best;
  for (int lane = 0; lane < lanes; ++lane) {
    T v = argmax_order::WorstValue<kMin, T>();
    int64_t i = argmax_order::kNoIndex;
    for (int64_t k = lane; k < n; k += lanes) {
      if (Better<kMin>(x[k], k, v, i)) {
        v = x[k];
        i = k;
      }
    }
    best.emplace_back(v, i);
  }
  std::mt19937 rng(seed);
  while (best.size() > 1) {  // two random candidates meet; the better stays
    std::uniform_int_distribution<size_t> pick(0, best.size() - 1);
    const size_t a = pick(rng);
    size_t b = pick(rng);
    if (a == b) b = (b + 1) % best.size();
    if (Better<kMin>(best[b].first, best[b].second, best[a].first, best[a].second)) {
      best[a] = best[b];
    }
    best[b] = best.back();
    best.pop_back();
  }
  return best[0].second;
}

}  // namespace

template <typename T>
int64_t ArgBestOnHost(bool arg_min, const T* x, int64_t n, int lanes, uint32_t seed) {
  return arg_min ? ArgBest<true>(x, n, lanes, seed) : ArgBest<false>(x, n, lanes, seed);
}

template int64_t ArgBestOnHost<float>(bool, const float*, int64_t, int, uint32_t);
template int64_t ArgBestOnHost<double>(bool, const double*, int64_t, int, uint32_t);

}  // namespace sluice::gpu
