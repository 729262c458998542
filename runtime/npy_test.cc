#include "runtime/npy.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::string TmpPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

template <typename T>
void ExpectRoundTrip(const std::vector<T>& values, const TensorShape& shape) {
  SCOPED_TRACE(absl::StrCat(DataTypeName(DataTypeToEnum<T>::value), " ", shape.DebugString()));
  Tensor t = Tensor::FromVector<T>(values, shape);
  std::string path = TmpPath("roundtrip.npy");
  ASSERT_TRUE(WriteNpyFile(t, path).ok());
  absl::StatusOr<Tensor> back = ReadNpyFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->dtype(), t.dtype());
  EXPECT_EQ(back->shape(), shape);
  ASSERT_EQ(back->NumElements(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(back->flat<T>()[i], values[i]) << i;
  std::remove(path.c_str());
}

TEST(NpyTest, RoundTripEachDtype) {
  ExpectRoundTrip<float>({1.5f, -2.0f, 3.25f, 0.0f, 1e30f, -1e-30f}, TensorShape({2, 3}));
  ExpectRoundTrip<double>({1.0 / 3.0, -2.5, 1e300}, TensorShape({3}));
  ExpectRoundTrip<int32_t>({1, -2, 2147483647, -2147483647 - 1}, TensorShape({2, 1, 2}));
  ExpectRoundTrip<int64_t>({int64_t{1} << 40, -7}, TensorShape({1, 2}));
  ExpectRoundTrip<bool>({true, false, true, true}, TensorShape({4}));
  ExpectRoundTrip<uint8_t>({0, 1, 255}, TensorShape({3}));
  ExpectRoundTrip<int8_t>({-128, 0, 127}, TensorShape({3, 1}));
  ExpectRoundTrip<int16_t>({-300, 300}, TensorShape({2}));
}

// Unsigned words (the stateless random ops' keys and draws), which have no
// DataTypeToEnum: their bytes round-trip as '<u4' and '<u8'.
TEST(NpyTest, RoundTripUnsignedWords) {
  Tensor u32(::tensorflow::DT_UINT32, TensorShape({2}));
  u32.data<uint32_t>()[0] = 4294967295u;
  u32.data<uint32_t>()[1] = 7;
  Tensor u64(::tensorflow::DT_UINT64, TensorShape({1}));
  u64.data<uint64_t>()[0] = 18446744073709551615ull;
  for (const Tensor& t : {u32, u64}) {
    absl::StatusOr<std::string> bytes = EncodeNpy(t);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_THAT(*bytes, HasSubstr(t.dtype() == ::tensorflow::DT_UINT32 ? "'<u4'" : "'<u8'"));
    absl::StatusOr<Tensor> back = ParseNpy(*bytes);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->dtype(), t.dtype());
    EXPECT_EQ(back->shape(), t.shape());
    EXPECT_EQ(std::string(static_cast<const char*>(back->raw_data()), back->TotalBytes()),
              std::string(static_cast<const char*>(t.raw_data()), t.TotalBytes()));
  }
}

TEST(NpyTest, StringsAreFixedWidthBytes) {
  Tensor t = Tensor::FromVector<std::string>({"ab", "", "xyz"}, TensorShape({3}));
  absl::StatusOr<std::string> bytes = EncodeNpy(t);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_NE(bytes->find("'descr': '|S3'"), std::string::npos);
  EXPECT_EQ(bytes->substr(bytes->size() - 9), std::string("ab\0\0\0\0xyz", 9));
  absl::StatusOr<Tensor> back = ParseNpy(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->dtype(), DT_STRING);
  EXPECT_EQ(back->flat<std::string>()[0], "ab");
  EXPECT_EQ(back->flat<std::string>()[1], "");
  EXPECT_EQ(back->flat<std::string>()[2], "xyz");
  // Empty strings only: NumPy's narrowest width, 1.
  Tensor empty = Tensor::FromVector<std::string>({"", ""}, TensorShape({2}));
  EXPECT_NE(EncodeNpy(empty)->find("'|S1'"), std::string::npos);
  EXPECT_EQ(ParseNpy(*EncodeNpy(empty))->flat<std::string>()[1], "");
  // A bad width is an error, not a huge allocation.
  std::string bad = *bytes;
  bad.replace(bad.find("|S3"), 3, "|S0");
  EXPECT_FALSE(ParseNpy(bad).ok());
}

