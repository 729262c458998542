// CPU kernels of SaveV2, RestoreV2 and StringJoin (ops/io/io_ops.h): TensorFlow's
// V2 checkpoints (runtime/io/tensor_bundle.h), and Sluice's older shard files
// (ops/io/internal/checkpoint_shard.h) restored.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "ops/io/file_write_policy.h"
#include "ops/io/internal/bundle_restore.h"
#include "ops/io/internal/checkpoint_shard.h"
#include "ops/io/internal/sliced_restore.h"
#include "ops/io/internal/tensor_slice.h"
#include "ops/io/io_ops.h"
#include "runtime/atomic_file.h"
#include "runtime/io/tensor_bundle.h"

namespace sluice {
namespace {

struct SaveRestoreArgs {
  std::string prefix;
  std::vector<std::string> names;
  std::vector<std::string> specs;  // shape_and_slices ("" : the whole tensor)
};

// Reads prefix, tensor_names and shape_and_slices (inputs 0..2) for `n`
// tensors.
absl::StatusOr<SaveRestoreArgs> ReadArgs(const OpKernelContext& ctx, int64_t n) {
  const Tensor& prefix = ctx.input(0);
  const Tensor& names = ctx.input(1);
  const Tensor& slices = ctx.input(2);
  if (prefix.NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("prefix must be a single string, got shape ", prefix.shape().DebugString()));
  }
  if (names.dims() != 1 || names.NumElements() != n || slices.dims() != 1 ||
      slices.NumElements() != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor_names (shape ", names.shape().DebugString(), ") and shape_and_slices (shape ",
        slices.shape().DebugString(), ") must be vectors of ", n, " strings, one per tensor"));
  }
  SaveRestoreArgs args;
  args.prefix = prefix.flat<std::string>()[0];
  if (args.prefix.empty()) return absl::InvalidArgumentError("prefix is empty");
  for (int64_t i = 0; i < n; ++i) {
    args.names.push_back(names.flat<std::string>()[i]);
    args.specs.push_back(slices.flat<std::string>()[i]);
  }
  return args;
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string() : path.substr(0, slash);
}

// SaveV2 writes TensorFlow's V2 checkpoint (runtime/io/tensor_bundle.h) at
// the prefix: a slice spec stores the tensor as that slice of the full one.
class SaveV2Op : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const int64_t n = ctx->num_inputs() - 3;
    ASSIGN_OR_RETURN(SaveRestoreArgs args, ReadArgs(*ctx, n));
    RETURN_IF_ERROR(CheckGraphFileWrite(args.prefix));
    RETURN_IF_ERROR(CreateDirectories(DirectoryOf(args.prefix)));
    BundleWriter writer(args.prefix);
    for (int64_t i = 0; i < n; ++i) {
      const Tensor& value = ctx->input(static_cast<int>(3 + i));
      const std::string& name = args.names[i];
      absl::Status s;
      if (args.specs[i].empty()) {
        s = writer.Add(name, value);
      } else {
        absl::StatusOr<internal::ShapeAndSlice> slice = internal::ParseShapeAndSlice(args.specs[i]);
        s = slice.ok()
                ? writer.AddSlice(name, slice->full_shape, {slice->start, slice->length}, value)
                : slice.status();
      }
      if (!s.ok()) return AddContext(s, absl::StrCat("saving tensor '", name, "'"));
    }
    return writer.Finish();
  }
};

// A checkpoint in TensorFlow's format (PREFIX.index and its data files):
// whole tensors or slices, by name.
absl::Status RestoreFromTensorBundle(OpKernelContext* ctx, const SaveRestoreArgs& args) {
  ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> bundle, BundleReader::Open(args.prefix));
  for (int i = 0; i < ctx->num_outputs(); ++i) {
    const std::string& name = args.names[i];
    std::optional<internal::ShapeAndSlice> slice;
    if (!args.specs[i].empty()) {
      absl::StatusOr<internal::ShapeAndSlice> parsed = internal::ParseShapeAndSlice(args.specs[i]);
      if (!parsed.ok())
        return AddContext(parsed.status(), absl::StrCat("restoring tensor '", name, "'"));
      slice = *std::move(parsed);
    }
    absl::StatusOr<Tensor> t = internal::RestoreFromBundle(*bundle, name, slice ? &*slice : nullptr,
                                                           ctx->node().output_type(i));
    if (!t.ok()) {
      return AddContext(t.status(), absl::StrCat("restoring from ", args.prefix));
    }
    ctx->set_output(i, *std::move(t));
  }
  return absl::OkStatus();
}

