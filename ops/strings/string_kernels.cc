// CPU kernels of the string ops (string_ops.h). The hashes are the
// libraries TensorFlow uses, so bucket ids match its own: FarmHash's
// Fingerprint64 (Debian's libfarmhash) and HighwayHash's SipHash-2-4
// (libhighwayhash, header-only). TensorFlow's legacy Hash64 is in no
// library; it is MurmurHash64A with TensorFlow's seed, written here. The
// regular expressions are RE2's (Debian's libre2), as TensorFlow's.
#include <farmhash.h>
#include <highwayhash/sip_hash.h>
#include <re2/re2.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/strings/string_ops.h"
#include "runtime/kernel.h"

namespace sluice {

uint64_t LegacyHash64(absl::string_view s) {
  constexpr uint64_t kSeed = 0xDECAFCAFFEull;
  constexpr uint64_t m = 0xc6a4a7935bd1e995ull;
  constexpr int r = 47;
  const char* data = s.data();
  size_t n = s.size();
  uint64_t h = kSeed ^ (n * m);
  while (n >= 8) {
    uint64_t k;
    std::memcpy(&k, data, 8);  // little-endian, as TensorFlow's DecodeFixed64
    data += 8;
    n -= 8;
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  const auto byte = [&](int i) {
    return static_cast<uint64_t>(static_cast<unsigned char>(data[i]));
  };
  switch (n) {
    case 7:
      h ^= byte(6) << 48;
      [[fallthrough]];
    case 6:
      h ^= byte(5) << 40;
      [[fallthrough]];
    case 5:
      h ^= byte(4) << 32;
      [[fallthrough]];
    case 4:
      h ^= byte(3) << 24;
      [[fallthrough]];
    case 3:
      h ^= byte(2) << 16;
      [[fallthrough]];
    case 2:
      h ^= byte(1) << 8;
      [[fallthrough]];
    case 1:
      h ^= byte(0);
      h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

namespace {

enum class Hash { kFast, kStrong, kLegacy };

template <Hash kind>
class StringToHashBucketOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(num_buckets_, ctx.GetAttr<int64_t>("num_buckets"));
    if (num_buckets_ < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_buckets must be at least 1, got ", num_buckets_));
    }
    if constexpr (kind == Hash::kStrong) {
      ASSIGN_OR_RETURN(std::vector<int64_t> key, ctx.GetAttr<std::vector<int64_t>>("key"));
      if (key.size() != 2) {
        return absl::InvalidArgumentError(absl::StrCat("key must have size 2, has ", key.size()));
      }
      key_[0] = static_cast<uint64_t>(key[0]);
      key_[1] = static_cast<uint64_t>(key[1]);
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const std::string* s = in.data<std::string>();
    int64_t* o = out->data<int64_t>();
    const uint64_t buckets = static_cast<uint64_t>(num_buckets_);
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      uint64_t h;
      if constexpr (kind == Hash::kFast) {
        h = util::Fingerprint64(s[i].data(), s[i].size());
      } else if constexpr (kind == Hash::kStrong) {
        h = highwayhash::SipHash(key_, s[i].data(), s[i].size());
      } else {
        h = LegacyHash64(s[i]);
      }
      o[i] = static_cast<int64_t>(h % buckets);
    }
    return absl::OkStatus();
  }

 private:
  int64_t num_buckets_ = 1;
  highwayhash::HH_U64 key_[2] = {0, 0};
};

// printf of one value with a prepared format.
template <typename... Args>
std::string Format(const std::string& format, Args... args) {
  const int n = std::snprintf(nullptr, 0, format.c_str(), args...);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::snprintf(out.data(), out.size() + 1, format.c_str(), args...);
  return out;
}

class AsStringOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(dtype_, ctx.GetAttr<DataType>("T"));
    ASSIGN_OR_RETURN(int64_t precision, ctx.GetAttr<int64_t>("precision"));
    ASSIGN_OR_RETURN(bool scientific, ctx.GetAttr<bool>("scientific"));
    ASSIGN_OR_RETURN(bool shortest, ctx.GetAttr<bool>("shortest"));
    ASSIGN_OR_RETURN(int64_t width, ctx.GetAttr<int64_t>("width"));
    ASSIGN_OR_RETURN(std::string fill, ctx.GetAttr<std::string>("fill"));
    const bool floating = dtype_ == DT_FLOAT || dtype_ == DT_DOUBLE || dtype_ == DT_HALF ||
                          dtype_ == DT_BFLOAT16 || dtype_ == ::tensorflow::DT_COMPLEX64 ||
                          dtype_ == ::tensorflow::DT_COMPLEX128;
    if (scientific && shortest) {
      return absl::InvalidArgumentError("Cannot select both scientific and shortest notation");
    }
    if (fill.size() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Fill string must be one or fewer characters, got \"", fill, "\""));
    }
    if (!floating && precision > -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("precision not supported for datatype ", DataTypeName(dtype_)));
    }
    if (!floating && (scientific || shortest)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scientific and shortest format not supported for datatype ", DataTypeName(dtype_)));
    }
    format_ = "%";
    if (!fill.empty()) {
      switch (fill[0]) {
        case ' ':
        case '+':
        case '-':
        case '0':
        case '#':
          format_ += fill;
          break;
        default:
          return absl::InvalidArgumentError(
              absl::StrCat("Fill argument not supported: \"", fill, "\""));
      }
    }
    if (width > -1) absl::StrAppend(&format_, width);
    if (precision > -1) absl::StrAppend(&format_, ".", precision);
    if (floating) {
      format_ += scientific ? "e" : shortest ? "g" : "f";
      if (dtype_ == ::tensorflow::DT_COMPLEX64 || dtype_ == ::tensorflow::DT_COMPLEX128) {
        format_ = absl::StrCat("(", format_, ",", format_, ")");
      }
    } else if (dtype_ == DT_INT64) {
      format_ += "lld";
    } else if (dtype_ == ::tensorflow::DT_UINT64) {
      format_ += "llu";
    } else if (dtype_ == ::tensorflow::DT_UINT32 || dtype_ == DT_UINT8 || dtype_ == DT_UINT16) {
      format_ += "u";
    } else if (dtype_ == DT_BOOL || dtype_ == DT_STRING) {
      format_ += "s";
    } else {
      format_ += "d";
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    std::string* o = out->data<std::string>();
    const int64_t n = in.NumElements();
    for (int64_t i = 0; i < n; ++i) {
      switch (dtype_) {
        case DT_FLOAT:
          o[i] = Format(format_, static_cast<double>(in.data<float>()[i]));
          break;
        case DT_DOUBLE:
          o[i] = Format(format_, in.data<double>()[i]);
          break;
        case DT_HALF:
          o[i] = Format(format_, static_cast<double>(in.data<Half>()[i].ToFloat()));
          break;
        case DT_BFLOAT16:
          o[i] = Format(format_, static_cast<double>(in.data<BFloat16>()[i].ToFloat()));
          break;
        case ::tensorflow::DT_COMPLEX64: {
          const float* c = reinterpret_cast<const float*>(in.raw_data()) + 2 * i;
          o[i] = Format(format_, static_cast<double>(c[0]), static_cast<double>(c[1]));
          break;
        }
        case ::tensorflow::DT_COMPLEX128: {
          const double* c = reinterpret_cast<const double*>(in.raw_data()) + 2 * i;
          o[i] = Format(format_, c[0], c[1]);
          break;
        }
        case DT_INT8:
          o[i] = Format(format_, static_cast<int>(in.data<int8_t>()[i]));
          break;
        case DT_INT16:
          o[i] = Format(format_, static_cast<int>(in.data<int16_t>()[i]));
          break;
        case DT_INT32:
          o[i] = Format(format_, in.data<int32_t>()[i]);
          break;
        case DT_INT64:
          o[i] = Format(format_, static_cast<long long>(in.data<int64_t>()[i]));
          break;
        case DT_UINT8:
          o[i] = Format(format_, static_cast<unsigned>(in.data<uint8_t>()[i]));
          break;
        case DT_UINT16:
          o[i] = Format(format_, static_cast<unsigned>(in.data<uint16_t>()[i]));
          break;
        case ::tensorflow::DT_UINT32: {
          uint32_t v;
          std::memcpy(&v, static_cast<const char*>(in.raw_data()) + 4 * i, 4);
          o[i] = Format(format_, static_cast<unsigned>(v));
          break;
        }
        case ::tensorflow::DT_UINT64: {
          uint64_t v;
          std::memcpy(&v, static_cast<const char*>(in.raw_data()) + 8 * i, 8);
          o[i] = Format(format_, static_cast<unsigned long long>(v));
          break;
        }
        case DT_BOOL:
          o[i] = Format(format_, in.data<bool>()[i] ? "true" : "false");
          break;
        case DT_STRING:
          o[i] = Format(format_, in.data<std::string>()[i].c_str());
          break;
        default:
          return absl::UnimplementedError(
              absl::StrCat("AsString: no CPU kernel for ", DataTypeName(dtype_)));
      }
    }
    return absl::OkStatus();
  }

 private:
  DataType dtype_ = DT_INVALID;
  std::string format_;
};

