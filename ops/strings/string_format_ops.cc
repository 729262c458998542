// StringFormat: op definition, CPU kernel and wrapper
// (ops/strings/string_format_ops.h).
#include "ops/strings/string_format_ops.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/strings/internal/tensor_format.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

class StringFormatOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(std::string text, ctx.GetAttr<std::string>("template"));
    ASSIGN_OR_RETURN(std::string placeholder, ctx.GetAttr<std::string>("placeholder"));
    ASSIGN_OR_RETURN(summarize_, ctx.GetAttr<int64_t>("summarize"));
    if (placeholder.empty()) return absl::InvalidArgumentError("placeholder must not be empty");
    pieces_ = absl::StrSplit(text, placeholder);
    const int64_t placeholders = static_cast<int64_t>(pieces_.size()) - 1;
    if (placeholders != ctx.node().num_inputs()) {
      return absl::InvalidArgumentError(
          absl::StrCat("num placeholders in template and num inputs must match: ", placeholders,
                       " vs. ", ctx.node().num_inputs()));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    std::string line = pieces_[0];
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      absl::StrAppend(&line, FormatTensor(ctx->input(i), summarize_), pieces_[i + 1]);
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<std::string>() = std::move(line);
    return absl::OkStatus();
  }

 private:
  std::vector<std::string> pieces_;
  int64_t summarize_ = 3;
};

}  // namespace

absl::Status RegisterStringFormatOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StringFormat")
                                    .Input("inputs: T")
                                    .Output("output: string")
                                    .Attr("T: list(type) >= 0")
                                    .Attr("template: string = '%s'")
                                    .Attr("placeholder: string = '%s'")
                                    .Attr("summarize: int = 3")
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, TensorShape());
                                      return absl::OkStatus();
                                    })));
  return ops->SetNoGradient("StringFormat");
}

void RegisterStringFormatKernels(KernelRegistry* k) {
  k->Register<StringFormatOp>(KernelDef("StringFormat", kDeviceTypeCpu));
}

namespace ops {

Output StringFormat(const Scope& s, absl::Span<const Input> inputs, const StringFormatAttrs& a,
                    std::source_location loc) {
  return s.Op("StringFormat", loc)
      .InputList(inputs)
      .Attr("template", a.template_)
      .Attr("placeholder", a.placeholder)
      .Attr("summarize", a.summarize)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
