// NumPy .npy files <-> Tensor: how users hand tensors to and take them from
// the tools (DESIGN.md "Files users exchange").
//
//   ASSIGN_OR_RETURN(Tensor x, ReadNpyFile("batch.npy"));
//   RETURN_IF_ERROR(WriteNpyFile(result, "out/loss.npy"));
//   ASSIGN_OR_RETURN(std::string bytes, EncodeNpy(result));   // in memory
//   ASSIGN_OR_RETURN(Tensor back, ParseNpy(bytes));
//
// Format versions 1.0, 2.0 and 3.0 are read; 1.0 is written (2.0 when the
// header would not fit 64 KiB). Element types: float16/32/64, int8/16/32/64,
// uint8/16 and bool ('<f4', '|b1', ...), little-endian ('<', or '|' for
// one-byte types), C order. Big-endian data, fortran_order True and other
// dtypes (complex, strings, objects, structured) are refused with
// Unimplemented; a malformed file (bad magic, bad header, truncated data) with
// InvalidArgument. File errors name the path: NotFound for a missing file.
//
// Thread-safe: pure functions. Returned tensors own fresh buffers from
// DefaultCpuAllocator().
#ifndef SLUICE_RUNTIME_NPY_H_
#define SLUICE_RUNTIME_NPY_H_

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/tensor.h"

namespace sluice {

// Decodes the bytes of a whole .npy file.
absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes);
// Encodes a tensor as the bytes of a .npy file. Unimplemented for dtypes
// NumPy files cannot hold here (resource, variant, bfloat16, ...). Strings
// are NumPy's fixed-width bytes ("|S<longest>", NUL-padded); reading one
// drops each element's trailing NULs, as NumPy does.
absl::StatusOr<std::string> EncodeNpy(const Tensor& tensor);

absl::StatusOr<Tensor> ReadNpyFile(const std::string& path);
absl::Status WriteNpyFile(const Tensor& tensor, const std::string& path);

// The .npy descr of a dtype ("<f4", "|b1"), or "" when there is none.
std::string NpyDescr(DataType dtype);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_NPY_H_
