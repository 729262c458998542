// The WAV codec: TensorFlow's exact header and sample rounding, a round
// trip, the chunks a reader skips, and each refusal with its message.
#include "ops/audio/internal/wav.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace wav {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string U32(uint32_t v) {
  return std::string{static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 24)};
}
std::string U16(uint16_t v) { return std::string{static_cast<char>(v), static_cast<char>(v >> 8)}; }

// A PCM file built by hand: `fmt` holds the format chunk's body.
std::string File(const std::string& before_fmt, const std::string& fmt, const std::string& rest) {
  const std::string body = "WAVE" + before_fmt + "fmt " + U32(fmt.size()) + fmt + rest;
  return "RIFF" + U32(body.size()) + body;
}
std::string Fmt(uint16_t format, uint16_t channels, uint32_t rate, uint16_t bits) {
  const uint16_t frame = (bits * channels + 7) / 8;
  return U16(format) + U16(channels) + U32(rate) + U32(rate * frame) + U16(frame) + U16(bits);
}

TEST(WavTest, EncodesTensorFlowsHeaderAndRoundedClampedSamples) {
  // Two frames of two channels: 0.5 -> 16384, -1 -> -32768, 1.5 clamps to
  // 32767, 1/65536 * 32768 = 0.5 rounds away from zero to 1.
  const float samples[] = {0.5f, -1.0f, 1.5f, 1.0f / 65536};
  absl::StatusOr<std::string> wav = EncodeS16(samples, 8000, 2, 2);
  ASSERT_TRUE(wav.ok()) << wav.status();
  const std::string expected = "RIFF" + U32(36 + 8) + "WAVE" + "fmt " + U32(16) +
                               Fmt(1, 2, 8000, 16) + "data" + U32(8) + U16(16384) + U16(0x8000) +
                               U16(32767) + U16(1);
  EXPECT_EQ(*wav, expected);
}

TEST(WavTest, RoundTripsAndSkipsJunkAndTrailingChunks) {
  const std::vector<float> samples = {0.0f, 0.25f, -0.25f, 0.75f, -0.5f, 0.125f};
  absl::StatusOr<std::string> wav = EncodeS16(samples.data(), 44100, 3, 2);
  ASSERT_TRUE(wav.ok());
  absl::StatusOr<Decoded> d = DecodeS16(*wav);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->frames, 2u);
  EXPECT_EQ(d->channels, 3);
  EXPECT_EQ(d->sample_rate, 44100u);
  EXPECT_EQ(d->samples, samples);

  const std::string data = "data" + U32(4) + U16(8192) + U16(0xC000);
  const std::string file = File("JUNK" + U32(3) + "abc", Fmt(1, 1, 16000, 16),
                                "LIST" + U32(2) + "xy" + data + "LIST" + U32(100) + "short");
  d = DecodeS16(file);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_THAT(d->samples, ElementsAre(0.25f, -0.5f));
  // An 18-byte format chunk carries two unused bytes.
  d = DecodeS16(File("", Fmt(1, 1, 16000, 16) + U16(0), data));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->frames, 2u);
}

TEST(WavTest, RefusesWhatItCannotReadNamingWhy) {
  const std::string data = "data" + U32(2) + U16(1);
  auto error = [](const std::string& file) {
    return std::string(DecodeS16(file).status().message());
  };
  EXPECT_THAT(error("RIF"), HasSubstr("WAV data too short"));
  EXPECT_THAT(error("RIFX"), HasSubstr("expected RIFF, found RIFX"));
  EXPECT_THAT(error("RIFF" + U32(4) + "AVI "), HasSubstr("expected WAVE, found AVI "));
  EXPECT_THAT(error(File("LIST" + U32(0), Fmt(1, 1, 8000, 16), data)),
              HasSubstr("unexpected WAV chunk 'LIST'"));
  EXPECT_THAT(error(File("", Fmt(3, 1, 8000, 32), data)), HasSubstr("format 3 is not PCM"));
  EXPECT_THAT(error(File("", Fmt(1, 1, 8000, 8), data)), HasSubstr("8-bit samples"));
  EXPECT_THAT(error(File("", Fmt(1, 0, 8000, 16), data)), HasSubstr("0 channels"));
  EXPECT_THAT(error(File("", U16(1) + U16(1) + U32(8000) + U32(9999) + U16(2) + U16(16), data)),
              HasSubstr("bad WAV bytes per second: expected 16000, got 9999"));
  EXPECT_THAT(error(File("", Fmt(1, 1, 8000, 16) + "abcd", data)),
              HasSubstr("format chunk size: expected 16 or 18, got 20"));
  EXPECT_THAT(error(File("", Fmt(1, 1, 8000, 16), "")), HasSubstr("no data chunk"));
  EXPECT_THAT(error(File("", Fmt(1, 1, 8000, 16), data + data)), HasSubstr("more than one data"));
  EXPECT_THAT(error(File("", Fmt(1, 1, 8000, 16), "data" + U32(40) + U16(1))),
              HasSubstr("too short"));

  const float one = 0.0f;
  EXPECT_THAT(EncodeS16(&one, 0, 1, 1).status().message(), HasSubstr("sample_rate"));
  EXPECT_THAT(EncodeS16(&one, 8000, 0, 1).status().message(), HasSubstr("channel count"));
  EXPECT_THAT(EncodeS16(nullptr, 8000, 2, uint64_t{1} << 31).status().message(),
              HasSubstr("do not fit in a WAV file"));
}

}  // namespace
}  // namespace wav
}  // namespace sluice
