#include "tracegraph/node_outputs.h"

#include "test_util.h"

namespace tracegraph {
namespace {

// x -> relu (r) -> split (a, b) ; add(b, r) -> out (the graph's output)
// `a` is read by nothing: a backend need not compute it, so it is not exposed.
TEST(NodeOutputsTest, EveryValueTheGraphReadsBecomesAnOutputAfterTheGraphsOwn) {
  Graph g;
  const ValueId x = g.add_input("x", DType::kFloat32, symbolic({2, 4}));
  const NodeId relu = g.add_node("aten::relu", {x}, {"r"}, {}, "relu_0");
  const ValueId r = g.node(relu).outputs[0];
  const NodeId split = g.add_node("aten::split", {r}, {"a", "b"}, {}, "split_1");
  const ValueId b = g.node(split).outputs[1];
  const NodeId add = g.add_node("aten::add", {b, r}, {"out"}, {}, "add_2");
  const ValueId out = g.node(add).outputs[0];
  g.set_outputs({out});

  const std::vector<NodeOutput> exposed = expose_node_outputs(g);
  g.verify();
  ASSERT_EQ(exposed.size(), 3u);
  EXPECT_EQ(exposed[0].key, "relu_0");
  EXPECT_EQ(exposed[0].node, relu);
  EXPECT_EQ(exposed[0].value, r);
  EXPECT_EQ(exposed[0].graph_output, 1u);
  EXPECT_EQ(exposed[1].key, "split_1:1");  // output 1; output 0 (`a`) nobody reads
  EXPECT_EQ(exposed[1].output, 1u);
  EXPECT_EQ(exposed[1].graph_output, 2u);
  EXPECT_EQ(exposed[2].key, "add_2");
  EXPECT_EQ(exposed[2].graph_output, 0u);  // already the graph's output: not added twice
  EXPECT_EQ(g.outputs(), (std::vector<ValueId>{out, r, b}));
}

TEST(NodeOutputsTest, KeysNameTheNodeAndTheOutputPastTheFirst) {
  EXPECT_EQ(node_output_key("conv2d_3", 0), "conv2d_3");
  EXPECT_EQ(node_output_key("max_pool2d_with_indices", 1), "max_pool2d_with_indices:1");
}

TEST(NodeOutputsTest, AGraphWithoutNodesExposesNothing) {
  Graph g;
  const ValueId x = g.add_input("x", DType::kFloat32, symbolic({1}));
  g.set_outputs({x});
  EXPECT_TRUE(expose_node_outputs(g).empty());
  EXPECT_EQ(g.outputs(), std::vector<ValueId>{x});
}

}  // namespace
}  // namespace tracegraph
