// The parsing family (ops/parsing/): tf.train.Example / SequenceExample
// parsing (ParseExample, ParseExampleV2, ParseSingleExample,
// ParseSequenceExample; parsing_ops.h) and the record decoders DecodeRaw
// and DecodeCSV (decode_ops.h). One row of the built-in list
// (ops/op_families.h) names these two functions (the family has no
// gradients); a new op library in this folder adds its calls here and
// nowhere outside the folder.
//
//   RETURN_IF_ERROR(RegisterParsingFamilyOps(&ops));
//   RegisterParsingFamilyCpuKernels(&kernels);
//
// Errors: the first registration error (AlreadyExists for a duplicate op).
// Thread-compatible: call during start-up, on registries the caller owns.
#ifndef SLUICE_OPS_PARSING_PARSING_FAMILY_H_
#define SLUICE_OPS_PARSING_PARSING_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterParsingFamilyOps(OpRegistry* ops);
void RegisterParsingFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_PARSING_PARSING_FAMILY_H_
