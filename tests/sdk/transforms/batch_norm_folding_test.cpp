#include <cmath>

#include "sdk/transforms/transform_test_util.h"

namespace tracegraph {
namespace {

using testing::args;
using testing::run_transform;
using testing::typed;

struct ConvBn {
  Graph g;
  NodeId conv, bn;
  ConvBn(bool bias = true, bool training = false) {
    ValueId x = g.add_input("x", DType::kFloat32, symbolic({1, 1, 4, 4}));
    ValueId w = g.add_constant("w", Tensor::from_vector<float>({1, 2}, {2, 1, 1, 1}));
    std::vector<ValueId> ins{x, w};
    std::vector<std::string> names{"input", "weight"};
    if (bias) {
      ins.push_back(g.add_constant("b", Tensor::from_vector<float>({0.5f, -1}, {2})));
      names.push_back("bias");
    }
    conv = g.add_node("aten::conv2d", ins, {typed("c", {1, 2, 4, 4})}, args(names));
    ValueId gamma = g.add_constant("gamma", Tensor::from_vector<float>({2, 3}, {2}));
    ValueId beta = g.add_constant("beta", Tensor::from_vector<float>({0.25f, 0}, {2}));
    ValueId mean = g.add_constant("mean", Tensor::from_vector<float>({1, -1}, {2}));
    ValueId var = g.add_constant("var", Tensor::from_vector<float>({4, 0.25f}, {2}));
    bn = g.add_node("aten::batch_norm", {g.node(conv).outputs[0], gamma, beta, mean, var}, {typed("y", {1, 2, 4, 4})},
                    args({"input", "weight", "bias", "running_mean", "running_var"}, {{"training", training}, {"eps", 0.0}}));
    g.set_outputs({g.node(bn).outputs[0]});
  }
};

// conv(x, w, b) -> batch_norm(gamma, beta, mean, var)  ->  conv(x, w', b')
//   w' = w * gamma / sqrt(var + eps),  b' = (b - mean) * gamma / sqrt(var + eps) + beta
TEST(BatchNormFoldingTest, FoldsIntoTheConvolution) {
  ConvBn t;
  EXPECT_EQ(run_transform(batch_norm_folding, t.g), 1u);
  EXPECT_FALSE(t.g.is_live(t.bn));
  const Node& conv = t.g.node(t.conv);
  const Tensor& w = t.g.value(conv.inputs[1]).data;
  const Tensor& b = t.g.value(conv.inputs[2]).data;
  EXPECT_FLOAT_EQ(w.data_as<float>()[0], 1 * 2 / 2.0f);
  EXPECT_FLOAT_EQ(w.data_as<float>()[1], 2 * 3 / 0.5f);
  EXPECT_FLOAT_EQ(b.data_as<float>()[0], (0.5f - 1) * 2 / 2.0f + 0.25f);
  EXPECT_FLOAT_EQ(b.data_as<float>()[1], (-1 + 1) * 3 / 0.5f + 0);
  EXPECT_EQ(t.g.outputs()[0], conv.outputs[0]);
}

TEST(BatchNormFoldingTest, AddsABiasWhenTheConvolutionHasNone) {
  ConvBn t(/*bias=*/false);
  EXPECT_EQ(run_transform(batch_norm_folding, t.g), 1u);
  const Node& conv = t.g.node(t.conv);
  ASSERT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(inputs_for_arg(conv, "bias").size(), 1u);
  EXPECT_FLOAT_EQ(t.g.value(conv.inputs[2]).data.data_as<float>()[0], -1 * 2 / 2.0f + 0.25f);
}

TEST(BatchNormFoldingTest, DoesNotFoldATrainingNormOrASharedOutput) {
  ConvBn training(true, /*training=*/true);
  EXPECT_EQ(run_transform(batch_norm_folding, training.g), 0u);
  ConvBn shared;
  shared.g.add_output(shared.g.node(shared.conv).outputs[0]);  // the conv's own result is also returned
  const std::string before = shared.g.dump();
  EXPECT_EQ(run_transform(batch_norm_folding, shared.g), 0u);
  EXPECT_EQ(shared.g.dump(), before);
}

}  // namespace
}  // namespace tracegraph
