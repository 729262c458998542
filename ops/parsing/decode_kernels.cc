// CPU kernels of DecodeRaw and DecodeCSV (ops/parsing/decode_ops.h).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "ops/parsing/decode_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

class DecodeRawOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(out_type_, ctx.GetAttr<DataType>("out_type"));
    ASSIGN_OR_RETURN(little_endian_, ctx.GetAttr<bool>("little_endian"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const int64_t n = in.NumElements();
    const size_t size = DataTypeSize(out_type_);
    const std::string* s = in.data<std::string>();
    const size_t len = n > 0 ? s[0].size() : 0;
    for (int64_t i = 1; i < n; ++i) {
      if (s[i].size() != len) {
        return absl::InvalidArgumentError(absl::StrCat(
            "DecodeRaw requires input strings to all be the same size, but element ", i,
            " has size ", s[i].size(), " != ", len));
      }
    }
    if (len % size != 0) {
      return absl::InvalidArgumentError(absl::StrCat("Input to DecodeRaw has length ", len,
                                                     " that is not a multiple of ", size,
                                                     ", the size of ", DataTypeName(out_type_)));
    }
    TensorShape shape = in.shape();
    shape.AddDim(static_cast<int64_t>(len / size));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    char* o = static_cast<char*>(out->raw_data());
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(o + i * len, s[i].data(), len);
      if (!little_endian_ && size > 1) {  // hosts are little-endian
        for (char* v = o + i * len; v < o + (i + 1) * len; v += size) std::reverse(v, v + size);
      }
    }
    if (out_type_ == DT_BOOL) {  // any nonzero byte is true
      for (uint8_t* b = reinterpret_cast<uint8_t*>(o); b < reinterpret_cast<uint8_t*>(o) + n * len;
           ++b) {
        *b = *b != 0;
      }
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType out_type_ = DT_FLOAT;
  bool little_endian_ = true;
};

class DecodeCsvOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(types_, ctx.GetAttr<std::vector<DataType>>("OUT_TYPE"));
    ASSIGN_OR_RETURN(std::string delim, ctx.GetAttr<std::string>("field_delim"));
    if (delim.size() != 1) {
      return absl::InvalidArgumentError("field_delim should be only 1 char");
    }
    delim_ = delim[0];
    ASSIGN_OR_RETURN(use_quote_, ctx.GetAttr<bool>("use_quote_delim"));
    ASSIGN_OR_RETURN(na_value_, ctx.GetAttr<std::string>("na_value"));
    ASSIGN_OR_RETURN(select_cols_, ctx.GetAttr<std::vector<int64_t>>("select_cols"));
    if (!select_cols_.empty() && select_cols_.size() != types_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "select_cols should match record_defaults. Got select_cols of length ",
          select_cols_.size(), " and record_defaults of length ", types_.size()));
    }
    for (size_t i = 0; i < select_cols_.size(); ++i) {
      if (select_cols_[i] < 0) return absl::InvalidArgumentError("select_cols should be non-negative");
      if (i > 0 && select_cols_[i] == select_cols_[i - 1]) {
        return absl::InvalidArgumentError("select_cols is not unique");
      }
      if (i > 0 && select_cols_[i] < select_cols_[i - 1]) {
        return absl::InvalidArgumentError("select_cols should be increasing");
      }
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& records = ctx->input(0);
    const int num_cols = static_cast<int>(types_.size());
    for (int c = 0; c < num_cols; ++c) {
      const Tensor& d = ctx->input(1 + c);
      if (d.NumElements() > 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Default value of column ", c, " must be a scalar or a length-0 or length-1 vector"));
      }
    }
    std::vector<Tensor*> outs(num_cols);
    for (int c = 0; c < num_cols; ++c) {
      ASSIGN_OR_RETURN(outs[c], ctx->allocate_output(c, records.shape()));
    }
    std::vector<std::string> fields;
    const std::string* recs = records.data<std::string>();
    for (int64_t r = 0; r < records.NumElements(); ++r) {
      RETURN_IF_ERROR(Split(recs[r], r, &fields));
      if (select_cols_.empty() && static_cast<int>(fields.size()) != num_cols) {
        return absl::InvalidArgumentError(absl::StrCat("Expect ", num_cols, " fields but have ",
                                                       fields.size(), " in record ", r));
      }
      if (!select_cols_.empty() && select_cols_.back() >= static_cast<int64_t>(fields.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("Expect ", select_cols_.back() + 1, " fields but have ", fields.size(),
                         " in record ", r));
      }
      for (int c = 0; c < num_cols; ++c) {
        const std::string& f = fields[select_cols_.empty() ? c : select_cols_[c]];
        RETURN_IF_ERROR(Convert(f, ctx->input(1 + c), c, r, outs[c]));
      }
    }
    return absl::OkStatus();
  }

 private:
  // RFC 4180 fields of one record.
  absl::Status Split(const std::string& rec, int64_t r, std::vector<std::string>* fields) const {
    fields->clear();
    size_t i = 0;
    const size_t n = rec.size();
    while (true) {
      std::string field;
      if (use_quote_ && i < n && rec[i] == '"') {
        ++i;
        bool closed = false;
        while (i < n) {
          if (rec[i] != '"') {
            field.push_back(rec[i++]);
            continue;
          }
          if (i + 1 < n && rec[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          if (i < n && rec[i] != delim_) {
            return absl::InvalidArgumentError(absl::StrCat(
                "Quote inside a string has to be escaped by another quote in record ", r, ": ",
                rec));
          }
          closed = true;
          break;
        }
        if (!closed) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Quoted field has to end with quote followed by delim or end in record ", r, ": ",
              rec));
        }
      } else {
        while (i < n && rec[i] != delim_) {
          const char ch = rec[i];
          if (use_quote_ && (ch == '"' || ch == '\n' || ch == '\r')) {
            return absl::InvalidArgumentError(absl::StrCat(
                "Unquoted fields cannot have quotes/CRLFs inside in record ", r, ": ", rec));
          }
          field.push_back(ch);
          ++i;
        }
      }
      fields->push_back(std::move(field));
      if (i >= n) break;
      ++i;  // the delimiter: a field follows, possibly empty
    }
    return absl::OkStatus();
  }

  absl::Status Convert(const std::string& f, const Tensor& def, int c, int64_t r,
                       Tensor* out) const {
    const DataType t = types_[c];
    if (f.empty() || f == na_value_) {
      if (def.NumElements() == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Field ", c, " is required but missing in record ", r, "!"));
      }
      switch (t) {
        case DT_FLOAT: out->data<float>()[r] = def.data<float>()[0]; break;
        case DT_DOUBLE: out->data<double>()[r] = def.data<double>()[0]; break;
        case DT_INT32: out->data<int32_t>()[r] = def.data<int32_t>()[0]; break;
        case DT_INT64: out->data<int64_t>()[r] = def.data<int64_t>()[0]; break;
        default: out->data<std::string>()[r] = def.data<std::string>()[0];
      }
      return absl::OkStatus();
    }
    const absl::string_view v = absl::StripAsciiWhitespace(f);
    auto bad = [&](const char* type) {
      return absl::InvalidArgumentError(
          absl::StrCat("Field ", c, " in record ", r, " is not a valid ", type, ": ", f));
    };
    switch (t) {
      case DT_FLOAT:
        if (!absl::SimpleAtof(v, &out->data<float>()[r])) return bad("float");
        break;
      case DT_DOUBLE:
        if (!absl::SimpleAtod(v, &out->data<double>()[r])) return bad("double");
        break;
      case DT_INT32:
        if (!absl::SimpleAtoi(v, &out->data<int32_t>()[r])) return bad("int32");
        break;
      case DT_INT64:
        if (!absl::SimpleAtoi(v, &out->data<int64_t>()[r])) return bad("int64");
        break;
      default:
        out->data<std::string>()[r] = f;
    }
    return absl::OkStatus();
  }

  std::vector<DataType> types_;
  char delim_ = ',';
  bool use_quote_ = true;
  std::string na_value_;
  std::vector<int64_t> select_cols_;
};

}  // namespace

void RegisterDecodeKernels(KernelRegistry* k) {
  k->Register<DecodeRawOp>(KernelDef("DecodeRaw", kDeviceTypeCpu));
  k->Register<DecodeCsvOp>(KernelDef("DecodeCSV", kDeviceTypeCpu));
}

}  // namespace sluice
