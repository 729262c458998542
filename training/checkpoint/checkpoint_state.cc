#include "training/checkpoint/checkpoint_state.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "google/protobuf/text_format.h"
#include "graph/proto/checkpoint_state.pb.h"
#include "graph/text_proto.h"
#include "runtime/atomic_file.h"
#include "runtime/crc32c.h"

namespace sluice {
namespace {

constexpr absl::string_view kSluiceHeader = "sluice-checkpoint-state 1";
constexpr absl::string_view kCrcComment = "# crc32c ";

std::string StatePath(const std::string& dir) {
  return absl::StrCat(dir, "/", kCheckpointStateFile);
}

std::string Resolve(const std::string& dir, const std::string& name) {
  return absl::StartsWith(name, "/") ? name : absl::StrCat(dir, "/", name);
}

}  // namespace

namespace {

absl::Status Corrupt(const std::string& path, absl::string_view why) {
  return absl::DataLossError(absl::StrCat("checkpoint state file '", path, "' is corrupt: ", why));
}

// Sluice's own format, before it wrote TensorFlow's: a header line, "kept"
// and "latest" records and a checksum line.
absl::StatusOr<CheckpointState> ParseSluiceFormat(const std::string& path, absl::string_view all) {
  if (!absl::EndsWith(all, "\n")) return Corrupt(path, "it does not end with a newline");
  const size_t last = all.rfind('\n', all.size() - 2);
  const size_t body_end = last == absl::string_view::npos ? 0 : last + 1;
  absl::string_view crc_line = all.substr(body_end, all.size() - 1 - body_end);
  uint32_t stored = 0;
  if (!absl::ConsumePrefix(&crc_line, "crc32c ") || crc_line.size() != 8 ||
      !absl::SimpleHexAtoi(crc_line, &stored)) {
    return Corrupt(path, "no checksum line");
  }
  absl::string_view body = all.substr(0, body_end);
  if (Crc32c(body.data(), body.size()) != stored) return Corrupt(path, "checksum mismatch");
  CheckpointState state;
  std::string latest;
  bool header = false;
  for (absl::string_view line : absl::StrSplit(body, '\n', absl::SkipEmpty())) {
    if (!header) {
      if (line != kSluiceHeader) return Corrupt(path, absl::StrCat("unknown header '", line, "'"));
      header = true;
    } else if (absl::ConsumePrefix(&line, "kept ")) {
      state.kept.emplace_back(line);
    } else if (absl::ConsumePrefix(&line, "latest ")) {
      latest = std::string(line);
    } else {
      return Corrupt(path, absl::StrCat("unknown record '", line, "'"));
    }
  }
  if (!header) return Corrupt(path, "no header");
  if (state.kept.empty() != latest.empty() || (!latest.empty() && latest != state.kept.back())) {
    return Corrupt(path, absl::StrCat("latest '", latest, "' is not the newest kept checkpoint"));
  }
  return state;
}

// TensorFlow's text format. A file Sluice wrote ends with a comment line
// "# crc32c <hex>" over every byte before it (TensorFlow's parser skips
// comments), so a damaged byte is found, not read as another name; a file
// TensorFlow wrote has none and is only parsed.
absl::StatusOr<CheckpointState> ParseTextFormat(const std::string& path, absl::string_view all) {
  absl::string_view body = all;
  if (all.empty()) return Corrupt(path, "it is empty");
  {
    if (!absl::EndsWith(all, "\n")) return Corrupt(path, "it does not end with a newline");
    const size_t last = all.rfind('\n', all.size() - 2);
    const size_t tail_start = last == absl::string_view::npos ? 0 : last + 1;
    absl::string_view tail = all.substr(tail_start, all.size() - 1 - tail_start);
    if (absl::StartsWith(tail, "#")) {
      uint32_t stored = 0;
      if (!absl::ConsumePrefix(&tail, kCrcComment) || tail.size() != 8 ||
          !absl::SimpleHexAtoi(tail, &stored)) {
        return Corrupt(path, "a bad checksum line");
      }
      body = all.substr(0, tail_start);
      if (Crc32c(body.data(), body.size()) != stored) return Corrupt(path, "checksum mismatch");
    }
  }
  ::tensorflow::CheckpointState proto;
  absl::Status parsed = ParseTextProto(body, &proto);
  if (!parsed.ok()) {
    return Corrupt(path, absl::StrCat("it does not parse as a CheckpointState in text format (",
                                      parsed.message(), ")"));
  }
  CheckpointState state;
  for (const std::string& p : proto.all_model_checkpoint_paths()) {
    if (p.empty()) return Corrupt(path, "an empty checkpoint path");
    state.kept.push_back(p);
  }
  if (proto.all_model_checkpoint_timestamps_size() == proto.all_model_checkpoint_paths_size()) {
    state.timestamps.assign(proto.all_model_checkpoint_timestamps().begin(),
                            proto.all_model_checkpoint_timestamps().end());
  }
  state.last_preserved_timestamp = proto.last_preserved_timestamp();
  // TensorFlow keeps the latest last in the list; a file that lists it
  // elsewhere, or not at all, is read as TensorFlow's update would leave it.
  const std::string& latest = proto.model_checkpoint_path();
  if (!latest.empty() && (state.kept.empty() || state.kept.back() != latest)) {
    for (size_t i = state.kept.size(); i-- > 0;) {
      if (state.kept[i] != latest) continue;
      state.kept.erase(state.kept.begin() + i);
      if (!state.timestamps.empty()) state.timestamps.erase(state.timestamps.begin() + i);
    }
    state.kept.push_back(latest);
    if (!state.timestamps.empty()) state.timestamps.push_back(state.last_preserved_timestamp);
  }
  if (latest.empty() && !state.kept.empty()) {
    return Corrupt(path, "checkpoints are listed but none is the latest");
  }
  return state;
}

}  // namespace

absl::StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir) {
  const std::string path = StatePath(dir);
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) {
      return absl::NotFoundError(
          absl::StrCat("no checkpoint in '", dir, "': '", path, "' does not exist"));
    }
    return text.status();
  }
  if (absl::StartsWith(*text, kSluiceHeader)) return ParseSluiceFormat(path, *text);
  return ParseTextFormat(path, *text);
}