TEST(NpyTest, Scalars) {
  ExpectRoundTrip<float>({42.5f}, TensorShape());
  ExpectRoundTrip<int64_t>({-9}, TensorShape());
  ExpectRoundTrip<bool>({true}, TensorShape());
}

TEST(NpyTest, ZeroSize) {
  ExpectRoundTrip<float>({}, TensorShape({0}));
  ExpectRoundTrip<int32_t>({}, TensorShape({3, 0, 2}));
}

TEST(NpyTest, HeaderLayout) {
  absl::StatusOr<std::string> bytes = EncodeNpy(Tensor::FromVector<float>({1, 2, 3, 4, 5, 6},
                                                                          TensorShape({2, 3})));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t header_len = static_cast<unsigned char>((*bytes)[8]) |
                      (static_cast<unsigned char>((*bytes)[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  std::string header = bytes->substr(10, header_len);
  EXPECT_THAT(header, HasSubstr("'descr': '<f4'"));
  EXPECT_THAT(header, HasSubstr("'fortran_order': False"));
  EXPECT_THAT(header, HasSubstr("'shape': (2, 3)"));
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(bytes->size(), 10 + header_len + 24);

  absl::StatusOr<std::string> vec = EncodeNpy(Tensor::FromVector<uint8_t>({1, 2, 3}));
  ASSERT_TRUE(vec.ok());
  EXPECT_THAT(*vec, HasSubstr("'descr': '|u1'"));
  EXPECT_THAT(*vec, HasSubstr("'shape': (3,)"));
  absl::StatusOr<std::string> scalar = EncodeNpy(Tensor::Scalar<double>(1.0));
  ASSERT_TRUE(scalar.ok());
  EXPECT_THAT(*scalar, HasSubstr("'shape': ()"));
}

// A hand-made file: version 2.0, a header spelled differently than ours.
TEST(NpyTest, ReadsVersion2AndOtherSpellings) {
  std::string dict = "{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<i8\"}";
  std::string bytes("\x93NUMPY\x02\x00", 8);
  uint32_t len = dict.size() + 1;
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  bytes += dict + "\n";
  int64_t values[2] = {5, -6};
  bytes.append(reinterpret_cast<const char*>(values), sizeof(values));
  absl::StatusOr<Tensor> t = ParseNpy(bytes);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_INT64);
  EXPECT_EQ(t->shape(), TensorShape({2}));
  EXPECT_EQ(t->flat<int64_t>()[1], -6);
}

std::string NpyWithHeader(const std::string& dict, absl::string_view data) {
  std::string bytes("\x93NUMPY\x01\x00", 8);
  size_t len = dict.size() + 1;
  bytes.push_back(static_cast<char>(len & 0xff));
  bytes.push_back(static_cast<char>(len >> 8));
  return bytes + dict + "\n" + std::string(data);
}

TEST(NpyTest, BadMagic) {
  absl::StatusOr<Tensor> t = ParseNpy("PK\x03\x04 this is a zip file, not npy");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("magic"));
  EXPECT_EQ(ParseNpy("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NpyTest, TruncatedData) {
  absl::StatusOr<std::string> bytes =
      EncodeNpy(Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})));
  ASSERT_TRUE(bytes.ok());
  std::string cut = bytes->substr(0, bytes->size() - 3);
  absl::StatusOr<Tensor> t = ParseNpy(cut);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("truncated"));
  EXPECT_THAT(t.status().message(), HasSubstr("16 bytes"));

  std::string path = TmpPath("truncated.npy");
  {
    std::ofstream out(path, std::ios::binary);
    out << bytes->substr(0, 20);  // inside the header
  }
  absl::StatusOr<Tensor> f = ReadNpyFile(path);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(f.status().message(), HasSubstr(path));
  EXPECT_THAT(f.status().message(), HasSubstr("truncated"));
  std::remove(path.c_str());
}

