#include "runtime/io/example_shards.h"

#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<ExampleShardWriter>> ExampleShardWriter::Create(
    const std::vector<std::string>& paths) {
  if (paths.empty()) return absl::InvalidArgumentError("no output files");
  std::unique_ptr<ExampleShardWriter> w(new ExampleShardWriter());
  w->paths_ = paths;
  for (const std::string& path : paths) {
    w->temps_.push_back(absl::StrCat(path, ".tmp.", getpid()));
    std::filesystem::remove(w->temps_.back());
    ASSIGN_OR_RETURN(std::unique_ptr<RecordWriter> writer, RecordWriter::Create(w->temps_.back()));
    w->writers_.push_back(std::move(writer));
  }
  return w;
}

absl::Status ExampleShardWriter::Write(const ::tensorflow::Example& example) {
  serialized_.clear();
  {
    google::protobuf::io::StringOutputStream out(&serialized_);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    example.SerializeToCodedStream(&coded);
  }
  RETURN_IF_ERROR(writers_[next_]->WriteRecord(serialized_));
  next_ = (next_ + 1) % writers_.size();
  return absl::OkStatus();
}

absl::Status ExampleShardWriter::Commit() {
  for (size_t k = 0; k < writers_.size(); ++k) {
    RETURN_IF_ERROR(writers_[k]->Close());
    std::error_code ec;
    std::filesystem::rename(temps_[k], paths_[k], ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("cannot rename ", temps_[k], " to ", paths_[k], ": ", ec.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace sluice