absl::Status WriteCheckpointState(const std::string& dir, const CheckpointState& state) {
  ::tensorflow::CheckpointState proto;
  for (const std::string& name : state.kept) {
    if (name.empty() || absl::StrContains(name, '\n')) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint name '", name, "' cannot be recorded in '", StatePath(dir), "'"));
    }
    proto.add_all_model_checkpoint_paths(name);
  }
  if (!state.kept.empty()) proto.set_model_checkpoint_path(state.kept.back());
  if (state.timestamps.size() == state.kept.size()) {
    for (double t : state.timestamps) proto.add_all_model_checkpoint_timestamps(t);
  }
  proto.set_last_preserved_timestamp(state.last_preserved_timestamp);
  std::string body;
  if (!google::protobuf::TextFormat::PrintToString(proto, &body)) {
    return absl::InternalError("cannot print the checkpoint state");
  }
  absl::StrAppendFormat(&body, "%s%08x\n", kCrcComment, Crc32c(body.data(), body.size()));
  return WriteFileAtomically(StatePath(dir), body);
}

absl::StatusOr<std::string> LatestCheckpoint(const std::string& dir) {
  ASSIGN_OR_RETURN(CheckpointState state, ReadCheckpointState(dir));
  if (state.kept.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no checkpoint in '", dir, "': '", StatePath(dir), "' names none"));
  }
  return Resolve(dir, state.kept.back());
}

absl::StatusOr<std::vector<std::string>> ListCheckpoints(const std::string& dir) {
  ASSIGN_OR_RETURN(CheckpointState state, ReadCheckpointState(dir));
  std::vector<std::string> out;
  for (const std::string& name : state.kept) out.push_back(Resolve(dir, name));
  return out;
}

}  // namespace sluice
