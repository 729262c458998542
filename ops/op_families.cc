#include "ops/op_families.h"

#include "absl/strings/str_cat.h"
#include "ops/array/array_family.h"
#include "ops/audio/audio_family.h"
#include "ops/collective/collective_ops.h"
#include "ops/control_flow/control_flow_family.h"
#include "ops/data/data_family.h"
#include "ops/data_flow/data_flow_family.h"
#include "ops/functional/functional_ops.h"
#include "ops/image/image_family.h"
#include "ops/io/io_family.h"
#include "ops/lookup/lookup_family.h"
#include "ops/math/math_family.h"
#include "ops/nn/nn_family.h"
#include "ops/parsing/parsing_family.h"
#include "ops/random/random_family.h"
#include "ops/sparse/sparse_family.h"
#include "ops/state/state_family.h"
#include "ops/strings/strings_family.h"
#include "ops/training/training_ops.h"
#include "runtime/frame_ops.h"
#include "runtime/sendrecv_ops.h"

namespace sluice {
namespace {

// The executor's own ops (Enter/Exit/NextIteration..., _Send/_Recv) live in
// runtime/; they head the list as before the families existed.
absl::Status RegisterRuntimeOps(OpRegistry* ops) {
  absl::Status s = RegisterFrameOps(ops);
  if (s.ok()) s = RegisterSendRecvOps(ops);
  return s;
}

void RegisterRuntimeCpuKernels(KernelRegistry* kernels) {
  RegisterFrameKernels(kernels);
  RegisterSendRecvKernels(kernels);
}

// One family with one op library registers that library's functions.
constexpr OpFamily kFamilies[] = {
    {"runtime", RegisterRuntimeOps, nullptr, RegisterRuntimeCpuKernels},
    {"array", RegisterArrayFamilyOps, RegisterArrayFamilyGradients, RegisterArrayFamilyCpuKernels},
    {"control_flow", RegisterControlFlowFamilyOps, RegisterControlFlowFamilyGradients,
     RegisterControlFlowFamilyCpuKernels},
    {"nn", RegisterNnFamilyOps, RegisterNnFamilyGradients, RegisterNnFamilyCpuKernels},
    {"math", RegisterMathFamilyOps, RegisterMathFamilyGradients, RegisterMathFamilyCpuKernels},
    {"state", RegisterStateFamilyOps, nullptr, RegisterStateFamilyCpuKernels},
    {"random", RegisterRandomFamilyOps, nullptr, RegisterRandomFamilyCpuKernels},
    {"training", RegisterTrainingOps, nullptr, RegisterTrainingKernels},
    {"io", RegisterIoFamilyOps, nullptr, RegisterIoFamilyCpuKernels},
    {"data_flow", RegisterDataFlowFamilyOps, nullptr, RegisterDataFlowFamilyCpuKernels},
    {"data", RegisterDataFamilyOps, nullptr, RegisterDataFamilyCpuKernels},
    {"parsing", RegisterParsingFamilyOps, nullptr, RegisterParsingFamilyCpuKernels},
    {"audio", RegisterAudioFamilyOps, nullptr, RegisterAudioFamilyCpuKernels},
    {"image", RegisterImageFamilyOps, RegisterImageFamilyGradients, RegisterImageFamilyCpuKernels},
    {"strings", RegisterStringsFamilyOps, nullptr, RegisterStringsFamilyCpuKernels},
    {"sparse", RegisterSparseFamilyOps, RegisterSparseFamilyGradients,
     RegisterSparseFamilyCpuKernels},
    {"lookup", RegisterLookupFamilyOps, nullptr, RegisterLookupFamilyCpuKernels},
    {"collective", RegisterCollectiveOps, RegisterCollectiveGradients, RegisterCollectiveKernels},
    {"functional", RegisterFunctionalOps, RegisterFunctionalGradients, RegisterFunctionalKernels},
};

absl::Status WithFamily(const OpFamily& family, absl::Status s) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("op family '", family.name, "': ", s.message()));
}

}  // namespace

absl::Span<const OpFamily> BuiltinOpFamilies() { return kFamilies; }

absl::Status RegisterOpFamilies(absl::Span<const OpFamily> families, OpRegistry* ops) {
  for (const OpFamily& family : families) {
    absl::Status s = WithFamily(family, family.register_ops(ops));
    if (!s.ok()) return s;
  }
  for (const OpFamily& family : families) {
    if (family.register_gradients == nullptr) continue;
    absl::Status s = WithFamily(family, family.register_gradients(ops));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

void RegisterOpFamilyCpuKernels(absl::Span<const OpFamily> families, KernelRegistry* kernels) {
  for (const OpFamily& family : families) family.register_cpu_kernels(kernels);
}

}  // namespace sluice
