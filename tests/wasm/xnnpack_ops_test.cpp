// One op at a time, with the geometry the test models do not reach (strides,
// padding, dilation and groups in 3D, overlapping transposed convolutions,
// concatenations of more than five inputs, strided slices, resizes to a size,
// layout changes), each against the LibTorch backend on the same graph.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <functional>

#include "native/test_models.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/op_table.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/xnnpack/backend.h"

namespace tracegraph::xnnpack {
namespace {

using tracegraph::testing::max_relative_error;

// Builds graphs the way the TorchScript reader writes them: aten op names,
// the overload and arg_names attributes, constant arguments as attributes.
class Builder {
 public:
  ValueId input(Shape shape) {
    const ValueId v = g.add_input("x" + std::to_string(inputs.size()), DType::kFloat32, symbolic(shape));
    inputs.push_back(native::from_aten(at::randn(at::IntArrayRef(shape), at::TensorOptions().dtype(at::kFloat))));
    return v;
  }
  ValueId constant(Shape shape, double scale = 0.3) {
    return g.add_constant("c" + std::to_string(counter++), native::from_aten(at::randn(at::IntArrayRef(shape)) * scale));
  }
  ValueId positive_constant(Shape shape) {
    return g.add_constant("c" + std::to_string(counter++), native::from_aten(at::rand(at::IntArrayRef(shape)) + 0.5));
  }
  ValueId op(const std::string& name, const std::string& overload, std::vector<std::pair<std::string, ValueId>> args,
             Attributes attrs = {}) {
    std::vector<std::string> names;
    std::vector<ValueId> ins;
    for (auto& [n, v] : args) names.push_back(n), ins.push_back(v);
    attrs.set(std::string(kArgNamesAttribute), names);
    if (!overload.empty()) attrs.set(std::string(kOverloadAttribute), overload);
    const NodeId id = g.add_node("aten::" + name, ins, {NewValue{}}, std::move(attrs), name + "_" + std::to_string(counter++));
    return g.node(id).outputs[0];
  }
  Graph g;
  std::vector<Tensor> inputs;
  int counter = 0;
};

Attributes attrs(std::initializer_list<std::pair<std::string, AttributeValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}
using Ints = std::vector<std::int64_t>;

struct OpCase {
  std::string name;
  std::function<void(Builder&)> build;  // adds nodes and sets the outputs
};
void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

std::vector<OpCase> op_cases() {
  std::vector<OpCase> out;
  out.push_back({"conv3d_strided_padded_grouped", [](Builder& b) {
    const ValueId x = b.input({2, 4, 9, 10, 11});
    b.g.set_outputs({b.op("conv3d", "", {{"input", x}, {"weight", b.constant({6, 2, 3, 3, 3})}, {"bias", b.constant({6})}},
                          attrs({{"stride", Ints{2, 1, 2}}, {"padding", Ints{1, 1, 0}}, {"dilation", Ints{1, 1, 1}}, {"groups", std::int64_t{2}}}))});
  }});
  out.push_back({"conv3d_dilated_depth_no_bias", [](Builder& b) {
    const ValueId x = b.input({1, 3, 12, 8, 8});
    b.g.set_outputs({b.op("conv3d", "", {{"input", x}, {"weight", b.constant({5, 3, 3, 1, 3})}},
                          attrs({{"stride", Ints{1, 1, 1}}, {"padding", Ints{2, 0, 1}}, {"dilation", Ints{2, 1, 1}}, {"groups", std::int64_t{1}}}))});
  }});
  out.push_back({"conv_transpose3d_overlapping", [](Builder& b) {
    const ValueId x = b.input({1, 4, 5, 6, 7});
    b.g.set_outputs({b.op("conv_transpose3d", "input", {{"input", x}, {"weight", b.constant({4, 3, 3, 3, 3})}, {"bias", b.constant({3})}},
                          attrs({{"stride", Ints{2, 2, 2}}, {"padding", Ints{1, 1, 1}}, {"output_padding", Ints{1, 0, 1}},
                                 {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1, 1}}}))});
  }});
  out.push_back({"conv_transpose2d_grouped", [](Builder& b) {
    const ValueId x = b.input({2, 4, 6, 5});
    b.g.set_outputs({b.op("conv_transpose2d", "input", {{"input", x}, {"weight", b.constant({4, 3, 4, 4})}, {"bias", b.constant({6})}},
                          attrs({{"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"output_padding", Ints{0, 0}},
                                 {"groups", std::int64_t{2}}, {"dilation", Ints{1, 1}}}))});
  }});
  out.push_back({"max_pool3d_padded", [](Builder& b) {
    const ValueId x = b.input({1, 3, 9, 8, 7});
    b.g.set_outputs({b.op("max_pool3d", "", {{"self", x}},
                          attrs({{"kernel_size", Ints{3, 3, 3}}, {"stride", Ints{2, 2, 2}}, {"padding", Ints{1, 1, 1}},
                                 {"dilation", Ints{1, 1, 1}}, {"ceil_mode", false}}))});
  }});
  out.push_back({"upsample_nearest3d_by_two", [](Builder& b) {
    const ValueId x = b.input({1, 3, 3, 4, 5});
    b.g.set_outputs({b.op("upsample_nearest3d", "vec", {{"input", x}}, attrs({{"scale_factors", std::vector<double>{2.0, 2.0, 2.0}}}))});
  }});
  out.push_back({"upsample_nearest2d_to_a_size", [](Builder& b) {
    const ValueId x = b.input({2, 5, 3, 4});
    b.g.set_outputs({b.op("upsample_nearest2d", "vec", {{"input", x}}, attrs({{"output_size", Ints{7, 9}}}))});
  }});
  out.push_back({"cat_seven_channels_last", [](Builder& b) {
    const ValueId x = b.input({1, 2, 4, 5, 6});
    std::vector<std::pair<std::string, ValueId>> parts;
    for (int i = 0; i < 7; ++i)  // relu keeps channels-last storage; cat of seven
      parts.push_back({"tensors", b.op("conv3d", "", {{"input", x}, {"weight", b.constant({1 + i % 3, 2, 1, 1, 1})}},
                                       attrs({{"stride", Ints{1, 1, 1}}, {"padding", Ints{0, 0, 0}}, {"dilation", Ints{1, 1, 1}}, {"groups", std::int64_t{1}}}))});
    b.g.set_outputs({b.op("cat", "", parts, attrs({{"dim", std::int64_t{1}}}))});
  }});
  out.push_back({"cat_along_depth_mixed_layouts", [](Builder& b) {
    const ValueId x = b.input({1, 3, 2, 4, 4});
    const ValueId y = b.input({1, 3, 5, 4, 4});
    const ValueId r = b.op("relu", "", {{"self", y}});
    const ValueId p = b.op("max_pool3d", "", {{"self", b.input({1, 3, 6, 8, 8})}},
                           attrs({{"kernel_size", Ints{2, 2, 2}}, {"stride", Ints{2, 2, 2}}, {"padding", Ints{0, 0, 0}},
                                  {"dilation", Ints{1, 1, 1}}, {"ceil_mode", false}}));
    b.g.set_outputs({b.op("cat", "", {{"tensors", x}, {"tensors", r}, {"tensors", p}}, attrs({{"dim", std::int64_t{-3}}}))});
  }});
  out.push_back({"slice_with_step_on_channels_last", [](Builder& b) {
    const ValueId x = b.input({1, 4, 9, 9});
    const ValueId c = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({3, 4, 3, 3})}, {"bias", b.constant({3})}},
                           attrs({{"stride", Ints{1, 1}}, {"padding", Ints{1, 1}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}));
    const ValueId s = b.op("slice", "Tensor", {{"self", c}}, attrs({{"dim", std::int64_t{3}}, {"start", std::int64_t{1}}, {"end", std::int64_t{-1}}, {"step", std::int64_t{2}}}));
    b.g.set_outputs({b.op("slice", "Tensor", {{"self", s}}, attrs({{"dim", std::int64_t{1}}, {"start", std::int64_t{1}}, {"end", std::int64_t{3}}, {"step", std::int64_t{1}}}))});
  }});
  out.push_back({"mean_and_softmax", [](Builder& b) {
    const ValueId x = b.input({2, 6, 5, 7});
    const ValueId c = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({4, 6, 1, 1})}, {"bias", b.constant({4})}},
                           attrs({{"stride", Ints{1, 1}}, {"padding", Ints{0, 0}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}));
    const ValueId s = b.op("softmax", "int", {{"self", c}}, attrs({{"dim", std::int64_t{1}}}));
    const ValueId m = b.op("mean", "dim", {{"self", c}}, attrs({{"dim", Ints{2, 3}}, {"keepdim", false}}));
    const ValueId last = b.op("softmax", "int", {{"self", c}}, attrs({{"dim", std::int64_t{-1}}}));
    b.g.set_outputs({s, m, last});
  }});
  out.push_back({"broadcast_add_mul_and_batch_norm", [](Builder& b) {
    const ValueId x = b.input({2, 3, 4, 5, 6});
    const ValueId a = b.op("add", "Tensor", {{"self", x}, {"other", b.constant({3, 1, 1, 1})}}, attrs({{"alpha", std::int64_t{1}}}));
    const ValueId m = b.op("mul", "Tensor", {{"self", a}, {"other", b.constant({6})}});
    const ValueId bn = b.op("batch_norm", "", {{"input", m}, {"weight", b.constant({3})}, {"bias", b.constant({3})},
                                               {"running_mean", b.constant({3})}, {"running_var", b.positive_constant({3})}},
                            attrs({{"training", false}, {"momentum", 0.1}, {"eps", 1e-5}, {"cudnn_enabled", true}}));
    b.g.set_outputs({bn});
  }});
  out.push_back({"flatten_channels_last_then_linear", [](Builder& b) {
    const ValueId x = b.input({2, 3, 4, 4});
    const ValueId c = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({5, 3, 3, 3})}, {"bias", b.constant({5})}},
                           attrs({{"stride", Ints{1, 1}}, {"padding", Ints{1, 1}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}));
    const ValueId f = b.op("flatten", "using_ints", {{"self", c}}, attrs({{"start_dim", std::int64_t{1}}, {"end_dim", std::int64_t{-1}}}));
    b.g.set_outputs({b.op("linear", "", {{"input", f}, {"weight", b.constant({7, 80})}, {"bias", b.constant({7})}})});
  }});
  out.push_back({"avg_pool_and_adaptive_pool", [](Builder& b) {
    const ValueId x = b.input({1, 4, 12, 10});
    const ValueId a = b.op("avg_pool2d", "", {{"self", x}},
                           attrs({{"kernel_size", Ints{2, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{0, 0}}, {"ceil_mode", false}, {"count_include_pad", true}}));
    b.g.set_outputs({b.op("adaptive_avg_pool2d", "", {{"self", a}}, attrs({{"output_size", Ints{3, 5}}}))});
  }});
  // Permutations, of a channels-last tensor (after a convolution) and of odd ranks and sizes.
  out.push_back({"permute_of_channels_last_rank4", [](Builder& b) {
    const ValueId x = b.input({2, 5, 3, 7});
    const ValueId c = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({3, 5, 1, 1})}},
                           attrs({{"stride", Ints{1, 1}}, {"padding", Ints{0, 0}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}));
    b.g.set_outputs({b.op("permute", "", {{"self", c}}, attrs({{"dims", Ints{0, 2, 3, 1}}}))});
  }});
  out.push_back({"permute_rank3_size1_dim", [](Builder& b) {
    const ValueId x = b.input({3, 1, 5});
    b.g.set_outputs({b.op("permute", "", {{"self", x}}, attrs({{"dims", Ints{2, 0, -2}}}))});
  }});
  out.push_back({"transpose_negative_dims_and_t", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5});
    const ValueId y = b.input({3, 7});
    b.g.set_outputs({b.op("transpose", "int", {{"self", x}}, attrs({{"dim0", std::int64_t{-1}}, {"dim1", std::int64_t{0}}})),
                     b.op("t", "", {{"self", y}})});
  }});
  // torch.export's linear: addmm(bias, x, permute(weight, [1, 0])), spelled as torch.export spells it.
  out.push_back({"addmm_of_a_permuted_weight_exported_names", [](Builder& b) {
    const ValueId x = b.input({4, 7});
    const ValueId w = b.constant({5, 7});
    const ValueId bias = b.constant({5});
    Attributes p = attrs({{"dims", Ints{1, 0}}, {std::string(kArgNamesAttribute), std::vector<std::string>{"self"}}});
    const ValueId wt = b.g.node(b.g.add_node("aten.permute.default", {w}, {NewValue{}}, p, "permute")).outputs[0];
    Attributes a = attrs({{std::string(kArgNamesAttribute), std::vector<std::string>{"self", "mat1", "mat2"}}});
    b.g.set_outputs({b.g.node(b.g.add_node("aten.addmm.default", {bias, x, wt}, {NewValue{}}, a, "addmm")).outputs[0]});
  }});
  return out;
}

class XnnpackOpTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(XnnpackOpTest, MatchesLibTorch) {
  at::manual_seed(7);
  Builder b;
  GetParam().build(b);
  Graph copy = b.g;
  TracedGraph reference(std::move(copy), std::nullopt, std::nullopt, native::make_libtorch_backend());
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  reference.finalize();
  g.finalize();
  const auto want = reference.run(b.inputs);
  const auto got = g.run(b.inputs);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
    EXPECT_LE(max_relative_error(got[i], want[i]), 1e-5) << "output " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(op_cases()), [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tracegraph::xnnpack
