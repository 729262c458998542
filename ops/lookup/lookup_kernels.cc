// CPU kernels of the table ops (lookup_ops.h) over LookupTable resources.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "ops/io/file_write_policy.h"
#include "ops/lookup/lookup_ops.h"
#include "ops/lookup/lookup_table.h"
#include "runtime/atomic_file.h"
#include "runtime/kernel.h"
#include "runtime/resource_handle.h"

namespace sluice {
namespace {

// The largest vocabulary file a table reads (a guard against a graph that
// names something huge).
constexpr int64_t kMaxTextFileBytes = int64_t{4} << 30;

absl::StatusOr<LookupTable*> TableInput(OpKernelContext* ctx) {
  return LookupResourceInput<LookupTable>(ctx, 0, "table");
}

class TableHandleOp : public OpKernel {
 public:
  explicit TableHandleOp(LookupTable::Kind kind) : kind_(kind) {}

  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(container_, ctx.GetAttr<std::string>("container"));
    ASSIGN_OR_RETURN(name_, ctx.GetAttr<std::string>("shared_name"));
    ASSIGN_OR_RETURN(bool node_name_sharing, ctx.GetAttr<bool>("use_node_name_sharing"));
    ASSIGN_OR_RETURN(key_dtype_, ctx.GetAttr<DataType>("key_dtype"));
    ASSIGN_OR_RETURN(value_dtype_, ctx.GetAttr<DataType>("value_dtype"));
    if (kind_ == LookupTable::Kind::kDense) {
      ASSIGN_OR_RETURN(value_shape_, ctx.GetAttr<TensorShape>("value_shape"));
    }
    if (key_dtype_ != DT_INT32 && key_dtype_ != DT_INT64 && key_dtype_ != DT_STRING) {
      return absl::UnimplementedError(
          absl::StrCat("tables of ", DataTypeName(key_dtype_), " keys (int32, int64, string)"));
    }
    if (value_dtype_ == DT_RESOURCE || value_dtype_ == DT_INVALID) {
      return absl::InvalidArgumentError("a table's values must be plain tensors");
    }
    // One node, one table across the kernels the session builds for it.
    if (name_.empty()) name_ = node_name_sharing ? ctx.node().name() : "_table_" + ctx.node().name();
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    absl::Status reserved;
    RETURN_IF_ERROR(ctx->resource_manager()
                        ->LookupOrCreate<LookupTable>(
                            container_, name_,
                            [&]() -> absl::StatusOr<std::unique_ptr<LookupTable>> {
                              auto t = std::make_unique<LookupTable>(kind_, key_dtype_, value_dtype_,
                                                                     value_shape_, name_);
                              if (kind_ == LookupTable::Kind::kDense) {
                                RETURN_IF_ERROR(t->SetReservedKeys(ctx->input(0), ctx->input(1)));
                              }
                              return t;
                            })
                        .status());
    ASSIGN_OR_RETURN(Tensor * handle, ctx->allocate_output(0, TensorShape()));
    handle->scalar<std::string>() = MakeResourceHandle(container_, name_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  const LookupTable::Kind kind_;
  std::string container_, name_;
  DataType key_dtype_ = DT_INVALID, value_dtype_ = DT_INVALID;
  TensorShape value_shape_ = TensorShape({});
};

class InitializeTableOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(LookupTable * t, TableInput(ctx));
    if (ctx->input(1).NumElements() != ctx->input(2).NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Keys and values must have the same size ", ctx->input(1).NumElements(), " vs ",
          ctx->input(2).NumElements()));
    }
    return t->Initialize(ctx->input(1), ctx->input(2));
  }
};

// One column of a vocabulary line as a tensor element of `dtype`.
absl::Status ParseField(const std::string& text, DataType dtype, Tensor* t, int64_t i,
                        int64_t line) {
  bool ok = true;
  switch (dtype) {
    case DT_STRING: t->data<std::string>()[i] = text; break;
    case DT_INT64: ok = absl::SimpleAtoi(text, &t->data<int64_t>()[i]); break;
    case DT_INT32: ok = absl::SimpleAtoi(text, &t->data<int32_t>()[i]); break;
    case DT_FLOAT: ok = absl::SimpleAtof(text, &t->data<float>()[i]); break;
    case DT_DOUBLE: ok = absl::SimpleAtod(text, &t->data<double>()[i]); break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("text file tables of ", DataTypeName(dtype), " columns"));
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat("line ", line + 1, ": field '", text,
                                                   "' is not a ", DataTypeName(dtype)));
  }
  return absl::OkStatus();
}

class InitializeTableFromTextFileOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(key_index_, ctx.GetAttr<int64_t>("key_index"));
    ASSIGN_OR_RETURN(value_index_, ctx.GetAttr<int64_t>("value_index"));
    ASSIGN_OR_RETURN(vocab_size_, ctx.GetAttr<int64_t>("vocab_size"));
    ASSIGN_OR_RETURN(delimiter_, ctx.GetAttr<std::string>("delimiter"));
    ASSIGN_OR_RETURN(offset_, ctx.GetAttr<int64_t>("offset"));
    if (delimiter_.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("delimiter should be only 1 char, got '", delimiter_, "'"));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(LookupTable * t, TableInput(ctx));
    if (ctx->input(1).NumElements() != 1) {
      return absl::InvalidArgumentError("filename should be a single string");
    }
    const std::string path = ctx->input(1).flat<std::string>()[0];
    RETURN_IF_ERROR(CheckGraphFileRead(path));
    ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, kMaxTextFileBytes));
    std::vector<std::string> lines = absl::StrSplit(text, '\n');
    if (!lines.empty() && lines.back().empty()) lines.pop_back();
    int64_t n = static_cast<int64_t>(lines.size());
    if (vocab_size_ >= 0) {
      if (vocab_size_ > n) {
        return absl::InvalidArgumentError(absl::StrCat("Invalid vocab_size in ", path, ": expected ",
                                                       vocab_size_, " lines, found ", n));
      }
      n = vocab_size_;
    }
    Tensor keys(t->key_dtype(), TensorShape({n}));
    Tensor values(t->value_dtype(), TensorShape({n}));
    for (int64_t i = 0; i < n; ++i) {
      std::string& line = lines[i];
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const std::vector<std::string> fields = absl::StrSplit(line, delimiter_[0]);
      for (const auto& [index, dest] : {std::pair<int64_t, Tensor*>{key_index_, &keys},
                                        std::pair<int64_t, Tensor*>{value_index_, &values}}) {
        if (index == -1) {  // the line number
          if (dest->dtype() != DT_INT64) {
            return absl::InvalidArgumentError(
                "a table column taken from line numbers (-1) must be int64");
          }
          dest->data<int64_t>()[i] = i + offset_;
        } else if (index == -2) {  // the whole line
          RETURN_IF_ERROR(ParseField(line, dest->dtype(), dest, i, i));
        } else {
          if (index >= static_cast<int64_t>(fields.size())) {
            return absl::InvalidArgumentError(absl::StrCat(
                "Invalid number of columns in ", path, " line ", i + 1, " (", line,
                ") for column index ", index));
          }
          RETURN_IF_ERROR(ParseField(fields[index], dest->dtype(), dest, i, i));
        }
      }
    }
    return t->Initialize(keys, values);
  }

 private:
  int64_t key_index_ = 0, value_index_ = 0, vocab_size_ = -1, offset_ = 0;
  std::string delimiter_;
};

class LookupTableFindOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(LookupTable * t, TableInput(ctx));
    const Tensor& keys = ctx->input(1);
    std::vector<int64_t> dims;
    for (int d = 0; d < keys.dims(); ++d) dims.push_back(keys.dim_size(d));
    for (int d = 0; d < t->value_shape().rank(); ++d) dims.push_back(t->value_shape().dim(d));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape(dims)));
    return t->Find(keys, ctx->input(2), out);
  }
};

template <bool kImport>
class LookupTableInsertOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(LookupTable * t, TableInput(ctx));
    return kImport ? t->Import(ctx->input(1), ctx->input(2)) : t->Insert(ctx->input(1), ctx->input(2));
  }
};

class LookupTableExportOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(LookupTable * t, TableInput(ctx));
    ASSIGN_OR_RETURN(auto exported, t->Export());
    ctx->set_output(0, std::move(exported.first));
    ctx->set_output(1, std::move(exported.second));
    return absl::OkStatus();
  }
};

class LookupTableSizeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(LookupTable * t, TableInput(ctx));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<int64_t>() = t->Size();
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterLookupKernels(KernelRegistry* k) {
  const auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };
  k->Register(cpu("HashTableV2"),
              [] { return std::make_unique<TableHandleOp>(LookupTable::Kind::kHash); });
  k->Register(cpu("MutableHashTableV2"),
              [] { return std::make_unique<TableHandleOp>(LookupTable::Kind::kMutable); });
  k->Register(cpu("MutableDenseHashTableV2"),
              [] { return std::make_unique<TableHandleOp>(LookupTable::Kind::kDense); });
  k->Register<InitializeTableOp>(cpu("InitializeTableV2"));
  k->Register<InitializeTableFromTextFileOp>(cpu("InitializeTableFromTextFileV2"));
  k->Register<LookupTableFindOp>(cpu("LookupTableFindV2"));
  k->Register<LookupTableInsertOp<false>>(cpu("LookupTableInsertV2"));
  k->Register<LookupTableInsertOp<true>>(cpu("LookupTableImportV2"));
  k->Register<LookupTableExportOp>(cpu("LookupTableExportV2"));
  k->Register<LookupTableSizeOp>(cpu("LookupTableSizeV2"));
}

}  // namespace sluice
