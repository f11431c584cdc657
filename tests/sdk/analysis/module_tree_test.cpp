// The module tree on a hand-built graph of an encoder of four blocks (three
// the same computation, the fourth another) and a head:
//
//   x[1, 8] -> encoder.blocks.i: fc = linear(h, w_i[8, 8], b_i[8]) (in blocks.i.fc),
//              relu (or gelu in block 3), add(h, .) (in blocks.i)
//           -> head: linear(h, wh[2, 8], bh[2]) -> sigmoid (the root's)
#include "tracegraph/module_tree.h"

#include "test_util.h"

namespace tracegraph {
namespace {

struct Model {
  Graph graph;
  std::vector<ModuleId> blocks;
};

Model encoder_and_head() {
  Model m;
  Graph& g = m.graph;
  ValueId h = g.add_input("x", DType::kFloat32, symbolic({1, 8}));
  const ModuleId encoder = g.add_module("encoder", "Encoder");
  for (int i = 0; i < 4; ++i) {
    const std::string p = "encoder.blocks." + std::to_string(i);
    const ModuleId block = g.add_module(p, "Block", encoder);
    const ModuleId fc = g.add_module(p + ".fc", "Linear", block);
    m.blocks.push_back(block);
    // Each block its own weights, with other numbers: the data is not the computation.
    const ValueId w = g.add_constant(p + ".w", Tensor::from_vector<float>(std::vector<float>(64, static_cast<float>(i)), {8, 8}));
    const ValueId b = g.add_constant(p + ".b", Tensor::from_vector<float>(std::vector<float>(8, static_cast<float>(i)), {8}));
    const NodeId lin = g.add_node("aten::linear", {h, w, b}, {NewValue(p + ".y", DType::kFloat32, symbolic({1, 8}))});
    const NodeId act = g.add_node(i == 3 ? "aten::gelu" : "aten::relu", {g.node(lin).outputs[0]}, {NewValue(p + ".a", DType::kFloat32, symbolic({1, 8}))});
    const NodeId add = g.add_node("aten::add", {h, g.node(act).outputs[0]}, {NewValue(p + ".out", DType::kFloat32, symbolic({1, 8}))});
    g.set_node_module(lin, fc);
    g.set_node_module(act, block);
    g.set_node_module(add, block);
    h = g.node(add).outputs[0];
  }
  const ValueId wh = g.add_constant("head.w", Tensor::zeros(DType::kFloat32, {2, 8}));
  const ValueId bh = g.add_constant("head.b", Tensor::zeros(DType::kFloat32, {2}));
  const NodeId head = g.add_node("aten::linear", {h, wh, bh}, {NewValue("logits", DType::kFloat32, symbolic({1, 2}))});
  g.set_node_module(head, g.add_module("head", "Linear"));
  const NodeId out = g.add_node("aten::sigmoid", {g.node(head).outputs[0]}, {NewValue("out", DType::kFloat32, symbolic({1, 2}))});
  g.set_outputs({g.node(out).outputs[0]});
  return m;
}

TEST(ModuleTreeTest, GroupsCountNodesParametersAndFlops) {
  const Model m = encoder_and_head();
  const ModuleTree tree = module_tree(m.graph);
  // Parents before children, children in the order of their first node.
  std::vector<std::string> paths;
  for (const ModuleGroup& g : tree.groups) paths.push_back(g.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"", "encoder", "encoder.blocks.0", "encoder.blocks.0.fc", "encoder.blocks.1", "encoder.blocks.1.fc",
                                             "encoder.blocks.2", "encoder.blocks.2.fc", "encoder.blocks.3", "encoder.blocks.3.fc", "head"}));
  const ModuleGroup& root = tree.groups[0];
  EXPECT_EQ(root.children, (std::vector<std::size_t>{1, 10}));
  ASSERT_EQ(root.nodes.size(), 1u);  // the sigmoid: the root's own forward
  EXPECT_EQ(m.graph.node(root.nodes[0]).op, "aten::sigmoid");
  EXPECT_EQ(root.node_count, 14u);
  EXPECT_EQ(root.parameters, 4 * (64 + 8) + 16 + 2);
  EXPECT_EQ(root.flops, 4 * (2.0 * 8 * 8) + 2.0 * 2 * 8);  // node_flops: linear 2 * outputs * K

