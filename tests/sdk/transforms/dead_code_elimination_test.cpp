#include "sdk/transforms/transform_test_util.h"

namespace tracegraph {
namespace {

using testing::run_transform;

TEST(DeadCodeEliminationTest, RemovesUnreadNodesAndConstants) {
  // %a = relu(%x); %b = neg(%a) (unread); %c = mul(%x, %w) (unread); return %a
  Graph g;
  ValueId x = g.add_input("x");
  ValueId w = g.add_constant("w", Tensor::zeros(DType::kFloat32, {1}));
  NodeId a = g.add_node("aten::relu", {x}, {"a"});
  g.add_node("aten::neg", {g.node(a).outputs[0]}, {"b"});
  g.add_node("aten::mul", {x, w}, {"c"});
  g.set_outputs({g.node(a).outputs[0]});
  EXPECT_EQ(run_transform(dead_code_elimination, g), 3u);  // neg, mul, then %w
  EXPECT_EQ(g.dump(), "graph main(%x: ?[?]) {\n  %a: ?[?] = aten::relu(%x)  # relu_0\n  return (%a)\n}\n");
}

TEST(DeadCodeEliminationTest, KeepsOutputsInputsAndInPlaceWrites) {
  Graph g;
  ValueId x = g.add_input("x");
  ValueId unused = g.add_input("unused");
  g.add_node("aten::relu_", {x}, {"r"});  // a write: not dead because its result is unread
  g.set_outputs({x});
  (void)unused;
  const std::string before = g.dump();
  EXPECT_EQ(run_transform(dead_code_elimination, g), 0u);
  EXPECT_EQ(g.dump(), before);
}

TEST(DeadCodeEliminationTest, TheBudgetStopsIt) {
  Graph g;
  ValueId x = g.add_input("x");
  g.add_node("aten::neg", {x}, {"a"});
  g.add_node("aten::neg", {x}, {"b"});
  g.set_outputs({x});
  EXPECT_EQ(run_transform(dead_code_elimination, g, 1), 1u);
  EXPECT_EQ(g.num_nodes(), 1u);
}

}  // namespace
}  // namespace tracegraph
