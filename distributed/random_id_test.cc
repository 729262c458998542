#include "distributed/random_id.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(RandomIdTest, HexOf128BitsAndNeverRepeats) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = RandomId128();
    ASSERT_EQ(id.size(), 32u);
    for (char c : id) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << id;
    EXPECT_TRUE(seen.insert(id).second) << id;
  }
}

}  // namespace
}  // namespace sluice
