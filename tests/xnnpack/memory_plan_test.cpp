// The memory plan alone: tensors whose lifetimes overlap never share a
// buffer, and buffers are reused (best fit, else grown) once free.
#include "runtime/memory_plan.h"

#include <gtest/gtest.h>

#include <random>

namespace tracegraph::xnnpack::detail {
namespace {

TEST(MemoryPlanTest, AChainReusesTwoBuffers) {
  // x0 -> x1 -> x2 -> x3: each step reads one tensor and writes the next.
  const MemoryPlan plan = plan_memory({{400, -1, 0}, {400, 0, 1}, {400, 1, 2}, {400, 2, 3}});
  EXPECT_EQ(plan.capacity.size(), 2u);
  EXPECT_EQ(plan.total(), 800u);
  EXPECT_EQ(plan.buffer_of[0], plan.buffer_of[2]);
  EXPECT_EQ(plan.buffer_of[1], plan.buffer_of[3]);
}

TEST(MemoryPlanTest, BestFitThenGrowTheLargestFree) {
  // Two free buffers (100 and 300 bytes) when a 250-byte tensor comes: it takes the 300.
  // Then a 500-byte tensor with only the 100 free grows it.
  const MemoryPlan plan = plan_memory({{100, 0, 1}, {300, 0, 1}, {250, 2, 3}, {500, 2, 3}});
  ASSERT_EQ(plan.capacity.size(), 2u);
  EXPECT_EQ(plan.buffer_of[2], plan.buffer_of[1]);
  EXPECT_EQ(plan.buffer_of[3], plan.buffer_of[0]);
  EXPECT_EQ(plan.capacity[static_cast<std::size_t>(plan.buffer_of[0])], 500u);
  EXPECT_EQ(plan.capacity[static_cast<std::size_t>(plan.buffer_of[1])], 300u);
}

TEST(MemoryPlanTest, OverlappingLifetimesNeverShareOnRandomPlans) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Lifetime> tensors;
    const int count = 1 + static_cast<int>(random() % 40);
    for (int t = 0; t < count; ++t) {
      const int first = static_cast<int>(random() % 30) - 1;
      tensors.push_back({1 + random() % 1000, first, first + static_cast<int>(random() % 8)});
    }
    const MemoryPlan plan = plan_memory(tensors);
    for (int a = 0; a < count; ++a) {
      const auto& ta = tensors[static_cast<std::size_t>(a)];
      ASSERT_GE(plan.capacity[static_cast<std::size_t>(plan.buffer_of[static_cast<std::size_t>(a)])], ta.bytes);
      for (int b = a + 1; b < count; ++b) {
        const auto& tb = tensors[static_cast<std::size_t>(b)];
        const bool overlap = ta.first <= tb.last && tb.first <= ta.last;
        if (overlap) {
          ASSERT_NE(plan.buffer_of[static_cast<std::size_t>(a)], plan.buffer_of[static_cast<std::size_t>(b)]) << "trial " << trial;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tracegraph::xnnpack::detail
