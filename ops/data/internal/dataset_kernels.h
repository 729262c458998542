// The kernel files of ops/data, each registering its CPU kernels
// (data_family.cc calls them all).
#ifndef SLUICE_OPS_DATA_INTERNAL_DATASET_KERNELS_H_
#define SLUICE_OPS_DATA_INTERNAL_DATASET_KERNELS_H_

#include "runtime/kernel_registry.h"

namespace sluice {
namespace data {
namespace internal {

void RegisterSourceDatasetKernels(KernelRegistry* kernels);    // source_datasets.cc
void RegisterFileDatasetKernels(KernelRegistry* kernels);      // file_datasets.cc
void RegisterMapDatasetKernels(KernelRegistry* kernels);       // map_datasets.cc
void RegisterParallelMapKernels(KernelRegistry* kernels);      // parallel_map_dataset.cc
void RegisterInterleaveKernels(KernelRegistry* kernels);       // interleave_datasets.cc
void RegisterBatchDatasetKernels(KernelRegistry* kernels);     // batch_datasets.cc
void RegisterShuffleDatasetKernels(KernelRegistry* kernels);   // shuffle_datasets.cc
void RegisterSequenceDatasetKernels(KernelRegistry* kernels);  // sequence_datasets.cc
void RegisterPrefetchKernels(KernelRegistry* kernels);         // prefetch_dataset.cc
void RegisterIteratorKernels(KernelRegistry* kernels);         // iterator_kernels.cc
void RegisterCacheKernels(KernelRegistry* kernels);            // cache_dataset.cc

}  // namespace internal
}  // namespace data
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_INTERNAL_DATASET_KERNELS_H_
