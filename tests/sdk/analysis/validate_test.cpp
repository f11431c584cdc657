// PyTorch's rules for attributes, checked before a backend sees the graph:
// each broken rule is a typed error naming the node, the attribute and the
// rule (the rows of a hostile file: padding, stride, dilation, groups, ...).
#include "tracegraph/validate.h"

#include "test_util.h"
#include "tracegraph/op_table.h"
#include "tracegraph/transforms/transforms.h"

namespace tracegraph {
namespace {

using Ints = std::vector<std::int64_t>;

// x [1, 4, 16, 16] -> aten::conv2d(x, w [8, 4, 3, 3]) with the given attributes.
Graph conv(Attributes a, Shape weight = {8, 4, 3, 3}, Shape input = {1, 4, 16, 16}, std::string op = "aten::conv2d") {
  Graph g;
  const ValueId x = g.add_input("x", DType::kFloat32, symbolic(input));
  const ValueId w = g.add_constant("w", Tensor::zeros(DType::kFloat32, weight));
  a.set(std::string(kArgNamesAttribute), std::vector<std::string>{"input", "weight"});
  const NodeId n = g.add_node(op, {x, w}, {"y"}, a, "conv");
  g.set_outputs({g.node(n).outputs[0]});
  return g;
}
Attributes conv_attrs(Ints stride, Ints padding, Ints dilation, std::int64_t groups) {
  Attributes a;
  a.set("stride", stride);
  a.set("padding", padding);
  a.set("dilation", dilation);
  a.set("groups", groups);
  return a;
}

Graph unary(const std::string& op, Attributes a, Shape input = {2, 3, 8, 8}) {
  Graph g;
  const ValueId x = g.add_input("x", DType::kFloat32, symbolic(input));
  a.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self"});
  const NodeId n = g.add_node(op, {x}, {"y"}, a, "op");
  g.set_outputs({g.node(n).outputs[0]});
  return g;
}
Attributes attrs(std::initializer_list<std::pair<const char*, AttributeValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}

// The one decoder of arguments: what the file wrote, read as the schema's type.
TEST(ValidateTest, ArgumentsAreReadAsTheirSchemasType) {
  Graph g;
  const ValueId x = g.add_input("x");
  const NodeId n = g.add_node("aten::max_pool2d", {x}, {"y"},
                              attrs({{"kernel_size", std::int64_t{3}}, {"stride", Ints{2}}, {"ceil_mode", std::int64_t{1}},
                                     {"eps", std::int64_t{1}}, {"mode", std::string("x")}, {"value", true}}),
                              "pool");
  const Node& node = g.node(n);
  EXPECT_EQ(arg_ints(node, "kernel_size"), (Ints{3}));  // int[2] written as one int
  EXPECT_EQ(arg_int(node, "stride"), 2);                // a one-element list where an int is expected
  EXPECT_EQ(arg_bool(node, "ceil_mode"), true);         // 0/1 where a bool is expected
  EXPECT_EQ(arg_float(node, "eps"), 1.0);
  EXPECT_EQ(arg_float(node, "value"), 1.0);  // a Scalar may be a bool
  EXPECT_EQ(arg_int(node, "absent"), std::nullopt);
  EXPECT_TG_ERROR(arg_ints(node, "mode"), ErrorCode::kSchema, "node 'pool' (aten::max_pool2d): argument 'mode' is string where a list of ints is expected");
}

TEST(ValidateTest, AGoodConvolutionPasses) {
  EXPECT_NO_THROW(validate_attributes(conv(conv_attrs({1, 1}, {1, 1}, {1, 1}, 1))));
  EXPECT_NO_THROW(validate_attributes(conv(conv_attrs({2}, {0}, {2}, 2), {8, 2, 3, 3})));  // int[2] as one int, grouped
}

TEST(ValidateTest, ConvolutionsFollowPyTorchsRules) {
  EXPECT_TG_ERROR(validate_attributes(conv(conv_attrs({0, 0}, {1, 1}, {1, 1}, 1))), ErrorCode::kInvalidArgument,
                  "node 'conv' (aten::conv2d): attribute 'stride' [0, 0]: each must be positive");
  EXPECT_TG_ERROR(validate_attributes(conv(conv_attrs({-1, 1}, {1, 1}, {1, 1}, 1))), ErrorCode::kInvalidArgument, "'stride' [-1, 1]");
  EXPECT_TG_ERROR(validate_attributes(conv(conv_attrs({1, 1}, {1, 1}, {0, 0}, 1))), ErrorCode::kInvalidArgument, "'dilation' [0, 0]");
  EXPECT_TG_ERROR(validate_attributes(conv(conv_attrs({1, 1}, {-5, -5}, {1, 1}, 1))), ErrorCode::kInvalidArgument,
                  "'padding' [-5, -5]: negative padding is not supported");
  EXPECT_TG_ERROR(validate_attributes(conv(conv_attrs({1, 1}, {1, 1}, {1, 1}, 0))), ErrorCode::kInvalidArgument, "'groups' 0");
  EXPECT_TG_ERROR(validate_attributes(conv(conv_attrs({1, 1}, {1, 1}, {1, 1}, 3))), ErrorCode::kShapeMismatch, "not divisible by groups=3");
  EXPECT_TG_ERROR(validate_attributes(conv(conv_attrs({1, 1}, {1, 1}, {1, 1}, 1), {8, 3, 3, 3})), ErrorCode::kShapeMismatch,
                  "has 4 channels; weight [8, 3, 3, 3] with groups=1 expects 3");
  EXPECT_TG_ERROR(validate_attributes(conv(conv_attrs({1, 1, 1}, {1, 1}, {1, 1}, 1))), ErrorCode::kSchema,
                  "'stride' [1, 1, 1] has 3 entries for 2 spatial dims");
  EXPECT_TG_ERROR(validate_attributes(conv(conv_attrs({1, 1}, {0, 0}, {1, 1}, 1), {8, 4, 3, 3}, {1, 4, 2, 16})), ErrorCode::kShapeMismatch,
                  "the dilated kernel (3) is larger than the padded input (2)");
  EXPECT_TG_ERROR(validate_attributes(conv(conv_attrs({1, 1}, {0, 0}, {1, 1}, 1), {8, 4, 3, 3}, {1, 4, 16, 16, 16})), ErrorCode::kShapeMismatch,
                  "for a 2D convolution");
}

TEST(ValidateTest, TransposedConvolutionsBoundTheirOutputPadding) {
  Attributes a = conv_attrs({2, 2}, {0, 0}, {1, 1}, 1);
  a.set("output_padding", Ints{1, 1});
  EXPECT_NO_THROW(validate_attributes(conv(a, {4, 8, 2, 2}, {1, 4, 16, 16}, "aten::conv_transpose2d")));
  a.set("output_padding", Ints{2, 0});
  EXPECT_TG_ERROR(validate_attributes(conv(a, {4, 8, 2, 2}, {1, 4, 16, 16}, "aten::conv_transpose2d")), ErrorCode::kInvalidArgument,
                  "'output_padding' [2, 0]: each must be smaller than stride or dilation");
  Attributes general = conv_attrs({1, 1}, {0, 0}, {1, 1}, 1);
  general.set("transposed", true);
  general.set("output_padding", Ints{0, 0});
  EXPECT_TG_ERROR(validate_attributes(conv(general, {5, 8, 2, 2}, {1, 4, 16, 16}, "aten::_convolution")), ErrorCode::kShapeMismatch,
                  "has 4 channels");
}

TEST(ValidateTest, PoolingWindowsFitTheirPaddedInput) {
  const Attributes good = attrs({{"kernel_size", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"dilation", Ints{1, 1}}});
  EXPECT_NO_THROW(validate_attributes(unary("aten::max_pool2d", good)));
  EXPECT_NO_THROW(validate_attributes(unary("aten::max_pool2d", attrs({{"kernel_size", Ints{2}}, {"stride", Ints{}}}))));  // stride = kernel
  EXPECT_TG_ERROR(validate_attributes(unary("aten::max_pool2d", attrs({{"kernel_size", Ints{0, 2}}}))), ErrorCode::kInvalidArgument,
                  "'kernel_size' [0, 2]");
  EXPECT_TG_ERROR(validate_attributes(unary("aten::max_pool2d", attrs({{"kernel_size", Ints{2, 2}}, {"padding", Ints{2, 2}}}))),
                  ErrorCode::kInvalidArgument, "must be at most half of the kernel size");
  // Half the kernel, dilated or not, as torch 2.14's max_pool2d checks (a
  // dilated window of 7 does not allow a padding of 2 for a kernel of 2).
  EXPECT_TG_ERROR(validate_attributes(unary("aten::max_pool2d", attrs({{"kernel_size", Ints{2, 2}}, {"padding", Ints{2, 1}}, {"dilation", Ints{3, 1}}}))),
                  ErrorCode::kInvalidArgument, "must be at most half of the kernel size");
  EXPECT_TG_ERROR(validate_attributes(unary("aten::avg_pool2d", attrs({{"kernel_size", Ints{3, 3}}, {"stride", Ints{0, 1}}}))),
                  ErrorCode::kInvalidArgument, "'stride' [0, 1]");
  EXPECT_TG_ERROR(validate_attributes(unary("aten::max_pool1d", attrs({{"kernel_size", Ints{9}}}), {1, 3, 5})), ErrorCode::kShapeMismatch,
                  "the pooling window [9] is larger than the padded input");
}

// A file's graph may carry activation_fusion's attribute: only an activation
// that fuses (the list both backends run), never one a backend would skip.
TEST(ValidateTest, AFusedActivationIsOneThatFuses) {
  for (std::string_view name : kFusibleActivations) {
    Attributes a = conv_attrs({1, 1}, {1, 1}, {1, 1}, 1);
    a.set(std::string(kFusedActivation), std::string(name));
    EXPECT_NO_THROW(validate_attributes(conv(a))) << name;
  }
  Attributes a = conv_attrs({1, 1}, {1, 1}, {1, 1}, 1);
  a.set(std::string(kFusedActivation), std::string("hardsigmoid"));
  EXPECT_TG_ERROR(validate_attributes(conv(a)), ErrorCode::kSchema, "node 'conv' (aten::conv2d): attribute 'fused_activation' 'hardsigmoid'");
  a.set(std::string(kFusedActivation), std::int64_t{1});
  EXPECT_TG_ERROR(validate_attributes(conv(a)), ErrorCode::kSchema, "is not a string");
}

TEST(ValidateTest, ResizesSlicesPermutationsAndDims) {
  EXPECT_TG_ERROR(validate_attributes(unary("aten::upsample_nearest2d", attrs({{"output_size", Ints{0, 4}}}))), ErrorCode::kInvalidArgument,
                  "'output_size' [0, 4]");
  EXPECT_TG_ERROR(validate_attributes(unary("aten::upsample_bilinear2d", attrs({{"scale_factors", std::vector<double>{2.0, -1.0}}}))),
                  ErrorCode::kInvalidArgument, "'scale_factors'");
  EXPECT_TG_ERROR(validate_attributes(unary("aten::slice", attrs({{"dim", std::int64_t{1}}, {"step", std::int64_t{0}}}))),
                  ErrorCode::kInvalidArgument, "slice step must be positive");
  EXPECT_NO_THROW(validate_attributes(unary("aten::permute", attrs({{"dims", Ints{0, 2, 3, 1}}}))));
  EXPECT_TG_ERROR(validate_attributes(unary("aten::permute", attrs({{"dims", Ints{0, 2, 2, 1}}}))), ErrorCode::kInvalidArgument,
                  "each dim must appear once");
  EXPECT_TG_ERROR(validate_attributes(unary("aten::permute", attrs({{"dims", Ints{0, 1}}}))), ErrorCode::kSchema, "rank 4");
  EXPECT_TG_ERROR(validate_attributes(unary("aten::softmax", attrs({{"dim", std::int64_t{4}}}))), ErrorCode::kOutOfRange,
                  "'dim' 4 is out of range for a tensor of rank 4");
  EXPECT_TG_ERROR(validate_attributes(unary("aten::select", attrs({{"dim", std::int64_t{1}}, {"index", std::int64_t{3}}}))),
                  ErrorCode::kOutOfRange, "'index' 3 is out of range for a dim of 3");
  EXPECT_TG_ERROR(validate_attributes(unary("aten::pad", attrs({{"pad", Ints{1, 1, 1}}}))), ErrorCode::kSchema, "'pad' [1, 1, 1]");
  EXPECT_NO_THROW(validate_attributes(unary("aten::softmax", attrs({{"dim", std::int64_t{-1}}}))));
}

}  // namespace
}  // namespace tracegraph
