// CPU kernels of ShardedFilename, ShardedFilespec and MergeV2Checkpoints
// (ops/io/sharded_checkpoint_ops.h).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "ops/io/file_write_policy.h"
#include "ops/io/internal/checkpoint_shard.h"
#include "ops/io/sharded_checkpoint_ops.h"
#include "runtime/atomic_file.h"
#include "runtime/io/tensor_bundle.h"

namespace sluice {
namespace {

// InvalidArgument unless input `i` is a scalar.
absl::Status CheckScalarInput(OpKernelContext* ctx, int i) {
  if (ctx->input(i).dims() == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(ctx->node().op_def().inputs[i].name,
                                                 " must be a scalar, got shape ",
                                                 ctx->input(i).shape().DebugString()));
}

class ShardedFilenameOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(CheckScalarInput(ctx, i));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->flat<std::string>()[0] =
        absl::StrFormat("%s-%05d-of-%05d", ctx->input(0).scalar<std::string>(),
                        ctx->input(1).scalar<int32_t>(), ctx->input(2).scalar<int32_t>());
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class ShardedFilespecOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < 2; ++i) RETURN_IF_ERROR(CheckScalarInput(ctx, i));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->flat<std::string>()[0] =
        absl::StrFormat("%s-\?\?\?\?\?-of-%05d", ctx->input(0).scalar<std::string>(),
                        ctx->input(1).scalar<int32_t>());
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string() : path.substr(0, slash);
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

class MergeV2CheckpointsOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(delete_old_dirs_, ctx.GetAttr<bool>("delete_old_dirs"));
    ASSIGN_OR_RETURN(allow_missing_files_, ctx.GetAttr<bool>("allow_missing_files"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& prefixes = ctx->input(0);
    if (prefixes.dims() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint_prefixes must be a scalar or a vector, got shape ",
                       prefixes.shape().DebugString()));
    }
    RETURN_IF_ERROR(CheckScalarInput(ctx, 1));
    const std::string dest = ctx->input(1).scalar<std::string>();
    // Every path is checked before any is looked at (a refused one says
    // nothing of whether it exists); the sources are deleted: writes.
    RETURN_IF_ERROR(CheckGraphFileWrite(dest));
    for (const std::string& p : prefixes.flat<std::string>())
      RETURN_IF_ERROR(CheckGraphFileWrite(p));
    // TensorFlow's format (what SaveV2 writes): each source is a prefix
    // with an index and data files.
    bool bundles = false;
    for (const std::string& p : prefixes.flat<std::string>()) bundles |= FileExists(p + ".index");
    std::vector<std::string> sources;
    for (const std::string& p : prefixes.flat<std::string>()) {
      if (allow_missing_files_ && !FileExists(bundles ? p + ".index" : p)) continue;
      sources.push_back(p);
    }
    if (bundles && !sources.empty()) {
      RETURN_IF_ERROR(CreateDirectories(DirectoryOf(dest)));
      RETURN_IF_ERROR(MergeBundles(sources, dest));
      if (delete_old_dirs_) {
        for (const std::string& p : sources) {
          // Best effort, as TensorFlow: a directory still holding files stays.
          if (DirectoryOf(p) != DirectoryOf(dest)) ::rmdir(DirectoryOf(p).c_str());
        }
      }
      return absl::OkStatus();
    }
    if (sources.empty()) {
      return absl::NotFoundError(absl::StrCat("none of the ", prefixes.NumElements(),
                                              " checkpoint shard files to merge exists"));
    }
    ASSIGN_OR_RETURN(std::vector<internal::ShardEntry> entries, ReadAll(sources));
    RETURN_IF_ERROR(CreateDirectories(DirectoryOf(dest)));
    RETURN_IF_ERROR(internal::WriteCheckpointShard(dest, entries));
    return DeleteSources(sources, dest);
  }

 private:
  // Every entry of every shard, in shard order; InvalidArgument for a name
  // two shards hold.
  static absl::StatusOr<std::vector<internal::ShardEntry>> ReadAll(
      const std::vector<std::string>& sources) {
    std::vector<internal::ShardEntry> entries;
    absl::flat_hash_map<std::string, std::string> owner;  // tensor name -> shard file
    for (const std::string& p : sources) {
      ASSIGN_OR_RETURN(internal::CheckpointShard shard, internal::CheckpointShard::Read(p));
      for (const std::string& name : shard.names()) {
        auto [it, inserted] = owner.emplace(name, p);
        if (!inserted) {
          return absl::InvalidArgumentError(absl::StrCat(
              "tensor '", name, "' is in both checkpoint shards '", it->second, "' and '", p, "'"));
        }
        entries.push_back({name, *shard.Find(name)});
      }
    }
    return entries;
  }

  absl::Status DeleteSources(const std::vector<std::string>& sources,
                             const std::string& dest) const {
    for (const std::string& p : sources) {
      if (p == dest) continue;
      if (::unlink(p.c_str()) != 0 && errno != ENOENT) {
        return absl::InternalError(
            absl::StrCat("cannot delete merged shard '", p, "': ", std::strerror(errno)));
      }
      // Best effort, as TensorFlow: a directory still holding files stays.
      if (delete_old_dirs_ && DirectoryOf(p) != DirectoryOf(dest)) {
        ::rmdir(DirectoryOf(p).c_str());
      }
    }
    return absl::OkStatus();
  }

  bool delete_old_dirs_ = true;
  bool allow_missing_files_ = false;
};

}  // namespace

void RegisterShardedCheckpointKernels(KernelRegistry* kernels) {
  kernels->Register<ShardedFilenameOp>(KernelDef("ShardedFilename", kDeviceTypeCpu));
  kernels->Register<ShardedFilespecOp>(KernelDef("ShardedFilespec", kDeviceTypeCpu));
  kernels->Register<MergeV2CheckpointsOp>(KernelDef("MergeV2Checkpoints", kDeviceTypeCpu));
}

}  // namespace sluice
