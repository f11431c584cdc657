#include "tracegraph/op_table.h"

#include "test_util.h"

namespace tracegraph {
namespace {

Attributes attrs(std::initializer_list<std::pair<const char*, AttributeValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}

TEST(OpTableTest, MapsTheFormatsNamesToCanonicalOps) {
  Graph g;
  ValueId x = g.add_input("x");
  auto canon = [&](const std::string& op, Attributes a = {}) {
    return canonical_op(g.node(g.add_node(op, {x}, {""}, a)));
  };
  EXPECT_EQ(canon("aten::sigmoid_")->name, "sigmoid");
  EXPECT_EQ(canon("aten::clip", attrs({{"min", 0.0}, {"max", 1.0}}))->attributes.get_float("max"), 1.0);
  EXPECT_EQ(canon("aten::_convolution", attrs({{"transposed", true}}))->name, "conv_transpose");
  EXPECT_EQ(canon("aten::conv3d")->name, "conv");
  EXPECT_EQ(canon("aten::_softmax", attrs({{"dim", std::int64_t{1}}}))->attributes.get_int("dim"), 1);
  EXPECT_FALSE(canon("aten::frobnicate").has_value());
  EXPECT_EQ(canon("aten::_to_copy")->name, "cast");     // not a "_copy" variant of "_to"
  EXPECT_EQ(canon("aten.view_copy.default")->name, "view");
  EXPECT_EQ(canon("aten::adaptive_max_pool2d")->name, "adaptive_max_pool");
  EXPECT_EQ(canon("aten::upsample_linear1d")->name, "upsample");
  // Every op the table lists (docs/ops.md) has a canonical form.
  for (const std::string& op : known_ops()) EXPECT_TRUE(canon("aten::" + op).has_value()) << op;
  EXPECT_TRUE(is_inplace_op("aten::add_"));
  EXPECT_FALSE(is_inplace_op("aten::__iand__"));
  EXPECT_FALSE(is_inplace_op("aten::relu"));
  EXPECT_EQ(functional_op_name("aten::clamp_"), "aten::clamp");
}

TEST(OpTableTest, TheSpatialRankAnOpsNameGives) {
  EXPECT_EQ(named_spatial_rank("aten::max_pool3d_with_indices"), 3u);
  EXPECT_EQ(named_spatial_rank("aten.avg_pool2d_backward.default"), 2u);
  EXPECT_EQ(named_spatial_rank("aten::upsample_nearest1d"), 1u);
  EXPECT_EQ(named_spatial_rank("grid_sampler_2d"), 2u);
  EXPECT_EQ(named_spatial_rank("aten::conv_transpose3d"), 3u);
  EXPECT_FALSE(named_spatial_rank("aten::_convolution"));
  EXPECT_FALSE(named_spatial_rank("aten::relu"));
}

}  // namespace
}  // namespace tracegraph
