#include "ops/io/io_family.h"

#include "base/status_macros.h"
#include "ops/io/file_ops.h"
#include "ops/io/io_ops.h"
#include "ops/io/legacy_checkpoint_ops.h"
#include "ops/io/print_ops.h"
#include "ops/io/reader_ops.h"
#include "ops/io/sharded_checkpoint_ops.h"
#include "ops/io/summary_ops.h"
#include "ops/io/summary_writer_ops.h"

namespace sluice {

absl::Status RegisterIoFamilyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterShardedCheckpointOps(ops));
  RETURN_IF_ERROR(RegisterSummaryOps(ops));
  RETURN_IF_ERROR(RegisterSummaryWriterOps(ops));
  RETURN_IF_ERROR(RegisterIoOps(ops));
  RETURN_IF_ERROR(RegisterLegacyCheckpointOps(ops));
  RETURN_IF_ERROR(RegisterReaderOps(ops));
  RETURN_IF_ERROR(RegisterFileOps(ops));
  RETURN_IF_ERROR(RegisterPrintOps(ops));
  return absl::OkStatus();
}

void RegisterIoFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterShardedCheckpointKernels(kernels);
  RegisterSummaryKernels(kernels);
  RegisterSummaryWriterKernels(kernels);
  RegisterIoKernels(kernels);
  RegisterLegacyCheckpointKernels(kernels);
  RegisterReaderKernels(kernels);
  RegisterFileKernels(kernels);
  RegisterPrintKernels(kernels);
}

}  // namespace sluice
