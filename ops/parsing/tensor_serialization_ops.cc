// SerializeTensor and ParseTensor: op definitions, CPU kernels and
// wrappers (ops/parsing/tensor_serialization_ops.h).
#include "ops/parsing/tensor_serialization_ops.h"

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/proto/tensor.pb.h"
#include "graph/shape_inference.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

class SerializeTensorOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    if (HoldsVariants(t.dtype()) || t.dtype() == DT_RESOURCE) {
      return absl::UnimplementedError(absl::StrCat(
          "SerializeTensor: ", DataTypeName(t.dtype()), " tensors have no serialized form"));
    }
    ::tensorflow::TensorProto proto;
    t.ToProto(&proto);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    if (!proto.SerializeToString(&out->scalar<std::string>())) {
      return absl::InternalError("SerializeTensor: the TensorProto could not be serialized");
    }
    return absl::OkStatus();
  }
};

class ParseTensorOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(out_type_, ctx.GetAttr<DataType>("out_type"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    if (serialized.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected `serialized` to be a scalar, got shape: ", serialized.shape().DebugString()));
    }
    const std::string& bytes = serialized.scalar<std::string>();
    ::tensorflow::TensorProto proto;
    if (!proto.ParseFromString(bytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Could not parse `serialized` as TensorProto: '",
                       absl::CHexEscape(bytes.substr(0, 64)), bytes.size() > 64 ? "...'" : "'"));
    }
    if (proto.dtype() != out_type_) {
      return absl::InvalidArgumentError(
          absl::StrCat("Type mismatch between parsed tensor (", DataTypeName(proto.dtype()),
                       ") and dtype (", DataTypeName(out_type_), ")"));
    }
    ASSIGN_OR_RETURN(Tensor t, Tensor::FromProto(proto));
    ctx->set_output(0, std::move(t));
    return absl::OkStatus();
  }

 private:
  DataType out_type_ = DT_FLOAT;
};

}  // namespace

absl::Status RegisterTensorSerializationOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SerializeTensor")
                                    .Input("tensor: T")
                                    .Output("serialized: string")
                                    .Attr("T: type")
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, TensorShape());
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ParseTensor")
                                    .Input("serialized: string")
                                    .Output("output: out_type")
                                    .Attr("out_type: type")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 0));
                                      c->set_output(0, TensorShape::Unknown());
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->SetNoGradient("SerializeTensor"));
  return ops->SetNoGradient("ParseTensor");
}

void RegisterTensorSerializationKernels(KernelRegistry* k) {
  k->Register<SerializeTensorOp>(KernelDef("SerializeTensor", kDeviceTypeCpu));
  k->Register<ParseTensorOp>(KernelDef("ParseTensor", kDeviceTypeCpu));
}

namespace ops {

Output SerializeTensor(const Scope& s, Input tensor, std::source_location loc) {
  return s.Op("SerializeTensor", loc).Input(tensor).Finalize1();
}

Output ParseTensor(const Scope& s, Input serialized, DataType out_type, std::source_location loc) {
  return s.Op("ParseTensor", loc).Input(serialized).Attr("out_type", out_type).Finalize1();
}

}  // namespace ops
}  // namespace sluice
