// CPU kernels of the non-maximum suppression ops (nms_ops.h): TensorFlow's
// greedy selection (non_max_suppression_op.cc) over a priority queue of
// candidates, each compared with the boxes kept since it was last looked
// at, so that Soft-NMS visits every pair once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/image/nms_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// A tensor of float or half as floats.
std::vector<float> Floats(const Tensor& t) {
  std::vector<float> v(t.NumElements());
  if (t.dtype() == DT_HALF) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<Half>()[i].ToFloat();
  } else {
    std::copy(t.data<float>(), t.data<float>() + v.size(), v.begin());
  }
  return v;
}

absl::StatusOr<float> ScalarOf(const std::string& op, const Tensor& t, const char* name) {
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " must be 0-D, got shape ",
                                                   t.shape().DebugString()));
  }
  return Floats(t)[0];
}

// Intersection over union of boxes i and j (rows of [n, 4]); 0 when either
// has no area.
float Iou(const float* boxes, int64_t i, int64_t j) {
  const float* a = boxes + 4 * i;
  const float* b = boxes + 4 * j;
  const float ymin_a = std::min(a[0], a[2]), xmin_a = std::min(a[1], a[3]);
  const float ymax_a = std::max(a[0], a[2]), xmax_a = std::max(a[1], a[3]);
  const float ymin_b = std::min(b[0], b[2]), xmin_b = std::min(b[1], b[3]);
  const float ymax_b = std::max(b[0], b[2]), xmax_b = std::max(b[1], b[3]);
  const float area_a = (ymax_a - ymin_a) * (xmax_a - xmin_a);
  const float area_b = (ymax_b - ymin_b) * (xmax_b - xmin_b);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float inter = std::max(std::min(ymax_a, ymax_b) - std::max(ymin_a, ymin_b), 0.0f) *
                      std::max(std::min(xmax_a, xmax_b) - std::max(xmin_a, xmin_b), 0.0f);
  return inter / (area_a + area_b - inter);
}

struct Selection {
  std::vector<int32_t> indices;
  std::vector<float> scores;
};

// TensorFlow's DoNonMaxSuppressionOp: hard suppression above
// `threshold`, or Soft-NMS when sigma > 0.
Selection Select(const std::vector<float>& scores, int64_t max_output,
                 const std::function<float(int64_t, int64_t)>& similarity, float threshold,
                 float score_threshold, float sigma) {
  struct Candidate {
    int64_t index;
    float score;
    size_t checked_up_to;  // kept boxes it was compared with so far
  };
  auto worse = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.index > b.index);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> queue(worse);
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] > score_threshold) queue.push({static_cast<int64_t>(i), scores[i], 0});
  }
  const bool soft = sigma > 0;
  const float scale = soft ? -0.5f / sigma : 0.0f;
  Selection out;
  while (static_cast<int64_t>(out.indices.size()) < max_output && !queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    const float original = c.score;
    bool suppressed = false;
    for (int64_t j = static_cast<int64_t>(out.indices.size()) - 1;
         j >= static_cast<int64_t>(c.checked_up_to); --j) {
      const float sim = similarity(c.index, out.indices[j]);
      const float weight = std::exp(scale * sim * sim);
      c.score *= soft || sim <= threshold ? weight : 0.0f;
      if (!soft && sim > threshold) {
        suppressed = true;
        break;
      }
      if (c.score <= score_threshold) break;
    }
    c.checked_up_to = out.indices.size();
    if (suppressed) continue;
    if (c.score == original) {
      out.indices.push_back(static_cast<int32_t>(c.index));
      out.scores.push_back(c.score);
    } else if (c.score > score_threshold) {
      queue.push(c);  // softly suppressed: back in line with its new score
    }
  }
  return out;
}

// Which NonMaxSuppression form a kernel computes.
enum class Form { kV1, kV2, kV3, kV4, kV5, kOverlaps };

