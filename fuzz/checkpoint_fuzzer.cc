// A checkpoint shard's bytes (ops/io/internal/checkpoint_shard.h) parsed and
// every entry read back under each dtype: errors, never a crash or an
// allocation the file's size does not justify.
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_target.h"
#include "ops/io/internal/checkpoint_shard.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<sluice::internal::CheckpointShard> shard = sluice::internal::CheckpointShard::Parse(
      absl::string_view(reinterpret_cast<const char*>(data), size), "fuzz.shard");
  if (!shard.ok()) return 0;
  for (const std::string& name : shard->names()) {
    for (sluice::DataType dtype : {sluice::DT_FLOAT, sluice::DT_INT64, sluice::DT_STRING}) {
      (void)shard->Get(name, dtype);
    }
  }
  return 0;
}
