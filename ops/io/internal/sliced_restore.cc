#include "ops/io/internal/sliced_restore.h"

#include <glob.h>

#include <optional>
#include <regex>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/io/file_write_policy.h"

namespace sluice {
namespace internal {
namespace {

// Copies into `out` (holding `wanted`) what `shard` holds of `name`;
// returns the elements copied. `full_shape` is checked against (and, when
// unset, taken from) the stored slices.
absl::StatusOr<int64_t> CopyFrom(const CheckpointShard& shard, const std::string& path,
                                 const std::string& name, const ShapeAndSlice& wanted,
                                 DataType dtype, Tensor* out) {
  int64_t copied = 0;
  auto check_dtype = [&](const Tensor& t) -> absl::Status {
    if (t.dtype() == dtype) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("checkpoint '", path, "': tensor '", name,
                                                   "' is ", DataTypeName(t.dtype()), ", not ",
                                                   DataTypeName(dtype)));
  };
  if (const Tensor* whole = shard.Find(name)) {
    RETURN_IF_ERROR(check_dtype(*whole));
    if (whole->shape() != wanted.full_shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint '", path, "': tensor '", name, "' has shape ", whole->shape().DebugString(),
          ", the slice asked for is of ", wanted.full_shape.DebugString()));
    }
    copied += CopyOverlap(*whole, FullSlice(whole->shape()), out, wanted);
  }
  for (const std::string& entry : shard.names()) {
    std::string tensor;
    ShapeAndSlice stored;
    if (!ParseSliceEntryName(entry, &tensor, &stored) || tensor != name) continue;
    if (stored.full_shape != wanted.full_shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint '", path, "': tensor '", name, "' was saved with full shape ",
          stored.full_shape.DebugString(), ", restored as ", wanted.full_shape.DebugString()));
    }
    const Tensor* t = shard.Find(entry);
    RETURN_IF_ERROR(check_dtype(*t));
    if (t->shape() != stored.SliceShape()) {  // a file written by something else
      return absl::DataLossError(
          absl::StrCat("checkpoint '", path, "': the slice '", stored.ToString(), "' of tensor '",
                       name, "' holds a tensor of shape ", t->shape().DebugString()));
    }
    copied += CopyOverlap(*t, stored, out, wanted);
  }
  return copied;
}

// The full shape of `name` as `shard` holds it, if it holds any of it.
std::optional<TensorShape> FullShapeIn(const CheckpointShard& shard, const std::string& name) {
  if (const Tensor* whole = shard.Find(name)) return whole->shape();
  for (const std::string& entry : shard.names()) {
    std::string tensor;
    ShapeAndSlice stored;
    if (ParseSliceEntryName(entry, &tensor, &stored) && tensor == name) return stored.full_shape;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> SiblingShards(const std::string& path) {
  static const std::regex* kShard = new std::regex(R"((.*)\.shard-([0-9]+)-of-([0-9]+))");
  std::smatch m;
  std::vector<std::string> out;
  if (!std::regex_match(path, m, *kShard)) return out;
  // Every shard file of the checkpoint, whatever the number of shards it was
  // saved with (a restore into more or fewer tasks reads the old layout).
  const std::string pattern = absl::StrCat(m[1].str(), ".shard-*-of-*");
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      std::string f = g.gl_pathv[i];
      if (f != path && std::regex_match(f, *kShard)) out.push_back(std::move(f));
    }
  }
  globfree(&g);
  return out;
}

std::vector<std::string> MatchingFiles(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return out;
}

std::vector<std::string> SaverLayoutShards(const std::string& prefix) {
  std::vector<std::string> out;
  glob_t g{};
  // glob's own characters in the prefix are matched as themselves.
  std::string escaped;
  for (char c : prefix) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') escaped.push_back('\\');
    escaped.push_back(c);
  }
  if (glob(absl::StrCat(escaped, ".shard-*-of-*").c_str(), 0, nullptr, &g) == 0) {
    static const std::regex* kTail = new std::regex(R"(\.shard-[0-9]+-of-[0-9]+)");
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      std::string f = g.gl_pathv[i];
      if (std::regex_match(f.substr(prefix.size()), *kTail)) out.push_back(std::move(f));
    }
  }
  globfree(&g);
  return out;
}

absl::StatusOr<Tensor> RestoreTensor(const CheckpointShard* own, const std::string& path,
                                     const std::vector<std::string>& siblings,
                                     const std::string& name, const ShapeAndSlice* wanted,
                                     DataType dtype, Allocator* allocator) {
  // The whole tensor, stored whole: shared, not copied.
  if (wanted == nullptr && own != nullptr && own->Find(name) != nullptr) {
    return own->Get(name, dtype);
  }
  static const CheckpointShard* kEmpty = new CheckpointShard();
  const CheckpointShard& shard = own != nullptr ? *own : *kEmpty;

  std::vector<CheckpointShard> others;  // read when this file does not cover the slice
  size_t next_sibling = 0;
  auto read_next = [&]() -> absl::StatusOr<bool> {
    while (next_sibling < siblings.size()) {
      const std::string& p = siblings[next_sibling++];
      RETURN_IF_ERROR(CheckGraphFileRead(p));
      absl::StatusOr<CheckpointShard> s = CheckpointShard::Read(p, allocator);
      if (absl::IsNotFound(s.status())) continue;
      if (!s.ok()) return s.status();
      others.push_back(*std::move(s));
      return true;
    }
    return false;
  };

  ShapeAndSlice target;
  if (wanted != nullptr) {
    target = *wanted;
  } else {
    std::optional<TensorShape> full = FullShapeIn(shard, name);
    while (!full) {
      ASSIGN_OR_RETURN(bool more, read_next());
      if (!more) break;
      full = FullShapeIn(others.back(), name);
    }
    if (!full) {
      return absl::NotFoundError(absl::StrCat("checkpoint '", path, "' (and its ", siblings.size(),
                                              " sibling shards) holds no tensor '", name, "'"));
    }
    target = FullSlice(*full);
  }
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Allocate(allocator != nullptr ? allocator : DefaultCpuAllocator(), dtype,
                                    target.SliceShape()));
  const int64_t needed = target.SliceShape().num_elements();
  ASSIGN_OR_RETURN(int64_t copied, CopyFrom(shard, path, name, target, dtype, &out));
  for (const CheckpointShard& o : others) {
    if (copied >= needed) break;
    ASSIGN_OR_RETURN(int64_t more, CopyFrom(o, path, name, target, dtype, &out));
    copied += more;
  }
  while (copied < needed) {
    ASSIGN_OR_RETURN(bool more, read_next());
    if (!more) break;
    ASSIGN_OR_RETURN(int64_t got, CopyFrom(others.back(), path, name, target, dtype, &out));
    copied += got;
  }
  if (copied < needed) {
    return absl::NotFoundError(absl::StrCat("checkpoint '", path, "': the slices held of tensor '",
                                            name, "' cover ", copied, " of the ", needed,
                                            " elements of '", target.ToString(), "'"));
  }
  return out;
}

}  // namespace internal
}  // namespace sluice