// The tokens of one string (StringSplit: at any of `delims`' characters;
// "" into characters).
std::vector<std::string> SplitAnyOf(const std::string& s, const std::string& delims,
                                    bool skip_empty) {
  std::vector<std::string> out;
  if (s.empty()) return out;  // no tokens, whatever skip_empty says (TensorFlow's)
  if (delims.empty()) {
    for (char c : s) out.emplace_back(1, c);
    return out;
  }
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || delims.find(s[i]) != std::string::npos) {
      if (!(skip_empty && i == start)) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// StringSplitV2: Python's str.split(sep, maxsplit).
std::vector<std::string> SplitLikePython(const std::string& s, const std::string& sep,
                                         int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep.empty()) {  // runs of whitespace; no empty tokens
    size_t i = 0;
    const auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
    while (i < s.size()) {
      while (i < s.size() && space(s[i])) ++i;
      if (i == s.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
        size_t end = s.size();
        while (end > i && space(s[end - 1])) --end;
        out.push_back(s.substr(i, end - i));
        break;
      }
      size_t j = i;
      while (j < s.size() && !space(s[j])) ++j;
      out.push_back(s.substr(i, j - i));
      i = j;
    }
    return out;
  }
  if (s.empty()) return out;
  size_t start = 0;
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    const size_t at = s.find(sep, start);
    if (at == std::string::npos) break;
    out.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  out.push_back(s.substr(start));
  return out;
}

