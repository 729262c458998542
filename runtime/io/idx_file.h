// IDX files (the MNIST / Fashion-MNIST format): a big-endian header naming
// the element type and the dimensions, then the elements, row-major and
// big-endian. Files compressed with gzip (as Debian's dataset-fashion-mnist
// ships them, *.gz) are read the same way.
//
//   ASSIGN_OR_RETURN(Tensor images, ReadIdxFile(
//       "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"));
//   // uint8 [60000, 28, 28]
//
// Element types: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float,
// 0x0E double. Errors name the file: NotFound, or InvalidArgument for a bad
// magic number, an unknown type, or fewer (or more) bytes than the header
// promises.
#ifndef SLUICE_RUNTIME_IO_IDX_FILE_H_
#define SLUICE_RUNTIME_IO_IDX_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "runtime/tensor.h"

namespace sluice {

absl::StatusOr<Tensor> ReadIdxFile(const std::string& path);

// Writes `t` (one of the types above, rank 1..255) as an uncompressed IDX
// file; for tests and for tools that make small datasets.
absl::Status WriteIdxFile(const Tensor& t, const std::string& path);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_IO_IDX_FILE_H_
