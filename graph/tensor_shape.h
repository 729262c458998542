// TensorShape: a shape that may be partly known, as graph building sees it.
//
//   TensorShape s({2, -1, 3});        // rank 3, middle dimension unknown
//   s.rank() == 3; s.dim(1) == -1; s.IsFullyDefined() == false;
//   TensorShape u = TensorShape::Unknown();   // unknown rank: rank() == -1
//   TensorShape m;  ASSIGN_OR_RETURN(m, s.Merge(TensorShape({2, 5, 3})));  // [2,5,3]
//
// Runtime tensors always carry fully defined shapes (dims >= 0).
// A value type; thread-compatible.
#ifndef SLUICE_GRAPH_TENSOR_SHAPE_H_
#define SLUICE_GRAPH_TENSOR_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/proto/tensor_shape.pb.h"

namespace sluice {

class TensorShape {
 public:
  static constexpr int64_t kUnknownDim = -1;
  static constexpr int kMaxRank = 254;                  // as TensorFlow
  static constexpr int64_t kMaxElements = int64_t{1} << 60;

  TensorShape() = default;  // a scalar: rank 0, fully defined
  TensorShape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit TensorShape(absl::Span<const int64_t> dims) : dims_(dims.begin(), dims.end()) {}
  static TensorShape Unknown();
  // Unknown dims of the given rank; an unknown rank when `rank` is negative or
  // above kMaxRank.
  static TensorShape UnknownOfRank(int64_t rank);

  // Reads a TensorShapeProto (unknown_rank, dims of -1). InvalidArgument for
  // dims < -1, a rank above kMaxRank, or more than kMaxElements elements.
  static absl::StatusOr<TensorShape> FromProto(const tensorflow::TensorShapeProto& proto);
  void ToProto(tensorflow::TensorShapeProto* proto) const;

  bool unknown_rank() const { return unknown_rank_; }
  int rank() const { return unknown_rank_ ? -1 : static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  bool IsFullyDefined() const;

  // Product of the dimensions; -1 when any is unknown or the product exceeds
  // kMaxElements.
  int64_t num_elements() const;

  void AddDim(int64_t size) { dims_.push_back(size); }
  void set_dim(int i, int64_t size) { dims_[i] = size; }
  void RemoveDim(int i) { dims_.erase(dims_.begin() + i); }
  void InsertDim(int i, int64_t size) { dims_.insert(dims_.begin() + i, size); }

  // True when some fully defined shape could match both.
  bool IsCompatibleWith(const TensorShape& other) const;
  // The most specific shape compatible with both, or an error naming both.
  absl::StatusOr<TensorShape> Merge(const TensorShape& other) const;

  // "[2,?,3]", "[]" for a scalar, "<unknown>" for unknown rank.
  std::string DebugString() const;

  bool operator==(const TensorShape& o) const {
    return unknown_rank_ == o.unknown_rank_ && dims_ == o.dims_;
  }
  bool operator!=(const TensorShape& o) const { return !(*this == o); }

 private:
  std::vector<int64_t> dims_;
  bool unknown_rank_ = false;
};

}  // namespace sluice

#endif  // SLUICE_GRAPH_TENSOR_SHAPE_H_
