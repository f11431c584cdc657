#include "sdk/transforms/transform_test_util.h"
#include "tracegraph/activation.h"

namespace tracegraph {
namespace {

using testing::args;
using testing::run_transform;
using testing::typed;

NodeId conv_then(Graph& g, const char* act, Attributes act_attrs) {
  ValueId x = g.add_input("x", DType::kFloat32, symbolic({1, 1, 4, 4}));
  ValueId w = g.add_constant("w", Tensor::zeros(DType::kFloat32, {2, 1, 1, 1}));
  NodeId conv = g.add_node("aten::conv2d", {x, w}, {typed("c", {1, 2, 4, 4})}, args({"input", "weight"}));
  NodeId a = g.add_node(act, {g.node(conv).outputs[0]}, {typed("y", {1, 2, 4, 4})}, std::move(act_attrs));
  g.set_outputs({g.node(a).outputs[0]});
  return conv;
}

// conv -> hardtanh(0, 6)  ->  conv {fused_activation="clip", fused_min=0, fused_max=6}
TEST(ActivationFusionTest, FusesEachActivationIntoTheConvolution) {
  for (const char* act : {"aten::relu", "aten::sigmoid", "aten::tanh", "aten::hardswish", "aten::silu", "aten::relu6"}) {
    Graph g;
    NodeId conv = conv_then(g, act, args({"self"}));
    EXPECT_EQ(run_transform(activation_fusion, g), 1u) << act;
    EXPECT_EQ(g.num_nodes(), 1u);
    EXPECT_TRUE(g.node(conv).attributes.contains(kFusedActivation));
  }
  Graph g;
  NodeId conv = conv_then(g, "aten::hardtanh", args({"self"}, {{"min_val", 0.0}, {"max_val", 6.0}}));
  EXPECT_EQ(run_transform(activation_fusion, g), 1u);
  EXPECT_EQ(g.node(conv).attributes.get_string(kFusedActivation), "clip");
  EXPECT_EQ(g.node(conv).attributes.get_float(kFusedMax), 6.0);
  EXPECT_EQ(output_activation(g)[0].str(), "clip(min=0, max=6)");
}

TEST(ActivationFusionTest, DoesNotFuseWhenTheConvolutionIsReadElsewhereOrTheOpIsNoActivation) {
  Graph shared;
  NodeId conv = conv_then(shared, "aten::relu", args({"self"}));
  shared.add_output(shared.node(conv).outputs[0]);
  EXPECT_EQ(run_transform(activation_fusion, shared), 0u);
  Graph other;
  conv_then(other, "aten::exp", args({"self"}));
  EXPECT_EQ(run_transform(activation_fusion, other), 0u);
  Graph dynamic_clamp;
  ValueId x = dynamic_clamp.add_input("x", DType::kFloat32, symbolic({1, 1, 4, 4}));
  ValueId lo = dynamic_clamp.add_input("lo", DType::kFloat32, symbolic({}));
  ValueId w = dynamic_clamp.add_constant("w", Tensor::zeros(DType::kFloat32, {2, 1, 1, 1}));
  NodeId c = dynamic_clamp.add_node("aten::conv2d", {x, w}, {"c"}, args({"input", "weight"}));
  NodeId k = dynamic_clamp.add_node("aten::clamp", {dynamic_clamp.node(c).outputs[0], lo}, {"y"}, args({"self", "min"}));
  dynamic_clamp.set_outputs({dynamic_clamp.node(k).outputs[0]});
  EXPECT_EQ(run_transform(activation_fusion, dynamic_clamp), 0u);
}

// conv -> add(conv, x) -> relu: the residual add takes the clamp; alpha != 1,
// a constant operand or a non-clamp activation leave it alone.
TEST(ActivationFusionTest, FusesAClampIntoAResidualAdd) {
  auto residual = [](const char* act, Attributes add_attrs, bool constant_operand) {
    Graph g;
    ValueId x = g.add_input("x", DType::kFloat32, symbolic({1, 2, 4, 4}));
    ValueId w = g.add_constant("w", Tensor::zeros(DType::kFloat32, {2, 2, 1, 1}));
    NodeId conv = g.add_node("aten::conv2d", {x, w}, {typed("c", {1, 2, 4, 4})}, args({"input", "weight"}));
    ValueId other = constant_operand ? g.add_constant("k", Tensor::zeros(DType::kFloat32, {1, 2, 4, 4})) : x;
    NodeId add = g.add_node("aten::add", {g.node(conv).outputs[0], other}, {typed("s", {1, 2, 4, 4})}, std::move(add_attrs));
    NodeId a = g.add_node(act, {g.node(add).outputs[0]}, {typed("y", {1, 2, 4, 4})}, args({"self"}));
    g.set_outputs({g.node(a).outputs[0]});
    const std::size_t rewrites = run_transform(activation_fusion, g);
    return std::make_tuple(rewrites, g.node(add).attributes.get_string(kFusedActivation), output_activation(g)[0].str());
  };
  const auto [fused, kind, activation] = residual("aten::relu", args({"self", "other"}, {{"alpha", std::int64_t{1}}}), false);
  EXPECT_EQ(fused, 1u);
  EXPECT_EQ(kind, "relu");
  EXPECT_EQ(activation, "relu");
  EXPECT_EQ(std::get<1>(residual("aten::relu6", args({"self", "other"}), false)), "clip");
  EXPECT_EQ(std::get<0>(residual("aten::relu", args({"self", "other"}, {{"alpha", 2.0}}), false)), 0u);
  EXPECT_EQ(std::get<0>(residual("aten::sigmoid", args({"self", "other"}), false)), 0u);
  EXPECT_EQ(std::get<0>(residual("aten::relu", args({"self", "other"}), true)), 0u);
}

}  // namespace
}  // namespace tracegraph