TEST(NpyTest, MalformedHeader) {
  EXPECT_EQ(ParseNpy(NpyWithHeader("{'descr': '<f4', 'shape': (2,), }", "")).status().code(),
            absl::StatusCode::kInvalidArgument);  // no fortran_order
  EXPECT_EQ(
      ParseNpy(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", ""))
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseNpy(NpyWithHeader("not a dict", "")).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Found by fuzz/npy_fuzzer (UBSan: the element count's product overflowed
// before the size check): refused, and a zero dimension still means empty.
TEST(NpyTest, ShapesWhoseProductOverflows) {
  absl::StatusOr<Tensor> huge = ParseNpy(NpyWithHeader(
      "{'descr': '|i1', 'fortran_order': False, 'shape': (2333333233333, 2, 333323333332, 2, 2), }",
      ""));
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument) << huge.status();
  EXPECT_NE(huge.status().message().find("too large"), absl::string_view::npos) << huge.status();
  absl::StatusOr<Tensor> empty = ParseNpy(
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3, 5), }", ""));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->NumElements(), 0);
}

TEST(NpyTest, UnsupportedDtype) {
  absl::StatusOr<Tensor> t = ParseNpy(
      NpyWithHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "12345678"));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(t.status().message(), HasSubstr("<c8"));

  t = ParseNpy(NpyWithHeader("{'descr': '<U3', 'fortran_order': False, 'shape': (), }",
                             std::string(12, 'a')));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented);

  t = ParseNpy(NpyWithHeader(
      "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,), }",
      "12345678"));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented);

  absl::StatusOr<std::string> s = EncodeNpy(Tensor(DT_BFLOAT16, TensorShape({2})));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(NpyTest, BigEndianAndFortranOrderRefused) {
  absl::StatusOr<Tensor> t = ParseNpy(
      NpyWithHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "1234"));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(t.status().message(), HasSubstr("big-endian"));

  // One-byte types have no byte order: '>u1' is fine.
  t = ParseNpy(NpyWithHeader("{'descr': '>u1', 'fortran_order': False, 'shape': (1,), }", "A"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->flat<uint8_t>()[0], 'A');

  t = ParseNpy(NpyWithHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                             std::string(16, '\0')));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(t.status().message(), HasSubstr("Fortran"));
}

TEST(NpyTest, MissingFile) {
  std::string path = TmpPath("does/not/exist.npy");
  absl::StatusOr<Tensor> t = ReadNpyFile(path);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(t.status().message(), HasSubstr(path));
  absl::Status w = WriteNpyFile(Tensor::Scalar<float>(1), path);
  EXPECT_FALSE(w.ok());
  EXPECT_THAT(w.message(), HasSubstr(path));
}

