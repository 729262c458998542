// Parsing a protocol buffer from protobuf's text format with the first
// error returned, not logged: the caller names the file.
//
//   RETURN_IF_ERROR(ParseTextProto(text, &meta_graph_def));
//
// Errors: InvalidArgument "line L column C: <what protobuf found>".
// Thread-safe.
#ifndef SLUICE_GRAPH_TEXT_PROTO_H_
#define SLUICE_GRAPH_TEXT_PROTO_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace sluice {

absl::Status ParseTextProto(absl::string_view text, google::protobuf::Message* out);

}  // namespace sluice

#endif  // SLUICE_GRAPH_TEXT_PROTO_H_
