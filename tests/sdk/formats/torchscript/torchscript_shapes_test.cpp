// The shape rules the core TorchScript reader follows (sdk/src/formats/torchscript/torchscript_shapes.h),
// one node at a time with odd shapes: size-1 dims, windows that do not divide,
// channels not a multiple of 4, and the ops they have no rule for.
#include "formats/torchscript/torchscript_shapes.h"

#include <gtest/gtest.h>

#include <map>

#include "tracegraph/op_table.h"

namespace tracegraph::detail {
namespace {

class ShapeRules : public ::testing::Test {
 protected:
  // A tensor input of `shape`.
  ValueId tensor(const Shape& shape) {
    const ValueId v = g_.add_input(g_.unique_value_name("x"));
    known_[v].shape = shape;
    return v;
  }
  // The shape of output `output` of `op` over `inputs` (named `names`) and `attrs`.
  std::optional<Shape> shape(const std::string& op, const std::vector<ValueId>& inputs, const std::vector<std::string>& names,
                             Attributes attrs, std::size_t output = 0, std::size_t outputs = 1) {
    attrs.set(std::string(kArgNamesAttribute), names);
    std::vector<NewValue> outs(outputs);
    const NodeId n = g_.add_node(op, inputs, std::move(outs), std::move(attrs), "n" + std::to_string(nodes_++));
    return infer_shape(g_.node(n), output, [this](ValueId v) { return known_.count(v) ? known_.at(v) : Known{}; });
  }
  Graph g_;
  std::map<ValueId, Known> known_;
  int nodes_ = 0;
};

TEST_F(ShapeRules, ConvolutionsAndPoolings) {
  const ValueId x = tensor({1, 3, 17, 9}), w = tensor({5, 3, 3, 2});
  Attributes conv;
  conv.set("stride", std::vector<std::int64_t>{2});
  conv.set("padding", std::vector<std::int64_t>{1, 0});
  EXPECT_EQ(shape("aten::conv2d", {x, w}, {"input", "weight"}, conv), (Shape{1, 5, 9, 4}));
  Attributes same;
  same.set("padding", std::string("same"));
  EXPECT_EQ(shape("aten::conv2d", {x, w}, {"input", "weight"}, same), (Shape{1, 5, 17, 9}));
  // Transposed: weight [C_in, C_out / groups, k...].
  const ValueId wt = tensor({3, 7, 2, 2});
  Attributes up;
  up.set("stride", std::vector<std::int64_t>{2});
  EXPECT_EQ(shape("aten::conv_transpose2d", {x, wt}, {"input", "weight"}, up), (Shape{1, 7, 34, 18}));
  Attributes pool;
  pool.set("kernel_size", std::vector<std::int64_t>{2});
  EXPECT_EQ(shape("aten::max_pool2d", {x}, {"self"}, pool), (Shape{1, 3, 8, 4}));  // stride defaults to the kernel
  pool.set("ceil_mode", true);
  EXPECT_EQ(shape("aten::max_pool2d", {x}, {"self"}, pool), (Shape{1, 3, 9, 5}));
  Attributes big;
  big.set("kernel_size", std::vector<std::int64_t>{18});
  EXPECT_EQ(shape("aten::max_pool2d", {x}, {"self"}, big), std::nullopt);  // a window wider than the input
}

TEST_F(ShapeRules, ResizesConcatenationsAndViews) {
  const ValueId x = tensor({1, 3, 5, 1, 7});
  Attributes scale;
  scale.set("scale_factors", std::vector<double>{2.0, 2.0, 1.5});
  EXPECT_EQ(shape("aten::upsample_trilinear3d", {x}, {"input"}, scale), (Shape{1, 3, 10, 2, 10}));
  const ValueId y = tensor({1, 2, 5, 1, 7});
  Attributes cat;
  cat.set("dim", std::int64_t{1});
  EXPECT_EQ(shape("aten::cat", {x, y}, {"tensors", "tensors"}, cat), (Shape{1, 5, 5, 1, 7}));
  Attributes flat;
  flat.set("start_dim", std::int64_t{1});
  EXPECT_EQ(shape("aten::flatten", {x}, {"self"}, flat), (Shape{1, 105}));
  Attributes view;
  view.set("size", std::vector<std::int64_t>{-1, 7});
  EXPECT_EQ(shape("aten::view", {x}, {"self"}, view), (Shape{15, 7}));
  Attributes narrow;
  narrow.set("dim", std::int64_t{-1});
  narrow.set("start", std::int64_t{1});
  narrow.set("length", std::int64_t{3});
  EXPECT_EQ(shape("aten::narrow", {x}, {"self"}, narrow), (Shape{1, 3, 5, 1, 3}));
  // chunk: 3 channels in 2 chunks are 2 and 1.
  Attributes chunk;
  chunk.set("chunks", std::int64_t{2});
  chunk.set("dim", std::int64_t{1});
  EXPECT_EQ(shape("aten::chunk", {x}, {"self"}, chunk, 1, 2), (Shape{1, 1, 5, 1, 7}));
}

TEST_F(ShapeRules, BroadcastsAndSizesGivenAsValues) {
  const ValueId x = tensor({2, 1, 3}), y = tensor({4, 1});
  EXPECT_EQ(shape("aten::add", {x, y}, {"self", "other"}, {}), (Shape{2, 4, 3}));
  EXPECT_EQ(shape("aten::mul", {x}, {"self"}, {}), (Shape{2, 1, 3}));  // times a number
  // narrow's length from a value whose number the reader knows (a size).
  const ValueId length = g_.add_input("length");
  known_[length].ints = std::vector<std::int64_t>{2};
  Attributes narrow;
  narrow.set("dim", std::int64_t{2});
  narrow.set("start", std::int64_t{0});
  EXPECT_EQ(shape("aten::narrow", {x, length}, {"self", "length"}, narrow), (Shape{2, 1, 2}));
  const ValueId unknown = g_.add_input("unknown");
  EXPECT_EQ(shape("aten::narrow", {x, unknown}, {"self", "length"}, narrow), std::nullopt);
  EXPECT_EQ(shape("aten::some_op_without_a_rule", {x}, {"self"}, {}), std::nullopt);
}

// What writes in place become (a scatter into self), and the 0-dim tensor a
// traced size computation makes of a number.
TEST_F(ShapeRules, ScattersKeepSelfsShapeAndNumbersBecomeScalars) {
  const ValueId x = tensor({1, 3, 4, 5, 3}), src = tensor({1, 1, 4, 5, 3});
  Attributes slice;
  slice.set("dim", std::int64_t{1});
  slice.set("start", std::int64_t{0});
  slice.set("end", std::int64_t{1});
  EXPECT_EQ(shape("aten::slice_scatter", {x, src}, {"self", "src"}, slice), (Shape{1, 3, 4, 5, 3}));
  const ValueId mask = tensor({1, 1, 4, 1, 3});
  Attributes fill;
  fill.set("value", 0.0);
  EXPECT_EQ(shape("aten::masked_fill", {x, mask}, {"self", "mask"}, fill), (Shape{1, 3, 4, 5, 3}));
  const ValueId number = g_.add_input("n");
  known_[number].ints = std::vector<std::int64_t>{7};
  EXPECT_EQ(shape("prim::NumToTensor", {number}, {"a"}, {}), Shape{});
  EXPECT_EQ(shape("prim::SomethingElse", {number}, {"a"}, {}), std::nullopt);
}

}  // namespace
}  // namespace tracegraph::detail
