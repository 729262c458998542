// CPU kernels of the text ops (string_transform_ops.h). Regular
// expressions are RE2's (as TensorFlow's), base64 is Abseil's web-safe
// codec, numbers are read by strtod/strtof and absl::SimpleAtoi, which accept
// what TensorFlow's safe_strto* accept (surrounding spaces, inf, nan, hex
// floats; decimal integers with a sign).
#include <re2/re2.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/math/internal/broadcast.h"
#include "ops/strings/string_transform_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

bool IsTrailByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Applies fn to every string of input 0 into a string output of its shape.
template <typename Fn>
absl::Status MapStrings(OpKernelContext* ctx, Fn&& fn) {
  const Tensor& input = ctx->input(0);
  ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, input.shape()));
  absl::Span<const std::string> in = input.flat<std::string>();
  absl::Span<std::string> o = out->flat<std::string>();
  for (size_t i = 0; i < in.size(); ++i) RETURN_IF_ERROR(fn(in[i], &o[i]));
  return absl::OkStatus();
}

absl::StatusOr<bool> Utf8Unit(const OpKernelConstruction& ctx) {
  ASSIGN_OR_RETURN(std::string unit, ctx.GetAttr<std::string>("unit"));
  if (unit != "BYTE" && unit != "UTF8_CHAR") {
    return absl::InvalidArgumentError(
        absl::StrCat("unit must be 'BYTE' or 'UTF8_CHAR', not '", unit, "'"));
  }
  return unit == "UTF8_CHAR";
}

class StringLengthOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(utf8_, Utf8Unit(ctx));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, input.shape()));
    absl::Span<const std::string> in = input.flat<std::string>();
    absl::Span<int32_t> o = out->flat<int32_t>();
    for (size_t i = 0; i < in.size(); ++i) {
      int64_t n = static_cast<int64_t>(in[i].size());
      if (utf8_) {
        n = 0;
        for (char c : in[i]) n += IsTrailByte(c) ? 0 : 1;
      }
      o[i] = static_cast<int32_t>(n);
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  bool utf8_ = false;
};

// StringLower (kUpper false) and StringUpper.
template <bool kUpper>
class StringCaseOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(std::string encoding, ctx.GetAttr<std::string>("encoding"));
    if (!encoding.empty()) {
      return absl::UnimplementedError(absl::StrCat(
          kUpper ? "StringUpper" : "StringLower", " with encoding '", encoding,
          "': Sluice maps ASCII letters only (encoding ''); TensorFlow's Unicode case mapping "
          "is ICU's, which Sluice does not link"));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    return MapStrings(ctx, [](const std::string& in, std::string* out) {
      *out = kUpper ? absl::AsciiStrToUpper(in) : absl::AsciiStrToLower(in);
      return absl::OkStatus();
    });
  }
};

class StringStripOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    return MapStrings(ctx, [](const std::string& in, std::string* out) {
      *out = std::string(absl::StripAsciiWhitespace(in));
      return absl::OkStatus();
    });
  }
};

// Substr: the unit's positions in `s` (byte offsets where each character
// starts when utf8), then the slice.
template <typename T>
class SubstrOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(utf8_, Utf8Unit(ctx));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& pos = ctx->input(1);
    const Tensor& len = ctx->input(2);
    if (pos.shape() != len.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("pos and len must have the same shape, got ",
                                                     pos.shape().DebugString(), " and ",
                                                     len.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(auto plan, internal::MakeBroadcastPlan<3>(
                                    {&input.shape(), &pos.shape(), &len.shape()}));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    absl::Span<const std::string> in = input.flat<std::string>();
    absl::Span<const T> p = pos.flat<T>();
    absl::Span<const T> l = len.flat<T>();
    absl::Span<std::string> o = out->flat<std::string>();
    const auto& step = plan.inner_strides();
    absl::Status status;
    internal::ForEachRow(plan, 0, plan.rows(), [&](int64_t row, const auto& off) {
      for (int64_t k = 0; k < plan.inner() && status.ok(); ++k) {
        const int64_t i = row * plan.inner() + k;
        status = Slice(in[off[0] + k * step[0]], p[off[1] + k * step[1]],
                       l[off[2] + k * step[2]], i, &o[i]);
      }
    });
    return status;
  }

 private:
  absl::Status Slice(const std::string& s, int64_t pos, int64_t len, int64_t index,
                     std::string* out) const {
    std::vector<size_t> starts;  // utf8: where each character starts
    if (utf8_) {
      for (size_t b = 0; b < s.size();) {
        starts.push_back(b);
        do {
          ++b;
        } while (b < s.size() && IsTrailByte(s[b]));
      }
    }
    const int64_t n = utf8_ ? static_cast<int64_t>(starts.size()) : static_cast<int64_t>(s.size());
    if (pos < -n || pos > n) {
      return absl::InvalidArgumentError(absl::StrCat("pos ", pos, " out of range for string b'",
                                                     absl::CHexEscape(s), "' at index ", index));
    }
    const int64_t begin = pos < 0 ? pos + n : pos;
    const int64_t end = (len < 0 || len > n - begin) ? n : begin + len;
    auto byte = [&](int64_t unit) {
      if (!utf8_) return static_cast<size_t>(unit);
      return unit < n ? starts[unit] : s.size();
    };
    *out = s.substr(byte(begin), byte(end) - byte(begin));
    return absl::OkStatus();
  }

  bool utf8_ = false;
};

