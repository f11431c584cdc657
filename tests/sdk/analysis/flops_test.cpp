#include "tracegraph/flops.h"

#include <gtest/gtest.h>

namespace tracegraph {
namespace {

Node node(std::string op) {
  Node n;
  n.op = std::move(op);
  return n;
}

TEST(FlopsTest, CountsMultiplyAddsOfConvolutionsLinearsAndMatrixProducts) {
  // 3x3 conv, 4 -> 8 channels, 16x16 out: 2 * (8*16*16) * (4*3*3).
  const std::vector<Shape> conv_in = {{1, 4, 16, 16}, {8, 4, 3, 3}, {8}};
  EXPECT_EQ(node_flops(node("aten::conv2d"), conv_in, std::vector<Shape>{{1, 8, 16, 16}}), 2.0 * 8 * 16 * 16 * 4 * 9);
  // Grouped (depthwise): the weight's second dim is in/groups = 1.
  EXPECT_EQ(node_flops(node("aten::conv2d"), std::vector<Shape>{{1, 8, 16, 16}, {8, 1, 3, 3}}, std::vector<Shape>{{1, 8, 16, 16}}),
            2.0 * 8 * 16 * 16 * 9);
  // Transposed: each input element spreads over out/groups * k outputs.
  Node transposed = node("aten::_convolution");
  transposed.attributes.set("transposed", true);
  EXPECT_EQ(node_flops(transposed, std::vector<Shape>{{1, 4, 8, 8, 8}, {4, 2, 2, 2, 2}}, std::vector<Shape>{{1, 2, 16, 16, 16}}),
            2.0 * 4 * 512 * 2 * 8);
  EXPECT_EQ(node_flops(node("aten::linear"), std::vector<Shape>{{5, 10}, {3, 10}}, std::vector<Shape>{{5, 3}}), 2.0 * 15 * 10);
  EXPECT_EQ(node_flops(node("aten::addmm"), std::vector<Shape>{{3}, {5, 10}, {10, 3}}, std::vector<Shape>{{5, 3}}), 2.0 * 15 * 10);
  EXPECT_EQ(node_flops(node("aten::bmm"), std::vector<Shape>{{2, 5, 7}, {2, 7, 3}}, std::vector<Shape>{{2, 5, 3}}), 2.0 * 30 * 7);
  // Not counted, or shapes missing.
  EXPECT_EQ(node_flops(node("aten::relu"), std::vector<Shape>{{4}}, std::vector<Shape>{{4}}), std::nullopt);
  EXPECT_EQ(node_flops(node("aten::conv2d"), std::vector<Shape>{{1, 4, 16, 16}}, std::vector<Shape>{{1, 8, 16, 16}}), std::nullopt);
}

}  // namespace
}  // namespace tracegraph
