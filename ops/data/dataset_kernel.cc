#include "ops/data/dataset_kernel.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/types.h"

namespace sluice {

absl::Status DatasetOpKernel::Init(const OpKernelConstruction& ctx) {
  node_ = ctx.node().name();
  op_ = ctx.node().op();
  const AttrMap& attrs = ctx.node().attrs();
  const char* types_attr = attrs.contains("output_types") ? "output_types" : "Toutput_types";
  if (attrs.contains(types_attr)) {
    ASSIGN_OR_RETURN(dtypes_, ctx.GetAttr<std::vector<DataType>>(types_attr));
  }
  if (attrs.contains("output_shapes")) {
    ASSIGN_OR_RETURN(shapes_, ctx.GetAttr<std::vector<TensorShape>>("output_shapes"));
  }
  if (!shapes_.empty() && shapes_.size() != dtypes_.size()) {
    return absl::InvalidArgumentError(absl::StrCat(op_, " '", node_, "': output_shapes has ",
                                                   shapes_.size(), " entries but ", types_attr,
                                                   " has ", dtypes_.size()));
  }
  if (shapes_.empty()) shapes_.assign(dtypes_.size(), TensorShape::Unknown());
  return InitDataset(ctx);
}

absl::Status DatasetOpKernel::Compute(OpKernelContext* ctx) {
  absl::StatusOr<std::shared_ptr<const data::DatasetBase>> ds = MakeDataset(ctx);
  if (!ds.ok()) {
    return absl::Status(ds.status().code(),
                        absl::StrCat(op_, " '", node_, "': ", ds.status().message()));
  }
  ctx->set_output(0, data::DatasetTensor(*std::move(ds)));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const data::DatasetBase>> UnaryDatasetOpKernel::MakeDataset(
    OpKernelContext* ctx) {
  ASSIGN_OR_RETURN(std::shared_ptr<const data::DatasetBase> input,
                   DatasetInput(ctx, 0, "input_dataset"));
  return MakeDataset(ctx, std::move(input));
}

absl::StatusOr<std::shared_ptr<const data::DatasetBase>> DatasetInput(OpKernelContext* ctx, int i,
                                                                      absl::string_view name) {
  absl::StatusOr<std::shared_ptr<const data::DatasetBase>> ds =
      data::DatasetFromTensor(ctx->input(i));
  if (!ds.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("input '", name, "': ", ds.status().message()));
  }
  return ds;
}

absl::StatusOr<int64_t> Int64Input(OpKernelContext* ctx, int i, absl::string_view name) {
  const Tensor& t = ctx->input(i);
  if (t.dims() != 0 || (t.dtype() != DT_INT64 && t.dtype() != DT_INT32)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", name, "' must be an integer scalar, got ", t.DebugString(3)));
  }
  return t.dtype() == DT_INT64 ? t.scalar<int64_t>() : t.scalar<int32_t>();
}

absl::StatusOr<bool> BoolInput(OpKernelContext* ctx, int i, absl::string_view name) {
  const Tensor& t = ctx->input(i);
  if (t.dims() != 0 || t.dtype() != DT_BOOL) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", name, "' must be a bool scalar, got ", t.DebugString(3)));
  }
  return t.scalar<bool>();
}

absl::StatusOr<std::vector<std::string>> StringsInput(OpKernelContext* ctx, int i,
                                                      absl::string_view name) {
  const Tensor& t = ctx->input(i);
  if (t.dims() > 1 || t.dtype() != DT_STRING) {
    return absl::InvalidArgumentError(absl::StrCat("'", name,
                                                   "' must be a string scalar or vector, got ",
                                                   t.DebugString(3)));
  }
  absl::Span<const std::string> v = t.flat<std::string>();
  return std::vector<std::string>(v.begin(), v.end());
}

absl::Status CheckElement(const std::vector<Tensor>& element, const data::DataTypeVector& dtypes,
                          const std::vector<TensorShape>& shapes, absl::string_view what) {
  if (element.size() != dtypes.size()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " produced ", element.size(),
                                                   " components, expected ", dtypes.size()));
  }
  for (size_t i = 0; i < element.size(); ++i) {
    if (element[i].dtype() != dtypes[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " produced a ", DataTypeName(element[i].dtype()),
                       " in component ", i, ", expected ", DataTypeName(dtypes[i])));
    }
    if (i < shapes.size() && !shapes[i].IsCompatibleWith(element[i].shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " produced shape ", element[i].shape().DebugString(), " in component ", i,
          ", incompatible with the declared ", shapes[i].DebugString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace sluice