  const ModuleGroup& encoder = tree.groups[1];
  EXPECT_EQ(encoder.type, "Encoder");
  EXPECT_EQ(encoder.parent, std::optional<std::size_t>(0));
  EXPECT_EQ(encoder.children, (std::vector<std::size_t>{2, 4, 6, 8}));
  EXPECT_TRUE(encoder.nodes.empty());
  EXPECT_EQ(encoder.node_count, 12u);
  EXPECT_EQ(encoder.parameters, 4 * 72);
  EXPECT_EQ(encoder.flops, 4 * 128.0);

  const ModuleGroup& block = tree.groups[2];
  EXPECT_EQ(block.type, "Block");
  EXPECT_EQ(block.nodes.size(), 2u);  // relu, add; the linear is in blocks.0.fc
  EXPECT_EQ(block.node_count, 3u);
  EXPECT_EQ(block.parameters, 72);
  EXPECT_EQ(block.flops, 128.0);
  EXPECT_EQ(tree.groups[3].type, "Linear");
  EXPECT_EQ(tree.groups[3].parameters, 72);
  EXPECT_EQ(tree.group_of(m.blocks[2]), std::optional<std::size_t>(6));
}

TEST(ModuleTreeTest, SiblingsThatAreTheSameComputationAreRepeats) {
  const Model m = encoder_and_head();
  const ModuleTree tree = module_tree(m.graph);
  // blocks 1 and 2 repeat block 0 (other weights, the same ops and shapes);
  // block 3 (gelu) repeats none.
  EXPECT_EQ(tree.groups[2].repeat_of, std::nullopt);
  EXPECT_EQ(tree.groups[2].repeats, 3u);
  EXPECT_EQ(tree.groups[4].repeat_of, std::optional<std::size_t>(2));
  EXPECT_EQ(tree.groups[6].repeat_of, std::optional<std::size_t>(2));
  EXPECT_EQ(tree.groups[8].repeat_of, std::nullopt);
  EXPECT_EQ(tree.groups[8].repeats, 1u);
  EXPECT_EQ(tree.groups[4].signature, tree.groups[2].signature);
  EXPECT_NE(tree.groups[8].signature, tree.groups[2].signature);
  // Not siblings: each fc is the only child of its block.
  EXPECT_EQ(tree.groups[5].repeat_of, std::nullopt);
}

TEST(ModuleTreeTest, IsDeterministicAndHasAJsonForm) {
  const ModuleTree a = module_tree(encoder_and_head().graph);
  const Model m = encoder_and_head();
  const std::string json = module_tree_json(m.graph, module_tree(m.graph));
  EXPECT_EQ(json, module_tree_json(m.graph, a));
  EXPECT_NE(json.find(R"({"path":"encoder.blocks.1","type":"Block","parent":1,"children":[5],"nodes":["relu_4","add_5"],"node_count":3,"parameters":72,"flops":128.0,"signature":")"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("repeat_of":2,"repeats":1})"), std::string::npos) << json;
}

TEST(ModuleTreeTest, AGraphWithoutModulesIsOneGroup) {
  Graph g;
  const ValueId x = g.add_input("x");
  const NodeId r = g.add_node("aten::relu", {x}, {"y"});
  g.set_outputs({g.node(r).outputs[0]});
  const ModuleTree tree = module_tree(g);
  ASSERT_EQ(tree.groups.size(), 1u);
  EXPECT_EQ(tree.groups[0].node_count, 1u);
  EXPECT_EQ(tree.groups[0].flops, 0.0);
}

}  // namespace
}  // namespace tracegraph
