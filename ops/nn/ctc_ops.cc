// Definitions, wrappers, CPU kernels and the gradient of CTCLoss and
// CTCGreedyDecoder (ops/nn/ctc_ops.h).
#include "ops/nn/ctc_ops.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"
#include "ops/nn/internal/ctc_beam_search.h"
#include "ops/nn/internal/ctc_loss.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// The checks every kernel makes of inputs [max_time, batch, classes] and
// sequence_length [batch]: InvalidArgument for the loss, FailedPrecondition
// for the decoders' lengths (TensorFlow's codes); the decoders take a
// negative length as 0, the loss refuses it.
absl::Status CheckSequences(const Tensor& inputs, const Tensor& lengths, bool decoder) {
  if (inputs.dims() != 3) return absl::InvalidArgumentError("inputs is not a 3-Tensor");
  if (decoder && inputs.NumElements() == 0) return absl::InvalidArgumentError("inputs must not be empty");
  if (lengths.dims() != 1) return absl::InvalidArgumentError("sequence_length is not a vector");
  const int64_t max_time = inputs.dim_size(0), batch = inputs.dim_size(1);
  auto error = [decoder](std::string message) {
    return decoder ? absl::FailedPreconditionError(message) : absl::InvalidArgumentError(message);
  };
  if (lengths.dim_size(0) != batch) {
    return error(absl::StrCat("len(sequence_length) != batch_size.  len(sequence_length):  ",
                              lengths.dim_size(0), " batch_size: ", batch));
  }
  const int32_t* len = lengths.data<int32_t>();
  for (int64_t b = 0; b < batch; ++b) {
    if (len[b] > max_time || (!decoder && len[b] < 0)) {
      return error(absl::StrCat("sequence_length(", b, ") <= ", max_time));
    }
  }
  return absl::OkStatus();
}

// The labels of each batch element from the sparse labels_indices and
// labels_values, in the order given.
absl::StatusOr<std::vector<std::vector<int>>> GroupLabels(const Tensor& indices,
                                                          const Tensor& values, int64_t batch) {
  if (indices.dims() != 2 || indices.dim_size(1) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "labels_indices is not a matrix of [batch, position] rows: ", indices.shape().DebugString()));
  }
  if (values.dims() != 1) return absl::InvalidArgumentError("labels_values is not a vector");
  if (indices.dim_size(0) != values.dim_size(0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "labels_indices and labels_values must contain the same number of rows, but saw shapes: ",
        indices.shape().DebugString(), " vs. ", values.shape().DebugString()));
  }
  std::vector<std::vector<int>> labels(batch);
  const int64_t* idx = indices.data<int64_t>();
  const int32_t* v = values.data<int32_t>();
  for (int64_t i = 0; i < values.dim_size(0); ++i) {
    const int64_t b = idx[2 * i];
    if (b < 0 || b >= batch) {
      return absl::InvalidArgumentError(
          absl::StrCat("labels_indices row ", i, " names batch element ", b, ", not in [0, ", batch, ")"));
    }
    labels[b].push_back(v[i]);
  }
  return labels;
}

