// The shape rules against what PyTorch computes (the values below are
// torch 2.x's own results for the same arguments).
#include "tracegraph/shape_rules.h"

#include <gtest/gtest.h>

#include <limits>

namespace tracegraph::shape_rules {
namespace {

TEST(ShapeRulesTest, BroadcastAlignsTheLastDimsAndRepeatsOnes) {
  EXPECT_EQ(broadcast({2, 1, 5}, {3, 1}), (Shape{2, 3, 5}));
  EXPECT_EQ(broadcast({}, {4}), (Shape{4}));
  EXPECT_EQ(broadcast({0, 1}, {1, 3}), (Shape{0, 3}));  // an empty dim broadcasts like any other size
  EXPECT_EQ(broadcast({2, 3}, {3, 2}), std::nullopt);
  EXPECT_EQ(broadcast({0}, {2}), std::nullopt);
}

TEST(ShapeRulesTest, PoolPaddingIsAtMostHalfTheKernel) {
  EXPECT_TRUE(pool_padding_fits(3, 1));
  EXPECT_FALSE(pool_padding_fits(3, 2));
  EXPECT_TRUE(pool_padding_fits(2, 1));  // kernel 2: floor(2 / 2)
  EXPECT_TRUE(pool_padding_fits(1, 0));
  EXPECT_FALSE(pool_padding_fits(1, 1));
  EXPECT_FALSE(pool_padding_fits(3, -1));
  EXPECT_FALSE(pool_padding_fits(0, 0));
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_TRUE(pool_padding_fits(kMax, kMax / 2));
  EXPECT_FALSE(pool_padding_fits(kMax, kMax));
}

TEST(ShapeRulesTest, WindowOutputFloorsAndCeilsAsPyTorchPools) {
  EXPECT_EQ(window_output(32, 3, 1, 1, 1), 32);  // a same-padded 3x3 convolution
  EXPECT_EQ(window_output(7, 2, 2, 0, 1), 3);    // max_pool2d(2) of 7: floor
  EXPECT_EQ(window_output(7, 2, 2, 0, 1, true), 4);  // ceil_mode: one more, partial window
  EXPECT_EQ(window_output(6, 3, 2, 1, 1, true), 4);
  EXPECT_EQ(window_output(2, 2, 3, 1, 1, true), 1);  // ceil_mode's last window would start in the right padding: dropped
  EXPECT_EQ(window_output(10, 3, 1, 0, 2), 6);   // dilation 2: a 5-wide window
  EXPECT_EQ(window_output(2, 3, 1, 0, 1), std::nullopt);  // the window is wider than the input
  EXPECT_EQ(window_output(5, 3, 0, 0, 1), std::nullopt);  // stride 0
  EXPECT_EQ(window_output(5, 3, 1, 0, 0), std::nullopt);  // dilation 0
  EXPECT_EQ(transposed_output(4, 3, 2, 1, 1, 1), 8);       // ConvTranspose2d(3, stride=2, padding=1, output_padding=1)
  // Attributes from a file, at int64's edge: no overflow, a saturated size (found by fuzz_backends).
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(window_output(64, 3, 1, kMax, 1), kMax);
  EXPECT_EQ(window_output(64, kMax, 1, 0, kMax), std::nullopt);
  EXPECT_EQ(transposed_output(kMax, 3, kMax, 0, 1, 0), kMax);
  EXPECT_EQ(transposed_output(1, 1, 1, 2, 1, 0), -3);      // refused by the caller
}

TEST(ShapeRulesTest, ViewInfersOneMinusOne) {
  EXPECT_EQ(view(24, {2, -1, 3}), (Shape{2, 4, 3}));
  EXPECT_EQ(view(0, {0, -1}), std::nullopt);  // -1 cannot be inferred next to a 0 (PyTorch refuses too)
  EXPECT_EQ(view(24, {-1, -1}), std::nullopt);
  EXPECT_EQ(view(24, {5, -1}), std::nullopt);
  EXPECT_EQ(view(24, {2, -2, 3}), std::nullopt);
  EXPECT_EQ(view(24, {4, 5}), std::nullopt);
  EXPECT_EQ(view(6, {std::numeric_limits<std::int64_t>::max(), 2, 0}), std::nullopt);  // no overflow on the way
}

TEST(ShapeRulesTest, SlicesClampAsTorchDoes) {
  auto taken = [](std::int64_t size, std::int64_t start, std::int64_t end, std::int64_t step) {
    const auto s = slice(size, start, end, step);
    return s ? std::make_pair(s->start, s->length) : std::make_pair(std::int64_t{-1}, std::int64_t{-1});
  };
  EXPECT_EQ(taken(10, 2, 8, 3), std::make_pair(std::int64_t{2}, std::int64_t{2}));   // 2, 5
  EXPECT_EQ(taken(10, -3, std::numeric_limits<std::int64_t>::max(), 1), std::make_pair(std::int64_t{7}, std::int64_t{3}));
  EXPECT_EQ(taken(10, -20, -7, 1), std::make_pair(std::int64_t{0}, std::int64_t{3}));  // x[-20:-7] of 10: the first 3
  EXPECT_EQ(taken(10, 8, 3, 1), std::make_pair(std::int64_t{8}, std::int64_t{0}));    // empty
  EXPECT_EQ(taken(0, 0, 5, 2), std::make_pair(std::int64_t{0}, std::int64_t{0}));
  EXPECT_EQ(slice(10, 0, 5, 0), std::nullopt);
  // A step past the size takes the first element; no overflow on the way (fuzz_backends, under UBSan).
  EXPECT_EQ(taken(3, 0, 3, std::numeric_limits<std::int64_t>::max()), std::make_pair(std::int64_t{0}, std::int64_t{1}));
  EXPECT_EQ(taken(10, 9, 10, 4), std::make_pair(std::int64_t{9}, std::int64_t{1}));
}

TEST(ShapeRulesTest, IntegerDivisionIsPythons) {
  EXPECT_EQ(floor_divide(7, 2), 3);
  EXPECT_EQ(floor_divide(-7, 2), -4);
  EXPECT_EQ(floor_divide(7, -2), -4);
  EXPECT_EQ(remainder(-7, 2), 1);
  EXPECT_EQ(remainder(7, -2), -1);
  EXPECT_EQ(remainder(6, 3), 0);
  EXPECT_EQ(floor_divide(1, 0), std::nullopt);
  EXPECT_EQ(remainder(1, 0), std::nullopt);
  EXPECT_EQ(floor_divide(std::numeric_limits<std::int64_t>::min(), -1), std::nullopt);
  EXPECT_EQ(remainder(std::numeric_limits<std::int64_t>::min(), -1), 0);
}

}  // namespace
}  // namespace tracegraph::shape_rules
