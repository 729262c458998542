// Definitions, wrappers and RGBToHSV's gradient of the color ops
// (kernels: color_kernels.cc).
#include "ops/image/color_ops.h"

#include <vector>

#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

absl::Status SameShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

// TensorFlow's _RGBToHSVGrad (image_grad.py): the partial derivatives of
// hue, saturation and value w.r.t. each channel, piece by piece, with the
// max and min channel chosen R > G > B on ties and 0 where a denominator is.
absl::StatusOr<std::vector<Output>> RGBToHSVGrad(const Scope& s, const Node& node,
                                                 absl::Span<const Output> grads) {
  const Output rgb = internal::InputOf(node, 0);
  const DataType t = rgb.dtype();
  const ops::PackAttrs last{-1};
  std::vector<Output> in = ops::Unpack(s, rgb, 3, last);
  std::vector<Output> out = ops::Unpack(s, internal::OutputOf(node), 3, last);
  std::vector<Output> g = ops::Unpack(s, grads[0], 3, last);
  const Output r = in[0], gr = in[1], b = in[2];
  const Output sat = out[1], val = out[2];

  auto num = [&](Output x) { return ops::Cast(s, x, t); };
  auto both = [&](Output x, Output y) { return num(ops::LogicalAnd(s, x, y)); };
  auto positive = [&](Output x) { return num(ops::Greater(s, x, ops::ZerosLike(s, x))); };
  auto recip = [&](Output x) { return ops::DivNoNan(s, ops::OnesLike(s, x), x); };
  auto k = [&](double v) { return ops::Cast(s, ops::Const(s, v), t); };
  auto mul = [&](std::initializer_list<Output> xs) {
    Output p = *xs.begin();
    for (auto it = xs.begin() + 1; it != xs.end(); ++it) p = ops::Mul(s, p, *it);
    return p;
  };

  const Output r_max = both(ops::GreaterEqual(s, r, b), ops::GreaterEqual(s, r, gr));
  const Output g_max = both(ops::Greater(s, gr, r), ops::GreaterEqual(s, gr, b));
  const Output b_max = both(ops::Greater(s, b, r), ops::Greater(s, b, gr));
  const Output r_min = both(ops::Less(s, r, b), ops::Less(s, r, gr));
  const Output g_min = both(ops::LessEqual(s, gr, r), ops::Less(s, gr, b));
  const Output b_min = both(ops::LessEqual(s, b, r), ops::LessEqual(s, b, gr));
  const Output r_pos = positive(r), g_pos = positive(gr), b_pos = positive(b);
  const Output minus = k(-1);

  // Saturation = (max - min) / max.
  auto ds = [&](Output pos, Output x, Output x_max, Output x_min, Output o1, Output o1_min,
                Output o1_max, Output o2, Output o2_min, Output o2_max) {
    return ops::Mul(
        s, pos,
        ops::Add(s,
                 mul({x_max, ops::Add(s, ops::Mul(s, o1_min, o1), ops::Mul(s, o2_min, o2)),
                      recip(ops::Square(s, x))}),
                 mul({x_min, minus,
                      recip(ops::Add(s, ops::Mul(s, o1_max, o1), ops::Mul(s, o2_max, o2)))})));
  };
  const Output ds_dr = ds(r_pos, r, r_max, r_min, gr, g_min, g_max, b, b_min, b_max);
  const Output ds_dg = ds(g_pos, gr, g_max, g_min, r, r_min, r_max, b, b_min, b_max);
  const Output ds_db = ds(b_pos, b, b_max, b_min, gr, g_min, g_max, r, r_min, r_max);

  // Hue, in turns: 60 degrees per unit of (mid - min) / (max - min), / 360.
  const Output range2 = mul({recip(ops::Square(s, sat)), recip(ops::Square(s, val))});
  auto sq = [&](Output x) { return recip(ops::Square(s, x)); };
  auto sub = [&](Output x, Output y) { return ops::Sub(s, x, y); };
  auto hue = [&](std::initializer_list<Output> terms) {
    Output sum = *terms.begin();
    for (auto it = terms.begin() + 1; it != terms.end(); ++it) sum = ops::Add(s, sum, *it);
    return ops::Mul(s, sum, k(60.0 / 360.0));
  };
  const Output dh_dr =
      hue({mul({r_pos, r_max, minus, sub(gr, b), range2}),
           mul({g_pos, g_max, r_min, sub(b, gr), sq(sub(r, gr))}),
           mul({g_pos, g_max, b_min, minus, recip(sub(gr, b))}),
           mul({b_pos, b_max, r_min, sub(b, gr), sq(sub(b, r))}),
           mul({b_pos, b_max, g_min, recip(sub(b, gr))})});
  const Output dh_dg =
      hue({mul({g_pos, g_max, minus, sub(b, r), range2}),
           mul({r_pos, r_max, g_min, sub(r, b), sq(sub(r, gr))}),
           mul({r_pos, r_max, b_min, recip(sub(r, b))}),
           mul({b_pos, b_max, g_min, sub(r, b), sq(sub(b, gr))}),
           mul({b_pos, b_max, r_min, minus, recip(sub(b, r))})});
  const Output dh_db =
      hue({mul({b_pos, b_max, minus, sub(r, gr), range2}),
           mul({r_pos, r_max, b_min, sub(gr, r), sq(sub(r, b))}),
           mul({r_pos, r_max, g_min, minus, recip(sub(r, gr))}),
           mul({g_pos, g_max, b_min, sub(gr, r), sq(sub(gr, b))}),
           mul({g_pos, g_max, r_min, recip(sub(gr, r))})});

  auto channel = [&](Output dv, Output dsat, Output dh) {
    return ops::Add(s, ops::Add(s, ops::Mul(s, g[2], dv), ops::Mul(s, g[1], dsat)),
                    ops::Mul(s, g[0], dh));
  };
  Output result = ops::Pack(s, {channel(r_max, ds_dr, dh_dr), channel(g_max, ds_dg, dh_dg),
                                channel(b_max, ds_db, dh_db)},
                            last);
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{result};
}

}  // namespace

