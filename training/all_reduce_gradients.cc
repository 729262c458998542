#include "training/all_reduce_gradients.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/types.h"
#include "ops/array/array_ops.h"
#include "ops/collective/collective_ops.h"

namespace sluice {
namespace {

// The gradients (indices into one replica's list) reduced by one all-reduce.
struct Bucket {
  std::vector<size_t> members;
  bool fused = false;  // flattened and concatenated (several, or one fusible)
};

// Size in bytes of a fusible gradient (fully defined shape, fixed-size
// dtype); -1 when it must be reduced alone.
int64_t FusibleBytes(const Output& grad) {
  const TensorShape& shape = grad.shape();
  const int size = DataTypeSize(BaseType(grad.dtype()));
  if (shape.unknown_rank() || !shape.IsFullyDefined() || size <= 0) return -1;
  return shape.num_elements() * size;
}

// The buckets of one replica's gradients: from the last gradient to the
// first, packed greedily up to bucket_bytes; a bucket holds one dtype.
// Depends only on shapes and dtypes, so every member computes the same plan.
std::vector<Bucket> PlanBuckets(const std::vector<Output>& grads, int64_t bucket_bytes) {
  std::vector<Bucket> buckets;
  Bucket open;
  int64_t open_bytes = 0;
  DataType open_dtype = DT_INVALID;
  auto close = [&] {
    if (open.members.empty()) return;
    open.fused = open.members.size() > 1;
    buckets.push_back(std::move(open));
    open = Bucket();
    open_bytes = 0;
  };
  for (size_t i = grads.size(); i-- > 0;) {
    const Output& g = grads[i];
    if (!g.valid()) continue;
    const int64_t bytes = FusibleBytes(g);
    if (bucket_bytes <= 0 || bytes < 0 || bytes >= bucket_bytes) {
      close();
      buckets.push_back(Bucket{{i}, false});
      continue;
    }
    const DataType dtype = BaseType(g.dtype());
    if (!open.members.empty() && (dtype != open_dtype || open_bytes + bytes > bucket_bytes)) {
      close();
    }
    open.members.push_back(i);
    open_bytes += bytes;
    open_dtype = dtype;
  }
  close();
  return buckets;
}

absl::Status CheckAgree(const std::vector<std::vector<Output>>& grads) {
  const std::vector<Output>& first = grads[0];
  for (size_t r = 1; r < grads.size(); ++r) {
    if (grads[r].size() != first.size()) {
      return absl::InvalidArgumentError(absl::StrCat("all-reduce gradients: replica ", r, " has ",
                                                     grads[r].size(), " gradients, replica 0 has ",
                                                     first.size()));
    }
    for (size_t i = 0; i < first.size(); ++i) {
      const Output& a = first[i];
      const Output& b = grads[r][i];
      if (a.valid() != b.valid()) {
        return absl::InvalidArgumentError(
            absl::StrCat("all-reduce gradients: gradient ", i, " is ", a.valid() ? "set" : "unset",
                         " on replica 0 but ", b.valid() ? "set" : "unset", " on replica ", r));
      }
      if (!a.valid()) continue;
      if (BaseType(a.dtype()) != BaseType(b.dtype()) || a.shape() != b.shape()) {
        return absl::InvalidArgumentError(
            absl::StrCat("all-reduce gradients: gradient ", i, " is ",
                         DataTypeName(BaseType(a.dtype())), " ", a.shape().DebugString(), " (",
                         a.node->name(), ") on replica 0 but ", DataTypeName(BaseType(b.dtype())),
                         " ", b.shape().DebugString(), " (", b.node->name(), ") on replica ", r));
      }
    }
  }
  return absl::OkStatus();
}

// One member's side of every bucket's all-reduce, built in `scope` (pinned
// to the member's device). Returns the reduced gradients by index.
absl::StatusOr<std::vector<Output>> BuildMember(const Scope& scope,
                                                const std::vector<Output>& grads,
                                                const std::vector<Bucket>& buckets,
                                                const std::vector<std::string>& group_devices,
                                                const AllReduceOptions& options) {
  std::vector<Output> reduced(grads.size());
  for (size_t b = 0; b < buckets.size(); ++b) {
    const Bucket& bucket = buckets[b];
    const Scope bs = scope.NewSubScope(absl::StrCat("bucket_", b));
    ops::CollectiveSpec spec;
    spec.group_key = options.group_key;
    spec.instance_key = options.first_instance_key + static_cast<int64_t>(b);
    spec.group_devices = group_devices;
    spec.communication_hint = options.communication_hint;
    spec.timeout_seconds = options.timeout_seconds;
    if (!bucket.fused) {
      const size_t i = bucket.members[0];
      reduced[i] = ops::AllReduce(bs, grads[i], options.reduce_op, spec);
      continue;
    }
    std::vector<Output> flat;
    for (size_t i : bucket.members) flat.push_back(ops::Reshape(bs, grads[i], {int64_t{-1}}));
    Output packed = ops::ConcatV2(bs, absl::Span<const Output>(flat), int32_t{0});
    Output all = ops::AllReduce(bs, packed, options.reduce_op, spec);
    int64_t offset = 0;
    for (size_t i : bucket.members) {
      const TensorShape& shape = grads[i].shape();
      const int64_t n = shape.num_elements();
      Output piece = ops::Slice(bs, all, {offset}, {n});
      const std::vector<int64_t>& dims = shape.dims();
      Output dims_const = ops::Const(bs, dims, TensorShape({static_cast<int64_t>(dims.size())}));
      reduced[i] = ops::Reshape(bs, piece, dims_const);
      offset += n;
    }
  }
  RETURN_IF_ERROR(scope.status());
  return reduced;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<Output>>> AllReduceGradients(
    const Scope& scope, const std::vector<std::vector<Output>>& grads,
    const std::vector<std::string>& devices, const AllReduceOptions& options) {
  RETURN_IF_ERROR(scope.status());
  if (grads.empty()) {
    return absl::InvalidArgumentError("all-reduce gradients: no replicas");
  }
  if (devices.size() != grads.size()) {
    return absl::InvalidArgumentError(absl::StrCat("all-reduce gradients: ", grads.size(),
                                                   " replicas' gradients but ", devices.size(),
                                                   " devices"));
  }
  RETURN_IF_ERROR(CheckAgree(grads));
  const std::vector<Bucket> buckets = PlanBuckets(grads[0], options.bucket_bytes);
  std::vector<std::vector<Output>> out;
  for (size_t r = 0; r < grads.size(); ++r) {
    const Scope rs = scope.NewSubScope(absl::StrCat("replica_", r)).WithDevice(devices[r]);
    absl::StatusOr<std::vector<Output>> reduced =
        BuildMember(rs, grads[r], buckets, devices, options);
    if (!reduced.ok()) {
      return AddContext(reduced.status(), absl::StrCat("all-reduce gradients of replica ", r));
    }
    out.push_back(*std::move(reduced));
  }
  return out;
}

absl::StatusOr<std::vector<Output>> AllReduceGradientsOfMember(
    const Scope& scope, const std::vector<Output>& grads,
    const std::vector<std::string>& group_devices, int rank, const AllReduceOptions& options) {
  RETURN_IF_ERROR(scope.status());
  if (rank < 0 || rank >= static_cast<int>(group_devices.size())) {
    return absl::InvalidArgumentError(absl::StrCat("all-reduce gradients: rank ", rank,
                                                   " is not in a group of ", group_devices.size(),
                                                   " devices"));
  }
  const std::vector<Bucket> buckets = PlanBuckets(grads, options.bucket_bytes);
  absl::StatusOr<std::vector<Output>> reduced =
      BuildMember(scope.WithDevice(group_devices[rank]), grads, buckets, group_devices, options);
  if (!reduced.ok()) {
    return AddContext(reduced.status(), absl::StrCat("all-reduce gradients of member ", rank));
  }
  return reduced;
}

absl::StatusOr<IndexedSlices> AllGatherIndexedSlicesOfMember(
    const Scope& scope, const IndexedSlices& slices, const std::vector<std::string>& group_devices,
    int rank, const AllReduceOptions& options, int64_t instance_key) {
  RETURN_IF_ERROR(scope.status());
  if (rank < 0 || rank >= static_cast<int>(group_devices.size())) {
    return absl::InvalidArgumentError(absl::StrCat("all-gather gradients: rank ", rank,
                                                   " is not in a group of ", group_devices.size(),
                                                   " devices"));
  }
  const Scope s = scope.WithDevice(group_devices[rank]);
  ops::CollectiveSpec spec;
  spec.group_key = options.group_key;
  spec.group_devices = group_devices;
  spec.communication_hint = options.communication_hint;
  spec.timeout_seconds = options.timeout_seconds;
  IndexedSlices out;
  spec.instance_key = instance_key;
  out.values = ops::AllGather(s, slices.values, spec);
  if (options.reduce_op == ReduceOp::kMean) {
    out.values = s.Op("Mul")
                     .Input(out.values)
                     .Input(Input(1.0 / static_cast<double>(group_devices.size())))
                     .Finalize1();
  }
  spec.instance_key = instance_key + 1;
  out.indices = ops::AllGather(s, slices.indices, spec);
  out.dense_shape = slices.dense_shape;
  RETURN_IF_ERROR(scope.status());
  return out;
}

}  // namespace sluice
