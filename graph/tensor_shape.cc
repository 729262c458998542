#include "graph/tensor_shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice {

TensorShape TensorShape::Unknown() {
  TensorShape s;
  s.unknown_rank_ = true;
  return s;
}

TensorShape TensorShape::UnknownOfRank(int64_t rank) {
  if (rank < 0 || rank > kMaxRank) return Unknown();
  TensorShape s;
  s.dims_.assign(rank, kUnknownDim);
  return s;
}

absl::StatusOr<TensorShape> TensorShape::FromProto(const tensorflow::TensorShapeProto& proto) {
  if (proto.unknown_rank()) return Unknown();
  if (proto.dim_size() > kMaxRank) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape has rank ", proto.dim_size(), ", above the maximum ", kMaxRank));
  }
  TensorShape s;
  for (const auto& d : proto.dim()) {
    if (d.size() < -1) {
      return absl::InvalidArgumentError(absl::StrCat("shape has invalid dimension ", d.size()));
    }
    s.dims_.push_back(d.size());
  }
  if (s.IsFullyDefined() && s.num_elements() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("shape ", s.DebugString(), " has more than ",
                                                   kMaxElements, " elements"));
  }
  return s;
}

void TensorShape::ToProto(tensorflow::TensorShapeProto* proto) const {
  proto->Clear();
  if (unknown_rank_) {
    proto->set_unknown_rank(true);
    return;
  }
  for (int64_t d : dims_) proto->add_dim()->set_size(d);
}

bool TensorShape::IsFullyDefined() const {
  if (unknown_rank_) return false;
  for (int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

int64_t TensorShape::num_elements() const {
  if (unknown_rank_) return -1;
  int64_t n = 1;
  for (int64_t d : dims_) {  // a -1 after a 0 still makes -1
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > kMaxElements) return -1;
  }
  return n;
}

bool TensorShape::IsCompatibleWith(const TensorShape& other) const {
  if (unknown_rank_ || other.unknown_rank_) return true;
  if (dims_.size() != other.dims_.size()) return false;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] >= 0 && other.dims_[i] >= 0 && dims_[i] != other.dims_[i]) return false;
  }
  return true;
}

absl::StatusOr<TensorShape> TensorShape::Merge(const TensorShape& other) const {
  if (!IsCompatibleWith(other)) {
    return absl::InvalidArgumentError(
        absl::StrCat("shapes ", DebugString(), " and ", other.DebugString(), " are incompatible"));
  }
  if (unknown_rank_) return other;
  if (other.unknown_rank_) return *this;
  TensorShape s = *this;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (s.dims_[i] < 0) s.dims_[i] = other.dims_[i];
  }
  return s;
}

std::string TensorShape::DebugString() const {
  if (unknown_rank_) return "<unknown>";
  return absl::StrCat(
      "[", absl::StrJoin(dims_, ",", [](std::string* out, int64_t d) {
        absl::StrAppend(out, d < 0 ? "?" : absl::StrCat(d));
      }), "]");
}

}  // namespace sluice
