// The GPU activations' element functions on the host
// (ops/gpu/activation_fns_on_host.cu.h).
#include "ops/gpu/activation_fns.cu.h"
#include "ops/gpu/activation_fns_on_host.cu.h"

namespace sluice::gpu {
namespace {

template <typename C>
struct Forward {
  template <ActivationFn kFn>
  void operator()() const {
    *out = activation_fns::Activate<kFn>(x, alpha);
  }
  C x, alpha;
  C* out;
};

template <typename C>
struct Backward {
  template <ActivationGradFn kFn>
  void operator()() const {
    *out = activation_fns::ActivateGrad<kFn>(g, v, alpha);
  }
  C g, v, alpha;
  C* out;
};

}  // namespace

template <typename C>
C ActivateOnHost(ActivationFn fn, C x, C alpha) {
  C out = C(0);
  (void)activation_fns::VisitActivation(fn, Forward<C>{x, alpha, &out});
  return out;
}

template <typename C>
C ActivateGradOnHost(ActivationGradFn fn, C g, C v, C alpha) {
  C out = C(0);
  (void)activation_fns::VisitActivationGrad(fn, Backward<C>{g, v, alpha, &out});
  return out;
}

template float ActivateOnHost<float>(ActivationFn, float, float);
template double ActivateOnHost<double>(ActivationFn, double, double);
template float ActivateGradOnHost<float>(ActivationGradFn, float, float, float);
template double ActivateGradOnHost<double>(ActivationGradFn, double, double, double);

}  // namespace sluice::gpu
