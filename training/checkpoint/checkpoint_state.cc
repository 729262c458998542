#include "training/checkpoint/checkpoint_state.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "runtime/atomic_file.h"
#include "runtime/crc32c.h"

namespace sluice {
namespace {

constexpr absl::string_view kHeader = "sluice-checkpoint-state 1";

std::string StatePath(const std::string& dir) {
  return absl::StrCat(dir, "/", kCheckpointStateFile);
}

std::string Resolve(const std::string& dir, const std::string& name) {
  return absl::StartsWith(name, "/") ? name : absl::StrCat(dir, "/", name);
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
  auto corrupt = [&path](absl::string_view why) {
    return absl::DataLossError(
        absl::StrCat("checkpoint state file '", path, "' is corrupt: ", why));
  };
  // The checksum line is the last one; it covers every byte before it.
  absl::string_view all = *text;
  if (!absl::EndsWith(all, "\n")) return corrupt("it does not end with a newline");
  const size_t last = all.rfind('\n', all.size() - 2);
  const size_t body_end = last == absl::string_view::npos ? 0 : last + 1;
  absl::string_view crc_line = all.substr(body_end, all.size() - 1 - body_end);
  uint32_t stored = 0;
  if (!absl::ConsumePrefix(&crc_line, "crc32c ") || crc_line.size() != 8 ||
      !absl::SimpleHexAtoi(crc_line, &stored)) {
    return corrupt("no checksum line");
  }
  absl::string_view body = all.substr(0, body_end);
  if (Crc32c(body.data(), body.size()) != stored) return corrupt("checksum mismatch");

  CheckpointState state;
  std::string latest;
  bool header = false;
  for (absl::string_view line : absl::StrSplit(body, '\n', absl::SkipEmpty())) {
    if (!header) {
      if (line != kHeader) return corrupt(absl::StrCat("unknown header '", line, "'"));
      header = true;
    } else if (absl::ConsumePrefix(&line, "kept ")) {
      state.kept.emplace_back(line);
    } else if (absl::ConsumePrefix(&line, "latest ")) {
      latest = std::string(line);
    } else {
      return corrupt(absl::StrCat("unknown record '", line, "'"));
    }
  }
  if (!header) return corrupt("no header");
  if (state.kept.empty() != latest.empty() || (!latest.empty() && latest != state.kept.back())) {
    return corrupt(absl::StrCat("latest '", latest, "' is not the newest kept checkpoint"));
  }
  return state;
}

absl::Status WriteCheckpointState(const std::string& dir, const CheckpointState& state) {
  std::string body = absl::StrCat(kHeader, "\n");
  for (const std::string& name : state.kept) {
    if (name.empty() || absl::StrContains(name, '\n') || absl::StartsWith(name, " ")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint name '", name, "' cannot be recorded in '", StatePath(dir), "'"));
    }
    absl::StrAppend(&body, "kept ", name, "\n");
  }
  if (!state.kept.empty()) absl::StrAppend(&body, "latest ", state.kept.back(), "\n");
  absl::StrAppendFormat(&body, "crc32c %08x\n", Crc32c(body.data(), body.size()));
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
