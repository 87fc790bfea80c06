#include "log/ring_image.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

namespace pgring {
namespace {

// Random appends, front drops and evictions against a plain string and a
// count of the bytes evicted: the image always holds exactly the bytes
// appended and not dropped, in order, the first cold() of them out of
// memory and the rest resident.
TEST(RingImage, HoldsWhatWasAppendedAndNotDropped) {
  std::mt19937_64 rng(7);
  RingImage image;
  std::string model;
  uint64_t cold = 0;
  char next = 'a';
  for (int op = 0; op < 20000; ++op) {
    const int what = static_cast<int>(rng() % 5);
    if (what <= 1 || model.empty()) {
      const std::string b(1 + rng() % 600, next);
      next = next == 'z' ? 'a' : static_cast<char>(next + 1);
      image.Append(b);
      model += b;
    } else if (what == 2) {
      const size_t n = rng() % (model.size() + 1);
      image.DropFront(n);
      model.erase(0, n);
      cold -= std::min<uint64_t>(cold, n);
    } else if (what == 3) {
      const size_t n = rng() % (model.size() - cold + 1);
      image.Evict(n);
      cold += n;
    } else {
      image.ShrinkToFit();
      ASSERT_LE(image.capacity(), std::max<size_t>(image.resident_size(), 15)) << "op " << op;
    }
    ASSERT_EQ(image.size(), model.size()) << "op " << op;
    ASSERT_EQ(image.cold(), cold) << "op " << op;
    ASSERT_EQ(image.resident(), model.substr(cold)) << "op " << op;
  }
}

TEST(RingImage, AssignReplacesEverything) {
  RingImage image;
  image.Append("abcdef");
  image.Evict(1);
  image.DropFront(2);
  image.Assign("xyz");
  EXPECT_EQ(image.cold(), 0u);
  EXPECT_EQ(image.resident(), "xyz");
  image.Assign("prefix|rest", 7);
  EXPECT_EQ(image.resident(), "rest");
  EXPECT_EQ(image.size(), 4u);
  image.DropFront(4);
  EXPECT_EQ(image.size(), 0u);
  EXPECT_EQ(image.resident(), "");
}

}  // namespace
}  // namespace pgring
