// Helpers the sparse tensor kernels share (sparse_tensor_kernels.cc,
// sparse_combine_kernels.cc): moving one element of any dtype, the shape
// checks and messages of index matrices, and row comparisons.
// Thread-compatible; header of plain functions.
#ifndef SLUICE_OPS_SPARSE_INTERNAL_SPARSE_KERNEL_UTIL_H_
#define SLUICE_OPS_SPARSE_INTERNAL_SPARSE_KERNEL_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "runtime/kernel_registry.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// dst[j] = src[i], for any dtype (strings as objects, the rest as bytes).
void CopyElement(const Tensor& src, int64_t i, Tensor* dst, int64_t j);
// InvalidArgument "<what> must be a matrix / vector, got shape [..]".
absl::Status CheckMatrix(const Tensor& t, const char* what);
absl::Status CheckVector(const Tensor& t, const char* what);
// "[2,3]", as the errors of the other array ops print shapes and indices.
std::string Ints(const int64_t* v, size_t n);
// Lexicographic comparison of rows a and b of an [n, rank] index matrix.
int CompareRows(const int64_t* idx, int64_t rank, int64_t a, int64_t b);
// Row i of an [n, rank] index matrix, as a hash key.
std::string RowKey(const int64_t* idx, int64_t rank, int64_t i);
// A scalar of any real type, as double (0 for others).
double RealScalar(const Tensor& t);

// The kernels of SparseTensorDenseAdd, SparseAdd(+Grad), SparseConcat and
// SparseSlice(+Grad) (sparse_combine_kernels.cc).
void RegisterSparseCombineKernels(KernelRegistry* kernels);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_SPARSE_INTERNAL_SPARSE_KERNEL_UTIL_H_
