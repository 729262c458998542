#include "ops/audio/internal/wav.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/base/internal/endian.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {
namespace wav {
namespace {

constexpr uint64_t kHeaderBytes = 44;  // RIFF (12) + fmt (24) + data header (8)
constexpr uint64_t kBytesPerSample = 2;

void PutU16(uint16_t v, std::string* out) {
  char b[2];
  absl::little_endian::Store16(b, v);
  out->append(b, 2);
}

void PutU32(uint32_t v, std::string* out) {
  char b[4];
  absl::little_endian::Store32(b, v);
  out->append(b, 4);
}

int16_t ToS16(float v) {
  const float scaled = std::round(v * 32768.0f);
  return static_cast<int16_t>(std::clamp(scaled, -32768.0f, 32767.0f));
}

// Reads forward through `data`, each read checked against its end.
class Cursor {
 public:
  explicit Cursor(absl::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }

  absl::Status Skip(uint64_t n) {
    if (n > data_.size() - pos_) {
      return absl::InvalidArgumentError(
          absl::StrCat("WAV data too short: ", n, " bytes wanted at offset ", pos_, " of ",
                       data_.size()));
    }
    pos_ += n;
    return absl::OkStatus();
  }
  absl::StatusOr<absl::string_view> Take(uint64_t n) {
    const uint64_t at = pos_;
    RETURN_IF_ERROR(Skip(n));
    return data_.substr(at, n);
  }
  absl::StatusOr<uint16_t> U16() {
    ASSIGN_OR_RETURN(absl::string_view b, Take(2));
    return absl::little_endian::Load16(b.data());
  }
  absl::StatusOr<uint32_t> U32() {
    ASSIGN_OR_RETURN(absl::string_view b, Take(4));
    return absl::little_endian::Load32(b.data());
  }
  absl::Status Expect(absl::string_view text) {
    ASSIGN_OR_RETURN(absl::string_view b, Take(text.size()));
    if (b != text) {
      return absl::InvalidArgumentError(
          absl::StrCat("WAV header mismatch: expected ", text, ", found ", b));
    }
    return absl::OkStatus();
  }

