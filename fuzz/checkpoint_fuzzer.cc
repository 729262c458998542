// A checkpoint shard's bytes (ops/io/internal/checkpoint_shard.h: Sluice's
// shard format, or TensorFlow's V1 files, runtime/io/tensor_slice_file.h) parsed and
// every entry read back under each dtype, and every sliced tensor's slices
// assembled (ops/io/internal/sliced_restore.h), whole and as the first
// slice: errors, never a crash or an allocation the file's size does not
// justify.
#include <string>

#include "absl/strings/string_view.h"
#include "fuzz/fuzz_target.h"
#include "ops/io/internal/checkpoint_shard.h"
#include "ops/io/internal/sliced_restore.h"
#include "ops/io/internal/tensor_slice.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<sluice::internal::CheckpointShard> shard = sluice::internal::CheckpointShard::Parse(
      absl::string_view(reinterpret_cast<const char*>(data), size), "fuzz.shard");
  if (!shard.ok()) return 0;
  for (const std::string& name : shard->names()) {
    for (sluice::DataType dtype : {sluice::DT_FLOAT, sluice::DT_INT64, sluice::DT_STRING}) {
      (void)shard->Get(name, dtype);
    }
    std::string tensor;
    sluice::internal::ShapeAndSlice slice;
    if (!sluice::internal::ParseSliceEntryName(name, &tensor, &slice)) continue;
    // Bounded: a slice spec may name a huge full shape the file does not hold.
    if (slice.full_shape.num_elements() > (int64_t{1} << 20)) continue;
    const sluice::DataType dtype = shard->Find(name)->dtype();
    (void)sluice::internal::RestoreTensor(&*shard, "fuzz.shard", {}, tensor, &slice, dtype,
                                          nullptr);
    (void)sluice::internal::RestoreTensor(&*shard, "fuzz.shard", {}, tensor, nullptr, dtype,
                                          nullptr);
  }
  return 0;
}
