#include "util/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace pgring {
namespace {

// Known values from RFC 3720 (iSCSI), appendix B.4.
TEST(Crc32c, StandardVectors) {
  char buf[32];
  memset(buf, 0, sizeof(buf));
  EXPECT_EQ(0x8a9136aau, crc32c::Value(buf, sizeof(buf)));
  memset(buf, 0xff, sizeof(buf));
  EXPECT_EQ(0x62a8ab43u, crc32c::Value(buf, sizeof(buf)));
  for (int i = 0; i < 32; i++) buf[i] = static_cast<char>(i);
  EXPECT_EQ(0x46dd794eu, crc32c::Value(buf, sizeof(buf)));
  for (int i = 0; i < 32; i++) buf[i] = static_cast<char>(31 - i);
  EXPECT_EQ(0x113fdb5cu, crc32c::Value(buf, sizeof(buf)));
  EXPECT_EQ(0xe3069283u, crc32c::Value("123456789", 9));
}

TEST(Crc32c, ExtendEqualsWhole) {
  std::string s = "hello world, this is pgring";
  for (size_t split = 0; split <= s.size(); ++split) {
    uint32_t part = crc32c::Extend(crc32c::Value(s.data(), split),
                                   s.data() + split, s.size() - split);
    EXPECT_EQ(crc32c::Value(s.data(), s.size()), part) << split;
  }
}

TEST(Crc32c, MaskRoundTripsAndDiffers) {
  uint32_t crc = crc32c::Value("foo", 3);
  EXPECT_NE(crc, crc32c::Mask(crc));
  EXPECT_NE(crc, crc32c::Mask(crc32c::Mask(crc)));
  EXPECT_EQ(crc, crc32c::Unmask(crc32c::Mask(crc)));
  EXPECT_EQ(crc, crc32c::Unmask(crc32c::Unmask(crc32c::Mask(crc32c::Mask(crc)))));
}

}  // namespace
}  // namespace pgring
