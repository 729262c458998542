#include "ops/strings/internal/tensor_format.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

// The shortest of "%.{short}g" and "%.{long}g" that reads back as `v`.
template <typename T>
std::string RoundTripG(T v, int short_digits, int long_digits) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", short_digits, static_cast<double>(v));
  const bool same = sizeof(T) == sizeof(float) ? std::strtof(buf, nullptr) == static_cast<float>(v)
                                               : std::strtod(buf, nullptr) == static_cast<double>(v);
  if (!same) std::snprintf(buf, sizeof(buf), "%.*g", long_digits, static_cast<double>(v));
  return buf;
}

// Element i of `t` as text; `quote` wraps strings in quotes.
std::string Element(const Tensor& t, int64_t i, bool quote) {
  switch (t.dtype()) {
    case DT_FLOAT: return FormatFloat(t.data<float>()[i]);
    case DT_DOUBLE: return FormatDouble(t.data<double>()[i]);
    case DT_HALF: return FormatFloat(t.data<Half>()[i].ToFloat());
    case DT_BFLOAT16: return FormatFloat(t.data<BFloat16>()[i].ToFloat());
    case DT_INT32: return absl::StrCat(t.data<int32_t>()[i]);
    case DT_INT64: return absl::StrCat(t.data<int64_t>()[i]);
    case DT_INT16: return absl::StrCat(t.data<int16_t>()[i]);
    case DT_INT8: return absl::StrCat(t.data<int8_t>()[i]);
    case DT_UINT8: return absl::StrCat(t.data<uint8_t>()[i]);
    case DT_UINT16: return absl::StrCat(t.data<uint16_t>()[i]);
    case ::tensorflow::DT_UINT32: return absl::StrCat(t.data<uint32_t>()[i]);
    case ::tensorflow::DT_UINT64: return absl::StrCat(t.data<uint64_t>()[i]);
    case DT_BOOL: return t.data<bool>()[i] ? "1" : "0";
    case DT_STRING: {
      std::string s = absl::Utf8SafeCEscape(t.data<std::string>()[i]);
      return quote ? absl::StrCat("\"", s, "\"") : s;
    }
    default: return "?";
  }
}

bool Printable(DataType t) {
  switch (t) {
    case DT_FLOAT: case DT_DOUBLE: case DT_HALF: case DT_BFLOAT16: case DT_INT32: case DT_INT64:
    case DT_INT16: case DT_INT8: case DT_UINT8: case DT_UINT16: case ::tensorflow::DT_UINT32:
    case ::tensorflow::DT_UINT64: case DT_BOOL: case DT_STRING:
      return true;
    default:
      return false;
  }
}

// Between two entries of axis `axis` of `rank`: a space on the last axis,
// else a newline per axis below it and an indent of axis + 1.
void Spacing(int axis, int rank, std::string* out) {
  if (axis == rank - 1) {
    out->push_back(' ');
    return;
  }
  out->append(rank - axis - 1, '\n');
  out->append(axis + 1, ' ');
}

class Printer {
 public:
  Printer(const Tensor& t, int64_t ends) : t_(t), ends_(ends) {
    for (int d = 0; d < t.dims(); ++d) dims_.push_back(t.dim_size(d));
  }

  // The entries of `axis` starting at flat element `base`.
  void Axis(int axis, int64_t base, std::string* out) const {
    const int rank = static_cast<int>(dims_.size());
    if (axis == rank) {
      out->append(Element(t_, base, /*quote=*/true));
      return;
    }
    out->push_back('[');
    const int64_t n = dims_[axis];
    int64_t stride = 1;
    for (int d = axis + 1; d < rank; ++d) stride *= dims_[d];
    for (int64_t i = 0; i < ends_ && i < n; ++i) {
      if (i > 0) Spacing(axis, rank, out);
      Axis(axis + 1, base + stride * i, out);
    }
    if (n > 2 * ends_) {
      Spacing(axis, rank, out);
      out->append("...");
    }
    for (int64_t i = std::max(ends_, n - ends_); i < n; ++i) {
      Spacing(axis, rank, out);
      Axis(axis + 1, base + stride * i, out);
    }
    out->push_back(']');
  }

 private:
  const Tensor& t_;
  const int64_t ends_;
  std::vector<int64_t> dims_;
};

// tf.compat.v1.Print's layout: values in order until `limit` of them.
void LegacyAxis(const Tensor& t, int axis, int64_t limit, int64_t* next, std::string* out) {
  if (*next >= limit) return;
  const int rank = t.dims();
  const int64_t n = t.dim_size(axis);
  if (axis == rank - 1) {
    for (int64_t i = 0; i < n; ++i) {
      if (*next >= limit) {
        if (axis != 0) out->append("...");
        return;
      }
      if (i > 0) out->push_back(' ');
      out->append(Element(t, (*next)++, /*quote=*/false));
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    bool open = false;
    if (*next < limit) {
      out->push_back('[');
      open = true;
    }
    LegacyAxis(t, axis + 1, limit, next, out);
    if (*next < limit || open) out->push_back(']');
  }
}

}  // namespace

std::string FormatFloat(float v) { return RoundTripG(v, FLT_DIG, FLT_DIG + 3); }
std::string FormatDouble(double v) { return RoundTripG(v, DBL_DIG, DBL_DIG + 2); }

std::string FormatTensor(const Tensor& t, int64_t summarize) {
  const int64_t n = t.NumElements();
  const int64_t limit = summarize < 0 ? n : std::min(summarize, n);
  std::string out;
  if (!Printable(t.dtype())) {
    if (t.dims() > 0) out.push_back('[');
    for (int64_t i = 0; i < limit; ++i) absl::StrAppend(&out, i > 0 ? " ?" : "?");
    if (limit < n) out.append("...");
    if (t.dims() > 0) out.push_back(']');
    return out;
  }
  if (t.dims() == 0) {
    if (limit > 0) out = Element(t, 0, /*quote=*/true);
    if (n > limit) out.append("...");
    return out;
  }
  Printer(t, limit).Axis(0, 0, &out);
  return out;
}

std::string FormatTensorLegacy(const Tensor& t, int64_t summarize) {
  const int64_t n = t.NumElements();
  const int64_t limit = summarize < 0 ? n : std::min(summarize, n);
  std::string out;
  if (!Printable(t.dtype())) {
    for (int64_t i = 0; i < limit; ++i) absl::StrAppend(&out, i > 0 ? " ?" : "?");
    if (limit < n) out.append("...");
    return out;
  }
  if (t.dims() == 0) {
    if (limit > 0) out = Element(t, 0, /*quote=*/false);
    if (n > limit) out.append("...");
    return out;
  }
  int64_t next = 0;
  LegacyAxis(t, 0, limit, &next, &out);
  if (n > limit) out.append("...");
  return out;
}

}  // namespace sluice
