// The kernel files of ops/data, each registering its CPU kernels
// (data_family.cc calls them all).
#ifndef SLUICE_OPS_DATA_INTERNAL_DATASET_KERNELS_H_
#define SLUICE_OPS_DATA_INTERNAL_DATASET_KERNELS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/data/dataset.h"
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

// `input` read ahead by a thread of its own, `buffer_size` elements (-1:
// AUTOTUNE) (prefetch_dataset.cc; ParallelInterleave wraps each input in one).
std::shared_ptr<const DatasetBase> MakePrefetchDataset(std::string node,
                                                       std::shared_ptr<const DatasetBase> input,
                                                       int64_t buffer_size);

}  // namespace internal
}  // namespace data
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_INTERNAL_DATASET_KERNELS_H_