absl::Status NotANumber(const std::string& s) {
  return absl::InvalidArgumentError(
      absl::StrCat("StringToNumberOp could not correctly convert string: ", s));
}

template <typename T>
absl::Status ParseNumber(const std::string& s, T* out) {
  if constexpr (std::is_floating_point_v<T>) {
    const std::string trimmed(absl::StripAsciiWhitespace(s));
    if (trimmed.empty()) return NotANumber(s);
    char* end = nullptr;
    errno = 0;
    if constexpr (std::is_same_v<T, float>) {
      *out = std::strtof(trimmed.c_str(), &end);
    } else {
      *out = std::strtod(trimmed.c_str(), &end);
    }
    if (end != trimmed.c_str() + trimmed.size()) return NotANumber(s);
    return absl::OkStatus();
  } else {
    if (!absl::SimpleAtoi(s, out)) return NotANumber(s);
    return absl::OkStatus();
  }
}

class StringToNumberOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(type_, ctx.GetAttr<DataType>("out_type"));
    if (type_ != DT_FLOAT && type_ != DT_DOUBLE && type_ != DT_INT32 && type_ != DT_INT64) {
      return absl::UnimplementedError(
          absl::StrCat("StringToNumber to ", DataTypeName(type_),
                       ": Sluice reads float, double, int32 and int64 (uint32 and uint64 are "
                       "not Sluice tensor types)"));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    switch (type_) {
      case DT_FLOAT:
        return Parse<float>(ctx);
      case DT_DOUBLE:
        return Parse<double>(ctx);
      case DT_INT32:
        return Parse<int32_t>(ctx);
      default:
        return Parse<int64_t>(ctx);
    }
  }
  bool IsExpensive() const override { return false; }

 private:
  template <typename T>
  absl::Status Parse(OpKernelContext* ctx) {
    const Tensor& input = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, input.shape()));
    absl::Span<const std::string> in = input.flat<std::string>();
    absl::Span<T> o = out->flat<T>();
    for (size_t i = 0; i < in.size(); ++i) RETURN_IF_ERROR(ParseNumber(in[i], &o[i]));
    return absl::OkStatus();
  }

  DataType type_ = DT_FLOAT;
};

absl::StatusOr<std::unique_ptr<RE2>> CompileReplace(const std::string& pattern,
                                                    const std::string& rewrite) {
  auto re = std::make_unique<RE2>(pattern, RE2::Quiet);
  if (!re->ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid pattern: ", pattern, ", error: ", re->error()));
  }
  std::string error;
  if (!re->CheckRewriteString(rewrite, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid rewrite '", rewrite,
                                                   "' for pattern ", pattern, ": ", error));
  }
  return re;
}

