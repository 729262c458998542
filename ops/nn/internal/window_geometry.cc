// Window arithmetic of the 2-D window ops (see window_geometry.h).
#include "ops/nn/internal/window_geometry.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace sluice {
namespace internal {
namespace {

std::string Join(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

// Reads a list(int) attr that older graphs may omit.
absl::StatusOr<std::vector<int64_t>> GetIntsOr(const AttrMap& attrs, absl::string_view name,
                                               std::vector<int64_t> fallback) {
  if (attrs.find(std::string(name)) == attrs.end()) return fallback;
  return GetAttr<std::vector<int64_t>>(attrs, name);
}

absl::StatusOr<bool> ReadDataFormat(const AttrMap& attrs) {
  if (attrs.find("data_format") == attrs.end()) return false;
  absl::StatusOr<std::string> format = GetAttr<std::string>(attrs, "data_format");
  if (!format.ok()) return format.status();
  if (*format == "NHWC") return false;
  if (*format == "NCHW") return true;
  return absl::UnimplementedError(absl::StrCat("data_format '", *format, "' is not supported"));
}

// `values` has 4 entries and is 1 in the batch and depth dimensions.
absl::Status CheckSpatialOnly(const WindowAttrs& a, const std::vector<int64_t>& values,
                              absl::string_view attr) {
  if (values.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("attr '", attr, "' must have 4 values, got ", Join(values)));
  }
  if (values[0] != 1 || values[a.c_index()] != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "attr '", attr, "' must be 1 in the batch and depth dimensions, got ", Join(values)));
  }
  for (int64_t v : values) {
    if (v < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("attr '", attr, "' values must be >= 1, got ", Join(values)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Padding> ParsePadding(absl::string_view padding) {
  if (padding == "SAME") return Padding::kSame;
  if (padding == "VALID") return Padding::kValid;
  if (padding == "EXPLICIT") return Padding::kExplicit;
  return absl::InvalidArgumentError(
      absl::StrCat("padding must be 'SAME', 'VALID' or 'EXPLICIT', got '", padding, "'"));
}

absl::StatusOr<WindowDim> ComputeWindowDim(int64_t input, int64_t window, int64_t stride,
                                           int64_t dilation, Padding padding,
                                           int64_t explicit_before, int64_t explicit_after) {
  // Bounds keep every product below 2^62, so no arithmetic here overflows.
  constexpr int64_t kMax = int64_t{1} << 31;
  if (stride < 1 || dilation < 1 || stride > kMax || dilation > kMax) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stride (", stride, ") and dilation (", dilation, ") must be in [1, 2^31]"));
  }
  if (input > kMax || window > kMax || explicit_before > kMax || explicit_after > kMax) {
    return absl::InvalidArgumentError(absl::StrCat("window size ", window, ", input size ", input,
                                                   " or paddings exceed 2^31"));
  }
  if (input < 0 || window < 0) return WindowDim{};
  if (window < 1) return absl::InvalidArgumentError("window size must be at least 1");
  const int64_t effective = (window - 1) * dilation + 1;
  WindowDim d;
  switch (padding) {
    case Padding::kSame: {
      d.output = (input + stride - 1) / stride;
      const int64_t needed = std::max<int64_t>(0, (d.output - 1) * stride + effective - input);
      d.pad_before = needed / 2;
      return d;
    }
    case Padding::kValid:
    case Padding::kExplicit: {
      if (explicit_before < 0 || explicit_after < 0) {
        return absl::InvalidArgumentError("explicit paddings must be >= 0");
      }
      const int64_t padded = input + explicit_before + explicit_after;
      if (padded < effective) {
        return absl::InvalidArgumentError(absl::StrCat(
            "window of size ", effective, " (after dilation) is larger than the input size ",
            padded, " (after padding)"));
      }
      d.output = (padded - effective) / stride + 1;
      d.pad_before = explicit_before;
      return d;
    }
  }
  return absl::InternalError("unknown padding");
}

absl::StatusOr<WindowAttrs> ReadConvAttrs(const AttrMap& attrs) {
  WindowAttrs a;
  ASSIGN_OR_RETURN(a.nchw, ReadDataFormat(attrs));
  ASSIGN_OR_RETURN(a.strides, GetAttr<std::vector<int64_t>>(attrs, "strides"));
  RETURN_IF_ERROR(CheckSpatialOnly(a, a.strides, "strides"));
  ASSIGN_OR_RETURN(a.dilations, GetIntsOr(attrs, "dilations", {1, 1, 1, 1}));
  RETURN_IF_ERROR(CheckSpatialOnly(a, a.dilations, "dilations"));
  ASSIGN_OR_RETURN(std::string padding, GetAttr<std::string>(attrs, "padding"));
  ASSIGN_OR_RETURN(a.padding, ParsePadding(padding));
  ASSIGN_OR_RETURN(a.explicit_paddings, GetIntsOr(attrs, "explicit_paddings", {}));
  if (a.padding == Padding::kExplicit) {
    const auto& p = a.explicit_paddings;
    if (p.size() != 8) {
      return absl::InvalidArgumentError(
          absl::StrCat("padding 'EXPLICIT' needs 8 explicit_paddings, got ", Join(p)));
    }
    const int c = a.c_index();
    if (p[0] != 0 || p[1] != 0 || p[2 * c] != 0 || p[2 * c + 1] != 0) {
      return absl::UnimplementedError(absl::StrCat(
          "explicit padding in the batch or depth dimension is not supported: ", Join(p)));
    }
  } else if (!a.explicit_paddings.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("explicit_paddings must be empty unless padding is 'EXPLICIT', got ",
                     Join(a.explicit_paddings)));
  }
  return a;
}

absl::StatusOr<WindowAttrs> ReadPoolAttrs(const AttrMap& attrs) {
  ASSIGN_OR_RETURN(std::vector<int64_t> ksize, GetAttr<std::vector<int64_t>>(attrs, "ksize"));
  ASSIGN_OR_RETURN(std::vector<int64_t> strides, GetAttr<std::vector<int64_t>>(attrs, "strides"));
  return ReadPoolAttrs(attrs, std::move(ksize), std::move(strides));
}

absl::StatusOr<WindowAttrs> ReadPoolAttrs(const AttrMap& attrs, std::vector<int64_t> ksize,
                                          std::vector<int64_t> strides) {
  WindowAttrs a;
  ASSIGN_OR_RETURN(a.nchw, ReadDataFormat(attrs));
  a.ksize = std::move(ksize);
  RETURN_IF_ERROR(CheckSpatialOnly(a, a.ksize, "ksize"));
  a.strides = std::move(strides);
  RETURN_IF_ERROR(CheckSpatialOnly(a, a.strides, "strides"));
  a.dilations = {1, 1, 1, 1};
  ASSIGN_OR_RETURN(std::string padding, GetAttr<std::string>(attrs, "padding"));
  ASSIGN_OR_RETURN(a.padding, ParsePadding(padding));
  if (a.padding == Padding::kExplicit) {
    return absl::UnimplementedError("pooling with padding 'EXPLICIT' is not supported");
  }
  return a;
}

absl::StatusOr<Conv2DGeometry> ComputeConv2DGeometry(const WindowAttrs& attrs,
                                                     const TensorShape& input_shape,
                                                     int64_t filter_rows, int64_t filter_cols,
                                                     int64_t out_depth) {
  if (attrs.nchw) return absl::UnimplementedError("only data_format NHWC is supported on CPU");
  if (input_shape.rank() != 4 || !input_shape.IsFullyDefined()) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be a 4-D tensor [batch, height, width, depth], got ",
                     input_shape.DebugString()));
  }
  Conv2DGeometry g;
  g.batch = input_shape.dim(0);
  g.in_rows = input_shape.dim(1);
  g.in_cols = input_shape.dim(2);
  g.in_depth = input_shape.dim(3);
  g.filter_rows = filter_rows;
  g.filter_cols = filter_cols;
  g.out_depth = out_depth;
  g.stride_rows = attrs.strides[1];
  g.stride_cols = attrs.strides[2];
  g.dilation_rows = attrs.dilations[1];
  g.dilation_cols = attrs.dilations[2];
  const bool ex = attrs.padding == Padding::kExplicit;
  ASSIGN_OR_RETURN(
      WindowDim rows,
      ComputeWindowDim(g.in_rows, filter_rows, g.stride_rows, g.dilation_rows, attrs.padding,
                       ex ? attrs.explicit_paddings[2] : 0, ex ? attrs.explicit_paddings[3] : 0));
  ASSIGN_OR_RETURN(
      WindowDim cols,
      ComputeWindowDim(g.in_cols, filter_cols, g.stride_cols, g.dilation_cols, attrs.padding,
                       ex ? attrs.explicit_paddings[4] : 0, ex ? attrs.explicit_paddings[5] : 0));
  g.out_rows = rows.output;
  g.out_cols = cols.output;
  g.pad_top = rows.pad_before;
  g.pad_left = cols.pad_before;
  return g;
}

absl::Status ShapeFromSizesInput(InferenceContext* c, int input, int rank) {
  RETURN_IF_ERROR(c->WithRank(input, 1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> sizes, c->InputAsInts(input));
  if (!sizes.has_value()) {
    c->set_output(0, TensorShape::UnknownOfRank(rank));
    return absl::OkStatus();
  }
  auto error = [c](absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": ", message));
  };
  if (static_cast<int>(sizes->size()) != rank) {
    return error(absl::StrCat("sizes input must have ", rank, " elements, got ", sizes->size()));
  }
  for (int64_t d : *sizes) {
    if (d < 0) return error("sizes input must be non-negative");
  }
  c->set_output(0, TensorShape(absl::MakeConstSpan(*sizes)));
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace sluice
