// RecordWriter + RecordReader: the exact TFRecord byte layout, round trips
// (plain, ZLIB, GZIP), compressed files that other programs wrote and read
// (the gzip tool, Python's zlib), and DataLoss on every kind of corruption or
// truncation.
#include "runtime/io/record_writer.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "runtime/io/record_reader.h"
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

// Records of many sizes: empty, small, and larger than zlib's chunks.
std::vector<std::string> SampleRecords() {
  std::vector<std::string> records = {"", "a", "tf.train.Example bytes"};
  for (int n : {1000, 70000, 300000}) {
    std::string r(n, '\0');
    for (int i = 0; i < n; ++i) r[i] = static_cast<char>((i * 7 + n) % 251);
    records.push_back(std::move(r));
  }
  return records;
}

absl::Status WriteAll(const std::string& path, RecordCompression c,
                      const std::vector<std::string>& records) {
  absl::StatusOr<std::unique_ptr<RecordWriter>> w = RecordWriter::Create(path, c);
  if (!w.ok()) return w.status();
  for (const std::string& r : records) {
    absl::Status s = (*w)->WriteRecord(r);
    if (!s.ok()) return s;
  }
  return (*w)->Close();
}

int Shell(const std::string& command) { return std::system(command.c_str()); }

TEST(RecordCompressionTest, NamesAsTensorFlowSpellsThem) {
  EXPECT_EQ(*ParseRecordCompression(""), RecordCompression::kNone);
  EXPECT_EQ(*ParseRecordCompression("ZLIB"), RecordCompression::kZlib);
  EXPECT_EQ(*ParseRecordCompression("GZIP"), RecordCompression::kGzip);
  absl::StatusOr<RecordCompression> bad = ParseRecordCompression("gzip");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'gzip'"), std::string::npos) << bad.status();
  EXPECT_EQ(RecordCompressionName(RecordCompression::kGzip), "GZIP");
}

TEST(RecordCompressionTest, RoundTripsAndIsSmallerForRepetitiveData) {
  const std::string dir = TempDir();
  const std::vector<std::string> records = SampleRecords();
  for (RecordCompression c :
       {RecordCompression::kNone, RecordCompression::kZlib, RecordCompression::kGzip}) {
    const std::string path = dir + "/r" + std::string(RecordCompressionName(c));
    ASSERT_TRUE(WriteAll(path, c, records).ok());
    absl::StatusOr<std::vector<std::string>> back = ReadAllRecords(path, c);
    ASSERT_TRUE(back.ok()) << RecordCompressionName(c) << ": " << back.status();
    EXPECT_EQ(*back, records) << RecordCompressionName(c);
    if (c != RecordCompression::kNone) {
      EXPECT_LT(std::filesystem::file_size(path), std::filesystem::file_size(dir + "/r") / 2);
      // Read as the other kinds, the bytes are not records.
      EXPECT_FALSE(ReadAllRecords(path, RecordCompression::kNone).ok());
      EXPECT_FALSE(ReadAllRecords(path, c == RecordCompression::kGzip ? RecordCompression::kZlib
                                                                       : RecordCompression::kGzip)
                       .ok());
    }
  }
}

TEST(RecordCompressionTest, FlushMakesEveryRecordSoFarReadable) {
  const std::string path = TempDir() + "/growing.gz";
  absl::StatusOr<std::unique_ptr<RecordWriter>> w =
      RecordWriter::Create(path, RecordCompression::kGzip);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->WriteRecord("one").ok());
  ASSERT_TRUE((*w)->Flush().ok());
  absl::StatusOr<std::unique_ptr<RecordReader>> r =
      RecordReader::Open(path, RecordCompression::kGzip);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*(*r)->ReadRecord(), "one");
  // The stream is not finished yet: the reader says so and can try again.
  absl::StatusOr<std::string> none = (*r)->ReadRecord();
  EXPECT_EQ(none.status().code(), absl::StatusCode::kDataLoss) << none.status();
  ASSERT_TRUE((*w)->WriteRecord("two").ok());
  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_EQ(*(*r)->ReadRecord(), "two");
  EXPECT_EQ((*r)->ReadRecord().status().code(), absl::StatusCode::kOutOfRange);
}