absl::Status RegisterColorOps(OpRegistry* ops) {
  for (const char* name : {"RGBToHSV", "HSVToRGB"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("images: T")
                                      .Output("output: T")
                                      .Attr("T: {half, bfloat16, float, double} = DT_FLOAT")
                                      .SetShapeFn(SameShape)));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("AdjustHue")
                                    .Input("images: T")
                                    .Input("delta: float")
                                    .Output("output: T")
                                    .Attr("T: {half, float} = DT_FLOAT")
                                    .SetShapeFn(SameShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("AdjustSaturation")
                                    .Input("images: T")
                                    .Input("scale: float")
                                    .Output("output: T")
                                    .Attr("T: {half, float} = DT_FLOAT")
                                    .SetShapeFn(SameShape)));
  for (const char* name : {"HSVToRGB", "AdjustHue", "AdjustSaturation"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(name));
  }
  return absl::OkStatus();
}

absl::Status RegisterColorGradients(OpRegistry* ops) {
  return ops->SetGradient("RGBToHSV", RGBToHSVGrad);
}

namespace ops {

Output RGBToHSV(const Scope& s, Input images, std::source_location loc) {
  return s.Op("RGBToHSV", loc).Input(images).Finalize1();
}
Output HSVToRGB(const Scope& s, Input images, std::source_location loc) {
  return s.Op("HSVToRGB", loc).Input(images).Finalize1();
}
Output AdjustHue(const Scope& s, Input images, Input delta, std::source_location loc) {
  return s.Op("AdjustHue", loc).Input(images).Input(delta).Finalize1();
}
Output AdjustSaturation(const Scope& s, Input images, Input scale, std::source_location loc) {
  return s.Op("AdjustSaturation", loc).Input(images).Input(scale).Finalize1();
}

}  // namespace ops
}  // namespace sluice