template <bool kV2>
class StringSplitOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    if constexpr (kV2) {
      ASSIGN_OR_RETURN(maxsplit_, ctx.GetAttr<int64_t>("maxsplit"));
    } else {
      ASSIGN_OR_RETURN(skip_empty_, ctx.GetAttr<bool>("skip_empty"));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& sep = ctx->input(1);
    if (input.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be a vector, got shape: ", input.shape().DebugString()));
    }
    if (sep.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          kV2 ? "sep" : "delimiter", " must be a scalar, got shape: ", sep.shape().DebugString()));
    }
    const std::string& delim = sep.scalar<std::string>();
    std::vector<std::vector<std::string>> rows(static_cast<size_t>(input.NumElements()));
    int64_t total = 0, widest = 0;
    for (int64_t i = 0; i < input.NumElements(); ++i) {
      const std::string& s = input.data<std::string>()[i];
      rows[i] = kV2 ? SplitLikePython(s, delim, maxsplit_) : SplitAnyOf(s, delim, skip_empty_);
      total += static_cast<int64_t>(rows[i].size());
      widest = std::max<int64_t>(widest, static_cast<int64_t>(rows[i].size()));
    }
    ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(0, TensorShape({total, 2})));
    ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(1, TensorShape({total})));
    ASSIGN_OR_RETURN(Tensor * shape, ctx->allocate_output(2, TensorShape({2})));
    int64_t n = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      for (size_t j = 0; j < rows[i].size(); ++j, ++n) {
        indices->data<int64_t>()[2 * n] = static_cast<int64_t>(i);
        indices->data<int64_t>()[2 * n + 1] = static_cast<int64_t>(j);
        values->data<std::string>()[n] = std::move(rows[i][j]);
      }
    }
    shape->data<int64_t>()[0] = input.NumElements();
    shape->data<int64_t>()[1] = widest;
    return absl::OkStatus();
  }

 private:
  bool skip_empty_ = true;
  int64_t maxsplit_ = -1;
};

// RegexFullMatch / StaticRegexFullMatch: whether each string matches the
// whole pattern, in RE2's syntax as TensorFlow (what a TF1 Saver's graph
// asks of its prefix: "^s3://.*").
absl::StatusOr<std::unique_ptr<RE2>> CompilePattern(const std::string& pattern) {
  auto re = std::make_unique<RE2>(pattern, RE2::Quiet);
  if (!re->ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid pattern '", pattern, "': ", re->error()));
  }
  return re;
}

absl::Status FullMatchAll(OpKernelContext* ctx, const RE2& re) {
  const Tensor& input = ctx->input(0);
  ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, input.shape()));
  absl::Span<const std::string> in = input.flat<std::string>();
  absl::Span<bool> o = out->flat<bool>();
  for (size_t i = 0; i < in.size(); ++i) o[i] = RE2::FullMatch(in[i], re);
  return absl::OkStatus();
}

class RegexFullMatchOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    if (ctx->input(1).NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("pattern must be a scalar, got shape ",
                                                     ctx->input(1).shape().DebugString()));
    }
    ASSIGN_OR_RETURN(std::unique_ptr<RE2> re, CompilePattern(ctx->input(1).flat<std::string>()[0]));
    return FullMatchAll(ctx, *re);
  }
};

class StaticRegexFullMatchOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(std::string pattern, ctx.GetAttr<std::string>("pattern"));
    ASSIGN_OR_RETURN(re_, CompilePattern(pattern));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override { return FullMatchAll(ctx, *re_); }
  bool IsExpensive() const override { return false; }

 private:
  std::unique_ptr<RE2> re_;
};

}  // namespace

void RegisterStringKernels(KernelRegistry* k) {
  k->Register<RegexFullMatchOp>(KernelDef("RegexFullMatch", kDeviceTypeCpu));
  k->Register<StaticRegexFullMatchOp>(KernelDef("StaticRegexFullMatch", kDeviceTypeCpu));
  k->Register<StringSplitOp<false>>(KernelDef("StringSplit", kDeviceTypeCpu));
  k->Register<StringSplitOp<true>>(KernelDef("StringSplitV2", kDeviceTypeCpu));
  k->Register<StringToHashBucketOp<Hash::kFast>>(
      KernelDef("StringToHashBucketFast", kDeviceTypeCpu));
  k->Register<StringToHashBucketOp<Hash::kStrong>>(
      KernelDef("StringToHashBucketStrong", kDeviceTypeCpu));
  k->Register<StringToHashBucketOp<Hash::kLegacy>>(KernelDef("StringToHashBucket", kDeviceTypeCpu));
  k->Register<AsStringOp>(KernelDef("AsString", kDeviceTypeCpu));
}

}  // namespace sluice