class RestoreV2Op : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(SaveRestoreArgs args, ReadArgs(*ctx, ctx->num_outputs()));
    RETURN_IF_ERROR(CheckGraphFileRead(args.prefix));
    if (std::filesystem::exists(args.prefix + ".index")) return RestoreFromTensorBundle(ctx, args);
    // TensorFlow's V1 files, or Sluice's own: one at the prefix (SaveV2
    // before it wrote TensorFlow's format), or the Saver's old layout beside
    // it; or, as TensorFlow's V1 fallback reads its prefix, the files the
    // prefix matches as a glob (a sharded V1 save).
    std::string path = args.prefix;
    std::vector<std::string> matched;
    if (!std::filesystem::exists(path) &&
        path.find_first_of("*?[") != std::string::npos) {
      matched = internal::MatchingFiles(path);
      if (!matched.empty()) {
        path = matched[0];
        RETURN_IF_ERROR(CheckGraphFileRead(path));
      }
    }
    absl::StatusOr<internal::CheckpointShard> shard =
        internal::CheckpointShard::Read(path, ctx->allocator());
    // A file of a checkpoint saved with other shards (Saver's layout) may be
    // missing: its siblings hold what it would.
    std::vector<std::string> siblings =
        matched.empty() ? internal::SiblingShards(path)
                        : std::vector<std::string>(matched.begin() + 1, matched.end());
    if (siblings.empty() && absl::IsNotFound(shard.status())) {
      siblings = internal::SaverLayoutShards(args.prefix);
    }
    if (!shard.ok() && !(absl::IsNotFound(shard.status()) && !siblings.empty())) {
      // Name what was being restored: the file alone does not say which
      // variables are lost.
      const size_t shown = std::min<size_t>(args.names.size(), 5);
      std::string which = absl::StrCat(
          "'", absl::StrJoin(args.names.begin(), args.names.begin() + shown, "', '"), "'");
      if (shown < args.names.size()) {
        absl::StrAppend(&which, " and ", args.names.size() - shown, " more");
      }
      return absl::Status(shard.status().code(), absl::StrCat("restoring tensor(s) ", which, ": ",
                                                              shard.status().message()));
    }
    const internal::CheckpointShard* own = shard.ok() ? &*shard : nullptr;
    for (int i = 0; i < ctx->num_outputs(); ++i) {
      const DataType dtype = ctx->node().output_type(i);
      std::optional<internal::ShapeAndSlice> slice;
      if (!args.specs[i].empty()) {
        absl::StatusOr<internal::ShapeAndSlice> parsed =
            internal::ParseShapeAndSlice(args.specs[i]);
        if (!parsed.ok()) {
          return AddContext(parsed.status(),
                            absl::StrCat("restoring tensor '", args.names[i], "'"));
        }
        slice = *std::move(parsed);
      }
      ASSIGN_OR_RETURN(Tensor t,
                       internal::RestoreTensor(own, path, siblings, args.names[i],
                                               slice ? &*slice : nullptr, dtype, ctx->allocator()));
      ctx->set_output(i, std::move(t));
    }
    return absl::OkStatus();
  }
};

class StringJoinOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(separator_, ctx.GetAttr<std::string>("separator"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor* shaped = nullptr;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() == 0) continue;
      if (shaped != nullptr && shaped->shape() != t.shape()) {
        return absl::InvalidArgumentError(absl::StrCat("inputs have shapes ",
                                                       shaped->shape().DebugString(), " and ",
                                                       t.shape().DebugString()));
      }
      shaped = &t;
    }
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->allocate_output(0, shaped ? shaped->shape() : TensorShape()));
    absl::Span<std::string> o = out->flat<std::string>();
    for (size_t k = 0; k < o.size(); ++k) {
      for (int i = 0; i < ctx->num_inputs(); ++i) {
        const Tensor& t = ctx->input(i);
        if (i > 0) o[k] += separator_;
        o[k] += t.flat<std::string>()[t.dims() == 0 ? 0 : k];
      }
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  std::string separator_;
};

}  // namespace

void RegisterIoKernels(KernelRegistry* kernels) {
  kernels->Register<SaveV2Op>(KernelDef("SaveV2", kDeviceTypeCpu));
  kernels->Register<RestoreV2Op>(KernelDef("RestoreV2", kDeviceTypeCpu));
  kernels->Register<StringJoinOp>(KernelDef("StringJoin", kDeviceTypeCpu));
}

}  // namespace sluice
