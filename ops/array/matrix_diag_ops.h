// Bands of diagonals of the innermost matrices, as TensorFlow 2 writes them
// (tf.linalg.diag, diag_part and set_diag emit the V3 ops): MatrixDiagV2/V3
// build matrices from diagonals, MatrixDiagPartV2/V3 read diagonals out,
// MatrixSetDiag (and V2/V3) replace them. CPU kernels for every fixed-size
// dtype (elements moved as bytes).
//
//   Output m = ops::MatrixDiagV3(s, d, {-1, 0});                  // d: [2, n]
//   Output band = ops::MatrixDiagPartV3(s, x, {-1, 1}, 0.0f);      // [.., 3, len]
//   Output y = ops::MatrixSetDiagV3(s, x, band, {-1, 1});
//
// k = [lower, upper] (or one diagonal k) names diagonals d (element (i,
// i + d)); a band holds them from `upper` down to `lower`, each padded to
// the longest one's length. `align` says on which side a shorter diagonal
// sits: "RIGHT_LEFT" (V3's default) puts superdiagonals to the right and
// subdiagonals to the left; V2 is "LEFT_LEFT". With one diagonal the band
// dimension is left out. MatrixDiagV3's num_rows / num_cols of -1 are the
// smallest that fit.
//
// Gradients as TensorFlow's: MatrixDiag's is the gradient's band;
// MatrixDiagPart's sets that band into zeros; MatrixSetDiag's are the
// gradient with the band zeroed, and its band.
//
// Errors, InvalidArgument with TensorFlow's wording: k of more than two
// elements, lower above upper or outside (-rows, cols); an input below rank
// 2; a band whose shape does not match k and the matrices; num_rows or
// num_cols too small or not fitting the diagonals.
#ifndef SLUICE_OPS_ARRAY_MATRIX_DIAG_OPS_H_
#define SLUICE_OPS_ARRAY_MATRIX_DIAG_OPS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterMatrixDiagOps(OpRegistry* ops);
absl::Status RegisterMatrixDiagGradients(OpRegistry* ops);
void RegisterMatrixDiagKernels(KernelRegistry* kernels);

namespace ops {

struct MatrixDiagAttrs {
  int64_t num_rows = -1;
  int64_t num_cols = -1;
  std::string align = "RIGHT_LEFT";
};

// k: an int32 scalar or [lower, upper]; padding_value: a scalar of the
// diagonal's dtype.
Output MatrixDiagV3(const Scope& scope, Input diagonal, Input k, Input padding_value,
                    const MatrixDiagAttrs& attrs = {},
                    std::source_location loc = std::source_location::current());
Output MatrixDiagPartV3(const Scope& scope, Input input, Input k, Input padding_value,
                        const std::string& align = "RIGHT_LEFT",
                        std::source_location loc = std::source_location::current());
Output MatrixSetDiagV3(const Scope& scope, Input input, Input diagonal, Input k,
                       const std::string& align = "RIGHT_LEFT",
                       std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_MATRIX_DIAG_OPS_H_