bool HaveNumpy() {
  return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

// Runs a python3 script; returns its stdout, or nullopt on failure.
std::optional<std::string> RunPython(const std::string& script) {
  std::string script_path = TmpPath("script.py");
  {
    std::ofstream out(script_path);
    out << script;
  }
  std::FILE* p = popen(absl::StrCat("/usr/bin/python3 ", script_path, " 2>&1").c_str(), "r");
  if (p == nullptr) return std::nullopt;
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  std::remove(script_path.c_str());
  if (rc != 0) {
    ADD_FAILURE() << "python failed:\n" << out;
    return std::nullopt;
  }
  return out;
}

TEST(NpyTest, ReadsFilesWrittenByNumpy) {
  if (!HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  std::string dir = TmpPath("");
  std::optional<std::string> out = RunPython(absl::StrCat(R"(
import numpy as np
d = ')", dir, R"('
np.save(d + 'f32.npy', np.arange(6, dtype=np.float32).reshape(2, 3) / 4)
np.save(d + 'f64.npy', np.array([1.0 / 3, -2.0]))
np.save(d + 'i32.npy', np.array([[1], [-2]], dtype=np.int32))
np.save(d + 'i64.npy', np.array(123456789012, dtype=np.int64))
np.save(d + 'b.npy', np.array([True, False, True]))
np.save(d + 'u8.npy', np.zeros((0, 4), dtype=np.uint8))
np.save(d + 'i8.npy', np.array([-1, 2], dtype=np.int8))
np.save(d + 'fortran.npy', np.asfortranarray(np.ones((2, 3), dtype=np.float32)))
np.save(d + 'big.npy', np.array([1.0], dtype='>f4'))
np.save(d + 'c.npy', np.array([1j]))
with open(d + 'v2.npy', 'wb') as f:
    np.lib.format.write_array(f, np.array([7, 8], dtype=np.int32), version=(2, 0))
print('ok')
)"));
  ASSERT_TRUE(out.has_value());

  absl::StatusOr<Tensor> t = ReadNpyFile(dir + "f32.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_FLOAT);
  EXPECT_EQ(t->shape(), TensorShape({2, 3}));
  EXPECT_EQ(t->flat<float>()[5], 1.25f);

  t = ReadNpyFile(dir + "f64.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->flat<double>()[0], 1.0 / 3);

  t = ReadNpyFile(dir + "i32.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), TensorShape({2, 1}));
  EXPECT_EQ(t->flat<int32_t>()[1], -2);

  t = ReadNpyFile(dir + "i64.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), TensorShape());
  EXPECT_EQ(t->scalar<int64_t>(), 123456789012);

  t = ReadNpyFile(dir + "b.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_BOOL);
  EXPECT_TRUE(t->flat<bool>()[2]);
  EXPECT_FALSE(t->flat<bool>()[1]);

  t = ReadNpyFile(dir + "u8.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), TensorShape({0, 4}));

  t = ReadNpyFile(dir + "i8.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->flat<int8_t>()[0], -1);

  t = ReadNpyFile(dir + "v2.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->flat<int32_t>()[1], 8);

  EXPECT_EQ(ReadNpyFile(dir + "fortran.npy").status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(ReadNpyFile(dir + "big.npy").status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(ReadNpyFile(dir + "c.npy").status().code(), absl::StatusCode::kUnimplemented);

  for (const char* name : {"f32", "f64", "i32", "i64", "b", "u8", "i8", "fortran", "big", "c",
                           "v2"}) {
    std::remove(absl::StrCat(dir, name, ".npy").c_str());
  }
}

TEST(NpyTest, NumpyReadsOurFiles) {
  if (!HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  std::string dir = TmpPath("");
  ASSERT_TRUE(WriteNpyFile(Tensor::FromVector<float>({0.5f, 1, 2, 3, 4, 5}, TensorShape({3, 2})),
                           dir + "ours_f32.npy")
                  .ok());
  ASSERT_TRUE(WriteNpyFile(Tensor::FromVector<bool>({true, false}), dir + "ours_b.npy").ok());
  ASSERT_TRUE(WriteNpyFile(Tensor::Scalar<int64_t>(-5), dir + "ours_i64.npy").ok());
  std::optional<std::string> out = RunPython(absl::StrCat(R"(
import numpy as np
d = ')", dir, R"('
a = np.load(d + 'ours_f32.npy'); print(a.dtype, a.shape, a[0, 0], a[2, 1])
b = np.load(d + 'ours_b.npy'); print(b.dtype, b.shape, b.tolist())
c = np.load(d + 'ours_i64.npy'); print(c.dtype, c.shape, int(c))
)"));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out,
            "float32 (3, 2) 0.5 5.0\n"
            "bool (2,) [True, False]\n"
            "int64 () -5\n");
  for (const char* name : {"ours_f32", "ours_b", "ours_i64"}) {
    std::remove(absl::StrCat(dir, name, ".npy").c_str());
  }
}

}  // namespace
}  // namespace sluice