template <typename T>
class CTCLossOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(collapse_, ctx.GetAttr<bool>("preprocess_collapse_repeated"));
    ASSIGN_OR_RETURN(merge_, ctx.GetAttr<bool>("ctc_merge_repeated"));
    ASSIGN_OR_RETURN(ignore_longer_, ctx.GetAttr<bool>("ignore_longer_outputs_than_inputs"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& inputs = ctx->input(0);
    const Tensor& lengths = ctx->input(3);
    RETURN_IF_ERROR(CheckSequences(inputs, lengths, /*decoder=*/false));
    const int64_t batch = inputs.dim_size(1), classes = inputs.dim_size(2);
    if (batch == 0) return absl::InvalidArgumentError("batch_size must not be 0");
    ASSIGN_OR_RETURN(std::vector<std::vector<int>> raw,
                     GroupLabels(ctx->input(1), ctx->input(2), batch));
    const int32_t* len = lengths.data<int32_t>();
    std::vector<std::vector<int>> labels(batch);
    for (int64_t b = 0; b < batch; ++b) {
      if (raw[b].empty()) return absl::InvalidArgumentError(absl::StrCat("Labels length is zero in batch ", b));
      ASSIGN_OR_RETURN(labels[b], internal::CtcLabels(raw[b], classes, collapse_, b));
      if (!ignore_longer_ && static_cast<int64_t>(raw[b].size()) > len[b]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Not enough time for target transition sequence (required: ", raw[b].size(),
            ", available: ", len[b], ")", b,
            "You can turn this error into a warning by using the flag "
            "ignore_longer_outputs_than_inputs"));
      }
    }
    ASSIGN_OR_RETURN(Tensor * loss, ctx->allocate_output(0, TensorShape({batch})));
    ASSIGN_OR_RETURN(Tensor * gradient, ctx->allocate_output(1, inputs.shape()));
    T* l = loss->data<T>();
    T* g = gradient->data<T>();
    std::fill(l, l + batch, T(0));
    std::fill(g, g + gradient->NumElements(), T(0));
    const std::vector<double> x(inputs.data<T>(), inputs.data<T>() + inputs.NumElements());
    std::vector<double> grad;
    for (int64_t b = 0; b < batch; ++b) {
      // TensorFlow's rule: no loss for an empty sequence, or one too short
      // for its labels when asked to ignore those.
      if (len[b] == 0 || (ignore_longer_ && static_cast<int64_t>(raw[b].size()) > len[b])) continue;
      grad.assign(len[b] * classes, 0);
      const internal::CtcSequence seq{x.data() + b * classes, len[b], classes, batch * classes};
      l[b] = static_cast<T>(internal::CtcLoss(seq, labels[b], merge_, grad.data()));
      for (int64_t t = 0; t < len[b]; ++t) {
        for (int64_t c = 0; c < classes; ++c) {
          g[(t * batch + b) * classes + c] = static_cast<T>(grad[t * classes + c]);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  bool collapse_ = false;
  bool merge_ = true;
  bool ignore_longer_ = false;
};

// Writes decoded sequences (one per batch element) as a sparse tensor at
// outputs `first`, `first + stride` and `first + 2 stride`.
absl::Status WriteSparse(OpKernelContext* ctx, int first, int stride,
                         const std::vector<std::vector<int64_t>>& decoded) {
  const int64_t batch = static_cast<int64_t>(decoded.size());
  int64_t total = 0, longest = 0;
  for (const auto& d : decoded) {
    total += static_cast<int64_t>(d.size());
    longest = std::max<int64_t>(longest, static_cast<int64_t>(d.size()));
  }
  ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(first, TensorShape({total, 2})));
  ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(first + stride, TensorShape({total})));
  ASSIGN_OR_RETURN(Tensor * shape, ctx->allocate_output(first + 2 * stride, TensorShape({2})));
  int64_t* idx = indices->data<int64_t>();
  int64_t* val = values->data<int64_t>();
  int64_t n = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (size_t i = 0; i < decoded[b].size(); ++i, ++n) {
      idx[2 * n] = b;
      idx[2 * n + 1] = static_cast<int64_t>(i);
      val[n] = decoded[b][i];
    }
  }
  shape->data<int64_t>()[0] = batch;
  shape->data<int64_t>()[1] = longest;
  return absl::OkStatus();
}

template <typename T>
class CTCGreedyDecoderOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(merge_, ctx.GetAttr<bool>("merge_repeated"));
    ASSIGN_OR_RETURN(blank_index_, ctx.GetAttr<int64_t>("blank_index"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& inputs = ctx->input(0);
    const Tensor& lengths = ctx->input(1);
    RETURN_IF_ERROR(CheckSequences(inputs, lengths, /*decoder=*/true));
    const int64_t batch = inputs.dim_size(1), classes = inputs.dim_size(2);
    if (blank_index_ < -classes || blank_index_ >= classes) {
      return absl::InvalidArgumentError(absl::StrCat("blank_index expected to be between ", -classes,
                                                     " and ", classes - 1, " but was ", blank_index_));
    }
    const int64_t blank = blank_index_ < 0 ? classes + blank_index_ : blank_index_;
    const T* x = inputs.data<T>();
    const int32_t* len = lengths.data<int32_t>();
    ASSIGN_OR_RETURN(Tensor * log_prob, ctx->allocate_output(3, TensorShape({batch, 1})));
    std::vector<std::vector<int64_t>> decoded(batch);
    for (int64_t b = 0; b < batch; ++b) {
      T sum = T(0);
      int64_t previous = -1;
      for (int64_t t = 0; t < len[b]; ++t) {
        const T* row = x + (t * batch + b) * classes;
        const int64_t best = std::max_element(row, row + classes) - row;  // the first largest
        sum += -row[best];
        if (best != blank && !(merge_ && best == previous)) decoded[b].push_back(best);
        previous = best;
      }
      log_prob->data<T>()[b] = sum;
    }
    return WriteSparse(ctx, 0, 1, decoded);
  }

 private:
  bool merge_ = true;
  int64_t blank_index_ = -1;
};