absl::Status ReplaceAll(OpKernelContext* ctx, const RE2& re, const std::string& rewrite,
                        bool global) {
  return MapStrings(ctx, [&](const std::string& in, std::string* out) {
    *out = in;
    if (global) {
      RE2::GlobalReplace(out, re, rewrite);
    } else {
      RE2::Replace(out, re, rewrite);
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::string> ScalarString(const Tensor& t, const char* what) {
  if (t.NumElements() != 1 || t.shape().rank() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a scalar, got shape ", t.shape().DebugString()));
  }
  return t.flat<std::string>()[0];
}

class RegexReplaceOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(global_, ctx.GetAttr<bool>("replace_global"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::string pattern, ScalarString(ctx->input(1), "pattern"));
    ASSIGN_OR_RETURN(std::string rewrite, ScalarString(ctx->input(2), "rewrite"));
    ASSIGN_OR_RETURN(std::unique_ptr<RE2> re, CompileReplace(pattern, rewrite));
    return ReplaceAll(ctx, *re, rewrite, global_);
  }

 private:
  bool global_ = true;
};

class StaticRegexReplaceOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(std::string pattern, ctx.GetAttr<std::string>("pattern"));
    ASSIGN_OR_RETURN(rewrite_, ctx.GetAttr<std::string>("rewrite"));
    ASSIGN_OR_RETURN(global_, ctx.GetAttr<bool>("replace_global"));
    ASSIGN_OR_RETURN(re_, CompileReplace(pattern, rewrite_));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    return ReplaceAll(ctx, *re_, rewrite_, global_);
  }

 private:
  std::unique_ptr<RE2> re_;
  std::string rewrite_;
  bool global_ = true;
};

// ReduceJoin: each output element joins the input elements that differ from
// it only along the reduced axes, as joining along the first listed axis,
// then the second, ...: the first listed axis varies fastest (TensorFlow's
// order; tf.strings.reduce_join lists all axes last to first, so that a
// whole tensor joins in row-major order).
class ReduceJoinOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(keep_dims_, ctx.GetAttr<bool>("keep_dims"));
    ASSIGN_OR_RETURN(separator_, ctx.GetAttr<std::string>("separator"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& axes = ctx->input(1);
    if (axes.shape().rank() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reduction_indices must be a scalar or vector, got shape ", axes.shape().DebugString()));
    }
    const int rank = input.shape().rank();
    std::vector<bool> reduced(rank, false);
    std::vector<int> folded;  // in the order listed
    for (int32_t a : axes.flat<int32_t>()) {
      const int axis = a < 0 ? a + rank : a;
      if (axis < 0 || axis >= rank) {
        return absl::InvalidArgumentError(absl::StrCat("Invalid reduction dimension ", a,
                                                       " for input with ", rank,
                                                       " dimension(s)"));
      }
      if (reduced[axis]) {
        return absl::InvalidArgumentError(absl::StrCat("Duplicate reduction dimension ", a));
      }
      reduced[axis] = true;
      folded.push_back(axis);
    }
    // Strides of the input; the kept and reduced axes in order.
    std::vector<int64_t> stride(rank, 1);
    for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * input.shape().dim(d + 1);
    std::vector<int> kept;
    TensorShape out_shape;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[d]) kept.push_back(d);
      if (!reduced[d]) {
        out_shape.AddDim(input.shape().dim(d));
      } else if (keep_dims_) {
        out_shape.AddDim(1);
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    absl::Span<const std::string> in = input.flat<std::string>();
    absl::Span<std::string> o = out->flat<std::string>();
    int64_t group = 1;
    for (int d : folded) group *= input.shape().dim(d);
    for (int64_t i = 0; i < static_cast<int64_t>(o.size()); ++i) {
      int64_t base = 0, rest = i;
      for (int k = static_cast<int>(kept.size()) - 1; k >= 0; --k) {
        const int64_t size = input.shape().dim(kept[k]);
        base += (rest % size) * stride[kept[k]];
        rest /= size;
      }
      std::string joined;
      for (int64_t j = 0; j < group; ++j) {
        int64_t offset = base, r = j;
        for (size_t k = 0; k < folded.size(); ++k) {
          const int64_t size = input.shape().dim(folded[k]);
          offset += (r % size) * stride[folded[k]];
          r /= size;
        }
        if (j > 0) joined += separator_;
        joined += in[offset];
      }
      o[i] = std::move(joined);
    }
    return absl::OkStatus();
  }

 private:
  bool keep_dims_ = false;
  std::string separator_;
};

class EncodeBase64Op : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(pad_, ctx.GetAttr<bool>("pad"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    return MapStrings(ctx, [&](const std::string& in, std::string* out) {
      absl::WebSafeBase64Escape(in, out);
      if (pad_) out->append((4 - out->size() % 4) % 4, '=');
      return absl::OkStatus();
    });
  }

 private:
  bool pad_ = false;
};

class DecodeBase64Op : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    return MapStrings(ctx, [](const std::string& in, std::string* out) {
      if (in.size() % 4 == 1) {
        return absl::InvalidArgumentError("Base64 string length cannot be 1 modulo 4.");
      }
      if (!absl::WebSafeBase64Unescape(in, out)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Invalid character found in base64: '", absl::CHexEscape(in), "'"));
      }
      return absl::OkStatus();
    });
  }
};

}  // namespace

void RegisterStringTransformKernels(KernelRegistry* k) {
  const auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  k->Register<StringLengthOp>(cpu("StringLength"));
  k->Register<StringCaseOp<false>>(cpu("StringLower"));
  k->Register<StringCaseOp<true>>(cpu("StringUpper"));
  k->Register<StringStripOp>(cpu("StringStrip"));
  k->Register<SubstrOp<int32_t>>(cpu("Substr").TypeConstraint("T", DT_INT32));
  k->Register<SubstrOp<int64_t>>(cpu("Substr").TypeConstraint("T", DT_INT64));
  k->Register<StringToNumberOp>(cpu("StringToNumber"));
  k->Register<RegexReplaceOp>(cpu("RegexReplace"));
  k->Register<StaticRegexReplaceOp>(cpu("StaticRegexReplace"));
  k->Register<ReduceJoinOp>(cpu("ReduceJoin"));
  k->Register<EncodeBase64Op>(cpu("EncodeBase64"));
  k->Register<DecodeBase64Op>(cpu("DecodeBase64"));
}

}  // namespace sluice
