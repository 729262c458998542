// A pipeline stage of dense layers (placement/pipeline.h), shared by the
// model-parallel example and the pipeline benchmark.
//
//   std::vector<int64_t> sizes = {784, 256, 256, 10};
//   std::vector<PipelineStage> stages = {DenseStage("/device:CPU:0", sizes, 1, 1),
//                                        DenseStage("/device:CPU:1", sizes, 2, 3)};
//
// Layers [first, last] (1-based, named "layer<l>") of the MLP whose widths
// are `sizes`: weights He-initialized (truncated normal, seeded by layer),
// zero biases, ReLU after every layer but the model's last.
//
// Thread-compatible; the stage's functions build nodes in the scope given.
#ifndef SLUICE_EXAMPLES_DENSE_STAGE_H_
#define SLUICE_EXAMPLES_DENSE_STAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sluice.h"

namespace sluice {

PipelineStage DenseStage(const std::string& device, std::vector<int64_t> sizes, int first,
                         int last);

}  // namespace sluice

#endif  // SLUICE_EXAMPLES_DENSE_STAGE_H_
