#include "sdk/transforms/transform_test_util.h"

namespace tracegraph {
namespace {

using testing::args;
using testing::run_transform;

TEST(CommonSubexpressionEliminationTest, ReadsTheEarlierEqualNode) {
  // %a = softmax(%x, dim=1); %b = softmax(%x, dim=1); %c = add(%a, %b)  ->  %c = add(%a, %a)
  Graph g;
  ValueId x = g.add_input("x");
  NodeId a = g.add_node("aten::softmax", {x}, {"a"}, args({"self"}, {{"dim", std::int64_t{1}}}));
  NodeId b = g.add_node("aten::softmax", {x}, {"b"}, args({"self"}, {{"dim", std::int64_t{1}}}));
  NodeId c = g.add_node("aten::add", {g.node(a).outputs[0], g.node(b).outputs[0]}, {"c"});
  g.set_outputs({g.node(c).outputs[0]});
  EXPECT_EQ(run_transform(common_subexpression_elimination, g), 1u);
  EXPECT_FALSE(g.is_live(b));
  EXPECT_EQ(g.node(c).inputs[0], g.node(c).inputs[1]);
}

TEST(CommonSubexpressionEliminationTest, DoesNotMergeDifferentAttributesOrRandomOps) {
  Graph g;
  ValueId x = g.add_input("x");
  NodeId a = g.add_node("aten::softmax", {x}, {"a"}, args({"self"}, {{"dim", std::int64_t{0}}}));
  NodeId b = g.add_node("aten::softmax", {x}, {"b"}, args({"self"}, {{"dim", std::int64_t{1}}}));
  NodeId d1 = g.add_node("aten::dropout", {x}, {"d1"}, args({"input"}, {{"p", 0.5}, {"train", true}}));
  NodeId d2 = g.add_node("aten::dropout", {x}, {"d2"}, args({"input"}, {{"p", 0.5}, {"train", true}}));
  g.set_outputs({g.node(a).outputs[0], g.node(b).outputs[0], g.node(d1).outputs[0], g.node(d2).outputs[0]});
  const std::string before = g.dump();
  EXPECT_EQ(run_transform(common_subexpression_elimination, g), 0u);
  EXPECT_EQ(g.dump(), before);
}

}  // namespace
}  // namespace tracegraph
