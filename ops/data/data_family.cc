#include "ops/data/data_family.h"

#include "ops/data/dataset_ops.h"
#include "ops/data/internal/dataset_kernels.h"

namespace sluice {

absl::Status RegisterDataFamilyOps(OpRegistry* ops) { return RegisterDatasetOps(ops); }

void RegisterDataFamilyCpuKernels(KernelRegistry* kernels) {
  data::internal::RegisterSourceDatasetKernels(kernels);
  data::internal::RegisterFileDatasetKernels(kernels);
  data::internal::RegisterMapDatasetKernels(kernels);
  data::internal::RegisterParallelMapKernels(kernels);
  data::internal::RegisterInterleaveKernels(kernels);
  data::internal::RegisterBatchDatasetKernels(kernels);
  data::internal::RegisterShuffleDatasetKernels(kernels);
  data::internal::RegisterSequenceDatasetKernels(kernels);
  data::internal::RegisterPrefetchKernels(kernels);
  data::internal::RegisterCacheKernels(kernels);
  data::internal::RegisterIteratorKernels(kernels);
}

}  // namespace sluice
