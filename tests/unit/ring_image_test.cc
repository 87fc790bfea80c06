#include "log/ring_image.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace pgring {
namespace {

// Random appends and front drops against a plain string: the image always
// holds exactly the bytes appended and not yet dropped, in order.
TEST(RingImage, HoldsWhatWasAppendedAndNotDropped) {
  std::mt19937_64 rng(7);
  RingImage image;
  std::string model;
  char next = 'a';
  for (int op = 0; op < 20000; ++op) {
    if (rng() % 3 != 0 || model.empty()) {
      const std::string b(1 + rng() % 600, next);
      next = next == 'z' ? 'a' : static_cast<char>(next + 1);
      image.Append(b);
      model += b;
    } else {
      const size_t n = rng() % (model.size() + 1);
      image.DropFront(n);
      model.erase(0, n);
    }
    ASSERT_EQ(image.size(), model.size()) << "op " << op;
    ASSERT_EQ(image.bytes(), model) << "op " << op;
  }
}

TEST(RingImage, AssignReplacesEverything) {
  RingImage image;
  image.Append("abcdef");
  image.DropFront(2);
  image.Assign("xyz");
  EXPECT_EQ(image.bytes(), "xyz");
  image.DropFront(3);
  EXPECT_EQ(image.size(), 0u);
  EXPECT_EQ(image.bytes(), "");
}

}  // namespace
}  // namespace pgring
