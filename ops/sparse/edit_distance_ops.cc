// Definition, wrapper and CPU kernel of EditDistance
// (ops/sparse/edit_distance_ops.h).
#include "ops/sparse/edit_distance_ops.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// One sparse operand: its sequences, grouped by their index without the
// last dimension (row-major order), each [begin, end) into the values.
struct Sequences {
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> keys;
  std::vector<std::pair<int64_t, int64_t>> ranges;
};

absl::StatusOr<Sequences> Group(const char* name, const Tensor& indices, const Tensor& values,
                                const Tensor& shape) {
  if (indices.dims() != 2 || values.dims() != 1 || shape.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": indices must be a matrix, values and shape vectors"));
  }
  const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
  if (shape.NumElements() != rank) {
    return absl::InvalidArgumentError(absl::StrCat("Expected ", name, "_shape.NumElements == #cols(", name,
                                                   "_indices), their shapes are: ", shape.shape().DebugString(),
                                                   " and ", indices.shape().DebugString()));
  }
  if (values.dim_size(0) != n) {
    return absl::InvalidArgumentError(absl::StrCat("Expected ", name, "_values.NumElements == #rows(", name,
                                                   "_indices), their shapes are: ", values.shape().DebugString(),
                                                   " and ", indices.shape().DebugString()));
  }
  if (rank < 1) return absl::InvalidArgumentError(absl::StrCat(name, " must have rank >= 1"));
  Sequences seq;
  seq.shape.assign(shape.data<int64_t>(), shape.data<int64_t>() + rank);
  const int64_t* idx = indices.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t* row = idx + i * rank;
    for (int64_t d = 0; d < rank; ++d) {
      if (row[d] < 0 || row[d] >= seq.shape[d]) {
        return absl::InvalidArgumentError(absl::StrCat(name, "_indices row ", i, " is outside the shape"));
      }
    }
    if (i > 0 && !std::lexicographical_compare(row - rank, row, row, row + rank)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, "_indices are not in row-major order at row ", i));
    }
    std::vector<int64_t> key(row, row + rank - 1);
    if (seq.keys.empty() || seq.keys.back() != key) {
      seq.keys.push_back(std::move(key));
      seq.ranges.push_back({i, i});
    }
    seq.ranges.back().second = i + 1;
  }
  return seq;
}

// Levenshtein distance between a[0, m) and b[0, n): one row of the table.
template <typename T>
int64_t Levenshtein(const T* a, int64_t m, const T* b, int64_t n) {
  std::vector<int64_t> row(n + 1);
  for (int64_t j = 0; j <= n; ++j) row[j] = j;
  for (int64_t i = 1; i <= m; ++i) {
    int64_t diagonal = row[0];
    row[0] = i;
    for (int64_t j = 1; j <= n; ++j) {
      const int64_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[n];
}

template <typename T>
class EditDistanceOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(normalize_, ctx.GetAttr<bool>("normalize"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Sequences hyp, Group("hypothesis", ctx->input(0), ctx->input(1), ctx->input(2)));
    ASSIGN_OR_RETURN(Sequences truth, Group("truth", ctx->input(3), ctx->input(4), ctx->input(5)));
    if (hyp.shape.size() != truth.shape.size()) {
      return absl::InvalidArgumentError(absl::StrCat("Expected truth and hypothesis to have matching ranks, got ",
                                                     truth.shape.size(), " and ", hyp.shape.size()));
    }
    const size_t outer = hyp.shape.size() - 1;
    std::vector<int64_t> dims(outer);
    for (size_t d = 0; d < outer; ++d) dims[d] = std::max(hyp.shape[d], truth.shape[d]);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape(dims)));
    float* o = out->data<float>();
    std::fill(o, o + out->NumElements(), 0.0f);
    auto offset = [&](const std::vector<int64_t>& key) {
      int64_t flat = 0;
      for (size_t d = 0; d < outer; ++d) flat = flat * dims[d] + key[d];
      return flat;
    };
    const T* hv = ctx->input(1).data<T>();
    const T* tv = ctx->input(4).data<T>();
    // Merge the two ordered lists of sequences.
    size_t h = 0, t = 0;
    while (h < hyp.keys.size() || t < truth.keys.size()) {
      const bool take_h = t == truth.keys.size() || (h < hyp.keys.size() && hyp.keys[h] <= truth.keys[t]);
      const bool take_t = h == hyp.keys.size() || (t < truth.keys.size() && truth.keys[t] <= hyp.keys[h]);
      const int64_t hb = take_h ? hyp.ranges[h].first : 0, hn = take_h ? hyp.ranges[h].second - hb : 0;
      const int64_t tb = take_t ? truth.ranges[t].first : 0, tn = take_t ? truth.ranges[t].second - tb : 0;
      const int64_t distance = Levenshtein(hv + hb, hn, tv + tb, tn);
      float value = static_cast<float>(distance);
      if (normalize_) value = tn == 0 ? std::numeric_limits<float>::infinity() : value / static_cast<float>(tn);
      o[offset(take_h ? hyp.keys[h] : truth.keys[t])] = value;
      if (take_h) ++h;
      if (take_t) ++t;
    }
    return absl::OkStatus();
  }

 private:
  bool normalize_ = true;
};

}  // namespace

absl::Status RegisterEditDistanceOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("EditDistance")
          .Input("hypothesis_indices: int64")
          .Input("hypothesis_values: T")
          .Input("hypothesis_shape: int64")
          .Input("truth_indices: int64")
          .Input("truth_values: T")
          .Input("truth_shape: int64")
          .Output("output: float")
          .Attr("normalize: bool = true")
          .Attr("T: type")
          .SetShapeFn([](InferenceContext* c) {
            ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> h, c->InputAsInts(2));
            ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> t, c->InputAsInts(5));
            if (!h.has_value() || !t.has_value() || h->size() != t->size() || h->empty()) {
              c->set_output(0, TensorShape::Unknown());
              return absl::OkStatus();
            }
            std::vector<int64_t> dims(h->size() - 1);
            for (size_t d = 0; d + 1 < h->size(); ++d) dims[d] = std::max((*h)[d], (*t)[d]);
            c->set_output(0, TensorShape(dims));
            return absl::OkStatus();
          })));
  return ops->SetNoGradient("EditDistance");
}

void RegisterEditDistanceKernels(KernelRegistry* k) {
  auto reg = [k]<typename T>() {
    k->Register<EditDistanceOp<T>>(KernelDef("EditDistance", kDeviceTypeCpu)
                                       .TypeConstraint("T", DataTypeToEnum<T>::value)
                                       .HostMemory("hypothesis_indices")
                                       .HostMemory("hypothesis_shape")
                                       .HostMemory("truth_indices")
                                       .HostMemory("truth_shape"));
  };
  reg.template operator()<float>();
  reg.template operator()<double>();
  reg.template operator()<int8_t>();
  reg.template operator()<int16_t>();
  reg.template operator()<int32_t>();
  reg.template operator()<int64_t>();
  reg.template operator()<uint8_t>();
  reg.template operator()<uint16_t>();
  reg.template operator()<bool>();
  reg.template operator()<std::string>();
}

namespace ops {

Output EditDistance(const Scope& s, const SparseInput& hypothesis, const SparseInput& truth,
                    bool normalize, std::source_location loc) {
  return s.Op("EditDistance", loc)
      .Input(hypothesis.indices)
      .Input(hypothesis.values)
      .Input(hypothesis.shape)
      .Input(truth.indices)
      .Input(truth.values)
      .Input(truth.shape)
      .Attr("normalize", normalize)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