template <typename T>
class CTCBeamSearchDecoderOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(beam_width_, ctx.GetAttr<int64_t>("beam_width"));
    ASSIGN_OR_RETURN(top_paths_, ctx.GetAttr<int64_t>("top_paths"));
    ASSIGN_OR_RETURN(merge_, ctx.GetAttr<bool>("merge_repeated"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& inputs = ctx->input(0);
    const Tensor& lengths = ctx->input(1);
    RETURN_IF_ERROR(CheckSequences(inputs, lengths, /*decoder=*/true));
    const int64_t batch = inputs.dim_size(1), classes = inputs.dim_size(2);
    const int32_t* len = lengths.data<int32_t>();
    ASSIGN_OR_RETURN(Tensor * log_prob, ctx->allocate_output(3 * top_paths_, TensorShape({batch, top_paths_})));
    std::vector<std::vector<std::vector<int64_t>>> decoded(top_paths_, std::vector<std::vector<int64_t>>(batch));
    std::vector<internal::CtcPath<T>> paths;
    for (int64_t b = 0; b < batch; ++b) {
      RETURN_IF_ERROR(internal::CtcBeamSearch<T>(inputs.data<T>() + b * classes, std::max(0, len[b]), classes,
                                                 batch * classes, static_cast<int>(beam_width_),
                                                 static_cast<int>(top_paths_), merge_, &paths));
      for (int64_t p = 0; p < top_paths_; ++p) {
        decoded[p][b] = std::move(paths[p].labels);
        log_prob->data<T>()[b * top_paths_ + p] = paths[p].log_probability;
      }
    }
    for (int64_t p = 0; p < top_paths_; ++p) {
      RETURN_IF_ERROR(WriteSparse(ctx, static_cast<int>(p), static_cast<int>(top_paths_), decoded[p]));
    }
    return absl::OkStatus();
  }

 private:
  int64_t beam_width_ = 1;
  int64_t top_paths_ = 1;
  bool merge_ = true;
};

absl::StatusOr<std::vector<Output>> CTCLossGrad(const Scope& s, const Node& node,
                                                absl::Span<const Output> g) {
  // d/d inputs: the loss's gradient (per batch element) times the kernel's.
  const Output per_element = ops::ExpandDims(s, g[0], ops::Const(s, -1));
  Output gi = ops::Mul(s, per_element, ops::PreventGradient(s, internal::OutputOf(node, 1)));
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{gi, Output(), Output(), Output()};
}

}  // namespace

absl::Status RegisterCtcOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("CTCLoss")
          .Input("inputs: T")
          .Input("labels_indices: int64")
          .Input("labels_values: int32")
          .Input("sequence_length: int32")
          .Output("loss: T")
          .Output("gradient: T")
          .Attr("preprocess_collapse_repeated: bool = false")
          .Attr("ctc_merge_repeated: bool = true")
          .Attr("ignore_longer_outputs_than_inputs: bool = false")
          .Attr("T: {float, double} = DT_FLOAT")
          .SetShapeFn([](InferenceContext* c) {
            RETURN_IF_ERROR(c->WithRank(0, 3));
            const TensorShape& in = c->input(0);
            c->set_output(0, TensorShape({in.unknown_rank() ? TensorShape::kUnknownDim : in.dim(1)}));
            c->set_output(1, in);
            return absl::OkStatus();
          })));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("CTCGreedyDecoder")
          .Input("inputs: T")
          .Input("sequence_length: int32")
          .Output("decoded_indices: int64")
          .Output("decoded_values: int64")
          .Output("decoded_shape: int64")
          .Output("log_probability: T")
          .Attr("merge_repeated: bool = false")
          .Attr("blank_index: int = -1")
          .Attr("T: {float, double} = DT_FLOAT")
          .SetShapeFn([](InferenceContext* c) {
            RETURN_IF_ERROR(c->WithRank(0, 3));
            const TensorShape& in = c->input(0);
            const int64_t batch = in.unknown_rank() ? TensorShape::kUnknownDim : in.dim(1);
            c->set_output(0, TensorShape({TensorShape::kUnknownDim, 2}));
            c->set_output(1, TensorShape({TensorShape::kUnknownDim}));
            c->set_output(2, TensorShape({2}));
            c->set_output(3, TensorShape({batch, 1}));
            return absl::OkStatus();
          })));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("CTCBeamSearchDecoder")
          .Input("inputs: T")
          .Input("sequence_length: int32")
          .Output("decoded_indices: top_paths * int64")
          .Output("decoded_values: top_paths * int64")
          .Output("decoded_shape: top_paths * int64")
          .Output("log_probability: T")
          .Attr("beam_width: int >= 1")
          .Attr("top_paths: int >= 1")
          .Attr("merge_repeated: bool = true")
          .Attr("T: {float, double} = DT_FLOAT")
          .SetShapeFn([](InferenceContext* c) {
            RETURN_IF_ERROR(c->WithRank(0, 3));
            const TensorShape& in = c->input(0);
            const int64_t batch = in.unknown_rank() ? TensorShape::kUnknownDim : in.dim(1);
            ASSIGN_OR_RETURN(int64_t top_paths, c->GetAttr<int64_t>("top_paths"));
            for (int64_t p = 0; p < top_paths; ++p) {
              c->set_output(p, TensorShape({TensorShape::kUnknownDim, 2}));
              c->set_output(top_paths + p, TensorShape({TensorShape::kUnknownDim}));
              c->set_output(2 * top_paths + p, TensorShape({2}));
            }
            c->set_output(3 * top_paths, TensorShape({batch, top_paths}));
            return absl::OkStatus();
          })));
  RETURN_IF_ERROR(ops->SetGradient("CTCLoss", CTCLossGrad));
  RETURN_IF_ERROR(ops->SetNoGradient("CTCBeamSearchDecoder"));
  return ops->SetNoGradient("CTCGreedyDecoder");
}

