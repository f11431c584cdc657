#include "sdk/transforms/transform_test_util.h"

namespace tracegraph {
namespace {

using testing::args;
using testing::run_transform;
using testing::typed;

// A traced crop's offset: (x.size(2) - 32) // 2, then a slice from it.
//   %s = aten::size(%x, dim=2); %d = aten::sub(%s, 32); %o = aten::floor_divide(%d, 2)
//   %y = aten::slice(%x, %o)  ->  %o becomes a constant 4; size/sub/floor_divide go
TEST(ConstantFoldingTest, FoldsShapeArithmeticOfStaticShapes) {
  Graph g;
  ValueId x = g.add_input("x", DType::kFloat32, symbolic({1, 4, 40, 40}));
  NodeId s = g.add_node("aten::size", {x}, {typed("s", {}, DType::kInt64)}, args({"self"}, {{"dim", std::int64_t{2}}}));
  NodeId d = g.add_node("aten::sub", {g.node(s).outputs[0]}, {typed("d", {}, DType::kInt64)}, args({"self"}, {{"other", std::int64_t{32}}}));
  NodeId o = g.add_node("aten::floor_divide", {g.node(d).outputs[0]}, {typed("o", {}, DType::kInt64)}, args({"self"}, {{"other", std::int64_t{2}}}));
  NodeId y = g.add_node("aten::slice", {x, g.node(o).outputs[0]}, {typed("y", {1, 4, 36, 40})}, args({"self", "start"}, {{"dim", std::int64_t{2}}}));
  g.set_outputs({g.node(y).outputs[0]});
  EXPECT_EQ(run_transform(constant_folding, g), 3u);
  EXPECT_EQ(g.num_nodes(), 1u);
  const Value& offset = g.value(g.node(y).inputs[1]);
  ASSERT_TRUE(offset.is_constant());
  EXPECT_EQ(offset.name, "o");  // the folded value keeps its name
  EXPECT_EQ(*offset.data.data_as<std::int64_t>(), 4);
}

TEST(ConstantFoldingTest, LeavesDynamicShapesAndNonConstantsAlone) {
  Graph g;
  ValueId x = g.add_input("x", DType::kFloat32, SymbolicShape{Dim::sym("N"), Dim::of(4)});
  NodeId s = g.add_node("aten::size", {x}, {"s"}, args({"self"}, {{"dim", std::int64_t{0}}}));
  NodeId r = g.add_node("aten::relu", {x}, {"r"}, args({"self"}));
  g.set_outputs({g.node(s).outputs[0], g.node(r).outputs[0]});
  const std::string before = g.dump();
  EXPECT_EQ(run_transform(constant_folding, g), 0u);  // no evaluator given: relu of an input is not constant anyway
  EXPECT_EQ(g.dump(), before);
}

TEST(ConstantFoldingTest, UsesTheEvaluatorWithinTheSizeLimit) {
  struct Doubler : ConstantEvaluator {
    std::optional<std::vector<Tensor>> evaluate(const Node&, const std::vector<Tensor>& in) const override {
      Tensor t = in[0].clone();
      for (std::int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] *= 2;
      return std::vector<Tensor>{t};
    }
  } doubler;
  Graph g;
  ValueId x = g.add_input("x");
  ValueId w = g.add_constant("w", Tensor::from_vector<float>({1, 2}, {2}));
  NodeId t = g.add_node("aten::mul", {w}, {"w2"}, args({"self"}, {{"other", 2.0}}));
  NodeId m = g.add_node("aten::mul", {x, g.node(t).outputs[0]}, {"y"});
  g.set_outputs({g.node(m).outputs[0]});
  Graph small = g;
  TransformContext tight(std::nullopt, &doubler, 4);  // 8 bytes would be made: over the limit
  EXPECT_EQ(constant_folding(small, tight), 0u);
  TransformContext ctx(std::nullopt, &doubler, 1 << 20);
  EXPECT_EQ(constant_folding(g, ctx), 1u);
  const Value& folded = g.value(g.node(m).inputs[1]);
  EXPECT_EQ(folded.data.data_as<float>()[1], 4.0f);
}

}  // namespace
}  // namespace tracegraph
