// CPU kernels of Save, SaveSlices, Restore and RestoreSlice
// (ops/io/legacy_checkpoint_ops.h): TensorFlow's V1 checkpoint files written
// (runtime/io/tensor_slice_file.h), V1 files and Sluice's shards read.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/io/file_write_policy.h"
#include "ops/io/internal/checkpoint_shard.h"
#include "ops/io/internal/sliced_restore.h"
#include "ops/io/internal/tensor_slice.h"
#include "ops/io/legacy_checkpoint_ops.h"
#include "runtime/atomic_file.h"
#include "runtime/io/tensor_slice_file.h"

namespace sluice {
namespace {

absl::StatusOr<std::string> ScalarString(const Tensor& t, absl::string_view what) {
  if (t.dtype() != DT_STRING || t.NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a single string, got shape ", t.shape().DebugString()));
  }
  return t.flat<std::string>()[0];
}

// Save (sliced = false) and SaveSlices.
template <bool kSliced>
class SaveOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    constexpr int kFirstData = kSliced ? 3 : 2;
    const int64_t n = ctx->num_inputs() - kFirstData;
    ASSIGN_OR_RETURN(std::string filename, ScalarString(ctx->input(0), "filename"));
    const Tensor& names = ctx->input(1);
    const Tensor* specs = kSliced ? &ctx->input(2) : nullptr;
    if (names.NumElements() != n || (specs != nullptr && specs->NumElements() != n)) {
      return absl::InvalidArgumentError(absl::StrCat("expected ", n, " tensor names",
                                                     kSliced ? " and shapes_and_slices" : "",
                                                     ", got ", names.NumElements()));
    }
    std::vector<TensorSliceRecord> records;
    for (int64_t i = 0; i < n; ++i) {
      const Tensor& value = ctx->input(static_cast<int>(kFirstData + i));
      const std::string& name = names.flat<std::string>()[i];
      internal::ShapeAndSlice slice = internal::FullSlice(value.shape());
      if (specs != nullptr && !specs->flat<std::string>()[i].empty()) {
        absl::StatusOr<internal::ShapeAndSlice> parsed =
            internal::ParseShapeAndSlice(specs->flat<std::string>()[i]);
        if (!parsed.ok()) {
          return AddContext(parsed.status(), absl::StrCat("saving tensor '", name, "'"));
        }
        slice = *std::move(parsed);
      }
      records.push_back({name, slice.full_shape, {slice.start, slice.length}, value});
    }
    RETURN_IF_ERROR(CheckGraphFileWrite(filename));
    const size_t slash = filename.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      RETURN_IF_ERROR(CreateDirectories(filename.substr(0, slash)));
    }
    return WriteTensorSliceFile(filename, records);
  }
};

// Restore (sliced = false) and RestoreSlice.
template <bool kSliced>
class RestoreOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(dt_, ctx.GetAttr<DataType>("dt"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::string pattern, ScalarString(ctx->input(0), "file_pattern"));
    ASSIGN_OR_RETURN(std::string name, ScalarString(ctx->input(1), "tensor_name"));
    std::optional<internal::ShapeAndSlice> wanted;
    if (kSliced) {
      ASSIGN_OR_RETURN(std::string spec, ScalarString(ctx->input(2), "shape_and_slice"));
      if (!spec.empty()) {
        absl::StatusOr<internal::ShapeAndSlice> parsed = internal::ParseShapeAndSlice(spec);
        if (!parsed.ok()) return parsed.status();
        wanted = *std::move(parsed);
      }
    }
    const std::vector<std::string> files = internal::MatchingFiles(pattern);
    if (files.empty()) {
      return absl::NotFoundError(absl::StrCat("no checkpoint file matches '", pattern, "'"));
    }
    RETURN_IF_ERROR(CheckGraphFileRead(files[0]));
    ASSIGN_OR_RETURN(internal::CheckpointShard first,
                     internal::CheckpointShard::Read(files[0], ctx->allocator()));
    const std::vector<std::string> others(files.begin() + 1, files.end());
    ASSIGN_OR_RETURN(Tensor t,
                     internal::RestoreTensor(&first, files[0], others, name,
                                             wanted ? &*wanted : nullptr, dt_, ctx->allocator()));
    ctx->set_output(0, std::move(t));
    return absl::OkStatus();
  }

 private:
  DataType dt_ = DT_INVALID;
};

}  // namespace

void RegisterLegacyCheckpointKernels(KernelRegistry* kernels) {
  kernels->Register<SaveOp<false>>(KernelDef("Save", kDeviceTypeCpu));
  kernels->Register<SaveOp<true>>(KernelDef("SaveSlices", kDeviceTypeCpu));
  kernels->Register<RestoreOp<false>>(KernelDef("Restore", kDeviceTypeCpu));
  kernels->Register<RestoreOp<true>>(KernelDef("RestoreSlice", kDeviceTypeCpu));
}

}  // namespace sluice
