// RecordWriter + RecordReader: the exact TFRecord byte layout, round trips,
// and DataLoss on every kind of corruption or truncation.
#include "training/summary/record_writer.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "training/summary/record_reader.h"
#include "gtest/gtest.h"
#include "runtime/crc32c.h"

namespace sluice {
namespace {

std::string TempDir() {
  const char* env = std::getenv("TEST_TMPDIR");
  std::string base = env != nullptr ? env : std::filesystem::temp_directory_path().string();
  const testing::TestInfo* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = base + "/record_" + info->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

uint64_t LittleEndian(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), bytes.size());
}

TEST(RecordWriterTest, ByteLayout) {
  const std::string data = "123456789";
  const std::string rec = EncodeRecord(data);
  ASSERT_EQ(rec.size(), 8 + 4 + data.size() + 4);
  EXPECT_EQ(LittleEndian(rec, 0, 8), 9u);
  EXPECT_EQ(UnmaskCrc32c(static_cast<uint32_t>(LittleEndian(rec, 8, 4))), Crc32c(rec.data(), 8));
  EXPECT_EQ(rec.substr(12, 9), data);
  // CRC-32C of the RFC 3720 check string is 0xe3069283; stored masked.
  EXPECT_EQ(LittleEndian(rec, 21, 4), MaskCrc32c(0xe3069283u));
  EXPECT_EQ(LittleEndian(rec, 21, 4), ((0xe3069283u >> 15 | 0xe3069283u << 17) + 0xa282ead8u));
  // An empty record is just the framing.
  EXPECT_EQ(EncodeRecord("").size(), 16u);
  EXPECT_EQ(LittleEndian(EncodeRecord(""), 12, 4), MaskCrc32c(0));
}

TEST(RecordWriterTest, RoundTrip) {
  const std::string path = TempDir() + "/records";
  std::vector<std::string> written = {"", "a", std::string(1000, '\0'),
                                      std::string(3 << 20, 'x'), "last"};
  written[3][12345] = 'y';
  {
    absl::StatusOr<std::unique_ptr<RecordWriter>> w = RecordWriter::Create(path);
    ASSERT_TRUE(w.ok()) << w.status();
    for (const std::string& r : written) ASSERT_TRUE((*w)->WriteRecord(r).ok());
    ASSERT_TRUE((*w)->Close().ok());
    EXPECT_TRUE((*w)->Close().ok());  // idempotent
    uint64_t expected = 0;
    for (const std::string& r : written) expected += r.size() + 16;
    EXPECT_EQ((*w)->bytes_written(), expected);
    EXPECT_EQ(std::filesystem::file_size(path), expected);
    EXPECT_EQ((*w)->WriteRecord("late").code(), absl::StatusCode::kFailedPrecondition);
  }
  absl::StatusOr<std::vector<std::string>> read = ReadAllRecords(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, written);
  std::string concatenated;
  for (const std::string& r : written) concatenated += EncodeRecord(r);
  EXPECT_EQ(ReadFile(path), concatenated);
}

TEST(RecordWriterTest, NeverOverwritesAndNamesMissingFiles) {
  const std::string path = TempDir() + "/records";
  WriteFile(path, "keep me");
  absl::StatusOr<std::unique_ptr<RecordWriter>> w = RecordWriter::Create(path);
  EXPECT_EQ(w.status().code(), absl::StatusCode::kAlreadyExists) << w.status();
  EXPECT_NE(w.status().message().find(path), std::string::npos);
  EXPECT_EQ(ReadFile(path), "keep me");
  absl::StatusOr<std::unique_ptr<RecordReader>> r = RecordReader::Open(path + ".missing");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  absl::StatusOr<std::unique_ptr<RecordWriter>> bad =
      RecordWriter::Create(TempDir() + "/no/such/dir/records");
  EXPECT_FALSE(bad.ok());
}

// Reads every record of `bytes`; returns the status that ended the read and
// how many records came before it.
absl::Status ReadBytes(const std::string& bytes, int* good) {
  const std::string path = TempDir() + "/corrupt";
  WriteFile(path, bytes);
  absl::StatusOr<std::unique_ptr<RecordReader>> r = RecordReader::Open(path);
  if (!r.ok()) return r.status();
  *good = 0;
  while (true) {
    absl::StatusOr<std::string> rec = (*r)->ReadRecord();
    if (!rec.ok()) return rec.status();
    ++*good;
  }
}

TEST(RecordReaderTest, DetectsCorruption) {
  const std::string first = EncodeRecord("first record");
  const std::string second = EncodeRecord("second record");
  const std::string good_file = first + second;
  int good = 0;
  EXPECT_EQ(ReadBytes(good_file, &good).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(good, 2);

  struct Case {
    const char* what;
    std::string bytes;
    const char* message;
  };
  std::string bad_length = good_file;
  bad_length[first.size() + 0] ^= 0x01;
  std::string bad_length_crc = good_file;
  bad_length_crc[first.size() + 9] ^= 0x10;
  std::string bad_payload = good_file;
  bad_payload[first.size() + 14] ^= 0x20;
  std::string bad_footer = good_file;
  bad_footer[good_file.size() - 1] ^= 0x01;
  const std::vector<Case> cases = {
      {"flipped length bit", bad_length, "length CRC"},
      {"flipped length CRC bit", bad_length_crc, "length CRC"},
      {"flipped payload bit", bad_payload, "payload CRC"},
      {"flipped payload CRC bit", bad_footer, "payload CRC"},
      {"cut in the header", good_file.substr(0, first.size() + 5), "truncated header"},
      {"cut in the payload", good_file.substr(0, first.size() + 15), "truncated payload"},
      {"cut in the footer", good_file.substr(0, good_file.size() - 2), "truncated footer"},
  };
  for (const Case& c : cases) {
    absl::Status s = ReadBytes(c.bytes, &good);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << c.what << ": " << s;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.what << ": " << s;
    EXPECT_NE(s.message().find("at byte " + std::to_string(first.size())), std::string::npos)
        << c.what << ": " << s;
    EXPECT_EQ(good, 1) << c.what;
  }
}

}  // namespace
}  // namespace sluice