 private:
  absl::string_view data_;
  uint64_t pos_ = 0;
};

// Chunks a reader may meet between "WAVE" and "fmt " (broadcast WAV and
// padding), skipped as TensorFlow skips them.
bool IsSkippableChunk(absl::string_view id) {
  for (absl::string_view known : {"JUNK", "bext", "iXML", "qlty", "mext", "levl", "link", "axml"}) {
    if (id == known) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::string> EncodeS16(const float* samples, uint64_t sample_rate,
                                      uint64_t channels, uint64_t frames) {
  if (sample_rate == 0 || sample_rate > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample_rate must be in (0, 2^32), got ", sample_rate));
  }
  if (channels == 0 || channels > std::numeric_limits<uint16_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("channel count must be in (0, 2^16), got ", channels));
  }
  const uint64_t count = frames * channels;
  if (frames > std::numeric_limits<uint32_t>::max() ||
      kHeaderBytes + count * kBytesPerSample > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        frames, " frames of ", channels, " channels do not fit in a WAV file (4 GiB)"));
  }
  const uint32_t data_bytes = static_cast<uint32_t>(count * kBytesPerSample);
  std::string out;
  out.reserve(kHeaderBytes + data_bytes);
  out.append("RIFF");
  PutU32(static_cast<uint32_t>(kHeaderBytes - 8 + data_bytes), &out);
  out.append("WAVE");
  out.append("fmt ");
  PutU32(16, &out);  // format chunk size
  PutU16(1, &out);   // PCM
  PutU16(static_cast<uint16_t>(channels), &out);
  PutU32(static_cast<uint32_t>(sample_rate), &out);
  PutU32(static_cast<uint32_t>(sample_rate * kBytesPerSample * channels), &out);
  PutU16(static_cast<uint16_t>(kBytesPerSample * channels), &out);
  PutU16(16, &out);  // bits per sample
  out.append("data");
  PutU32(data_bytes, &out);
  for (uint64_t i = 0; i < count; ++i) PutU16(static_cast<uint16_t>(ToS16(samples[i])), &out);
  return out;
}

absl::StatusOr<Decoded> DecodeS16(absl::string_view data) {
  Cursor in(data);
  RETURN_IF_ERROR(in.Expect("RIFF"));
  RETURN_IF_ERROR(in.Skip(4));  // the RIFF size, not trusted
  RETURN_IF_ERROR(in.Expect("WAVE"));
  absl::string_view id;
  ASSIGN_OR_RETURN(id, in.Take(4));
  while (id != "fmt ") {
    if (!IsSkippableChunk(id)) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected WAV chunk '", id,
                                                     "' before the format chunk"));
    }
    uint32_t skip;
    ASSIGN_OR_RETURN(skip, in.U32());
    RETURN_IF_ERROR(in.Skip(skip));
    ASSIGN_OR_RETURN(id, in.Take(4));
  }
  uint32_t format_bytes;
  ASSIGN_OR_RETURN(format_bytes, in.U32());
  if (format_bytes != 16 && format_bytes != 18) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad WAV format chunk size: expected 16 or 18, got ", format_bytes));
  }
  uint16_t format;
  ASSIGN_OR_RETURN(format, in.U16());
  if (format != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("WAV audio format ", format, " is not PCM (1)"));
  }
  Decoded out;
  ASSIGN_OR_RETURN(out.channels, in.U16());
  if (out.channels < 1) return absl::InvalidArgumentError("WAV file with 0 channels");
  ASSIGN_OR_RETURN(out.sample_rate, in.U32());
  uint32_t bytes_per_second;
  ASSIGN_OR_RETURN(bytes_per_second, in.U32());
  uint16_t bytes_per_frame, bits;
  ASSIGN_OR_RETURN(bytes_per_frame, in.U16());
  ASSIGN_OR_RETURN(bits, in.U16());
  if (bits != 16) {
    return absl::InvalidArgumentError(
        absl::StrCat("only 16-bit WAV files are read, this one has ", bits, "-bit samples"));
  }
  const uint32_t expected_frame_bytes = (16u * out.channels + 7) / 8;
  if (bytes_per_frame != expected_frame_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("bad WAV bytes per frame: expected ",
                                                   expected_frame_bytes, ", got ", bytes_per_frame));
  }
  if (uint64_t{bytes_per_second} != uint64_t{bytes_per_frame} * out.sample_rate) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad WAV bytes per second: expected ", uint64_t{bytes_per_frame} * out.sample_rate,
        ", got ", bytes_per_second, " (sample rate ", out.sample_rate, ")"));
  }
  if (format_bytes == 18) {
    RETURN_IF_ERROR(in.Skip(2));
  }
  bool found = false;
  while (!in.done()) {
    absl::string_view chunk;
    ASSIGN_OR_RETURN(chunk, in.Take(4));
    uint32_t size;
    ASSIGN_OR_RETURN(size, in.U32());
    if (size > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat("WAV chunk '", chunk, "' is too large: ", size, " bytes"));
    }
    if (chunk != "data") {
      // A truncated chunk after the audio ends the file, as in TensorFlow.
      if (!in.Skip(size).ok()) break;
      continue;
    }
    if (found) return absl::InvalidArgumentError("more than one data chunk in the WAV file");
    found = true;
    out.frames = size / bytes_per_frame;
    const uint64_t count = uint64_t{out.frames} * out.channels;
    absl::string_view pcm;
    ASSIGN_OR_RETURN(pcm, in.Take(count * kBytesPerSample));
    out.samples.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      const auto v = static_cast<int16_t>(absl::little_endian::Load16(pcm.data() + 2 * i));
      out.samples[i] = static_cast<float>(v) / 32768.0f;
    }
    // A data chunk whose size is not a whole number of frames leaves a tail.
    if (!in.Skip(size - count * kBytesPerSample).ok()) break;
  }
  if (!found) return absl::InvalidArgumentError("no data chunk in the WAV file");
  return out;
}

}  // namespace wav
}  // namespace sluice
