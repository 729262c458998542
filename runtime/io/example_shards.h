// Writes tf.train.Examples round robin to TFRecord shard files, each under a
// temporary name ("<path>.tmp.<pid>") that Commit renames into place, so a
// process reading the files never sees a partial one, and with deterministic
// serialization, so every process writing the same examples writes the same
// bytes.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<ExampleShardWriter> w,
//                    ExampleShardWriter::Create(ShardedFileNames("/data/train", 4)));
//   for (...) RETURN_IF_ERROR(w->Write(example));
//   RETURN_IF_ERROR(w->Commit());
//
// Errors: InvalidArgument for no paths; file errors name the file.
// Thread-compatible.
#ifndef SLUICE_RUNTIME_IO_EXAMPLE_SHARDS_H_
#define SLUICE_RUNTIME_IO_EXAMPLE_SHARDS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/proto/example.pb.h"
#include "runtime/io/record_writer.h"

namespace sluice {

class ExampleShardWriter {
 public:
  static absl::StatusOr<std::unique_ptr<ExampleShardWriter>> Create(
      const std::vector<std::string>& paths);

  // The next example, to the next shard in turn.
  absl::Status Write(const ::tensorflow::Example& example);
  // Closes every shard and renames it into place.
  absl::Status Commit();

 private:
  ExampleShardWriter() = default;

  std::vector<std::string> paths_, temps_;
  std::vector<std::unique_ptr<RecordWriter>> writers_;
  size_t next_ = 0;
  std::string serialized_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_IO_EXAMPLE_SHARDS_H_
