// Image codec op definitions, shape functions and wrappers (kernels:
// image_codec_kernels.cc).
#include "ops/image/image_codec_ops.h"

#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

absl::Status DecodeShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 0));
  ASSIGN_OR_RETURN(int64_t channels, c->GetAttr<int64_t>("channels"));
  c->set_output(0, TensorShape({-1, -1, channels == 0 ? -1 : channels}));
  return absl::OkStatus();
}

absl::Status ScalarShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 3));
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterImageCodecOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("DecodeJpeg")
                                    .Input("contents: string")
                                    .Output("image: uint8")
                                    .Attr("channels: int = 0")
                                    .Attr("ratio: int = 1")
                                    .Attr("fancy_upscaling: bool = true")
                                    .Attr("try_recover_truncated: bool = false")
                                    .Attr("acceptable_fraction: float = 1.0")
                                    .Attr("dct_method: string = ''")
                                    .SetShapeFn(DecodeShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("DecodePng")
                                    .Input("contents: string")
                                    .Output("image: dtype")
                                    .Attr("channels: int = 0")
                                    .Attr("dtype: {uint8, uint16} = DT_UINT8")
                                    .SetShapeFn(DecodeShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("EncodePng")
                                    .Input("image: T")
                                    .Output("contents: string")
                                    .Attr("compression: int = -1")
                                    .Attr("T: {uint8, uint16} = DT_UINT8")
                                    .SetShapeFn(ScalarShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("DecodeImage")
                                    .Input("contents: string")
                                    .Output("image: dtype")
                                    .Attr("channels: int = 0")
                                    .Attr("dtype: {uint8, uint16, float} = DT_UINT8")
                                    .Attr("expand_animations: bool = true")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 0));
                                      c->set_output(0, TensorShape::Unknown());
                                      return absl::OkStatus();
                                    })));
  for (const char* op : {"DecodeJpeg", "DecodePng", "EncodePng", "DecodeImage"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output DecodeJpeg(const Scope& s, Input contents, const DecodeJpegAttrs& a,
                  std::source_location loc) {
  return s.Op("DecodeJpeg", loc)
      .Input(contents)
      .Attr("channels", a.channels)
      .Attr("ratio", a.ratio)
      .Attr("fancy_upscaling", a.fancy_upscaling)
      .Attr("try_recover_truncated", a.try_recover_truncated)
      .Attr("acceptable_fraction", a.acceptable_fraction)
      .Attr("dct_method", a.dct_method)
      .Finalize1();
}

Output DecodePng(const Scope& s, Input contents, const DecodePngAttrs& a,
                 std::source_location loc) {
  return s.Op("DecodePng", loc)
      .Input(contents)
      .Attr("channels", a.channels)
      .Attr("dtype", a.dtype)
      .Finalize1();
}

Output EncodePng(const Scope& s, Input image, const EncodePngAttrs& a, std::source_location loc) {
  return s.Op("EncodePng", loc).Input(image).Attr("compression", a.compression).Finalize1();
}

Output DecodeImage(const Scope& s, Input contents, const DecodeImageAttrs& a,
                   std::source_location loc) {
  return s.Op("DecodeImage", loc)
      .Input(contents)
      .Attr("channels", a.channels)
      .Attr("dtype", a.dtype)
      .Attr("expand_animations", a.expand_animations)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
