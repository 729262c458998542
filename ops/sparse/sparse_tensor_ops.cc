// Sparse tensor op definitions, shapes and wrappers (kernels:
// sparse_tensor_kernels.cc; gradients: sparse_tensor_grad.cc).
#include "ops/sparse/sparse_tensor_ops.h"

#include <optional>
#include <vector>

#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

int64_t DimOr(const TensorShape& s, int d) {
  return s.unknown_rank() || s.rank() <= d ? -1 : s.dim(d);
}

}  // namespace

absl::Status RegisterSparseTensorOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseReshape")
                                    .Input("input_indices: int64")
                                    .Input("input_shape: int64")
                                    .Input("new_shape: int64")
                                    .Output("output_indices: int64")
                                    .Output("output_shape: int64")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 2));
                                      RETURN_IF_ERROR(c->WithRank(2, 1));
                                      const int64_t rank = DimOr(c->input(2), 0);
                                      c->set_output(0, TensorShape({DimOr(c->input(0), 0), rank}));
                                      c->set_output(1, TensorShape({rank}));
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseFillEmptyRows")
                                    .Input("indices: int64")
                                    .Input("values: T")
                                    .Input("dense_shape: int64")
                                    .Input("default_value: T")
                                    .Output("output_indices: int64")
                                    .Output("output_values: T")
                                    .Output("empty_row_indicator: bool")
                                    .Output("reverse_index_map: int64")
                                    .Attr("T: type")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 2));
                                      RETURN_IF_ERROR(c->WithRank(1, 1));
                                      RETURN_IF_ERROR(c->WithRank(2, 1));
                                      RETURN_IF_ERROR(c->WithRank(3, 0));
                                      c->set_output(0, TensorShape({-1, DimOr(c->input(0), 1)}));
                                      c->set_output(1, TensorShape({-1}));
                                      c->set_output(2, TensorShape({-1}));
                                      c->set_output(3, TensorShape({DimOr(c->input(1), 0)}));
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseFillEmptyRowsGrad")
                                    .Input("reverse_index_map: int64")
                                    .Input("grad_values: T")
                                    .Output("d_values: T")
                                    .Output("d_default_value: T")
                                    .Attr("T: type")
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, TensorShape({DimOr(c->input(0), 0)}));
                                      c->set_output(1, TensorShape({}));
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseToDense")
                                    .Input("sparse_indices: Tindices")
                                    .Input("output_shape: Tindices")
                                    .Input("sparse_values: T")
                                    .Input("default_value: T")
                                    .Output("dense: T")
                                    .Attr("validate_indices: bool = true")
                                    .Attr("T: type")
                                    .Attr("Tindices: {int32, int64}")
                                    .SetShapeFn([](InferenceContext* c) {
                                      ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> shape,
                                                       c->InputAsInts(1));
                                      if (shape.has_value()) {
                                        c->set_output(0, TensorShape(*shape));
                                      } else {
                                        c->set_output(0, TensorShape::UnknownOfRank(
                                                             DimOr(c->input(1), 0)));
                                      }
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseTensorDenseMatMul")
                                    .Input("a_indices: Tindices")
                                    .Input("a_values: T")
                                    .Input("a_shape: int64")
                                    .Input("b: T")
                                    .Output("product: T")
                                    .Attr("T: type")
                                    .Attr("Tindices: {int32, int64} = DT_INT64")
                                    .Attr("adjoint_a: bool = false")
                                    .Attr("adjoint_b: bool = false")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(3, 2));
                                      ASSIGN_OR_RETURN(bool adj_a, c->GetAttr<bool>("adjoint_a"));
                                      ASSIGN_OR_RETURN(bool adj_b, c->GetAttr<bool>("adjoint_b"));
                                      int64_t rows = -1;
                                      ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> a,
                                                       c->InputAsInts(2));
                                      if (a.has_value() && a->size() == 2) {
                                        rows = (*a)[adj_a ? 1 : 0];
                                      }
                                      c->set_output(0, TensorShape({rows, DimOr(c->input(3), adj_b ? 0 : 1)}));
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseReorder")
                                    .Input("input_indices: int64")
                                    .Input("input_values: T")
                                    .Input("input_shape: int64")
                                    .Output("output_indices: int64")
                                    .Output("output_values: T")
                                    .Attr("T: type")
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, c->input(0));
                                      c->set_output(1, c->input(1));
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseTensorDenseAdd")
                                    .Input("a_indices: Tindices")
                                    .Input("a_values: T")
                                    .Input("a_shape: Tindices")
                                    .Input("b: T")
                                    .Output("output: T")
                                    .Attr("T: {float, double, int32, int64}")
                                    .Attr("Tindices: {int32, int64}")
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, c->input(3));
                                      return absl::OkStatus();
                                    })));
  const auto sparse_out = [](InferenceContext* c) {
    c->set_output(0, TensorShape({-1, -1}));
    c->set_output(1, TensorShape({-1}));
    c->set_output(2, TensorShape({-1}));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseAdd")
                                    .Input("a_indices: int64")
                                    .Input("a_values: T")
                                    .Input("a_shape: int64")
                                    .Input("b_indices: int64")
                                    .Input("b_values: T")
                                    .Input("b_shape: int64")
                                    .Input("thresh: Treal")
                                    .Output("sum_indices: int64")
                                    .Output("sum_values: T")
                                    .Output("sum_shape: int64")
                                    .Attr("T: {float, double, int32, int64}")
                                    .Attr("Treal: {float, double, int32, int64}")
                                    .SetShapeFn(sparse_out)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseAddGrad")
                                    .Input("backprop_val_grad: T")
                                    .Input("a_indices: int64")
                                    .Input("b_indices: int64")
                                    .Input("sum_indices: int64")
                                    .Output("a_val_grad: T")
                                    .Output("b_val_grad: T")
                                    .Attr("T: {float, double, int32, int64}")
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, TensorShape({DimOr(c->input(1), 0)}));
                                      c->set_output(1, TensorShape({DimOr(c->input(2), 0)}));
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseConcat")
                                    .Input("indices: N * int64")
                                    .Input("values: N * T")
                                    .Input("shapes: N * int64")
                                    .Output("output_indices: int64")
                                    .Output("output_values: T")
                                    .Output("output_shape: int64")
                                    .Attr("concat_dim: int")
                                    .Attr("N: int >= 2")
                                    .Attr("T: type")
                                    .SetShapeFn(sparse_out)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseSlice")
                                    .Input("indices: int64")
                                    .Input("values: T")
                                    .Input("shape: int64")
                                    .Input("start: int64")
                                    .Input("size: int64")
                                    .Output("output_indices: int64")
                                    .Output("output_values: T")
                                    .Output("output_shape: int64")
                                    .Attr("T: type")
                                    .SetShapeFn(sparse_out)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SparseSliceGrad")
                                    .Input("backprop_val_grad: T")
                                    .Input("input_indices: int64")
                                    .Input("input_start: int64")
                                    .Input("output_indices: int64")
                                    .Output("val_grad: T")
                                    .Attr("T: {float, double, int32, int64}")
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, TensorShape({DimOr(c->input(1), 0)}));
                                      return absl::OkStatus();
                                    })));
  for (const char* op : {"SparseReshape", "SparseFillEmptyRowsGrad", "SparseAddGrad",
                         "SparseConcat", "SparseSliceGrad"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

SparseReshapeOutputs SparseReshape(const Scope& s, Input input_indices, Input input_shape,
                                   Input new_shape, std::source_location loc) {
  std::vector<Output> o =
      s.Op("SparseReshape", loc).Input(input_indices).Input(input_shape).Input(new_shape).FinalizeAll();
  o.resize(2);
  return {o[0], o[1]};
}

SparseFillEmptyRowsOutputs SparseFillEmptyRows(const Scope& s, Input indices, Input values,
                                               Input dense_shape, Input default_value,
                                               std::source_location loc) {
  std::vector<Output> o = s.Op("SparseFillEmptyRows", loc)
                              .Input(indices)
                              .Input(values)
                              .Input(dense_shape)
                              .Input(default_value)
                              .FinalizeAll();
  o.resize(4);
  return {o[0], o[1], o[2], o[3]};
}

Output SparseToDense(const Scope& s, Input sparse_indices, Input output_shape, Input sparse_values,
                     Input default_value, bool validate_indices, std::source_location loc) {
  return s.Op("SparseToDense", loc)
      .Input(sparse_indices)
      .Input(output_shape)
      .Input(sparse_values)
      .Input(default_value)
      .Attr("validate_indices", validate_indices)
      .Finalize1();
}

Output SparseTensorDenseMatMul(const Scope& s, Input a_indices, Input a_values, Input a_shape,
                               Input b, const SparseMatMulAttrs& attrs, std::source_location loc) {
  return s.Op("SparseTensorDenseMatMul", loc)
      .Input(a_indices)
      .Input(a_values)
      .Input(a_shape)
      .Input(b)
      .Attr("adjoint_a", attrs.adjoint_a)
      .Attr("adjoint_b", attrs.adjoint_b)
      .Finalize1();
}

SparseReorderOutputs SparseReorder(const Scope& s, Input input_indices, Input input_values,
                                   Input input_shape, std::source_location loc) {
  std::vector<Output> o = s.Op("SparseReorder", loc)
                              .Input(input_indices)
                              .Input(input_values)
                              .Input(input_shape)
                              .FinalizeAll();
  o.resize(2);
  return {o[0], o[1]};
}

Output SparseTensorDenseAdd(const Scope& s, Input a_indices, Input a_values, Input a_shape,
                            Input b, std::source_location loc) {
  return s.Op("SparseTensorDenseAdd", loc)
      .Input(a_indices)
      .Input(a_values)
      .Input(a_shape)
      .Input(b)
      .Finalize1();
}

namespace {

SparseTensorOutputs Three(std::vector<Output> o) {
  o.resize(3);
  return {o[0], o[1], o[2]};
}

}  // namespace

SparseTensorOutputs SparseAdd(const Scope& s, Input a_indices, Input a_values, Input a_shape,
                              Input b_indices, Input b_values, Input b_shape, Input thresh,
                              std::source_location loc) {
  return Three(s.Op("SparseAdd", loc)
                   .Input(a_indices)
                   .Input(a_values)
                   .Input(a_shape)
                   .Input(b_indices)
                   .Input(b_values)
                   .Input(b_shape)
                   .Input(thresh)
                   .FinalizeAll());
}

SparseTensorOutputs SparseConcat(const Scope& s, absl::Span<const Output> indices,
                                 absl::Span<const Output> values, absl::Span<const Output> shapes,
                                 int64_t concat_dim, std::source_location loc) {
  return Three(s.Op("SparseConcat", loc)
                   .InputList(indices)
                   .InputList(values)
                   .InputList(shapes)
                   .Attr("concat_dim", concat_dim)
                   .FinalizeAll());
}

SparseTensorOutputs SparseSlice(const Scope& s, Input indices, Input values, Input shape,
                                Input start, Input size, std::source_location loc) {
  return Three(s.Op("SparseSlice", loc)
                   .Input(indices)
                   .Input(values)
                   .Input(shape)
                   .Input(start)
                   .Input(size)
                   .FinalizeAll());
}

}  // namespace ops
}  // namespace sluice