void RegisterCtcKernels(KernelRegistry* k) {
  k->Register<CTCLossOp<float>>(KernelDef("CTCLoss", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  k->Register<CTCLossOp<double>>(KernelDef("CTCLoss", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
  k->Register<CTCGreedyDecoderOp<float>>(
      KernelDef("CTCGreedyDecoder", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  k->Register<CTCGreedyDecoderOp<double>>(
      KernelDef("CTCGreedyDecoder", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
  k->Register<CTCBeamSearchDecoderOp<float>>(
      KernelDef("CTCBeamSearchDecoder", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  k->Register<CTCBeamSearchDecoderOp<double>>(
      KernelDef("CTCBeamSearchDecoder", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
}

namespace ops {

CTCLossOutputs CTCLoss(const Scope& s, Input inputs, Input labels_indices, Input labels_values,
                       Input sequence_length, const CTCLossAttrs& attrs, std::source_location loc) {
  std::vector<Output> out = s.Op("CTCLoss", loc)
                                .Input(inputs)
                                .Input(labels_indices)
                                .Input(labels_values)
                                .Input(sequence_length)
                                .Attr("preprocess_collapse_repeated", attrs.preprocess_collapse_repeated)
                                .Attr("ctc_merge_repeated", attrs.ctc_merge_repeated)
                                .Attr("ignore_longer_outputs_than_inputs",
                                      attrs.ignore_longer_outputs_than_inputs)
                                .FinalizeAll();
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

CTCGreedyDecoderOutputs CTCGreedyDecoder(const Scope& s, Input inputs, Input sequence_length,
                                         bool merge_repeated, int64_t blank_index,
                                         std::source_location loc) {
  std::vector<Output> out = s.Op("CTCGreedyDecoder", loc)
                                .Input(inputs)
                                .Input(sequence_length)
                                .Attr("merge_repeated", merge_repeated)
                                .Attr("blank_index", blank_index)
                                .FinalizeAll();
  if (out.size() != 4) return {};
  return {out[0], out[1], out[2], out[3]};
}

CTCBeamSearchDecoderOutputs CTCBeamSearchDecoder(const Scope& s, Input inputs, Input sequence_length,
                                                 int64_t beam_width, int64_t top_paths, bool merge_repeated,
                                                 std::source_location loc) {
  std::vector<Output> out = s.Op("CTCBeamSearchDecoder", loc)
                                .Input(inputs)
                                .Input(sequence_length)
                                .Attr("beam_width", beam_width)
                                .Attr("top_paths", top_paths)
                                .Attr("merge_repeated", merge_repeated)
                                .FinalizeAll();
  if (static_cast<int64_t>(out.size()) != 3 * top_paths + 1) return {};
  CTCBeamSearchDecoderOutputs r;
  r.decoded_indices.assign(out.begin(), out.begin() + top_paths);
  r.decoded_values.assign(out.begin() + top_paths, out.begin() + 2 * top_paths);
  r.decoded_shape.assign(out.begin() + 2 * top_paths, out.begin() + 3 * top_paths);
  r.log_probability = out.back();
  return r;
}

}  // namespace ops
}  // namespace sluice
