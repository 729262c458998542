// ExtractImagePatches: op definition, shape function, CPU kernel, gradient
// and wrapper (ops/image/patch_ops.h).
#include "ops/image/patch_ops.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"
#include "ops/nn/internal/window_geometry.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

struct PatchAttrs {
  int64_t kr = 1, kc = 1, sr = 1, sc = 1, rr = 1, rc = 1;
  internal::Padding padding = internal::Padding::kValid;
};

// The three 4-value attrs, 1 in the batch and depth places.
template <typename Attrs>
absl::StatusOr<PatchAttrs> ReadPatchAttrs(const Attrs& node) {
  PatchAttrs a;
  int64_t* out[3][2] = {{&a.kr, &a.kc}, {&a.sr, &a.sc}, {&a.rr, &a.rc}};
  const char* names[3] = {"ksizes", "strides", "rates"};
  for (int i = 0; i < 3; ++i) {
    ASSIGN_OR_RETURN(std::vector<int64_t> v, node.template GetAttr<std::vector<int64_t>>(names[i]));
    if (v.size() != 4 || v[0] != 1 || v[3] != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ExtractImagePatches: ", names[i],
          " must be 4 values [1, rows, cols, 1], got [", absl::StrJoin(v, ", "), "]"));
    }
    if (v[1] < 1 || v[2] < 1) {
      return absl::InvalidArgumentError(absl::StrCat("ExtractImagePatches: ", names[i],
                                                     " must be positive, got [",
                                                     absl::StrJoin(v, ", "), "]"));
    }
    *out[i][0] = v[1];
    *out[i][1] = v[2];
  }
  ASSIGN_OR_RETURN(std::string padding, node.template GetAttr<std::string>("padding"));
  ASSIGN_OR_RETURN(a.padding, internal::ParsePadding(padding));
  if (a.padding == internal::Padding::kExplicit) {
    return absl::InvalidArgumentError("ExtractImagePatches: padding must be SAME or VALID");
  }
  return a;
}

absl::Status PatchShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 4));
  ASSIGN_OR_RETURN(PatchAttrs a, ReadPatchAttrs(*c));
  const TensorShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, TensorShape({-1, -1, -1, -1}));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(internal::WindowDim rows,
                   internal::ComputeWindowDim(in.dim(1), a.kr, a.sr, a.rr, a.padding));
  ASSIGN_OR_RETURN(internal::WindowDim cols,
                   internal::ComputeWindowDim(in.dim(2), a.kc, a.sc, a.rc, a.padding));
  const int64_t depth = in.dim(3) < 0 ? -1 : a.kr * a.kc * in.dim(3);
  c->set_output(0, TensorShape({in.dim(0), rows.output, cols.output, depth}));
  return absl::OkStatus();
}

class ExtractImagePatchesOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(a_, ReadPatchAttrs(ctx));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ExtractImagePatches: images must be 4-D, got shape ", x.shape().DebugString()));
    }
    const int64_t batch = x.dim_size(0), rows = x.dim_size(1), cols = x.dim_size(2),
                  depth = x.dim_size(3);
    ASSIGN_OR_RETURN(internal::WindowDim r,
                     internal::ComputeWindowDim(rows, a_.kr, a_.sr, a_.rr, a_.padding));
    ASSIGN_OR_RETURN(internal::WindowDim c,
                     internal::ComputeWindowDim(cols, a_.kc, a_.sc, a_.rc, a_.padding));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(
                                       0, TensorShape({batch, r.output, c.output,
                                                       a_.kr * a_.kc * depth})));
    if (out->NumElements() == 0) return absl::OkStatus();
    const size_t esize = DataTypeSize(x.dtype());
    const size_t run = static_cast<size_t>(depth) * esize;  // one tap's bytes
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t orow = 0; orow < r.output; ++orow) {
        for (int64_t ocol = 0; ocol < c.output; ++ocol) {
          for (int64_t i = 0; i < a_.kr; ++i) {
            const int64_t y = orow * a_.sr - r.pad_before + i * a_.rr;
            for (int64_t j = 0; j < a_.kc; ++j, dst += run) {
              const int64_t xcol = ocol * a_.sc - c.pad_before + j * a_.rc;
              if (y < 0 || y >= rows || xcol < 0 || xcol >= cols) {
                std::memset(dst, 0, run);
              } else {
                std::memcpy(dst, src + ((b * rows + y) * cols + xcol) * run, run);
              }
            }
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  PatchAttrs a_;
};

// TensorFlow's: number the input's pixels 1.. (0 marks padding), cut that
// index image into patches as the forward did, and sum the gradient's
// entries into the pixels their taps name.
absl::StatusOr<std::vector<Output>> PatchGrad(const Scope& s, const Node& node,
                                             absl::Span<const Output> dy) {
  std::vector<Output> grads(1);
  if (!dy[0].valid()) return grads;
  const Output x = internal::InputOf(node, 0);
  const Output shape = ops::Shape(s, x);
  auto dim = [&](int i) { return ops::GatherV2(s, shape, i, 0); };
  const Output batch = dim(0), rows = dim(1), cols = dim(2), depth = dim(3);
  const Output pixels = ops::Mul(s, rows, cols);
  const Output index = ops::Reshape(s, ops::Range(s, 1, ops::Add(s, pixels, 1), 1),
                                    ops::Pack(s, {ops::Const(s, 1), rows, cols, ops::Const(s, 1)}));
  auto attr = [&](const char* name) {
    absl::StatusOr<std::vector<int64_t>> v = node.GetAttr<std::vector<int64_t>>(name);
    return v.ok() ? *v : std::vector<int64_t>{};
  };
  absl::StatusOr<std::string> padding = node.GetAttr<std::string>("padding");
  RETURN_IF_ERROR(padding.status());
  const Output taps = ops::ExtractImagePatches(s, index, attr("ksizes"), attr("strides"),
                                               attr("rates"), *padding);
  const Output segments = ops::Reshape(s, taps, {-1});
  // dy [b, orows, ocols, taps * depth] -> [orows * ocols * taps, b * depth].
  const Output dy_shape = ops::Shape(s, dy[0]);
  const Output five = ops::Pack(s, {batch, ops::GatherV2(s, dy_shape, 1, 0),
                                    ops::GatherV2(s, dy_shape, 2, 0), ops::Const(s, -1), depth});
  const Output columns =
      ops::Reshape(s, ops::Transpose(s, ops::Reshape(s, dy[0], five), {1, 2, 3, 0, 4}),
                   ops::Pack(s, {ops::Const(s, -1), ops::Mul(s, batch, depth)}));
  const Output summed =
      ops::UnsortedSegmentSum(s, columns, segments, ops::Add(s, pixels, 1));
  const Output real = ops::Slice(s, summed, {1, 0}, {-1, -1});  // row 0: the padding taps
  grads[0] = ops::Transpose(
      s, ops::Reshape(s, real, ops::Pack(s, {rows, cols, batch, depth})), {2, 0, 1, 3});
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterPatchOps(OpRegistry* ops) {
  return ops->Register(OpDefBuilder("ExtractImagePatches")
                           .Input("images: T")
                           .Output("patches: T")
                           .Attr("ksizes: list(int) >= 4")
                           .Attr("strides: list(int) >= 4")
                           .Attr("rates: list(int) >= 4")
                           .Attr("T: {bfloat16, half, float, double, int8, int16, int32, int64, "
                                 "uint8, uint16, uint32, uint64, bool}")
                           .Attr("padding: {'SAME', 'VALID'}")
                           .SetShapeFn(PatchShape));
}

absl::Status RegisterPatchGradients(OpRegistry* ops) {
  return ops->SetGradient("ExtractImagePatches", PatchGrad);
}

void RegisterPatchKernels(KernelRegistry* k) {
  k->Register<ExtractImagePatchesOp>(KernelDef("ExtractImagePatches", kDeviceTypeCpu));
}

namespace ops {

Output ExtractImagePatches(const Scope& s, Input images, std::vector<int64_t> ksizes,
                           std::vector<int64_t> strides, std::vector<int64_t> rates,
                           const std::string& padding, std::source_location loc) {
  return s.Op("ExtractImagePatches", loc)
      .Input(images)
      .Attr("ksizes", ksizes)
      .Attr("strides", strides)
      .Attr("rates", rates)
      .Attr("padding", padding)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
