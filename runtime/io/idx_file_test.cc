#include "runtime/io/idx_file.h"

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace sluice {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(testing::TempDir()) / name).string();
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(IdxFileTest, ReadsTheBigEndianHeaderAndElements) {
  // uint8 [2, 3]: magic 00 00 08 02, dims 2 and 3, then six bytes.
  const std::string path = TempPath("u8.idx");
  WriteBytes(path, std::string("\0\0\x08\x02\0\0\0\x02\0\0\0\x03\x01\x02\x03\x04\x05\xff", 18));
  absl::StatusOr<Tensor> t = ReadIdxFile(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_UINT8);
  EXPECT_EQ(t->shape(), TensorShape({2, 3}));
  EXPECT_EQ(t->flat<uint8_t>()[0], 1);
  EXPECT_EQ(t->flat<uint8_t>()[5], 255);

  // int32 [2]: big-endian 258 and -1.
  const std::string ints = TempPath("i32.idx");
  WriteBytes(ints, std::string("\0\0\x0c\x01\0\0\0\x02\0\0\x01\x02\xff\xff\xff\xff", 16));
  t = ReadIdxFile(ints);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->flat<int32_t>()[0], 258);
  EXPECT_EQ(t->flat<int32_t>()[1], -1);
}

TEST(IdxFileTest, RoundTripsEveryTypeAndReadsGzip) {
  Tensor f = Tensor::FromVector<float>({1.5f, -2.0f, 3.25f, 0.0f}, TensorShape({2, 2}));
  const std::string path = TempPath("f.idx");
  ASSERT_TRUE(WriteIdxFile(f, path).ok());
  absl::StatusOr<Tensor> back = ReadIdxFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shape(), f.shape());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back->flat<float>()[i], f.flat<float>()[i]);

  // The same bytes through gzip, as Debian ships the dataset.
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string gz = TempPath("f.idx.gz");
  gzFile out = gzopen(gz.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  gzclose(out);
  back = ReadIdxFile(gz);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->flat<float>()[2], 3.25f);

  Tensor d = Tensor::FromVector<double>({-0.5, 8.0});
  ASSERT_TRUE(WriteIdxFile(d, path).ok());
  EXPECT_EQ(ReadIdxFile(path)->flat<double>()[1], 8.0);
  Tensor s = Tensor::FromVector<int16_t>({-3, 300});
  ASSERT_TRUE(WriteIdxFile(s, path).ok());
  EXPECT_EQ(ReadIdxFile(path)->flat<int16_t>()[0], -3);
  EXPECT_EQ(ReadIdxFile(path)->flat<int16_t>()[1], 300);
}

TEST(IdxFileTest, BadFilesAreErrorsNamingTheFile) {
  EXPECT_EQ(ReadIdxFile(TempPath("missing.idx")).status().code(), absl::StatusCode::kNotFound);
  struct Case {
    std::string bytes, expect;
  } cases[] = {
      {std::string("\0\0", 2), "shorter than an IDX header"},
      {std::string("\x01\0\x08\x01", 4), "not an IDX file"},
      {std::string("\0\0\x07\x01\0\0\0\x01\0", 9), "unknown IDX element type 0x7"},
      {std::string("\0\0\x08\x02\0\0\0\x02", 8), "before dimension 1"},
      {std::string("\0\0\x08\x01\0\0\0\x03\x01\x02", 10), "truncated"},
      {std::string("\0\0\x08\x01\0\0\0\x01\x01\x02", 10), "bytes past"},
  };
  for (const Case& c : cases) {
    const std::string path = TempPath("bad.idx");
    WriteBytes(path, c.bytes);
    absl::StatusOr<Tensor> t = ReadIdxFile(path);
    ASSERT_FALSE(t.ok()) << c.expect;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
    EXPECT_NE(t.status().message().find(c.expect), std::string::npos) << t.status();
    EXPECT_NE(t.status().message().find(path), std::string::npos) << t.status();
  }
  EXPECT_FALSE(WriteIdxFile(Tensor::Scalar<int64_t>(1), TempPath("x.idx")).ok());
  EXPECT_FALSE(WriteIdxFile(Tensor::Scalar<uint8_t>(1), TempPath("x.idx")).ok());  // rank 0
}

}  // namespace
}  // namespace sluice