template <Form kForm>
class NmsOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    if constexpr (kForm == Form::kV1) {
      ASSIGN_OR_RETURN(iou_attr_, ctx.GetAttr<float>("iou_threshold"));
    }
    if constexpr (kForm == Form::kV4 || kForm == Form::kV5) {
      ASSIGN_OR_RETURN(pad_, ctx.GetAttr<bool>("pad_to_max_output_size"));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const std::string& op = ctx->node().op();
    const Tensor& boxes = ctx->input(0);
    const Tensor& scores = ctx->input(1);
    const Tensor& max_size = ctx->input(2);
    if (max_size.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": max_output_size must be 0-D, got shape ", max_size.shape().DebugString()));
    }
    const int64_t max_output = max_size.scalar<int32_t>();
    float threshold = iou_attr_;
    float score_threshold = std::numeric_limits<float>::lowest();
    float sigma = 0;
    if constexpr (kForm != Form::kV1) {
      ASSIGN_OR_RETURN(threshold, ScalarOf(op, ctx->input(3), kForm == Form::kOverlaps
                                                                  ? "overlap_threshold"
                                                                  : "iou_threshold"));
    }
    if constexpr (kForm != Form::kV1 && kForm != Form::kV2) {
      ASSIGN_OR_RETURN(score_threshold, ScalarOf(op, ctx->input(4), "score_threshold"));
    }
    if constexpr (kForm == Form::kV5) {
      ASSIGN_OR_RETURN(sigma, ScalarOf(op, ctx->input(5), "soft_nms_sigma"));
      if (!(sigma >= 0)) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": soft_nms_sigma_val must be >= 0"));
      }
    }
    if (kForm != Form::kOverlaps && !(threshold >= 0 && threshold <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": iou_threshold must be in [0, 1]"));
    }
    // boxes [n, 4] (overlaps [n, n]) and scores [n].
    if (boxes.dims() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": ",
                                                     kForm == Form::kOverlaps ? "overlaps" : "boxes",
                                                     " must be 2-D, got shape ",
                                                     boxes.shape().DebugString()));
    }
    const int64_t n = boxes.dim_size(0);
    if (kForm == Form::kOverlaps ? boxes.dim_size(1) != n : boxes.dim_size(1) != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": ", kForm == Form::kOverlaps ? "overlaps must be square"
                                                          : "boxes must have 4 columns",
                       ", got shape ", boxes.shape().DebugString()));
    }
    if (scores.dims() != 1 || scores.dim_size(0) != n) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": scores has incompatible shape ", scores.shape().DebugString(), " for ", n,
          " boxes"));
    }
    if (max_output < 0) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": output size must be non-negative"));
    }
    const std::vector<float> b = Floats(boxes);
    std::function<float(int64_t, int64_t)> similarity;
    if constexpr (kForm == Form::kOverlaps) {
      similarity = [&b, n](int64_t i, int64_t j) { return b[i * n + j]; };
    } else {
      similarity = [&b](int64_t i, int64_t j) { return Iou(b.data(), i, j); };
    }
    Selection sel = Select(Floats(scores), max_output, similarity, threshold, score_threshold,
                           sigma);
    const int32_t valid = static_cast<int32_t>(sel.indices.size());
    if (pad_) {
      sel.indices.resize(max_output, 0);
      sel.scores.resize(max_output, 0.0f);
    }
    const int64_t k = static_cast<int64_t>(sel.indices.size());
    ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(0, TensorShape({k})));
    std::copy(sel.indices.begin(), sel.indices.end(), indices->data<int32_t>());
    if constexpr (kForm == Form::kV4) {
      ctx->set_output(1, Tensor::Scalar<int32_t>(valid));
    }
    if constexpr (kForm == Form::kV5) {
      ASSIGN_OR_RETURN(Tensor * out_scores, ctx->allocate_output(1, TensorShape({k})));
      for (int64_t i = 0; i < k; ++i) {
        if (scores.dtype() == DT_HALF) {
          out_scores->data<Half>()[i] = Half::FromFloat(sel.scores[i]);
        } else {
          out_scores->data<float>()[i] = sel.scores[i];
        }
      }
      ctx->set_output(2, Tensor::Scalar<int32_t>(valid));
    }
    return absl::OkStatus();
  }

 private:
  float iou_attr_ = 0.5f;
  bool pad_ = false;
};

}  // namespace

void RegisterNmsKernels(KernelRegistry* kernels) {
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu).HostMemory("max_output_size"); };
  kernels->Register<NmsOp<Form::kV1>>(cpu("NonMaxSuppression"));
  kernels->Register<NmsOp<Form::kOverlaps>>(cpu("NonMaxSuppressionWithOverlaps"));
  for (DataType t : {DT_FLOAT, DT_HALF}) {
    kernels->Register<NmsOp<Form::kV5>>(cpu("NonMaxSuppressionV5").TypeConstraint("T", t));
    for (DataType th : {DT_FLOAT, DT_HALF}) {
      auto typed = [&](const char* op) {
        return cpu(op).TypeConstraint("T", t).TypeConstraint("T_threshold", th);
      };
      kernels->Register<NmsOp<Form::kV2>>(typed("NonMaxSuppressionV2"));
      kernels->Register<NmsOp<Form::kV3>>(typed("NonMaxSuppressionV3"));
      kernels->Register<NmsOp<Form::kV4>>(typed("NonMaxSuppressionV4"));
    }
  }
}

}  // namespace sluice
