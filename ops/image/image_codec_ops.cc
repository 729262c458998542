// Image codec op definitions, shape functions and wrappers (kernels:
// image_codec_kernels.cc).
#include "ops/image/image_codec_ops.h"

#include <optional>
#include <utility>
#include <vector>

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

// DecodeJpeg's output and attrs, DecodeAndCropJpeg's too.
OpDefBuilder JpegDecodeAttrs(OpDefBuilder b) {
  b.Output("image: uint8")
      .Attr("channels: int = 0")
      .Attr("ratio: int = 1")
      .Attr("fancy_upscaling: bool = true")
      .Attr("try_recover_truncated: bool = false")
      .Attr("acceptable_fraction: float = 1.0")
      .Attr("dct_method: string = ''");
  return b;
}

absl::Status ScalarShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 3));
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

// EncodePng takes a batch of any rank: one PNG per [h, w, c] image.
absl::Status EncodePngShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 3));
  const TensorShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<int64_t> batch;
  for (int i = 0; i + 3 < in.rank(); ++i) batch.push_back(in.dim(i));
  c->set_output(0, TensorShape(batch));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterImageCodecOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(
      JpegDecodeAttrs(OpDefBuilder("DecodeJpeg").Input("contents: string")).SetShapeFn(DecodeShape)));
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
                                    .SetShapeFn(EncodePngShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("DecodeBmp")
                                    .Input("contents: string")
                                    .Output("image: uint8")
                                    .Attr("channels: int = 0")
                                    .SetShapeFn(DecodeShape)));
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
  RETURN_IF_ERROR(ops->Register(
      JpegDecodeAttrs(
          OpDefBuilder("DecodeAndCropJpeg").Input("contents: string").Input("crop_window: int32"))
          .SetShapeFn([](InferenceContext* c) {
            RETURN_IF_ERROR(c->WithRank(0, 0));
            RETURN_IF_ERROR(c->WithRank(1, 1));
            ASSIGN_OR_RETURN(int64_t channels, c->GetAttr<int64_t>("channels"));
            ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> window, c->InputAsInts(1));
            const bool known = window.has_value() && window->size() == 4;
            c->set_output(0, TensorShape({known ? (*window)[2] : -1, known ? (*window)[3] : -1,
                                          channels == 0 ? -1 : channels}));
            return absl::OkStatus();
          })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ExtractJpegShape")
                                    .Input("contents: string")
                                    .Output("image_shape: output_type")
                                    .Attr("output_type: {int32, int64} = DT_INT32")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 0));
                                      c->set_output(0, TensorShape({3}));
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("EncodeJpeg")
                                    .Input("image: uint8")
                                    .Output("contents: string")
                                    .Attr("format: {'', 'grayscale', 'rgb'} = ''")
                                    .Attr("quality: int = 95")
                                    .Attr("progressive: bool = false")
                                    .Attr("optimize_size: bool = false")
                                    .Attr("chroma_downsampling: bool = true")
                                    .Attr("density_unit: {'in', 'cm'} = 'in'")
                                    .Attr("x_density: int = 300")
                                    .Attr("y_density: int = 300")
                                    .Attr("xmp_metadata: string = ''")
                                    .SetShapeFn(ScalarShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("EncodeJpegVariableQuality")
                                    .Input("images: uint8")
                                    .Input("quality: int32")
                                    .Output("contents: string")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 3));
                                      RETURN_IF_ERROR(c->WithRank(1, 0));
                                      c->set_output(0, TensorShape());
                                      return absl::OkStatus();
                                    })));
  for (const char* op : {"DecodeJpeg", "DecodePng", "DecodeBmp", "EncodePng", "DecodeImage",
                         "DecodeAndCropJpeg", "ExtractJpegShape", "EncodeJpeg",
                         "EncodeJpegVariableQuality"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

namespace {

Output WithJpegAttrs(OpBuilder b, const DecodeJpegAttrs& a) {
  return b.Attr("channels", a.channels)
      .Attr("ratio", a.ratio)
      .Attr("fancy_upscaling", a.fancy_upscaling)
      .Attr("try_recover_truncated", a.try_recover_truncated)
      .Attr("acceptable_fraction", a.acceptable_fraction)
      .Attr("dct_method", a.dct_method)
      .Finalize1();
}

}  // namespace

Output DecodeJpeg(const Scope& s, Input contents, const DecodeJpegAttrs& a,
                  std::source_location loc) {
  OpBuilder b = s.Op("DecodeJpeg", loc);
  b.Input(contents);
  return WithJpegAttrs(std::move(b), a);
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

Output DecodeAndCropJpeg(const Scope& s, Input contents, Input crop_window,
                         const DecodeJpegAttrs& a, std::source_location loc) {
  OpBuilder b = s.Op("DecodeAndCropJpeg", loc);
  b.Input(contents).Input(crop_window);
  return WithJpegAttrs(std::move(b), a);
}

Output ExtractJpegShape(const Scope& s, Input contents, DataType output_type,
                        std::source_location loc) {
  return s.Op("ExtractJpegShape", loc).Input(contents).Attr("output_type", output_type).Finalize1();
}

Output EncodeJpeg(const Scope& s, Input image, const EncodeJpegAttrs& a,
                  std::source_location loc) {
  return s.Op("EncodeJpeg", loc)
      .Input(image)
      .Attr("format", a.format)
      .Attr("quality", a.quality)
      .Attr("progressive", a.progressive)
      .Attr("optimize_size", a.optimize_size)
      .Attr("chroma_downsampling", a.chroma_downsampling)
      .Attr("density_unit", a.density_unit)
      .Attr("x_density", a.x_density)
      .Attr("y_density", a.y_density)
      .Attr("xmp_metadata", a.xmp_metadata)
      .Finalize1();
}

Output EncodeJpegVariableQuality(const Scope& s, Input images, Input quality,
                                 std::source_location loc) {
  return s.Op("EncodeJpegVariableQuality", loc).Input(images).Input(quality).Finalize1();
}

}  // namespace ops
}  // namespace sluice
