// The geometry of the 3-D window ops (ops/nn/nn3d_ops.h) over NDHWC data, read
// from a node's attrs and an input shape, shared by their shape functions
// and CPU kernels. Built on window_geometry.h's ComputeWindowDim.
//
//   ASSIGN_OR_RETURN(internal::Window3DAttrs a, internal::ReadWindow3DAttrs(node, false));
//   ASSIGN_OR_RETURN(internal::Window3D w, internal::ComputeWindow3D(a, in_shape, {2, 2, 2}));
//   // w.out[0..2], w.pad[0..2]
//
// Errors: InvalidArgument naming the attr or the sizes; Unimplemented for
// NCDHW. Thread-safety: pure functions. Internal to ops/.
#ifndef SLUICE_OPS_NN_INTERNAL_WINDOW3D_H_
#define SLUICE_OPS_NN_INTERNAL_WINDOW3D_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "graph/graph.h"
#include "graph/tensor_shape.h"
#include "ops/nn/internal/window_geometry.h"
#include "runtime/kernel_registry.h"

namespace sluice {
namespace internal {

struct Window3DAttrs {
  std::vector<int64_t> ksize, strides, dilations;  // 5 values each (ksize: pools only)
  Padding padding = Padding::kValid;
};

inline absl::Status CheckFive(const std::vector<int64_t>& v, const char* name) {
  if (v.size() != 5 || v[0] != 1 || v[4] != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must have 5 values, 1 in batch and depth, got [", absl::StrJoin(v, ","), "]"));
  }
  for (int64_t d : v) {
    if (d < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " must be positive, got [", absl::StrJoin(v, ","), "]"));
    }
  }
  return absl::OkStatus();
}

inline absl::StatusOr<Window3DAttrs> ReadWindow3DAttrs(const Node& node, bool pool) {
  Window3DAttrs a;
  ASSIGN_OR_RETURN(std::string format, node.GetAttr<std::string>("data_format"));
  if (format != "NDHWC") {
    return absl::UnimplementedError(
        absl::StrCat(node.op(), " supports only data_format NDHWC, got ", format));
  }
  ASSIGN_OR_RETURN(a.strides, node.GetAttr<std::vector<int64_t>>("strides"));
  RETURN_IF_ERROR(CheckFive(a.strides, "strides"));
  if (pool) {
    ASSIGN_OR_RETURN(a.ksize, node.GetAttr<std::vector<int64_t>>("ksize"));
    RETURN_IF_ERROR(CheckFive(a.ksize, "ksize"));
    a.dilations = {1, 1, 1, 1, 1};
  } else {
    ASSIGN_OR_RETURN(a.dilations, node.GetAttr<std::vector<int64_t>>("dilations"));
    RETURN_IF_ERROR(CheckFive(a.dilations, "dilations"));
  }
  ASSIGN_OR_RETURN(std::string padding, node.GetAttr<std::string>("padding"));
  ASSIGN_OR_RETURN(a.padding, ParsePadding(padding));
  return a;
}

struct Window3D {
  std::array<int64_t, 3> in{}, window{}, stride{}, dilation{}, out{}, pad{};
};

// in_shape: [batch, planes, rows, cols, depth] (dims may be -1: out -1).
inline absl::StatusOr<Window3D> ComputeWindow3D(const Window3DAttrs& a,
                                                const TensorShape& in_shape,
                                                std::array<int64_t, 3> window) {
  Window3D w;
  for (int i = 0; i < 3; ++i) {
    w.in[i] = in_shape.unknown_rank() ? -1 : in_shape.dim(i + 1);
    w.window[i] = window[i];
    w.stride[i] = a.strides[i + 1];
    w.dilation[i] = a.dilations[i + 1];
    absl::StatusOr<WindowDim> d =
        ComputeWindowDim(w.in[i], w.window[i], w.stride[i], w.dilation[i], a.padding);
    if (!d.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(d.status().message(), " (input shape ", in_shape.DebugString(), ")"));
    }
    w.out[i] = d->output;
    w.pad[i] = d->pad_before;
  }
  return w;
}

// Calls fn(out_pixel, in_pixel, tap) for every output position (row-major
// over batch, planes, rows, cols) and every window tap inside the input;
// pixels count positions (multiply by the depth for an offset).
template <typename Fn>
void ForEachTap3D(const Window3D& w, int64_t batch, Fn fn) {
  int64_t out_pixel = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t op = 0; op < w.out[0]; ++op) {
      for (int64_t orow = 0; orow < w.out[1]; ++orow) {
        for (int64_t oc = 0; oc < w.out[2]; ++oc, ++out_pixel) {
          int64_t tap = 0;
          for (int64_t kp = 0; kp < w.window[0]; ++kp) {
            const int64_t ip = op * w.stride[0] - w.pad[0] + kp * w.dilation[0];
            for (int64_t kr = 0; kr < w.window[1]; ++kr) {
              const int64_t ir = orow * w.stride[1] - w.pad[1] + kr * w.dilation[1];
              for (int64_t kc = 0; kc < w.window[2]; ++kc, ++tap) {
                const int64_t ic = oc * w.stride[2] - w.pad[2] + kc * w.dilation[2];
                if (ip < 0 || ip >= w.in[0] || ir < 0 || ir >= w.in[1] || ic < 0 ||
                    ic >= w.in[2]) {
                  continue;
                }
                fn(out_pixel, ((b * w.in[0] + ip) * w.in[1] + ir) * w.in[2] + ic, tap);
              }
            }
          }
        }
      }
    }
  }
}

// The kernel halves of RegisterNn3dKernels (conv3d_kernels.cc, pool3d_kernels.cc).
void RegisterConv3DKernels(KernelRegistry* kernels);
void RegisterPool3DKernels(KernelRegistry* kernels);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_NN_INTERNAL_WINDOW3D_H_
