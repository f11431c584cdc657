#include "sdk/transforms/transform_test_util.h"

namespace tracegraph {
namespace {

using testing::args;
using testing::run_transform;
using testing::typed;

// %a = view(%x, [6, 4]); %b = reshape(%a, [2, 12])  ->  %b = reshape(%x, [2, 12])
TEST(ViewChainCollapseTest, CollapsesAChainOfReshapes) {
  Graph g;
  ValueId x = g.add_input("x", DType::kFloat32, symbolic({2, 3, 4}));
  NodeId a = g.add_node("aten::view", {x}, {typed("a", {6, 4})}, args({"self"}, {{"size", std::vector<std::int64_t>{6, 4}}}));
  NodeId b = g.add_node("aten::reshape", {g.node(a).outputs[0]}, {typed("b", {2, 12})}, args({"self"}, {{"shape", std::vector<std::int64_t>{2, 12}}}));
  g.set_outputs({g.node(b).outputs[0]});
  EXPECT_EQ(run_transform(view_chain_collapse, g), 1u);
  TransformContext ctx(std::nullopt, nullptr, 0);
  dead_code_elimination(g, ctx);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& r = g.node(g.nodes()[0]);
  EXPECT_EQ(r.op, "aten::reshape");
  EXPECT_EQ(r.inputs[0], x);
  EXPECT_EQ(r.attributes.get_ints("shape"), (std::vector<std::int64_t>{2, 12}));
}

TEST(ViewChainCollapseTest, CancelsInversePermutes) {
  // permute(permute(x, [0, 2, 3, 1]), [0, 3, 1, 2]) == x
  Graph g;
  ValueId x = g.add_input("x", DType::kFloat32, symbolic({1, 3, 4, 5}));
  NodeId p = g.add_node("aten::permute", {x}, {typed("p", {1, 4, 5, 3})}, args({"self"}, {{"dims", std::vector<std::int64_t>{0, 2, 3, 1}}}));
  NodeId q = g.add_node("aten::permute", {g.node(p).outputs[0]}, {typed("q", {1, 3, 4, 5})}, args({"self"}, {{"dims", std::vector<std::int64_t>{0, 3, 1, 2}}}));
  NodeId r = g.add_node("aten::relu", {g.node(q).outputs[0]}, {"r"}, args({"self"}));
  g.set_outputs({g.node(r).outputs[0]});
  EXPECT_EQ(run_transform(view_chain_collapse, g), 1u);
  EXPECT_EQ(g.node(r).inputs[0], x);
}

TEST(ViewChainCollapseTest, LeavesPermutesThatAreNotInverseAndDynamicReshapes) {
  Graph g;
  ValueId x = g.add_input("x", DType::kFloat32, symbolic({1, 3, 4, 5}));
  NodeId p = g.add_node("aten::permute", {x}, {typed("p", {1, 4, 5, 3})}, args({"self"}, {{"dims", std::vector<std::int64_t>{0, 2, 3, 1}}}));
  NodeId q = g.add_node("aten::permute", {g.node(p).outputs[0]}, {typed("q", {1, 5, 3, 4})}, args({"self"}, {{"dims", std::vector<std::int64_t>{0, 2, 3, 1}}}));
  ValueId y = g.add_input("y", DType::kFloat32, SymbolicShape{Dim::sym("N"), Dim::of(4)});
  NodeId a = g.add_node("aten::view", {y}, {NewValue("a", DType::kFloat32, SymbolicShape{Dim::sym("M"), Dim::of(2)})}, args({"self"}));
  NodeId b = g.add_node("aten::flatten", {g.node(a).outputs[0]}, {NewValue("b", DType::kFloat32, SymbolicShape{Dim::sym("K")})}, args({"self"}));
  g.set_outputs({g.node(q).outputs[0], g.node(b).outputs[0]});
  const std::string before = g.dump();
  EXPECT_EQ(run_transform(view_chain_collapse, g), 0u);
  EXPECT_EQ(g.dump(), before);
}

}  // namespace
}  // namespace tracegraph
