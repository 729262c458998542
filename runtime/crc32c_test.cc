#include "runtime/crc32c.h"

#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(Crc32cTest, KnownValues) {
  // RFC 3720, B.4: 32 bytes of zeros / of 0xff, and the ASCII check string.
  char zeros[32] = {0};
  EXPECT_EQ(Crc32c(zeros, sizeof(zeros)), 0x8a9136aau);
  char ones[32];
  std::memset(ones, 0xff, sizeof(ones));
  EXPECT_EQ(Crc32c(ones, sizeof(ones)), 0x62a8ab43u);
  EXPECT_EQ(Crc32c("123456789", 9), 0xe3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
}

TEST(Crc32cTest, ExtendEqualsOneCall) {
  std::string s = "The quick brown fox jumps over the lazy dog, twice over and again.";
  for (size_t cut = 0; cut <= s.size(); ++cut) {
    uint32_t a = Crc32cExtend(Crc32c(s.data(), cut), s.data() + cut, s.size() - cut);
    EXPECT_EQ(a, Crc32c(s.data(), s.size())) << "cut at " << cut;
  }
}

// Against the definition, bit by bit, over every length up to 200 and
// unaligned starts (the instruction path reads 8 bytes at a time).
TEST(Crc32cTest, MatchesTheBitwiseDefinition) {
  std::string data;
  for (int i = 0; i < 208; ++i) data.push_back(static_cast<char>((i * 131 + 7) % 256));
  auto bitwise = [](const char* p, size_t n) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; ++i) {
      c ^= static_cast<uint8_t>(p[i]);
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? 0x82f63b78u : 0);
    }
    return ~c;
  };
  for (size_t start = 0; start < 8; ++start) {
    for (size_t n = 0; n + start <= 200; ++n) {
      ASSERT_EQ(Crc32c(data.data() + start, n), bitwise(data.data() + start, n))
          << "start " << start << " length " << n;
    }
  }
}

TEST(Crc32cTest, MaskRoundTrips) {
  for (uint32_t c : {0u, 1u, 0xe3069283u, 0xffffffffu}) {
    EXPECT_EQ(UnmaskCrc32c(MaskCrc32c(c)), c);
    if (c != 0) EXPECT_NE(MaskCrc32c(c), c);
  }
}

}  // namespace
}  // namespace sluice
