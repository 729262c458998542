#include "graph/text_proto.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"

namespace sluice {
namespace {

// Keeps the first error with its (1-based) position.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (error_.empty()) {
      error_ = absl::StrCat("line ", line + 1, " column ", column + 1, ": ", message);
    }
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

}  // namespace

absl::Status ParseTextProto(absl::string_view text, google::protobuf::Message* out) {
  if (text.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError("text protos of 2 GiB or more are not parsed");
  }
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  FirstErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (parser.Parse(&input, out)) return absl::OkStatus();
  return absl::InvalidArgumentError(errors.error().empty() ? "does not parse" : errors.error());
}

}  // namespace sluice