// Files that the gzip tool and Python's zlib made from the plain records read
// back, and the files this writer made decompress with them to the plain
// records' exact bytes.
TEST(RecordCompressionTest, InteroperatesWithGzipAndPythonZlib) {
  const std::string dir = TempDir();
  const std::vector<std::string> records = SampleRecords();
  ASSERT_TRUE(WriteAll(dir + "/plain", RecordCompression::kNone, records).ok());
  const std::string plain = ReadFile(dir + "/plain");
  if (Shell("command -v gzip >/dev/null") != 0 || Shell("command -v python3 >/dev/null") != 0) {
    GTEST_SKIP() << "needs the gzip tool and python3";
  }

  // Theirs, read here. Two gzip members one after the other, as cat makes.
  ASSERT_EQ(Shell("head -c 100 " + dir + "/plain | gzip -c > " + dir + "/theirs.gz && tail -c +101 " +
                dir + "/plain | gzip -c >> " + dir + "/theirs.gz"),
            0);
  ASSERT_EQ(Shell("python3 -c \"import sys, zlib; open(sys.argv[2], 'wb').write("
                "zlib.compress(open(sys.argv[1], 'rb').read(), 9))\" " +
                dir + "/plain " + dir + "/theirs.zlib"),
            0);
  absl::StatusOr<std::vector<std::string>> gz =
      ReadAllRecords(dir + "/theirs.gz", RecordCompression::kGzip);
  ASSERT_TRUE(gz.ok()) << gz.status();
  EXPECT_EQ(*gz, records);
  absl::StatusOr<std::vector<std::string>> zl =
      ReadAllRecords(dir + "/theirs.zlib", RecordCompression::kZlib);
  ASSERT_TRUE(zl.ok()) << zl.status();
  EXPECT_EQ(*zl, records);

  // Ours, read there.
  ASSERT_TRUE(WriteAll(dir + "/ours.gz", RecordCompression::kGzip, records).ok());
  ASSERT_TRUE(WriteAll(dir + "/ours.zlib", RecordCompression::kZlib, records).ok());
  ASSERT_EQ(Shell("gzip -dc " + dir + "/ours.gz > " + dir + "/ours_gz.out"), 0);
  ASSERT_EQ(Shell("python3 -c \"import sys, zlib; open(sys.argv[2], 'wb').write("
                "zlib.decompress(open(sys.argv[1], 'rb').read()))\" " +
                dir + "/ours.zlib " + dir + "/ours_zlib.out"),
            0);
  EXPECT_TRUE(ReadFile(dir + "/ours_gz.out") == plain);
  EXPECT_TRUE(ReadFile(dir + "/ours_zlib.out") == plain);
}

TEST(RecordCompressionTest, CorruptOrTruncatedStreamsAreDataLossNamingTheFile) {
  const std::string dir = TempDir();
  const std::vector<std::string> records = SampleRecords();
  ASSERT_TRUE(WriteAll(dir + "/good.gz", RecordCompression::kGzip, records).ok());
  const std::string good = ReadFile(dir + "/good.gz");

  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x5a;
  WriteFile(dir + "/flipped.gz", flipped);
  WriteFile(dir + "/cut.gz", good.substr(0, good.size() / 2));
  WriteFile(dir + "/not_gzip.gz", "this is not compressed at all");
  WriteFile(dir + "/trailing.zlib", "");
  ASSERT_TRUE(WriteAll(dir + "/ok.zlib", RecordCompression::kZlib, {"x"}).ok());
  WriteFile(dir + "/trailing.zlib", ReadFile(dir + "/ok.zlib") + "junk");

  for (const std::string name : {"flipped.gz", "cut.gz", "not_gzip.gz"}) {
    absl::StatusOr<std::vector<std::string>> r =
        ReadAllRecords(dir + "/" + name, RecordCompression::kGzip);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << name << ": " << r.status();
    EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status();
  }
  absl::StatusOr<std::vector<std::string>> trailing =
      ReadAllRecords(dir + "/trailing.zlib", RecordCompression::kZlib);
  ASSERT_FALSE(trailing.ok());
  EXPECT_NE(trailing.status().message().find("after the end of the ZLIB stream"), std::string::npos)
      << trailing.status();
}

}  // namespace
}  // namespace sluice
