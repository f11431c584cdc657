// One op at a time, with the geometry the test models do not reach (strides,
// padding, dilation and groups in 3D, overlapping transposed convolutions,
// concatenations of more than five inputs, strided slices, resizes to a size,
// layout changes), each against the LibTorch backend on the same graph, at 1
// thread and at 3 (the copy kernels' slices split unevenly).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <array>
#include <functional>
#include <limits>
#include <optional>
#include <tuple>

#include "native/test_models.h"
#include "test_util.h"
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
  // An input of another dtype than float32 (token ids, masks), with the values given.
  ValueId typed_input(const at::Tensor& values) {
    const Tensor t = native::from_aten(values);
    const ValueId v = g.add_input("x" + std::to_string(inputs.size()), t.dtype(), symbolic(t.shape()));
    inputs.push_back(t);
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
  // A node of `outputs` outputs (unbind, split, native_layer_norm).
  std::vector<ValueId> ops(const std::string& name, std::vector<std::pair<std::string, ValueId>> args, Attributes attrs, std::size_t outputs) {
    std::vector<std::string> names;
    std::vector<ValueId> ins;
    for (auto& [n, v] : args) names.push_back(n), ins.push_back(v);
    attrs.set(std::string(kArgNamesAttribute), names);
    const NodeId id = g.add_node("aten::" + name, ins, std::vector<NewValue>(outputs), std::move(attrs), name + "_" + std::to_string(counter++));
    return g.node(id).outputs;
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
  // Kernels equal to their strides: a GEMM and the taps put in place.
  out.push_back({"conv_transpose3d_kernel_2_stride_2", [](Builder& b) {
    const ValueId x = b.input({1, 5, 3, 1, 4});
    b.g.set_outputs({b.op("conv_transpose3d", "input", {{"input", x}, {"weight", b.constant({5, 3, 2, 2, 2})}, {"bias", b.constant({3})}},
                          attrs({{"stride", Ints{2, 2, 2}}, {"padding", Ints{0, 0, 0}}, {"output_padding", Ints{0, 0, 0}},
                                 {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1, 1}}}))});
  }});
  out.push_back({"conv_transpose3d_kernel_1_2_3_batch_2_no_bias", [](Builder& b) {
    const ValueId x = b.input({2, 7, 2, 3, 2});
    b.g.set_outputs({b.op("conv_transpose3d", "input", {{"input", x}, {"weight", b.constant({7, 9, 1, 2, 3})}},
                          attrs({{"stride", Ints{1, 2, 3}}, {"padding", Ints{0, 0, 0}}, {"output_padding", Ints{0, 0, 0}},
                                 {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1, 1}}}))});
  }});
  out.push_back({"conv_transpose2d_kernel_3_stride_3_relu", [](Builder& b) {
    const ValueId x = b.input({1, 6, 5, 1});
    b.g.set_outputs({b.op("conv_transpose2d", "input", {{"input", x}, {"weight", b.constant({6, 5, 3, 3})}, {"bias", b.constant({5})}},
                          attrs({{"stride", Ints{3, 3}}, {"padding", Ints{0, 0}}, {"output_padding", Ints{0, 0}},
                                 {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1}}, {"fused_activation", std::string("relu")}}))});
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
  out.push_back({"cat_channels_last_in_slices", [](Builder& b) {
    const ValueId x = b.input({1, 2, 64, 80});  // 5120 pixels of 8 channels: several slices of copies
    std::vector<std::pair<std::string, ValueId>> parts;
    for (std::int64_t c : {3, 5})
      parts.push_back({"tensors", b.op("conv2d", "", {{"input", x}, {"weight", b.constant({c, 2, 1, 1})}},
                                       attrs({{"stride", Ints{1, 1}}, {"padding", Ints{0, 0}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}))});
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
  out.push_back({"crop_in_pieces", [](Builder& b) {
    // A UNet's crop: three slices of a channels-last 3D tensor. Along depth
    // the copy is one block of 82000 floats, cut into uneven pieces for the
    // threads; along height, blocks of 7175; along width, many small ones.
    // Beside it, a slice of the plain input along channels (one block).
    const ValueId x = b.input({1, 2, 12, 40, 41});
    const ValueId c = b.op("conv3d", "", {{"input", x}, {"weight", b.constant({5, 2, 1, 1, 1})}, {"bias", b.constant({5})}},
                           attrs({{"stride", Ints{1, 1, 1}}, {"padding", Ints{0, 0, 0}}, {"dilation", Ints{1, 1, 1}}, {"groups", std::int64_t{1}}}));
    ValueId crop = c;
    for (const auto& [dim, start, end] : std::vector<std::array<std::int64_t, 3>>{{2, 1, 11}, {3, 2, 37}, {4, 3, -2}})
      crop = b.op("slice", "Tensor", {{"self", crop}}, attrs({{"dim", dim}, {"start", start}, {"end", end}, {"step", std::int64_t{1}}}));
    const ValueId channel = b.op("slice", "Tensor", {{"self", x}}, attrs({{"dim", std::int64_t{1}}, {"start", std::int64_t{1}}, {"end", std::int64_t{2}}, {"step", std::int64_t{1}}}));
    b.g.set_outputs({crop, channel});
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
  // ---- portable kernels: odd shapes, size-1 dims, channels not a multiple of 4 ----
  out.push_back({"portable_pointwise_chain", [](Builder& b) {
    const ValueId x = b.input({2, 5, 3, 1});
    ValueId y = b.op("hardsigmoid", "", {{"self", x}});
    y = b.op("silu", "", {{"self", y}});
    y = b.op("gelu", "", {{"self", y}}, attrs({{"approximate", std::string("tanh")}}));
    y = b.op("pow", "Tensor_Scalar", {{"self", y}}, attrs({{"exponent", 3.0}}));
    b.g.set_outputs({b.op("rsub", "Scalar", {{"self", y}}, attrs({{"other", 2.5}, {"alpha", 0.5}}))});
  }});
  out.push_back({"pad_reflect_2d", [](Builder& b) {
    const ValueId x = b.input({1, 3, 5, 7});
    b.g.set_outputs({b.op("pad", "", {{"self", x}}, attrs({{"pad", Ints{2, 1, 0, 3}}, {"mode", std::string("reflect")}}))});
  }});
  out.push_back({"pad_replicate_3d", [](Builder& b) {
    const ValueId x = b.input({1, 2, 3, 4, 5});
    b.g.set_outputs({b.op("pad", "", {{"self", x}}, attrs({{"pad", Ints{1, 2, 0, 1, 2, 0}}, {"mode", std::string("replicate")}}))});
  }});
  out.push_back({"pad_circular_1d", [](Builder& b) {
    const ValueId x = b.input({1, 3, 7});
    b.g.set_outputs({b.op("pad", "", {{"self", x}}, attrs({{"pad", Ints{2, 3}}, {"mode", std::string("circular")}}))});
  }});
  out.push_back({"constant_pad_crop_and_grow", [](Builder& b) {
    const ValueId x = b.input({2, 3, 6, 5});
    b.g.set_outputs({b.op("constant_pad_nd", "", {{"self", x}}, attrs({{"pad", Ints{-1, 2, 1, -2}}, {"value", 0.5}}))});
  }});
  out.push_back({"constant_pad_grow_channels_last_and_5d", [](Builder& b) {
    // after a convolution, so the pad reads a channels-last tensor (XNNPACK's constant pad)
    const ValueId x = b.input({2, 3, 6, 5});
    const ValueId c = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({5, 3, 1, 1})}},
                           attrs({{"stride", Ints{1, 1}}, {"padding", Ints{0, 0}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}));
    const ValueId y = b.input({1, 1, 3, 1, 2});
    b.g.set_outputs({b.op("constant_pad_nd", "", {{"self", c}}, attrs({{"pad", Ints{0, 2, 3, 1}}, {"value", -1.5}})),
                     b.op("constant_pad_nd", "", {{"self", c}}, attrs({{"pad", Ints{1, 0, 0, 0, 2, 1}}, {"value", 0.0}})),
                     b.op("constant_pad_nd", "", {{"self", y}}, attrs({{"pad", Ints{1, 1, 0, 2, 1, 0}}, {"value", 2.0}}))});
  }});
  out.push_back({"upsample_bilinear_xnnpack_sizes_and_exact_factors", [](Builder& b) {
    const ValueId x = b.input({2, 5, 7, 4});
    b.g.set_outputs({b.op("upsample_bilinear2d", "", {{"self", x}}, attrs({{"output_size", Ints{3, 9}}, {"align_corners", false}})),
                     b.op("upsample_bilinear2d", "", {{"self", x}}, attrs({{"output_size", Ints{13, 1}}, {"align_corners", false}})),
                     b.op("upsample_bilinear2d", "", {{"self", x}}, attrs({{"output_size", Ints{11, 6}}, {"align_corners", true}})),
                     b.op("upsample_bilinear2d", "vec", {{"input", x}},
                          attrs({{"align_corners", false}, {"scale_factors", std::vector<double>{2.0, 0.5}}}))});
  }});
  out.push_back({"upsample_bilinear_to_a_size", [](Builder& b) {
    const ValueId x = b.input({1, 3, 5, 7});
    b.g.set_outputs({b.op("upsample_bilinear2d", "", {{"self", x}}, attrs({{"output_size", Ints{8, 3}}, {"align_corners", false}}))});
  }});
  out.push_back({"upsample_bilinear_aligned_by_factors", [](Builder& b) {
    const ValueId x = b.input({2, 3, 4, 6});
    b.g.set_outputs({b.op("upsample_bilinear2d", "vec", {{"input", x}},
                          attrs({{"align_corners", true}, {"scale_factors", std::vector<double>{1.5, 2.0}}}))});
  }});
  out.push_back({"upsample_trilinear_to_a_size", [](Builder& b) {
    const ValueId x = b.input({1, 2, 3, 4, 5});
    b.g.set_outputs({b.op("upsample_trilinear3d", "", {{"self", x}}, attrs({{"output_size", Ints{5, 7, 3}}, {"align_corners", false}}))});
  }});
  out.push_back({"upsample_linear_and_nearest_1d", [](Builder& b) {
    const ValueId x = b.input({2, 3, 7});
    const ValueId l = b.op("upsample_linear1d", "", {{"self", x}}, attrs({{"output_size", Ints{11}}, {"align_corners", false}}));
    b.g.set_outputs({l, b.op("upsample_nearest1d", "", {{"self", x}}, attrs({{"output_size", Ints{10}}}))});
  }});
  out.push_back({"upsample_bicubic_both_alignments", [](Builder& b) {
    const ValueId x = b.input({1, 2, 6, 5});
    const ValueId a = b.op("upsample_bicubic2d", "", {{"self", x}}, attrs({{"output_size", Ints{9, 4}}, {"align_corners", false}}));
    b.g.set_outputs({a, b.op("upsample_bicubic2d", "", {{"self", x}}, attrs({{"output_size", Ints{11, 7}}, {"align_corners", true}}))});
  }});
  out.push_back({"group_instance_and_layer_norm", [](Builder& b) {
    const ValueId x = b.input({2, 6, 5, 3});
    const ValueId g = b.op("group_norm", "", {{"input", x}, {"weight", b.constant({6})}, {"bias", b.constant({6})}},
                           attrs({{"num_groups", std::int64_t{3}}, {"eps", 1e-5}, {"cudnn_enabled", false}}));
    const ValueId i = b.op("instance_norm", "", {{"input", x}, {"weight", b.constant({6})}, {"bias", b.constant({6})}},
                           attrs({{"use_input_stats", true}, {"momentum", 0.1}, {"eps", 1e-5}, {"cudnn_enabled", false}}));
    const ValueId l = b.op("layer_norm", "", {{"input", x}, {"weight", b.constant({5, 3})}, {"bias", b.constant({5, 3})}},
                           attrs({{"normalized_shape", Ints{5, 3}}, {"eps", 1e-5}, {"cudnn_enable", false}}));
    const ValueId y = b.input({1, 4, 7});
    const ValueId plain = b.op("group_norm", "", {{"input", y}}, attrs({{"num_groups", std::int64_t{1}}, {"eps", 1e-3}, {"cudnn_enabled", false}}));
    b.g.set_outputs({g, i, l, plain});
  }});
  // The norms' statistics merge blocks of 256 floats: rows and groups of
  // several blocks and a ragged last one, a mean far from zero (100 + noise:
  // at 1000, torch's own float mean is 3e-5 off, past this test's 1e-5),
  // rows of one element (variance 0), and the batch norm of torch.export's instance norm.
  out.push_back({"norms_over_many_blocks_and_far_from_zero", [](Builder& b) {
    const ValueId far = b.op("add", "Scalar", {{"self", b.input({3, 1003})}}, attrs({{"other", 100.0}, {"alpha", std::int64_t{1}}}));
    const ValueId l = b.op("layer_norm", "", {{"input", far}, {"weight", b.constant({1003})}, {"bias", b.constant({1003})}},
                           attrs({{"normalized_shape", Ints{1003}}, {"eps", 1e-5}, {"cudnn_enable", false}}));
    const ValueId plain = b.op("layer_norm", "", {{"input", far}}, attrs({{"normalized_shape", Ints{1003}}, {"eps", 1e-5}, {"cudnn_enable", false}}));
    const ValueId one = b.op("layer_norm", "", {{"input", b.input({4, 1})}, {"weight", b.constant({1})}},
                             attrs({{"normalized_shape", Ints{1}}, {"eps", 1e-5}, {"cudnn_enable", false}}));
    const ValueId x = b.op("add", "Scalar", {{"self", b.input({2, 6, 17, 23})}}, attrs({{"other", -300.0}, {"alpha", std::int64_t{1}}}));
    const ValueId g = b.op("group_norm", "", {{"input", x}, {"weight", b.constant({6})}, {"bias", b.constant({6})}},
                           attrs({{"num_groups", std::int64_t{3}}, {"eps", 1e-5}, {"cudnn_enabled", false}}));
    const ValueId i = b.op("instance_norm", "", {{"input", x}}, attrs({{"use_input_stats", true}, {"momentum", 0.1}, {"eps", 1e-5}, {"cudnn_enabled", false}}));
    const auto bn = b.ops("_native_batch_norm_legit", {{"input", x}, {"weight", b.constant({6})}, {"bias", b.constant({6})}},
                          attrs({{"training", true}, {"momentum", 0.1}, {"eps", 1e-5}}), 3);
    const ValueId r = b.op("rms_norm", "", {{"input", b.input({5, 301})}, {"weight", b.constant({301})}}, attrs({{"normalized_shape", Ints{301}}, {"eps", 1e-6}}));
    b.g.set_outputs({l, plain, one, g, i, bn[0], bn[1], bn[2], r});
  }});
  // The core opset's backward ops (training graphs), each gradient given
  // the forward's own output (so that its shape is the forward's).
  out.push_back({"backward_of_max_avg_and_adaptive_pooling", [](Builder& b) {
    const ValueId x = b.input({2, 3, 7, 6}), v = b.input({1, 2, 5, 4, 3});
    const auto pooled = b.ops("max_pool2d_with_indices", {{"self", x}},
                              attrs({{"kernel_size", Ints{3, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 0}}, {"dilation", Ints{1, 2}}, {"ceil_mode", true}}), 2);
    const ValueId max_grad = b.op("max_pool2d_with_indices_backward", "", {{"grad_output", pooled[0]}, {"self", x}, {"indices", pooled[1]}},
                                  attrs({{"kernel_size", Ints{3, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 0}}, {"dilation", Ints{1, 2}}, {"ceil_mode", true}}));
    const auto pooled3 = b.ops("max_pool3d_with_indices", {{"self", v}},
                               attrs({{"kernel_size", Ints{2, 2, 2}}, {"stride", Ints{2, 1, 2}}, {"padding", Ints{0, 1, 1}}, {"dilation", Ints{1, 1, 1}}, {"ceil_mode", false}}), 2);
    const ValueId max3_grad = b.op("max_pool3d_with_indices_backward", "", {{"grad_output", pooled3[0]}, {"self", v}, {"indices", pooled3[1]}},
                                   attrs({{"kernel_size", Ints{2, 2, 2}}, {"stride", Ints{2, 1, 2}}, {"padding", Ints{0, 1, 1}}, {"dilation", Ints{1, 1, 1}}, {"ceil_mode", false}}));
    std::vector<ValueId> outs{max_grad, max3_grad};
    for (bool include_pad : {false, true}) {
      Attributes a = attrs({{"kernel_size", Ints{3, 3}}, {"stride", Ints{2, 1}}, {"padding", Ints{1, 1}}, {"ceil_mode", true}, {"count_include_pad", include_pad}});
      if (include_pad) a.set("divisor_override", std::int64_t{5});
      const ValueId avg = b.op("avg_pool2d", "", {{"self", x}}, a);
      outs.push_back(b.op("avg_pool2d_backward", "", {{"grad_output", avg}, {"self", x}}, a));
    }
    const ValueId adaptive = b.op("_adaptive_avg_pool2d", "", {{"self", x}}, attrs({{"output_size", Ints{3, 4}}}));
    outs.push_back(b.op("_adaptive_avg_pool2d_backward", "", {{"grad_output", adaptive}, {"self", x}}));
    b.g.set_outputs(outs);
  }});
  out.push_back({"backward_of_embedding", [](Builder& b) {
    const ValueId ids = b.typed_input(at::tensor({0, 2, 5, 2, 2, 1, 0, 5, 3, 2}, at::kLong).reshape({2, 5}));
    const ValueId grad = b.input({2, 5, 3});
    std::vector<ValueId> outs;
    for (const auto& [padding, by_frequency] : {std::pair<std::int64_t, bool>{-1, false}, {2, true}})
      outs.push_back(b.op("embedding_dense_backward", "", {{"grad_output", grad}, {"indices", ids}},
                          attrs({{"num_weights", std::int64_t{7}}, {"padding_idx", padding}, {"scale_grad_by_freq", by_frequency}})));
    b.g.set_outputs(outs);
  }});
  out.push_back({"backward_of_layer_and_group_norm", [](Builder& b) {
    const ValueId x = b.input({3, 4, 5}), w = b.constant({4, 5}), bias = b.constant({4, 5}), g = b.input({3, 4, 5});
    const auto ln = b.ops("native_layer_norm", {{"input", x}, {"weight", w}, {"bias", bias}}, attrs({{"normalized_shape", Ints{4, 5}}, {"eps", 1e-5}}), 3);
    std::vector<ValueId> outs;
    const auto lb = b.ops("native_layer_norm_backward", {{"grad_out", g}, {"input", x}, {"mean", ln[1]}, {"rstd", ln[2]}, {"weight", w}, {"bias", bias}},
                          attrs({{"normalized_shape", Ints{4, 5}}, {"output_mask", std::vector<bool>{true, true, true}}}), 3);
    outs.insert(outs.end(), lb.begin(), lb.end());
    const auto unweighted = b.ops("native_layer_norm_backward", {{"grad_out", g}, {"input", x}, {"mean", ln[1]}, {"rstd", ln[2]}},
                                  attrs({{"normalized_shape", Ints{4, 5}}, {"output_mask", std::vector<bool>{true, false, false}}}), 3);
    outs.push_back(unweighted[0]);
    const ValueId y = b.input({2, 6, 3, 5}), gy = b.input({2, 6, 3, 5}), w6 = b.constant({6});
    const auto gn = b.ops("native_group_norm", {{"input", y}, {"weight", w6}, {"bias", b.constant({6})}},
                          attrs({{"N", std::int64_t{2}}, {"C", std::int64_t{6}}, {"HxW", std::int64_t{15}}, {"group", std::int64_t{3}}, {"eps", 1e-5}}), 3);
    const auto gb = b.ops("native_group_norm_backward", {{"grad_out", gy}, {"input", y}, {"mean", gn[1]}, {"rstd", gn[2]}, {"weight", w6}},
                          attrs({{"N", std::int64_t{2}}, {"C", std::int64_t{6}}, {"HxW", std::int64_t{15}}, {"group", std::int64_t{3}},
                                 {"output_mask", std::vector<bool>{true, true, true}}}), 3);
    outs.insert(outs.end(), gb.begin(), gb.end());
    b.g.set_outputs(outs);
  }});
  out.push_back({"backward_of_convolutions", [](Builder& b) {
    std::vector<ValueId> outs;
    auto backward = [&](ValueId grad, ValueId x, ValueId w, Ints stride, Ints padding, Ints dilation, bool transposed, Ints output_padding, std::int64_t groups,
                        std::int64_t out_channels) {
      const auto r = b.ops("convolution_backward", {{"grad_output", grad}, {"input", x}, {"weight", w}},
                           attrs({{"bias_sizes", Ints{out_channels}}, {"stride", stride}, {"padding", padding}, {"dilation", dilation}, {"transposed", transposed},
                                  {"output_padding", output_padding}, {"groups", groups}, {"output_mask", std::vector<bool>{true, true, true}}}), 3);
      outs.insert(outs.end(), r.begin(), r.end());
    };
    // 2D grouped, strided, dilated; channels 6 and 5 (not multiples of 4)
    const ValueId x = b.input({2, 4, 7, 6}), w = b.constant({6, 2, 3, 2});
    const ValueId y = b.op("conv2d", "", {{"input", x}, {"weight", w}},
                           attrs({{"stride", Ints{2, 1}}, {"padding", Ints{1, 0}}, {"dilation", Ints{1, 2}}, {"groups", std::int64_t{2}}}));
    backward(y, x, w, {2, 1}, {1, 0}, {1, 2}, false, {0, 0}, 2, 6);
    // 2D transposed with output padding
    const ValueId t = b.input({1, 4, 3, 5}), tw = b.constant({4, 5, 3, 3});
    const ValueId ty = b.op("conv_transpose2d", "input", {{"input", t}, {"weight", tw}},
                            attrs({{"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"output_padding", Ints{1, 0}}, {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1}}}));
    backward(ty, t, tw, {2, 2}, {1, 1}, {1, 1}, true, {1, 0}, 1, 5);
    // 1D and 3D
    const ValueId s = b.input({3, 2, 9}), sw = b.constant({3, 2, 4});
    const ValueId sy = b.op("conv1d", "", {{"input", s}, {"weight", sw}}, attrs({{"stride", Ints{3}}, {"padding", Ints{2}}, {"dilation", Ints{1}}, {"groups", std::int64_t{1}}}));
    backward(sy, s, sw, {3}, {2}, {1}, false, {0}, 1, 3);
    const ValueId v = b.input({1, 3, 4, 5, 3}), vw = b.constant({2, 3, 2, 3, 1});
    const ValueId vy = b.op("conv3d", "", {{"input", v}, {"weight", vw}},
                            attrs({{"stride", Ints{1, 2, 1}}, {"padding", Ints{1, 1, 0}}, {"dilation", Ints{1, 1, 1}}, {"groups", std::int64_t{1}}}));
    backward(vy, v, vw, {1, 2, 1}, {1, 1, 0}, {1, 1, 1}, false, {0, 0, 0}, 1, 2);
    b.g.set_outputs(outs);
  }});
  out.push_back({"conv1d_strided_dilated_grouped", [](Builder& b) {
    const ValueId x = b.input({2, 6, 17});
    b.g.set_outputs({b.op("conv1d", "", {{"input", x}, {"weight", b.constant({4, 3, 5})}, {"bias", b.constant({4})}},
                          attrs({{"stride", Ints{2}}, {"padding", Ints{3}}, {"dilation", Ints{2}}, {"groups", std::int64_t{2}}}))});
  }});
  out.push_back({"pool1d_ceil_and_adaptive", [](Builder& b) {
    const ValueId x = b.input({2, 3, 10});
    const ValueId m = b.op("max_pool1d", "", {{"self", x}},
                           attrs({{"kernel_size", Ints{3}}, {"stride", Ints{2}}, {"padding", Ints{1}}, {"dilation", Ints{1}}, {"ceil_mode", true}}));
    const ValueId a = b.op("avg_pool1d", "", {{"self", x}},
                           attrs({{"kernel_size", Ints{4}}, {"stride", Ints{3}}, {"padding", Ints{2}}, {"ceil_mode", true}, {"count_include_pad", true}}));
    const ValueId ad = b.op("adaptive_avg_pool1d", "", {{"self", x}}, attrs({{"output_size", Ints{4}}}));
    b.g.set_outputs({m, a, ad});
  }});
  out.push_back({"max_pool2d_ceil_mode_padded", [](Builder& b) {
    const ValueId x = b.input({1, 3, 8, 9});
    const ValueId a = b.op("max_pool2d", "", {{"self", x}},
                           attrs({{"kernel_size", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"padding", Ints{0, 0}}, {"dilation", Ints{1, 1}}, {"ceil_mode", true}}));
    const ValueId c = b.op("max_pool2d", "", {{"self", x}},
                           attrs({{"kernel_size", Ints{3, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"dilation", Ints{1, 1}}, {"ceil_mode", true}}));
    b.g.set_outputs({a, c});
  }});
  out.push_back({"avg_pool2d_counting_padding", [](Builder& b) {
    const ValueId x = b.input({1, 5, 6, 7});
    b.g.set_outputs({b.op("avg_pool2d", "", {{"self", x}},
                          attrs({{"kernel_size", Ints{3, 3}}, {"stride", Ints{1, 1}}, {"padding", Ints{1, 1}}, {"ceil_mode", false}, {"count_include_pad", true}}))});
  }});
  out.push_back({"prelu_channels_last_3d_and_1d", [](Builder& b) {
    const ValueId x = b.input({1, 3, 4, 5, 2});
    const ValueId c = b.op("conv3d", "", {{"input", x}, {"weight", b.constant({7, 3, 1, 1, 1})}},
                           attrs({{"stride", Ints{1, 1, 1}}, {"padding", Ints{0, 0, 0}}, {"dilation", Ints{1, 1, 1}}, {"groups", std::int64_t{1}}}));
    b.g.set_outputs({b.op("prelu", "", {{"self", c}, {"weight", b.constant({7})}}), b.op("prelu", "", {{"self", b.input({9})}, {"weight", b.constant({1})}}),
                     b.op("prelu", "", {{"self", b.input({2, 3})}, {"weight", b.constant({3})}})});
  }});
  out.push_back({"prelu_per_channel_and_shared", [](Builder& b) {
    const ValueId x = b.input({2, 5, 3, 3});
    const ValueId y = b.input({3, 7});
    b.g.set_outputs({b.op("prelu", "", {{"self", x}, {"weight", b.constant({5})}}), b.op("prelu", "", {{"self", y}, {"weight", b.constant({1})}})});
  }});
  out.push_back({"narrow_select_unsqueeze_squeeze_expand", [](Builder& b) {
    const ValueId x = b.input({2, 1, 5});
    ValueId y = b.op("narrow", "", {{"self", x}}, attrs({{"dim", std::int64_t{2}}, {"start", std::int64_t{-4}}, {"length", std::int64_t{3}}}));
    y = b.op("expand", "", {{"self", y}}, attrs({{"size", Ints{3, 2, 4, 3}}, {"implicit", false}}));
    y = b.op("select", "int", {{"self", y}}, attrs({{"dim", std::int64_t{1}}, {"index", std::int64_t{-1}}}));
    y = b.op("unsqueeze", "", {{"self", y}}, attrs({{"dim", std::int64_t{0}}}));
    b.g.set_outputs({b.op("squeeze", "dim", {{"self", y}}, attrs({{"dim", std::int64_t{0}}}))});
  }});
  out.push_back({"chunk_uneven", [](Builder& b) {
    const ValueId x = b.input({2, 7, 3});
    Attributes a = attrs({{"chunks", std::int64_t{3}}, {"dim", std::int64_t{1}}});
    a.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self"});
    const NodeId n = b.g.add_node("aten::chunk", {x}, {NewValue{"c0"}, NewValue{"c1"}, NewValue{"c2"}}, a, "chunk");
    b.g.set_outputs(b.g.node(n).outputs);
  }});
  out.push_back({"slice_scatter_strided", [](Builder& b) {
    const ValueId x = b.input({2, 6, 4});
    const ValueId src = b.input({2, 2, 4});
    b.g.set_outputs({b.op("slice_scatter", "", {{"self", x}, {"src", src}},
                          attrs({{"dim", std::int64_t{1}}, {"start", std::int64_t{1}}, {"end", std::int64_t{5}}, {"step", std::int64_t{2}}}))});
  }});
  out.push_back({"matmul_batched_and_mm", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5, 4});
    const ValueId y = b.input({2, 3, 4, 6});
    const ValueId z = b.input({5, 4});
    const ValueId w = b.input({3, 7, 4});
    b.g.set_outputs({b.op("matmul", "", {{"self", x}, {"other", y}}), b.op("mm", "", {{"self", z}, {"mat2", b.constant({4, 3})}}),
                     b.op("matmul", "", {{"self", w}, {"other", b.constant({4, 2})}})});
  }});
  out.push_back({"matmul_broadcast_batches_and_vectors", [](Builder& b) {
    const ValueId x = b.input({2, 1, 5, 4});
    const ValueId y = b.input({3, 4, 7});
    const ValueId v = b.input({4});
    const ValueId z = b.input({2, 3, 4, 1});
    b.g.set_outputs({b.op("matmul", "", {{"self", x}, {"other", y}}), b.op("matmul", "", {{"self", v}, {"other", y}}),
                     b.op("matmul", "", {{"self", x}, {"other", v}}), b.op("bmm", "", {{"self", y}, {"mat2", b.constant({3, 7, 1})}}),
                     b.op("matmul", "", {{"self", z}, {"other", b.constant({1, 5})}})});
  }});
  out.push_back({"adaptive_pools_not_dividing_and_larger", [](Builder& b) {
    // alexnet and vgg pool a 1x1 or 2x2 map to 6x6 or 7x7
    const ValueId x = b.input({2, 5, 1, 2});
    const ValueId y = b.input({1, 3, 7, 9});
    const ValueId z = b.input({1, 2, 5, 3, 4});
    b.g.set_outputs({b.op("adaptive_avg_pool2d", "", {{"self", x}}, attrs({{"output_size", Ints{6, 7}}})),
                     b.op("adaptive_avg_pool2d", "", {{"self", y}}, attrs({{"output_size", Ints{3, 4}}})),
                     b.op("adaptive_avg_pool3d", "", {{"self", z}}, attrs({{"output_size", Ints{2, 3, 3}}}))});
    for (const auto& [input, size, name] : {std::tuple{y, Ints{3, 4}, "adaptive_max_pool2d"}, std::tuple{x, Ints{3, 3}, "adaptive_max_pool2d"},
                                            std::tuple{z, Ints{2, 1, 3}, "adaptive_max_pool3d"}}) {
      Attributes a = attrs({{"output_size", size}});
      a.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self"});
      const NodeId node = b.g.add_node(std::string("aten::") + name, {input}, {NewValue{}, NewValue{}}, a, std::string(name) + std::to_string(b.counter++));
      b.g.add_output(b.g.node(node).outputs[0]);
    }
  }});
  out.push_back({"einsum_attention_implicit_outer_and_permuted", [](Builder& b) {
    // maxvit's attention, spelled with spaces and capitals as torchvision does
    const ValueId q = b.input({1, 3, 2, 5, 7});
    const ValueId k = b.input({1, 3, 2, 6, 7});
    const ValueId m = b.input({4, 5});
    const ValueId v = b.input({3});
    const ValueId w = b.input({2, 4, 3});
    auto einsum = [&](const std::string& eq, ValueId x, ValueId y) {
      return b.op("einsum", "", {{"tensors", x}, {"tensors", y}}, attrs({{"equation", eq}}));
    };
    b.g.set_outputs({einsum("B G H I D, B G H J D -> B G H I J", q, k), einsum("ij,jk", m, b.constant({5, 3})),
                     einsum("i,j->ij", v, b.input({5})), einsum("bij,jk->kbi", w, b.constant({3, 6})),
                     einsum("bij,bkj->bik", w, b.input({2, 1, 3}))});
  }});
  out.push_back({"sum_and_mean_over_dims_apart_and_empty", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5, 4});
    const ValueId e = b.input({2, 0, 3});
    b.g.set_outputs({b.op("sum", "dim_IntList", {{"self", x}}, attrs({{"dim", Ints{1}}, {"keepdim", false}})),
                     b.op("sum", "dim_IntList", {{"self", x}}, attrs({{"dim", Ints{0, 2}}, {"keepdim", true}})),
                     b.op("mean", "dim", {{"self", x}}, attrs({{"dim", Ints{-1, 1}}, {"keepdim", false}})),
                     b.op("sum", "dim_IntList", {{"self", e}}, attrs({{"dim", Ints{1}}, {"keepdim", false}}))});
  }});
  out.push_back({"softmax_and_log_softmax_on_any_dim", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5, 4});
    const ValueId big = b.op("mul", "Scalar", {{"self", x}}, attrs({{"other", 60.0}}));  // softmax underflows, log_softmax does not
    const ValueId v = b.input({7});
    b.g.set_outputs({b.op("softmax", "int", {{"self", x}}, attrs({{"dim", std::int64_t{2}}})),
                     b.op("softmax", "int", {{"self", x}}, attrs({{"dim", std::int64_t{0}}})),
                     b.op("log_softmax", "int", {{"self", big}}, attrs({{"dim", std::int64_t{1}}})),
                     b.op("log_softmax", "int", {{"self", x}}, attrs({{"dim", std::int64_t{-1}}})),
                     b.op("log_softmax", "int", {{"self", v}}, attrs({{"dim", std::int64_t{0}}})),
                     b.op("_log_softmax", "", {{"self", x}}, attrs({{"dim", std::int64_t{2}}, {"half_to_float", false}}))});
  }});
  out.push_back({"native_multi_head_attention_with_weights", [](Builder& b) {
    const ValueId q = b.input({2, 5, 6});
    const ValueId k = b.input({2, 5, 6});
    const ValueId v = b.input({2, 5, 6});
    for (bool average : {true, false}) {
      Attributes a = attrs({{"embed_dim", std::int64_t{6}}, {"num_head", std::int64_t{3}}, {"need_weights", true},
                            {"average_attn_weights", average}});
      a.set(std::string(kArgNamesAttribute),
            std::vector<std::string>{"query", "key", "value", "qkv_weight", "qkv_bias", "proj_weight", "proj_bias"});
      const NodeId n = b.g.add_node("aten::_native_multi_head_attention",
                                    {q, k, v, b.constant({18, 6}), b.constant({18}), b.constant({6, 6}), b.constant({6})},
                                    {NewValue{}, NewValue{}}, a, average ? "mha_avg" : "mha");
      for (ValueId o : b.g.node(n).outputs) b.g.add_output(o);
    }
  }});
  // Without the weights (torchvision's ViT asks for none): XNNPACK's fused
  // attention, heads first. Heads of 5 (not a multiple of 4), one query
  // token, and the cross-attention form (key and value not the query).
  out.push_back({"native_multi_head_attention_without_weights", [](Builder& b) {
    const ValueId x = b.input({2, 7, 15}), one = b.input({3, 1, 10}), k = b.input({3, 1, 10}), v = b.input({3, 1, 10});
    auto mha = [&](ValueId q, ValueId key, ValueId value, std::int64_t embed, std::int64_t heads, const char* name) {
      Attributes a = attrs({{"embed_dim", embed}, {"num_head", heads}, {"need_weights", false}, {"average_attn_weights", true}});
      a.set(std::string(kArgNamesAttribute), std::vector<std::string>{"query", "key", "value", "qkv_weight", "qkv_bias", "proj_weight", "proj_bias"});
      const NodeId n = b.g.add_node("aten::_native_multi_head_attention",
                                    {q, key, value, b.constant({3 * embed, embed}), b.constant({3 * embed}), b.constant({embed, embed}), b.constant({embed})},
                                    {NewValue{}, NewValue{}}, a, name);
      b.g.add_output(b.g.node(n).outputs[0]);
    };
    mha(x, x, x, 15, 3, "self_attention");
    mha(one, k, v, 10, 2, "cross_attention_one_token");
  }});
  // With masks (nn.MultiheadAttention's key_padding_mask and attn_mask, set
  // means left out): a key padding mask [B, S] that leaves one batch item no
  // key, an attention mask [L, S], and both merged [B, H, L, S].
  out.push_back({"native_multi_head_attention_with_masks", [](Builder& b) {
    const ValueId x = b.input({2, 5, 6});
    auto mha = [&](ValueId mask, std::int64_t type, const char* name) {
      Attributes a = attrs({{"embed_dim", std::int64_t{6}}, {"num_head", std::int64_t{3}}, {"need_weights", false}, {"average_attn_weights", true},
                            {"mask_type", type}});
      a.set(std::string(kArgNamesAttribute),
            std::vector<std::string>{"query", "key", "value", "qkv_weight", "qkv_bias", "proj_weight", "proj_bias", "mask"});
      const NodeId n = b.g.add_node("aten::_native_multi_head_attention",
                                    {x, x, x, b.constant({18, 6}), b.constant({18}), b.constant({6, 6}), b.constant({6}), mask}, {NewValue{}, NewValue{}}, a, name);
      b.g.add_output(b.g.node(n).outputs[0]);
    };
    at::Tensor padding = at::zeros({2, 5}, at::kBool);
    padding.index_put_({0, at::indexing::Slice(3, at::indexing::None)}, true);
    padding.index_put_({1}, true);  // no key left: zeros
    mha(b.g.add_constant("padding", native::from_aten(padding)), 1, "key_padding");
    mha(b.g.add_constant("causal", native::from_aten(at::ones({5, 5}, at::kBool).triu(1))), 0, "attention_mask");
    mha(b.g.add_constant("merged", native::from_aten(at::rand({2, 3, 5, 5}) > 0.6)), 2, "merged");
  }});
  out.push_back({"residual_add_with_fused_clamps", [](Builder& b) {
    // activation_fusion's relu and relu6 on adds: same shapes after a
    // convolution (one pass of ours), broadcast and plain (XNNPACK and a clamp).
    const ValueId x = b.input({2, 5, 7, 3});
    const ValueId c = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({5, 5, 3, 3})}, {"bias", b.constant({5})}},
                           attrs({{"stride", Ints{1, 1}}, {"padding", Ints{1, 1}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}));
    const ValueId same = b.op("add", "Tensor", {{"self", c}, {"other", x}}, attrs({{"alpha", std::int64_t{1}}, {"fused_activation", std::string("relu")}}));
    const ValueId six = b.op("add", "Tensor", {{"self", x}, {"other", c}},
                             attrs({{"fused_activation", std::string("clip")}, {"fused_min", 0.0}, {"fused_max", 6.0}}));
    const ValueId broadcast = b.op("add", "Tensor", {{"self", c}, {"other", b.input({1, 5, 1, 1})}}, attrs({{"fused_activation", std::string("relu")}}));
    const ValueId y = b.input({4, 6});
    const ValueId plain = b.op("add", "Tensor", {{"self", y}, {"other", b.input({4, 6})}}, attrs({{"fused_activation", std::string("relu")}}));
    b.g.set_outputs({same, six, broadcast, plain});
  }});
  out.push_back({"roll_two_dims_negative_and_flat", [](Builder& b) {
    const ValueId x = b.input({2, 5, 7, 3});
    const ValueId y = b.input({3, 1, 5});
    b.g.set_outputs({b.op("roll", "", {{"self", x}}, attrs({{"shifts", Ints{-3, 9}}, {"dims", Ints{1, 2}}})),
                     b.op("roll", "", {{"self", y}}, attrs({{"shifts", Ints{4}}, {"dims", Ints{}}})),
                     b.op("roll", "", {{"self", y}}, attrs({{"shifts", Ints{1, -2}}, {"dims", Ints{1, -1}}}))});
  }});
  out.push_back({"compare_and_masked_fill_broadcast", [](Builder& b) {
    // swin's attention mask: differences of window ids, -100 where they differ.
    const ValueId x = b.input({3, 7, 5});
    const ValueId ids = b.input({7, 1});
    const ValueId ne = b.op("ne", "Scalar", {{"self", ids}}, attrs({{"other", std::int64_t{0}}}));
    const ValueId filled = b.op("masked_fill", "Scalar", {{"self", x}, {"mask", ne}}, attrs({{"value", -100.0}}));
    const ValueId gt = b.op("gt", "Tensor", {{"self", x}, {"other", ids}});
    b.g.set_outputs({filled, b.op("masked_fill", "Scalar", {{"self", x}, {"mask", gt}}, attrs({{"value", 0.5}}))});
  }});
  out.push_back({"new_zeros_fill_scatter_mask", [](Builder& b) {
    const ValueId x = b.input({5, 6});
    const ValueId zeros = b.op("new_zeros", "", {{"self", x}}, attrs({{"size", Ints{5, 6}}}));
    const ValueId part = b.op("slice", "Tensor", {{"self", zeros}}, attrs({{"dim", std::int64_t{1}}, {"start", std::int64_t{-4}}, {"end", std::int64_t{-1}}, {"step", std::int64_t{1}}}));
    const ValueId value = b.g.add_constant("three", Tensor::from_vector(std::vector<float>{3.0f}, {}));
    const ValueId filled = b.op("fill", "Tensor", {{"self", part}, {"value", value}});
    const ValueId mask = b.op("slice_scatter", "", {{"self", zeros}, {"src", filled}},
                              attrs({{"dim", std::int64_t{1}}, {"start", std::int64_t{-4}}, {"end", std::int64_t{-1}}, {"step", std::int64_t{1}}}));
    const ValueId eq = b.op("eq", "Scalar", {{"self", mask}}, attrs({{"other", 0.0}}));
    b.g.set_outputs({b.op("add", "Tensor", {{"self", x}, {"other", mask}}), b.op("masked_fill", "Scalar", {{"self", x}, {"mask", eq}}, attrs({{"value", 2.0}})),
                     b.op("full_like", "", {{"self", x}}, attrs({{"fill_value", 1.5}}))});
  }});
  out.push_back({"pow_of_a_size", [](Builder& b) {
    // Traced attention: q * (C // heads) ** -0.5 on numbers known before the run.
    const ValueId x = b.input({2, 3, 12});
    const ValueId c = b.op("size", "int", {{"self", x}}, attrs({{"dim", std::int64_t{2}}}));
    Attributes to_tensor = attrs({{std::string(kOverloadAttribute), std::string("Scalar")}});
    to_tensor.set(std::string(kArgNamesAttribute), std::vector<std::string>{"a"});
    const ValueId t = b.g.node(b.g.add_node("prim::NumToTensor", {c}, {NewValue{}}, to_tensor, "num_to_tensor")).outputs[0];
    const ValueId heads = b.g.add_constant("heads", Tensor::from_vector(std::vector<std::int64_t>{3}, {}));
    const ValueId d = b.op("floor_divide", "", {{"self", t}, {"other", heads}});
    const ValueId scale = b.op("pow", "Tensor_Scalar", {{"self", d}}, attrs({{"exponent", -0.5}}));
    const ValueId squared = b.op("pow", "Tensor_Scalar", {{"self", d}}, attrs({{"exponent", std::int64_t{2}}}));
    b.g.set_outputs({b.op("mul", "Tensor", {{"self", x}, {"other", scale}}), b.op("mul", "Tensor", {{"self", x}, {"other", squared}})});
  }});
  // ---- ops the model libraries emit (issue 33): each alone, odd shapes ----
  out.push_back({"stack_inner_and_last_dims", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5}), y = b.input({2, 3, 5}), z = b.input({2, 3, 5});
    const ValueId s1 = b.op("stack", "", {{"tensors", x}, {"tensors", y}, {"tensors", z}}, attrs({{"dim", std::int64_t{1}}}));
    const ValueId s2 = b.op("stack", "", {{"tensors", x}, {"tensors", y}}, attrs({{"dim", std::int64_t{-1}}}));
    b.g.set_outputs({s1, s2});
  }});
  out.push_back({"stack_channels_last_inputs", [](Builder& b) {
    const ValueId x = b.input({1, 3, 5, 6});
    const ValueId c = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({5, 3, 3, 3})}, {"bias", b.constant({5})}},
                           attrs({{"stride", Ints{1, 1}}, {"padding", Ints{1, 1}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}));
    b.g.set_outputs({b.op("stack", "", {{"tensors", c}, {"tensors", c}}, attrs({{"dim", std::int64_t{2}}}))});
  }});
  out.push_back({"unbind_middle_dim", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5});
    b.g.set_outputs(b.ops("unbind", {{"self", x}}, attrs({{"dim", std::int64_t{1}}}), 3));
  }});
  out.push_back({"unbind_last_dim_beside_a_size_one_dim", [](Builder& b) {
    const ValueId x = b.input({4, 1, 3});
    b.g.set_outputs(b.ops("unbind", {{"self", x}}, attrs({{"dim", std::int64_t{-1}}}), 3));
  }});
  out.push_back({"split_with_sizes_uneven", [](Builder& b) {
    const ValueId x = b.input({2, 7, 3});
    b.g.set_outputs(b.ops("split_with_sizes", {{"self", x}}, attrs({{"split_sizes", Ints{2, 4, 1}}, {"dim", std::int64_t{1}}}), 3));
  }});
  out.push_back({"clamp_min_and_max", [](Builder& b) {
    const ValueId x = b.input({3, 5, 7});
    const ValueId lo = b.op("clamp_min", "", {{"self", x}}, attrs({{"min", 0.25}}));
    b.g.set_outputs({lo, b.op("clamp_max", "", {{"self", x}}, attrs({{"max", -0.5}}))});
  }});
  out.push_back({"trigonometry_rounding_and_logs", [](Builder& b) {
    const ValueId x = b.input({2, 3, 7});
    std::vector<ValueId> outs;
    for (const char* op : {"sin", "cos", "tan", "floor", "ceil", "round", "trunc", "sign", "expm1"}) outs.push_back(b.op(op, "", {{"self", x}}));
    const ValueId positive = b.op("add", "Scalar", {{"self", b.op("abs", "", {{"self", x}})}}, attrs({{"other", 0.5}, {"alpha", std::int64_t{1}}}));
    for (const char* op : {"reciprocal", "log1p", "log2", "log10"}) outs.push_back(b.op(op, "", {{"self", positive}}));
    b.g.set_outputs(outs);
  }});
  out.push_back({"reshape_as_and_view_as", [](Builder& b) {
    const ValueId x = b.input({2, 3, 4}), y = b.input({6, 4}), z = b.input({4, 3, 2});
    b.g.set_outputs({b.op("reshape_as", "", {{"self", x}, {"other", y}}), b.op("view_as", "", {{"self", x}, {"other", z}})});
  }});
  out.push_back({"native_layer_norm_first_output", [](Builder& b) {
    const ValueId x = b.input({2, 5, 7});
    const auto outs = b.ops("native_layer_norm", {{"input", x}, {"weight", b.constant({7})}, {"bias", b.constant({7})}},
                            attrs({{"normalized_shape", Ints{7}}, {"eps", 1e-5}}), 3);
    b.g.set_outputs({outs[0]});
  }});
  out.push_back({"native_group_norm_first_output", [](Builder& b) {
    const ValueId x = b.input({2, 6, 3, 5});
    const auto outs = b.ops("native_group_norm", {{"input", x}, {"weight", b.constant({6})}, {"bias", b.constant({6})}},
                            attrs({{"N", std::int64_t{2}}, {"C", std::int64_t{6}}, {"HxW", std::int64_t{15}}, {"group", std::int64_t{3}}, {"eps", 1e-5}}), 3);
    b.g.set_outputs({outs[0]});
  }});
  out.push_back({"adaptive_avg_pool2d_underscored", [](Builder& b) {
    b.g.set_outputs({b.op("_adaptive_avg_pool2d", "", {{"self", b.input({1, 3, 7, 5})}}, attrs({{"output_size", Ints{3, 2}}}))});
  }});
  out.push_back({"sdpa_plain", [](Builder& b) {
    const ValueId q = b.input({2, 3, 5, 7}), k = b.input({2, 3, 6, 7}), v = b.input({2, 3, 6, 5});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  out.push_back({"sdpa_causal_scaled", [](Builder& b) {
    const ValueId q = b.input({3, 5, 4}), k = b.input({3, 5, 4}), v = b.input({3, 5, 3});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", true}, {"scale", 0.3}}))});
  }});
  out.push_back({"sdpa_additive_mask_broadcast", [](Builder& b) {
    const ValueId q = b.input({1, 2, 4, 8}), k = b.input({1, 2, 6, 8}), v = b.input({1, 2, 6, 8}), m = b.input({4, 6});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", m}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  // A bool mask (a comparison's), with every row keeping some key: masked_fill
  // keeps key 0 of each row (mask | (iota == 0) in torch's words).
  out.push_back({"sdpa_boolean_mask_from_a_comparison", [](Builder& b) {
    const ValueId q = b.input({2, 3, 4}), k = b.input({2, 5, 4}), v = b.input({2, 5, 2}), m = b.input({2, 3, 5});
    const ValueId first_key = b.g.add_constant("first_key", native::from_aten(at::tensor({10.0f, 0.0f, 0.0f, 0.0f, 0.0f})));
    const ValueId raised = b.op("add", "Tensor", {{"self", m}, {"other", first_key}}, attrs({{"alpha", std::int64_t{1}}}));
    const ValueId keep = b.op("gt", "Scalar", {{"self", raised}}, attrs({{"other", -0.3}}));
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", keep}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  // XNNPACK's attention adds one [L, S] mask to all of a run's batch: masks
  // that vary over the batch or the heads run once per varying slice.
  out.push_back({"sdpa_key_padding_mask_per_batch", [](Builder& b) {
    const ValueId q = b.input({3, 2, 5, 6}), k = b.input({3, 2, 7, 6}), v = b.input({3, 2, 7, 5});
    const ValueId keep = b.typed_input(at::tensor({1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1}, at::kLong).to(at::kBool).reshape({3, 1, 1, 7}));
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", keep}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  out.push_back({"sdpa_additive_mask_per_head", [](Builder& b) {
    const ValueId q = b.input({2, 3, 4, 5}), k = b.input({2, 3, 5, 5}), v = b.input({2, 3, 5, 3}), m = b.input({1, 3, 4, 5});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", m}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  // A query row whose mask leaves no key: torch gives zeros (its _safe_softmax), from a bool mask and from -inf.
  out.push_back({"sdpa_rows_with_no_key_left", [](Builder& b) {
    const ValueId q = b.input({2, 3, 4}), k = b.input({2, 5, 4}), v = b.input({2, 5, 3});
    const ValueId keep = b.g.add_constant("keep", native::from_aten(at::tensor({1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, at::kLong).to(at::kBool).reshape({3, 5})));
    const ValueId add = b.g.add_constant("add", native::from_aten(at::tensor({0.0f, -INFINITY, 0.5f, 0.0f, -1.0f, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}).reshape({3, 5})));
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", keep}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}})),
                     b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", add}},
                          attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  out.push_back({"sdpa_causal_queries_and_keys_of_other_lengths", [](Builder& b) {
    const ValueId q = b.input({1, 2, 6, 3}), k = b.input({1, 2, 4, 3}), v = b.input({1, 2, 4, 5});
    const ValueId q2 = b.input({2, 3, 3}), k2 = b.input({2, 7, 3}), v2 = b.input({2, 7, 1});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}}, attrs({{"dropout_p", 0.0}, {"is_causal", true}})),
                     b.op("scaled_dot_product_attention", "", {{"query", q2}, {"key", k2}, {"value", v2}}, attrs({{"dropout_p", 0.0}, {"is_causal", true}}))});
  }});
  // Past 2^20 mask floats, attention without a mask or causal runs in chunks
  // of 1024 query rows (here 2 chunks and a tail of 6) with their own masks.
  out.push_back({"sdpa_long_sequences_in_chunks", [](Builder& b) {
    const ValueId q = b.input({1, 2, 2054, 5}), k = b.input({1, 2, 1024, 5}), v = b.input({1, 2, 1024, 3});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}}, attrs({{"dropout_p", 0.0}, {"is_causal", false}})),
                     b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}}, attrs({{"dropout_p", 0.0}, {"is_causal", true}}))});
  }});
  out.push_back({"sdpa_rank_2_and_single_key", [](Builder& b) {
    const ValueId q = b.input({5, 7}), k = b.input({6, 7}), v = b.input({6, 3});
    const ValueId q1 = b.input({1, 1, 1, 9}), k1 = b.input({1, 1, 1, 9}), v1 = b.input({1, 1, 1, 2});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", k}, {"value", v}}, attrs({{"dropout_p", 0.0}, {"is_causal", false}})),
                     b.op("scaled_dot_product_attention", "", {{"query", q1}, {"key", k1}, {"value", v1}}, attrs({{"dropout_p", 0.0}, {"is_causal", false}}))});
  }});
  out.push_back({"repeat_adding_a_dim", [](Builder& b) {
    const ValueId x = b.input({3, 1, 2});
    b.g.set_outputs({b.op("repeat", "", {{"self", x}}, attrs({{"repeats", Ints{2, 1, 3, 2}}})),
                     b.op("repeat", "", {{"self", x}}, attrs({{"repeats", Ints{1, 1, 1}}}))});
  }});
  out.push_back({"vector_norms_amax_amin", [](Builder& b) {
    const ValueId x = b.input({3, 5, 4});
    std::vector<ValueId> outs;
    outs.push_back(b.op("linalg_vector_norm", "", {{"self", x}}, attrs({{"ord", 2.0}, {"dim", Ints{1}}, {"keepdim", true}})));
    outs.push_back(b.op("linalg_vector_norm", "", {{"self", x}}, attrs({{"ord", 1.0}, {"keepdim", false}})));
    outs.push_back(b.op("linalg_vector_norm", "", {{"self", x}}, attrs({{"ord", std::numeric_limits<double>::infinity()}, {"dim", Ints{-1}}, {"keepdim", false}})));
    outs.push_back(b.op("linalg_vector_norm", "", {{"self", x}}, attrs({{"ord", 3.0}, {"dim", Ints{0, 2}}, {"keepdim", false}})));
    outs.push_back(b.op("amax", "", {{"self", x}}, attrs({{"dim", Ints{0, 2}}, {"keepdim", true}})));
    outs.push_back(b.op("amin", "", {{"self", x}}, attrs({{"dim", Ints{1}}, {"keepdim", false}})));
    b.g.set_outputs(outs);
  }});
  out.push_back({"cumsum_each_dim", [](Builder& b) {
    const ValueId x = b.input({3, 1, 5});
    b.g.set_outputs({b.op("cumsum", "", {{"self", x}}, attrs({{"dim", std::int64_t{0}}})), b.op("cumsum", "", {{"self", x}}, attrs({{"dim", std::int64_t{1}}})),
                     b.op("cumsum", "", {{"self", x}}, attrs({{"dim", std::int64_t{-1}}}))});
  }});
  out.push_back({"avg_pool3d_ceil_uncounted_and_divisor", [](Builder& b) {
    const ValueId x = b.input({1, 3, 5, 6, 7});
    const ValueId a = b.op("avg_pool3d", "", {{"self", x}},
                           attrs({{"kernel_size", Ints{3, 2, 3}}, {"stride", Ints{2, 2, 1}}, {"padding", Ints{1, 1, 0}}, {"ceil_mode", true},
                                  {"count_include_pad", false}}));
    const ValueId c = b.op("avg_pool3d", "", {{"self", x}},
                           attrs({{"kernel_size", Ints{2, 2, 2}}, {"stride", Ints{2, 2, 2}}, {"padding", Ints{1, 0, 1}}, {"ceil_mode", false},
                                  {"count_include_pad", true}, {"divisor_override", std::int64_t{3}}}));
    b.g.set_outputs({a, c});
  }});
  out.push_back({"unflatten_clone_and_copy", [](Builder& b) {
    const ValueId x = b.input({2, 12, 3}), y = b.input({1, 12, 1});
    const ValueId u = b.op("unflatten", "int", {{"self", x}}, attrs({{"dim", std::int64_t{1}}, {"sizes", Ints{3, -1}}}));
    const ValueId c = b.op("copy", "", {{"self", x}, {"src", y}}, attrs({{"non_blocking", false}}));
    const ValueId same = b.op("copy", "", {{"self", x}, {"src", b.op("clone", "", {{"self", x}})}}, attrs({{"non_blocking", false}}));
    b.g.set_outputs({u, c, same});
  }});
  out.push_back({"as_strided_overlapping_windows", [](Builder& b) {
    const ValueId x = b.input({3, 10});
    b.g.set_outputs({b.op("as_strided", "", {{"self", x}}, attrs({{"size", Ints{4, 3, 4}}, {"stride", Ints{5, 1, 2}}, {"storage_offset", std::int64_t{1}}}))});
  }});
  // Permutes reduced before they run: a 3D window partition's 8 dims (a size-1
  // dim dropped, two kept together: 6 for XNNPACK), one that moves only
  // size-1 dims (the same bytes), and 7 dims that stay 7 (a strided copy).
  out.push_back({"permutes_of_many_dims", [](Builder& b) {
    const ValueId windows = b.input({1, 2, 3, 2, 2, 3, 2, 5});
    const ValueId ones = b.input({3, 1, 4, 1});
    const ValueId seven = b.input({2, 3, 2, 3, 2, 2, 2});
    auto permute = [&](ValueId x, Ints dims) { return b.op("permute", "", {{"self", x}}, attrs({{"dims", dims}})); };
    b.g.set_outputs({permute(windows, {0, 1, 3, 5, 2, 4, 6, 7}), permute(ones, {1, 0, 3, 2}), permute(seven, {6, 5, 4, 3, 2, 1, 0}),
                     b.op("add", "Tensor", {{"self", permute(ones, {3, 0, 1, 2})}, {"other", b.constant({1, 3, 1, 4})}})});
  }});
  // resize_ on a clone, as torch.export writes it: fewer elements (a prefix),
  // as many, and more (the new tail is memory torch leaves uninitialized, so
  // only the input's own elements are compared).
  out.push_back({"resize_shrinks_keeps_and_grows_the_storage", [](Builder& b) {
    const ValueId x = b.input({3, 1, 7});
    auto resized = [&](Ints size) { return b.op("resize_", "", {{"self", b.op("clone", "", {{"self", x}})}}, attrs({{"size", size}})); };
    const ValueId grown = b.op("view", "", {{"self", resized({5, 5})}}, attrs({{"size", Ints{-1}}}));
    b.g.set_outputs({resized({2, 1, 5}), resized({1, 21}), resized({}),
                     b.op("slice", "Tensor", {{"self", grown}}, attrs({{"dim", std::int64_t{0}}, {"start", std::int64_t{0}}, {"end", std::int64_t{21}}, {"step", std::int64_t{1}}}))});
  }});
  out.push_back({"batch_norm_with_the_batch_statistics", [](Builder& b) {
    const ValueId x = b.input({3, 5, 4, 2});
    const auto outs = b.ops("_native_batch_norm_legit", {{"input", x}, {"weight", b.constant({5})}, {"bias", b.constant({5})}},
                            attrs({{"overload", std::string("no_stats")}, {"training", true}, {"momentum", 0.1}, {"eps", 1e-5}}), 3);
    b.g.set_outputs({outs[0]});
  }});
  // Indices and masks (held as floats, exact): each against LibTorch's int64 and bool.
  out.push_back({"index_with_none_and_broadcast_indices", [](Builder& b) {
    const ValueId x = b.input({4, 5, 3});
    const ValueId rows = b.g.add_constant("rows", native::from_aten(at::tensor({3, 0, -1}, at::kLong).view({3, 1})));
    const ValueId cols = b.g.add_constant("cols", native::from_aten(at::tensor({2, 0}, at::kLong)));
    Attributes a;
    a.set("indices", std::vector<bool>{false, true, true});
    const ValueId mid = b.op("index", "Tensor", {{"self", x}, {"indices", rows}, {"indices", cols}}, a);  // dims 1, 2: [4, 3, 2]
    Attributes apart;
    apart.set("indices", std::vector<bool>{true, false, true});
    const ValueId first = b.op("index", "Tensor", {{"self", x}, {"indices", rows}, {"indices", cols}}, apart);  // apart: [3, 2, 5]
    b.g.set_outputs({mid, first});
  }});
  out.push_back({"index_select_where_any_and_casts", [](Builder& b) {
    const ValueId x = b.input({3, 6, 2}), y = b.input({3, 6, 2});
    const ValueId picks = b.g.add_constant("picks", native::from_aten(at::tensor({5, 0, 0, 2}, at::kLong)));
    const ValueId sel = b.op("index_select", "", {{"self", x}, {"index", picks}}, attrs({{"dim", std::int64_t{1}}}));
    const ValueId mask = b.op("gt", "Tensor", {{"self", x}, {"other", y}});
    const ValueId w = b.op("where", "self", {{"condition", mask}, {"self", x}, {"other", y}});
    const ValueId any = b.op("to", "dtype", {{"self", b.op("any", "dim", {{"self", mask}}, attrs({{"dim", std::int64_t{2}}, {"keepdim", false}}))}},
                             attrs({{"dtype", std::int64_t{6}}, {"non_blocking", false}, {"copy", false}}));
    const ValueId trunc = b.op("to", "dtype", {{"self", b.op("to", "dtype", {{"self", b.op("mul", "Scalar", {{"self", x}}, attrs({{"other", 3.0}}))}},
                                                          attrs({{"dtype", std::int64_t{4}}, {"non_blocking", false}, {"copy", false}}))}},
                               attrs({{"dtype", std::int64_t{6}}, {"non_blocking", false}, {"copy", false}}));
    b.g.set_outputs({sel, w, any, trunc});
  }});
  out.push_back({"arange_full_and_fmod_as_index_arithmetic", [](Builder& b) {
    const ValueId x = b.input({2, 7});
    const ValueId r = b.op("arange", "start_step", {}, attrs({{"start", std::int64_t{1}}, {"end", std::int64_t{8}}, {"step", std::int64_t{1}},
                                                            {"dtype", std::int64_t{6}}}));
    const ValueId f = b.op("full", "", {}, attrs({{"size", Ints{2, 7}}, {"fill_value", 0.5}, {"dtype", std::int64_t{6}}}));
    const ValueId m = b.op("fmod", "Scalar", {{"self", r}}, attrs({{"other", 3.0}}));
    b.g.set_outputs({b.op("add", "Tensor", {{"self", b.op("mul", "Tensor", {{"self", x}, {"other", m}})}, {"other", f}}, attrs({{"alpha", std::int64_t{1}}}))});
  }});
  // The portable kernels of issue 33, each alone, on odd shapes.
  out.push_back({"unbatched_conv2d_conv1d_and_same_padding", [](Builder& b) {
    const ValueId x = b.input({3, 5, 7});  // [C, H, W]: no batch dim
    const ValueId c2 = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({5, 3, 2, 3})}, {"bias", b.constant({5})}},
                            attrs({{"stride", Ints{1, 2}}, {"padding", Ints{1, 0}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}));
    const ValueId c1 = b.op("conv1d", "", {{"input", b.input({3, 9})}, {"weight", b.constant({2, 3, 4})}},
                            attrs({{"stride", Ints{1}}, {"padding", Ints{2}}, {"dilation", Ints{1}}, {"groups", std::int64_t{1}}}));
    // 'same' with an even kernel (one more padding after) and dilation.
    const ValueId same = b.op("conv2d", "padding", {{"input", b.input({1, 3, 6, 5})}, {"weight", b.constant({5, 3, 4, 3})}},
                              attrs({{"stride", Ints{1, 1}}, {"padding", std::string("same")}, {"dilation", Ints{1, 2}}, {"groups", std::int64_t{1}}}));
    b.g.set_outputs({c2, c1, same});
  }});
  out.push_back({"max_pool_with_indices_1d_2d_3d", [](Builder& b) {
    auto indices_as_float = [&](ValueId v) {
      return b.op("to", "dtype", {{"self", v}}, attrs({{"dtype", std::int64_t{6}}, {"non_blocking", false}, {"copy", false}}));
    };
    const auto p1 = b.ops("max_pool1d_with_indices", {{"self", b.input({2, 3, 10})}},
                          attrs({{"kernel_size", Ints{3}}, {"stride", Ints{2}}, {"padding", Ints{1}}, {"dilation", Ints{2}}, {"ceil_mode", true}}), 2);
    const auto p2 = b.ops("max_pool2d_with_indices", {{"self", b.input({3, 7, 5})}},  // no batch dim
                          attrs({{"kernel_size", Ints{3, 2}}, {"stride", Ints{2, 1}}, {"padding", Ints{1, 1}}, {"dilation", Ints{1, 1}}, {"ceil_mode", false}}), 2);
    const auto p3 = b.ops("max_pool3d_with_indices", {{"self", b.input({1, 2, 5, 4, 3})}},
                          attrs({{"kernel_size", Ints{2, 2, 2}}, {"stride", Ints{2, 2, 2}}, {"padding", Ints{0, 1, 1}}, {"dilation", Ints{1, 1, 1}}, {"ceil_mode", true}}), 2);
    const auto ad = b.ops("adaptive_max_pool2d", {{"self", b.input({1, 3, 7, 5})}}, attrs({{"output_size", Ints{3, 2}}}), 2);
    b.g.set_outputs({p1[0], indices_as_float(p1[1]), p2[0], indices_as_float(p2[1]), p3[0], indices_as_float(p3[1]), ad[0], indices_as_float(ad[1])});
  }});
  // Padding past what XNNPACK's deconvolution takes: the portable kernel, 2D and 3D, grouped, dilated.
  out.push_back({"conv_transpose_padding_xnnpack_refuses", [](Builder& b) {
    const ValueId t2 = b.op("conv_transpose2d", "input", {{"input", b.input({1, 3, 4, 5})}, {"weight", b.constant({3, 3, 3, 3})}, {"bias", b.constant({3})}},
                            attrs({{"stride", Ints{2, 2}}, {"padding", Ints{2, 2}}, {"output_padding", Ints{1, 1}},
                                   {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1}}}));
    const ValueId t3 = b.op("conv_transpose3d", "input", {{"input", b.input({3, 4, 4, 4})}, {"weight", b.constant({3, 3, 3, 3, 3})}},
                            attrs({{"stride", Ints{2, 2, 2}}, {"padding", Ints{2, 2, 2}}, {"output_padding", Ints{1, 1, 1}},
                                   {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1, 1}}}));
    const ValueId tg = b.op("conv_transpose2d", "input", {{"input", b.input({2, 2, 4, 4})}, {"weight", b.constant({2, 2, 4, 5})}, {"bias", b.constant({4})}},
                            attrs({{"stride", Ints{3, 2}}, {"padding", Ints{1, 2}}, {"output_padding", Ints{2, 3}},
                                   {"groups", std::int64_t{2}}, {"dilation", Ints{4, 4}}}));
    b.g.set_outputs({t2, t3, tg});
  }});
  out.push_back({"avg_pool2d_divisor_override_unbatched", [](Builder& b) {
    b.g.set_outputs({b.op("avg_pool2d", "", {{"self", b.input({3, 7, 5})}},
                          attrs({{"kernel_size", Ints{3, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"ceil_mode", true},
                                 {"count_include_pad", true}, {"divisor_override", std::int64_t{5}}}))});
  }});
  out.push_back({"scatter_src_value_and_reduce", [](Builder& b) {
    const ValueId x = b.input({5, 3}), src = b.input({4, 3});
    const ValueId idx = b.g.add_constant("idx", native::from_aten(at::tensor({4, 0, 2, 1, 3, 0, 3, 2, 1}, at::kLong).reshape({3, 3})));
    const ValueId plain = b.op("scatter", "src", {{"self", x}, {"index", idx}, {"src", src}}, attrs({{"dim", std::int64_t{0}}}));
    const ValueId value = b.op("scatter", "value", {{"self", x}, {"index", idx}}, attrs({{"dim", std::int64_t{0}}, {"value", 2.5}}));
    const ValueId add = b.op("scatter_add", "", {{"self", x}, {"index", idx}, {"src", src}}, attrs({{"dim", std::int64_t{0}}}));
    std::vector<ValueId> outs{plain, value, add};
    for (const char* r : {"sum", "prod", "mean", "amax", "amin"})
      for (bool self : {true, false})
        outs.push_back(b.op("scatter_reduce", "two", {{"self", x}, {"index", idx}, {"src", src}},
                            attrs({{"dim", std::int64_t{0}}, {"reduce", std::string(r)}, {"include_self", self}})));
    b.g.set_outputs(outs);
  }});
  out.push_back({"index_add_copy_fill_along_dim_1", [](Builder& b) {
    const ValueId x = b.input({2, 5, 3}), source = b.input({2, 3, 3});
    const ValueId idx = b.g.add_constant("idx", native::from_aten(at::tensor({4, 0, 2}, at::kLong)));
    b.g.set_outputs({b.op("index_add", "", {{"self", x}, {"index", idx}, {"source", source}}, attrs({{"dim", std::int64_t{1}}, {"alpha", 0.5}})),
                     b.op("index_copy", "", {{"self", x}, {"index", idx}, {"source", source}}, attrs({{"dim", std::int64_t{1}}})),
                     b.op("index_fill", "int_Scalar", {{"self", x}, {"index", idx}}, attrs({{"dim", std::int64_t{-2}}, {"value", -3.0}})),
                     // The value a 0-dim tensor computed in the graph.
                     b.op("index_fill", "int_Tensor", {{"self", x}, {"index", idx}, {"value", b.op("sum", "", {{"self", b.input({1, 2})}})}},
                          attrs({{"dim", std::int64_t{1}}}))});
  }});
  out.push_back({"index_put_indices_none_and_mask", [](Builder& b) {
    const ValueId x = b.input({4, 3, 5});
    const ValueId rows = b.g.add_constant("rows", native::from_aten(at::tensor({3, 0}, at::kLong)));
    const ValueId cols = b.g.add_constant("cols", native::from_aten(at::tensor({4, 1}, at::kLong)));
    // x[rows, :, cols] = v (indices apart: their dim first), accumulated; x[:, :, cols] = v.
    Attributes apart = attrs({{"accumulate", true}});
    apart.set("indices", std::vector<bool>{true, false, true});
    const ValueId put = b.op("index_put", "", {{"self", x}, {"indices", rows}, {"indices", cols}, {"values", b.input({2, 3})}}, apart);
    Attributes last = attrs({{"accumulate", false}});
    last.set("indices", std::vector<bool>{false, false, true});
    const ValueId put2 = b.op("index_put", "", {{"self", x}, {"indices", cols}, {"values", b.input({1, 3, 1})}}, last);
    const ValueId mask = b.g.add_constant("mask", native::from_aten(at::tensor({1, 0, 1, 1}, at::kLong).to(at::kBool)));
    const ValueId masked = b.op("index_put", "", {{"self", x}, {"indices", mask}, {"values", b.input({5})}}, attrs({{"accumulate", false}}));
    b.g.set_outputs({put, put2, masked});
  }});
  out.push_back({"repeat_interleave_einsum_and_nearest_exact", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5});
    const ValueId flat = b.op("repeat_interleave", "self_int", {{"self", x}}, attrs({{"repeats", std::int64_t{2}}}));
    const ValueId reps = b.g.add_constant("reps", native::from_aten(at::tensor({1, 0, 3}, at::kLong)));
    const ValueId per = b.op("repeat_interleave", "self_Tensor", {{"self", x}, {"repeats", reps}}, attrs({{"dim", std::int64_t{1}}}));
    // A diagonal, a sum over one operand, an ellipsis and three operands.
    Attributes e1 = attrs({{"equation", std::string("ii->i")}});
    const ValueId diag = b.op("einsum", "", {{"tensors", b.input({3, 3})}}, e1);
    const ValueId y = b.input({5, 4}), z = b.input({4});
    Attributes e2 = attrs({{"equation", std::string("...jk,kl,l->...j")}});
    const ValueId three = b.op("einsum", "", {{"tensors", x}, {"tensors", y}, {"tensors", z}}, e2);
    const ValueId near = b.op("_upsample_nearest_exact2d", "vec", {{"input", b.input({1, 2, 5, 3})}}, attrs({{"output_size", Ints{7, 2}}}));
    b.g.set_outputs({flat, per, diag, three, near});
  }});
  out.push_back({"addmm_general_rsub_and_masked_fill_of_tensors", [](Builder& b) {
    const ValueId self = b.input({1, 3}), m1 = b.input({5, 2}), m2 = b.input({2, 3});
    const ValueId addmm = b.op("addmm", "", {{"self", self}, {"mat1", m1}, {"mat2", m2}}, attrs({{"beta", 0.5}, {"alpha", -2.0}}));
    const ValueId a = b.input({4, 1}), c = b.input({3});
    const ValueId rsub = b.op("rsub", "Tensor", {{"self", a}, {"other", c}}, attrs({{"alpha", 3.0}}));
    const ValueId mask = b.op("gt", "Scalar", {{"self", a}}, attrs({{"other", 0.0}}));
    const ValueId value = b.op("sum", "", {{"self", c}});
    const ValueId fill = b.op("masked_fill", "Tensor", {{"self", b.input({4, 3})}, {"mask", mask}, {"value", value}});
    b.g.set_outputs({addmm, rsub, fill});
  }});
  // The core ATen ops the first sweep found without a lowering, each on odd shapes.
  out.push_back({"inverse_hyperbolics_and_checks", [](Builder& b) {
    const ValueId x = b.input({2, 1, 5});
    const ValueId cosh = b.op("cosh", "", {{"self", x}});  // >= 1
    const ValueId half_tanh = b.op("mul", "Scalar", {{"self", b.op("tanh", "", {{"self", x}})}}, attrs({{"other", 0.5}}));
    const ValueId logs = b.op("log", "", {{"self", x}});  // NaN below 0
    const ValueId inverse = b.op("reciprocal", "", {{"self", b.op("relu", "", {{"self", x}})}});  // inf at 0
    b.g.set_outputs({b.op("acosh", "", {{"self", cosh}}), b.op("asinh", "", {{"self", x}}), b.op("atanh", "", {{"self", half_tanh}}),
                     b.op("isnan", "", {{"self", logs}}), b.op("isinf", "", {{"self", inverse}}), b.op("isfinite", "", {{"self", inverse}})});
  }});
  out.push_back({"bitwise_of_masks_and_integers", [](Builder& b) {
    const ValueId x = b.input({3, 1, 7}), y = b.input({1, 5, 7});
    const ValueId positive = b.op("gt", "Scalar", {{"self", x}}, attrs({{"other", 0.0}}));
    const ValueId below = b.op("lt", "Tensor", {{"self", y}, {"other", x}});
    const ValueId both = b.op("bitwise_and", "Tensor", {{"self", positive}, {"other", below}});
    const ValueId either = b.op("__or__", "Tensor", {{"self", positive}, {"other", below}});
    const ValueId one = b.op("bitwise_xor", "Tensor", {{"self", positive}, {"other", below}});
    const ValueId neither = b.op("bitwise_not", "", {{"self", either}});
    // Integers: argmax's indices, their bits.
    const ValueId at = b.op("argmax", "", {{"self", y}}, attrs({{"dim", std::int64_t{2}}, {"keepdim", true}}));
    b.g.set_value_type(at, DType::kInt64, std::nullopt);
    const ValueId bits = b.op("bitwise_and", "Scalar", {{"self", at}}, attrs({{"other", std::int64_t{5}}}));
    const ValueId flipped = b.op("bitwise_not", "", {{"self", at}});
    const ValueId mixed = b.op("bitwise_or", "Tensor", {{"self", at}, {"other", b.op("argmin", "", {{"self", y}}, attrs({{"dim", std::int64_t{2}}, {"keepdim", true}}))}});
    b.g.set_outputs({both, either, one, neither, bits, flipped, mixed});
  }});
  out.push_back({"max_min_of_all_along_a_dim_and_of_two", [](Builder& b) {
    const ValueId x = b.input({3, 1, 7}), y = b.input({5, 1});
    const auto along = b.ops("max", {{"self", x}}, attrs({{"dim", std::int64_t{2}}, {"keepdim", false}, {"overload", std::string("dim")}}), 2);
    const auto kept = b.ops("min", {{"self", x}}, attrs({{"dim", std::int64_t{0}}, {"keepdim", true}, {"overload", std::string("dim")}}), 2);
    const auto size_one = b.ops("max", {{"self", x}}, attrs({{"dim", std::int64_t{-2}}, {"keepdim", true}, {"overload", std::string("dim")}}), 2);
    b.g.set_outputs({along[0], along[1], kept[0], kept[1], size_one[0], size_one[1], b.op("max", "", {{"self", x}}), b.op("min", "", {{"self", y}}),
                     b.op("max", "other", {{"self", x}, {"other", y}}), b.op("min", "other", {{"self", y}, {"other", x}})});
  }});
  out.push_back({"permutes_of_more_dims_than_xnnpack_takes", [](Builder& b) {
    // A 3D Swin transformer's window partition: [B, D/w, w, H/w, w, W/w, w, C]
    // permuted to [B, D/w, H/w, W/w, w, w, w, C] (XNNPACK's transpose takes 6 dims).
    const ValueId x = b.input({2, 4, 6, 4, 3});
    const ValueId windows = b.op("view", "", {{"self", x}}, attrs({{"size", Ints{2, 2, 2, 3, 2, 2, 2, 3}}}));
    const ValueId partitioned = b.op("permute", "", {{"self", windows}}, attrs({{"dims", Ints{0, 1, 3, 5, 2, 4, 6, 7}}}));
    const ValueId c = b.constant({2, 1, 3, 1, 2, 2, 3});  // a constant of 7 dims, transposed once
    const ValueId tokens = b.op("view", "", {{"self", b.op("contiguous", "", {{"self", partitioned}})}}, attrs({{"size", Ints{24, 8, 3}}}));
    b.g.set_outputs({b.op("add", "Tensor", {{"self", tokens}, {"other", b.input({24, 8, 3})}}, attrs({{"alpha", std::int64_t{1}}})),
                     b.op("permute", "", {{"self", c}}, attrs({{"dims", Ints{6, 5, 4, 3, 2, 1, 0}}}))});
  }});
  out.push_back({"native_norms_give_their_statistics_with_computed_parameters", [](Builder& b) {
    const ValueId x = b.input({3, 6, 1, 5});
    // Weights computed in the graph (or inputs), not only constants.
    const ValueId w6 = b.op("add", "Scalar", {{"self", b.input({6})}}, attrs({{"other", 1.0}, {"alpha", std::int64_t{1}}})), b6 = b.input({6});
    std::vector<ValueId> outs;
    auto all = [&](const std::vector<ValueId>& three) { outs.insert(outs.end(), three.begin(), three.end()); };
    all(b.ops("native_layer_norm", {{"input", x}, {"weight", b.input({1, 5})}, {"bias", b.constant({1, 5})}}, attrs({{"normalized_shape", Ints{1, 5}}, {"eps", 1e-3}}), 3));
    all(b.ops("native_group_norm", {{"input", x}, {"weight", w6}, {"bias", b6}},
              attrs({{"N", std::int64_t{3}}, {"C", std::int64_t{6}}, {"HxW", std::int64_t{5}}, {"group", std::int64_t{3}}, {"eps", 1e-5}}), 3));
    // Each its own running statistics (training mode updates them in place, in torch).
    for (bool training : {true, false}) {
      const ValueId var = b.op("add", "Scalar", {{"self", b.op("abs", "", {{"self", b.input({6})}})}}, attrs({{"other", 0.5}, {"alpha", std::int64_t{1}}}));
      all(b.ops("_native_batch_norm_legit", {{"input", x}, {"weight", w6}, {"bias", b6}, {"running_mean", b.input({6})}, {"running_var", var}},
                attrs({{"training", training}, {"momentum", 0.1}, {"eps", 1e-5}}), 3));
    }
    b.g.set_outputs(outs);
  }});
  out.push_back({"clip_concatenate_alpha_dropout_other_spellings", [](Builder& b) {
    const ValueId x = b.input({2, 1, 3}), y = b.input({2, 4, 3});
    const ValueId both = b.op("concatenate", "", {{"tensors", x}, {"tensors", y}}, attrs({{"dim", std::int64_t{1}}}));
    b.g.set_outputs({b.op("clip", "", {{"self", y}}, attrs({{"min", -0.5}, {"max", 0.25}})), both,
                     b.op("alpha_dropout", "", {{"input", x}}, attrs({{"p", 0.3}, {"train", false}}))});
  }});
  out.push_back({"integer_and_bool_graph_inputs", [](Builder& b) {
    // Token ids (int64, int32) and a mask (bool) as the caller gives them.
    const ValueId ids = b.typed_input(at::randint(0, 10, {2, 5}, at::kLong));
    const ValueId ids32 = b.typed_input(at::randint(-300, 300, {5}, at::kInt));
    const ValueId mask = b.typed_input(at::rand({2, 5}) > 0.5);
    const ValueId embedded = b.op("embedding", "", {{"weight", b.constant({10, 4})}, {"indices", ids}});
    const ValueId filled = b.op("masked_fill", "Scalar", {{"self", b.input({2, 5})}, {"mask", mask}}, attrs({{"value", -1.0}}));
    b.g.set_outputs({embedded, filled, b.op("mul", "Scalar", {{"self", ids}}, attrs({{"other", std::int64_t{3}}})),
                     b.op("add", "Tensor", {{"self", ids}, {"other", ids32}}, attrs({{"alpha", std::int64_t{1}}})),
                     b.op("logical_not", "", {{"self", mask}}), b.op("cumsum", "", {{"self", ids32}}, attrs({{"dim", std::int64_t{0}}}))});
  }});
  out.push_back({"cummax_cummin_with_ties_and_nan_and_aminmax", [](Builder& b) {
    const ValueId x = b.input({3, 1, 7});
    // Ties (rounded halves) move the position forward; a NaN (log below 0) takes over and stays.
    const ValueId ties = b.op("round", "", {{"self", b.op("mul", "Scalar", {{"self", x}}, attrs({{"other", 2.0}}))}});
    const ValueId nans = b.op("log", "", {{"self", x}});
    std::vector<ValueId> outs;
    for (const char* op : {"cummax", "cummin"})
      for (auto [self, dim] : {std::pair{ties, std::int64_t{2}}, std::pair{nans, std::int64_t{-1}}, std::pair{x, std::int64_t{1}}, std::pair{x, std::int64_t{0}}}) {
        const auto both = b.ops(op, {{"self", self}}, attrs({{"dim", dim}}), 2);
        outs.insert(outs.end(), both.begin(), both.end());
      }
    const auto all = b.ops("aminmax", {{"self", x}}, attrs({}), 2);
    const auto along = b.ops("aminmax", {{"self", x}}, attrs({{"dim", std::int64_t{2}}, {"keepdim", true}}), 2);
    const auto size_one = b.ops("aminmax", {{"self", nans}}, attrs({{"dim", std::int64_t{1}}}), 2);
    for (const auto& pair : {all, along, size_one}) outs.insert(outs.end(), pair.begin(), pair.end());
    b.g.set_outputs(outs);
  }});
  out.push_back({"rms_norm_cosine_similarity_pairwise_distance", [](Builder& b) {
    const ValueId x = b.input({2, 3, 1, 5});
    const ValueId weighted = b.op("rms_norm", "", {{"input", x}, {"weight", b.constant({1, 5})}}, attrs({{"normalized_shape", Ints{1, 5}}, {"eps", 1e-3}}));
    const ValueId plain = b.op("rms_norm", "", {{"input", x}}, attrs({{"normalized_shape", Ints{5}}}));  // eps: float32's epsilon
    const ValueId computed = b.op("rms_norm", "", {{"input", x}, {"weight", b.input({5})}}, attrs({{"normalized_shape", Ints{5}}}));  // a weight given at the run
    const ValueId a = b.input({4, 1, 7}), c = b.input({3, 7});
    std::vector<ValueId> outs{weighted, plain, computed,
                              b.op("cosine_similarity", "", {{"x1", a}, {"x2", c}}, attrs({{"dim", std::int64_t{-1}}, {"eps", 1e-8}})),
                              b.op("cosine_similarity", "", {{"x1", a}, {"x2", c}}, attrs({{"dim", std::int64_t{1}}, {"eps", 1e-8}})),
                              // A zero operand: its norm clamped to eps.
                              b.op("cosine_similarity", "", {{"x1", b.op("mul", "Scalar", {{"self", c}}, attrs({{"other", 0.0}}))}, {"x2", c}},
                                   attrs({{"dim", std::int64_t{0}}, {"eps", 1e-3}}))};
    for (double p : {0.0, 1.0, 2.0, 3.0, std::numeric_limits<double>::infinity()})
      outs.push_back(b.op("pairwise_distance", "", {{"x1", a}, {"x2", c}}, attrs({{"p", p}, {"eps", 1e-6}, {"keepdim", p == 1.0}})));
    outs.push_back(b.op("pairwise_distance", "", {{"x1", b.input({1})}, {"x2", b.input({6, 1})}}, attrs({{"p", 2.0}, {"eps", 0.5}, {"keepdim", false}})));
    b.g.set_outputs(outs);
  }});
  out.push_back({"sort_and_topk_along_dims", [](Builder& b) {
    const ValueId x = b.input({3, 6, 5});
    const auto up = b.ops("sort", {{"self", x}}, attrs({{"dim", std::int64_t{1}}, {"descending", false}}), 2);
    const auto down = b.ops("sort", {{"self", x}}, attrs({{"dim", std::int64_t{-1}}, {"descending", true}}), 2);
    const auto top = b.ops("topk", {{"self", x}}, attrs({{"k", std::int64_t{3}}, {"dim", std::int64_t{1}}, {"largest", true}, {"sorted", true}}), 2);
    const auto least = b.ops("topk", {{"self", x}}, attrs({{"k", std::int64_t{1}}, {"dim", std::int64_t{0}}, {"largest", false}, {"sorted", true}}), 2);
    b.g.set_outputs({up[0], up[1], down[0], down[1], top[0], top[1], least[0], least[1]});
  }});
  out.push_back({"diagonal_select_scatter_and_dropout", [](Builder& b) {
    const ValueId x = b.input({3, 4, 1, 5});
    const ValueId main = b.op("diagonal", "", {{"self", x}}, attrs({{"offset", std::int64_t{0}}, {"dim1", std::int64_t{0}}, {"dim2", std::int64_t{1}}}));
    const ValueId above = b.op("diagonal", "", {{"self", x}}, attrs({{"offset", std::int64_t{2}}, {"dim1", std::int64_t{-1}}, {"dim2", std::int64_t{1}}}));
    const ValueId below = b.op("diagonal", "", {{"self", x}}, attrs({{"offset", std::int64_t{-2}}, {"dim1", std::int64_t{3}}, {"dim2", std::int64_t{0}}}));
    const ValueId scattered = b.op("select_scatter", "", {{"self", x}, {"src", b.input({3, 1, 5})}}, attrs({{"dim", std::int64_t{1}}, {"index", std::int64_t{-1}}}));
    const auto dropped = b.ops("native_dropout", {{"input", x}}, attrs({{"p", 0.5}, {"train", false}}), 2);
    b.g.set_outputs({main, above, below, scattered, dropped[0], dropped[1]});
  }});
  out.push_back({"fold_and_unfold_odd_windows", [](Builder& b) {
    const ValueId x = b.input({2, 3, 7, 5});
    const Attributes window = attrs({{"kernel_size", Ints{3, 2}}, {"dilation", Ints{1, 2}}, {"padding", Ints{1, 0}}, {"stride", Ints{2, 1}}});
    const ValueId columns = b.op("im2col", "", {{"self", x}}, window);  // [2, 18, 4 * 3]
    Attributes back = window;
    back.set("output_size", Ints{7, 5});
    const ValueId image = b.op("col2im", "", {{"self", columns}}, back);  // overlaps summed
    const ValueId unbatched = b.op("im2col", "", {{"self", b.input({1, 4, 4})}},
                                   attrs({{"kernel_size", Ints{2, 2}}, {"dilation", Ints{1, 1}}, {"padding", Ints{0, 0}}, {"stride", Ints{2, 2}}}));
    b.g.set_outputs({columns, image, unbatched});
  }});
  out.push_back({"cdist_and_pdist_of_every_order", [](Builder& b) {
    const ValueId a = b.input({2, 1, 5, 3}), c = b.input({3, 4, 3});
    std::vector<ValueId> outs;
    for (double p : {0.0, 1.0, 2.0, 1.5, std::numeric_limits<double>::infinity()})
      outs.push_back(b.op("cdist", "", {{"x1", a}, {"x2", c}}, attrs({{"p", p}})));
    outs.push_back(b.op("_cdist_forward", "", {{"x1", b.input({1, 3})}, {"x2", b.input({6, 3})}}, attrs({{"p", 2.0}})));
    outs.push_back(b.op("_pdist_forward", "", {{"self", b.input({5, 3})}}, attrs({{"p", 2.0}})));
    outs.push_back(b.op("_pdist_forward", "", {{"self", b.input({4, 1})}}, attrs({{"p", 1.0}})));
    b.g.set_outputs(outs);
  }});
  out.push_back({"masked_scatter_with_a_broadcast_mask", [](Builder& b) {
    const ValueId mask = b.op("gt", "Scalar", {{"self", b.input({4, 1})}}, attrs({{"other", 0.0}}));
    b.g.set_outputs({b.op("masked_scatter", "", {{"self", b.input({3, 4, 5})}, {"mask", mask}, {"source", b.input({7, 9})}})});
  }});
  out.push_back({"embedding_bag_sum_mean_max_and_weighted", [](Builder& b) {
    const ValueId weight = b.constant({10, 3});
    const ValueId indices = b.g.add_constant("idx", Tensor::from_vector<std::int64_t>({1, 2, 4, 5, 4, 3, 2, 9}, {8}));
    const ValueId offsets = b.g.add_constant("offsets", Tensor::from_vector<std::int64_t>({0, 4, 4, 6}, {4}));  // bag 1 is empty
    std::vector<ValueId> outs;
    for (std::int64_t mode : {0, 1, 2})
      outs.push_back(b.ops("_embedding_bag", {{"weight", weight}, {"indices", indices}, {"offsets", offsets}}, attrs({{"mode", mode}}), 4)[0]);
    // Weighted, the last offset the end, row 2 the padding.
    const ValueId ends = b.g.add_constant("ends", Tensor::from_vector<std::int64_t>({0, 3, 8}, {3}));
    outs.push_back(b.ops("_embedding_bag", {{"weight", weight}, {"indices", indices}, {"offsets", ends}, {"per_sample_weights", b.input({8})}},
                         attrs({{"mode", std::int64_t{0}}, {"include_last_offset", true}, {"padding_idx", std::int64_t{2}}}), 4)[0]);
    b.g.set_outputs(outs);
  }});
  out.push_back({"shrinks_selu_celu_logit_erfinv_frac_log_sigmoid", [](Builder& b) {
    const ValueId x = b.input({2, 3, 1, 5});
    const ValueId unit = b.op("mul", "Scalar", {{"self", b.op("tanh", "", {{"self", x}})}}, attrs({{"other", 0.9}}));  // in (-0.9, 0.9)
    const ValueId p = b.op("sigmoid", "", {{"self", x}});
    b.g.set_outputs({b.op("hardshrink", "", {{"self", x}}, attrs({{"lambd", 0.3}})), b.op("softshrink", "", {{"self", x}}, attrs({{"lambd", 0.7}})),
                     b.op("selu", "", {{"self", x}}), b.op("celu", "", {{"self", x}}, attrs({{"alpha", 1.7}})),
                     b.op("logit", "", {{"self", p}}), b.op("logit", "", {{"self", p}}, attrs({{"eps", 0.2}})), b.op("erfinv", "", {{"self", unit}}),
                     b.op("frac", "", {{"self", b.op("mul", "Scalar", {{"self", x}}, attrs({{"other", 3.0}}))}}), b.op("log_sigmoid", "", {{"self", x}})});
  }});
  out.push_back({"hypot_lerp_addcmul_addcdiv_broadcast", [](Builder& b) {
    const ValueId x = b.input({3, 1, 4}), y = b.input({5, 1}), w = b.input({1, 5, 4});
    const ValueId positive = b.op("add", "Scalar", {{"self", b.op("abs", "", {{"self", y}})}}, attrs({{"other", 0.5}, {"alpha", std::int64_t{1}}}));
    b.g.set_outputs({b.op("hypot", "", {{"self", x}, {"other", y}}), b.op("lerp", "Scalar", {{"self", x}, {"end", y}}, attrs({{"weight", 0.7}})),
                     b.op("lerp", "Tensor", {{"self", x}, {"end", y}, {"weight", w}}),
                     b.op("addcmul", "", {{"self", x}, {"tensor1", y}, {"tensor2", w}}, attrs({{"value", -0.5}})),
                     b.op("addcdiv", "", {{"self", w}, {"tensor1", x}, {"tensor2", positive}}, attrs({{"value", 2.0}}))});
  }});
  out.push_back({"glu_outer_baddbmm_unshuffles", [](Builder& b) {
    const ValueId x = b.input({2, 6, 3});
    const ValueId glu = b.op("glu", "", {{"self", x}}, attrs({{"dim", std::int64_t{1}}}));
    const ValueId outer = b.op("outer", "", {{"self", b.input({3})}, {"vec2", b.input({5})}});
    const ValueId bmm = b.op("baddbmm", "", {{"self", b.input({1, 4})}, {"batch1", b.input({2, 3, 5})}, {"batch2", b.input({2, 5, 4})}},
                             attrs({{"beta", 0.5}, {"alpha", -1.5}}));
    const ValueId unshuffled = b.op("pixel_unshuffle", "", {{"self", b.input({1, 3, 6, 4})}}, attrs({{"downscale_factor", std::int64_t{2}}}));
    const ValueId shuffled = b.op("channel_shuffle", "", {{"self", b.input({2, 6, 1, 3})}}, attrs({{"groups", std::int64_t{3}}}));
    b.g.set_outputs({glu, outer, bmm, unshuffled, shuffled});
  }});
  out.push_back({"layout_numbers_known_while_planning", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5});
    const ValueId numel = b.op("sym_numel", "", {{"self", x}});
    const ValueId stride = b.op("sym_stride", "int", {{"self", x}}, attrs({{"dim", std::int64_t{1}}}));
    const ValueId offset = b.op("sym_storage_offset", "", {{"self", x}});
    const ValueId scaled = b.op("mul", "Scalar", {{"self", x}, {"other", numel}});
    const ValueId shifted = b.op("add", "Scalar", {{"self", scaled}, {"other", stride}}, attrs({{"alpha", std::int64_t{1}}}));
    b.g.set_outputs({b.op("sub", "Scalar", {{"self", shifted}, {"other", offset}}, attrs({{"alpha", std::int64_t{1}}}))});
  }});
  // Every interpolation and padding mode, both corner conventions, a grid
  // that reaches past [-1, 1]; then a height of 1 (reflection over one row).
  for (const Shape& in : {Shape{2, 3, 5, 7}, Shape{1, 1, 1, 4}}) {
    out.push_back({"grid_sampler_2d_" + std::to_string(in[2]) + "x" + std::to_string(in[3]), [in](Builder& b) {
      const ValueId x = b.input(in);
      const ValueId raw = b.input({in[0], 4, 3, 2});
      const ValueId grid = b.op("mul", "Scalar", {{"self", b.op("tanh", "", {{"self", raw}})}}, attrs({{"other", 1.3}}));
      std::vector<ValueId> outs;
      for (std::int64_t mode : {0, 1, 2})
        for (std::int64_t padding : {0, 1, 2})
          for (bool corners : {false, true})
            outs.push_back(b.op("grid_sampler_2d", "", {{"input", x}, {"grid", grid}},
                                attrs({{"interpolation_mode", mode}, {"padding_mode", padding}, {"align_corners", corners}})));
      b.g.set_outputs(outs);
    }});
  }
  // Fourier transforms and complex values (lower/complex.cpp): odd, even,
  // size-1 and padded or cropped lengths, every normalization, lines past
  // the GEMM's length (a kernel of ours), complex inputs and arithmetic.
  const auto norm = [](const char* name) { return std::string(name); };
  out.push_back({"fft_rfftn_odd_sizes_ortho_and_backward", [norm](Builder& b) {
    const ValueId x = b.input({2, 1, 5, 7});
    b.g.set_outputs({b.op("fft_rfftn", "", {{"self", x}}, attrs({{"dim", Ints{-2, -1}}, {"norm", norm("ortho")}})),
                     b.op("fft_rfftn", "", {{"self", x}}, attrs({{"dim", Ints{1, 3}}}))});
  }});
  out.push_back({"fft_irfftn_to_an_odd_size_from_a_real_input", [norm](Builder& b) {
    const ValueId x = b.input({3, 4, 5});
    b.g.set_outputs({b.op("fft_irfftn", "", {{"self", x}}, attrs({{"s", Ints{4, 9}}, {"dim", Ints{1, 2}}, {"norm", norm("forward")}})),
                     b.op("fft_irfft2", "", {{"self", x}}, attrs({}))});
  }});
  out.push_back({"fft_fft_padded_cropped_and_inverse", [norm](Builder& b) {
    const ValueId x = b.input({3, 6});
    const ValueId spectrum = b.op("fft_fft", "", {{"self", x}}, attrs({{"n", std::int64_t{8}}, {"dim", std::int64_t{1}}}));
    b.g.set_outputs({spectrum, b.op("fft_fft", "", {{"self", x}}, attrs({{"n", std::int64_t{4}}, {"dim", std::int64_t{0}}, {"norm", norm("ortho")}})),
                     b.op("fft_ifft", "", {{"self", spectrum}}, attrs({{"dim", std::int64_t{-1}}}))});
  }});
  out.push_back({"fft_2_n_and_hermitian_forms", [norm](Builder& b) {
    const ValueId x = b.input({2, 3, 5});
    b.g.set_outputs({b.op("fft_ifft2", "", {{"self", x}}, attrs({{"norm", norm("forward")}})), b.op("fft_fftn", "", {{"self", x}}, attrs({})),
                     b.op("fft_ifftn", "", {{"self", x}}, attrs({{"s", Ints{4, 4}}})),
                     b.op("fft_hfft", "", {{"self", x}}, attrs({{"n", std::int64_t{7}}})),
                     b.op("fft_ihfft", "", {{"self", x}}, attrs({{"dim", std::int64_t{1}}, {"norm", norm("ortho")}}))});
  }});
  out.push_back({"fft_core_r2c_c2c_c2r", [](Builder& b) {
    const ValueId x = b.input({1, 3, 6, 5});
    const ValueId half = b.op("_fft_r2c", "", {{"self", x}}, attrs({{"dim", Ints{2, 3}}, {"normalization", std::int64_t{1}}, {"onesided", true}}));
    const ValueId back = b.op("_fft_c2c", "", {{"self", half}}, attrs({{"dim", Ints{2}}, {"normalization", std::int64_t{0}}, {"forward", false}}));
    b.g.set_outputs({half, b.op("_fft_r2c", "", {{"self", x}}, attrs({{"dim", Ints{1}}, {"normalization", std::int64_t{2}}, {"onesided", false}})),
                     b.op("_fft_c2r", "", {{"self", back}}, attrs({{"dim", Ints{2, 3}}, {"normalization", std::int64_t{2}}, {"last_dim_size", std::int64_t{5}}})),
                     b.op("_fft_c2r", "", {{"self", half}}, attrs({{"dim", Ints{3}}, {"normalization", std::int64_t{0}}, {"last_dim_size", std::int64_t{4}}}))});
  }});
  out.push_back({"fft_size_one", [](Builder& b) {
    const ValueId x = b.input({1, 1, 1});
    b.g.set_outputs({b.op("fft_rfftn", "", {{"self", x}}, attrs({})), b.op("fft_fft", "", {{"self", x}}, attrs({{"dim", std::int64_t{0}}})),
                     b.op("fft_irfft", "", {{"self", x}}, attrs({{"n", std::int64_t{1}}}))});
  }});
  out.push_back({"fft_lines_past_the_gemm", [](Builder& b) {
    const ValueId x = b.input({2, 1100});
    const ValueId spectrum = b.op("fft_rfft", "", {{"self", x}}, attrs({}));
    b.g.set_outputs({spectrum, b.op("fft_irfft", "", {{"self", spectrum}}, attrs({{"n", std::int64_t{1100}}}))});
  }});
  out.push_back({"complex_arithmetic_and_parts", [](Builder& b) {
    const ValueId x = b.input({2, 6}), y = b.input({2, 6});
    const ValueId p = b.op("fft_rfft", "", {{"self", x}}, attrs({})), q = b.op("fft_rfft", "", {{"self", y}}, attrs({}));
    const ValueId row = b.constant({1, 4});
    b.g.set_outputs({b.op("mul", "Tensor", {{"self", p}, {"other", q}}), b.op("add", "Tensor", {{"self", p}, {"other", q}}, attrs({{"alpha", 2.0}})),
                     b.op("sub", "Tensor", {{"self", p}, {"other", q}}), b.op("div", "Tensor", {{"self", p}, {"other", q}}),
                     b.op("mul", "Tensor", {{"self", row}, {"other", p}}), b.op("mul", "Scalar", {{"self", q}}, attrs({{"other", 2.5}})),
                     b.op("view_as_real", "", {{"self", b.op("conj_physical", "", {{"self", p}})}}), b.op("real", "", {{"self", p}}),
                     b.op("imag", "", {{"self", q}}), b.op("complex", "", {{"real", x}, {"imag", y}}),
                     b.op("view_as_complex", "", {{"self", b.op("view_as_real", "", {{"self", q}})}})});
  }});
  out.push_back({"complex_input_and_casts", [](Builder& b) {
    const ValueId z = b.typed_input(at::randn({3, 4}, at::kComplexFloat));
    const ValueId x = b.input({3, 4});
    const ValueId promoted = b.op("_to_copy", "", {{"self", x}}, attrs({{"dtype", std::int64_t{9}}}));
    // Complex weights (a spectral layer's), and an update in place.
    const ValueId w = b.g.add_constant("w", native::from_aten(at::randn({1, 4}, at::kComplexFloat)));
    const ValueId updated = b.op("add_", "Tensor", {{"self", b.op("clone", "", {{"self", z}})}, {"other", promoted}});
    b.g.set_outputs({b.op("fft_fft", "", {{"self", z}}, attrs({})), b.op("fft_ifft", "", {{"self", promoted}}, attrs({{"dim", std::int64_t{0}}})),
                     b.op("_to_copy", "", {{"self", z}}, attrs({{"dtype", std::int64_t{6}}})), b.op("add", "Tensor", {{"self", z}, {"other", promoted}}),
                     b.op("mul", "Tensor", {{"self", z}, {"other", w}}), b.op("mul_", "Tensor", {{"self", updated}, {"other", w}})});
  }});
  // Layout ops over complex values (a spectrum reshaped, sliced, permuted,
  // joined), their dims and sizes as attributes or as values the graph computes.
  out.push_back({"complex_layout_ops", [](Builder& b) {
    const ValueId x = b.input({2, 3, 4, 6});
    const ValueId z = b.op("fft_rfftn", "", {{"self", x}}, attrs({{"dim", Ints{-2, -1}}}));  // [2, 3, 4, 4] complex
    const ValueId minus_one = b.g.add_constant("minus_one", Tensor::from_vector<std::int64_t>({-1}, {}));
    const ValueId batch = b.op("size", "int", {{"self", x}}, attrs({{"dim", std::int64_t{0}}}));
    const NodeId list = b.g.add_node("prim::ListConstruct", {batch, minus_one}, {NewValue{}}, {}, "sizes");
    const ValueId flat = b.op("view", "", {{"self", z}, {"size", b.g.node(list).outputs[0]}});  // [2, 48]
    const ValueId back = b.op("reshape", "", {{"self", flat}}, attrs({{"shape", Ints{2, 3, 4, 4}}}));
    const ValueId unsq = b.op("unsqueeze", "", {{"self", z}}, attrs({{"dim", std::int64_t{-1}}}));
    std::vector<ValueId> outs = {
        b.op("fft_irfftn", "", {{"self", back}}, attrs({{"s", Ints{4, 6}}, {"dim", Ints{-2, -1}}})),
        b.op("permute", "", {{"self", z}}, attrs({{"dims", Ints{0, -1, 1, 2}}})),
        b.op("transpose", "int", {{"self", z}}, attrs({{"dim0", std::int64_t{-1}}, {"dim1", std::int64_t{1}}})),
        b.op("select", "int", {{"self", z}, {"dim", minus_one}}, attrs({{"index", std::int64_t{1}}})),
        b.op("slice", "Tensor", {{"self", z}}, attrs({{"dim", std::int64_t{-2}}, {"start", std::int64_t{1}}, {"end", std::int64_t{3}}, {"step", std::int64_t{1}}})),
        b.op("narrow", "", {{"self", z}}, attrs({{"dim", std::int64_t{-1}}, {"start", std::int64_t{1}}, {"length", std::int64_t{2}}})),
        b.op("flatten", "using_ints", {{"self", z}}, attrs({{"start_dim", std::int64_t{1}}, {"end_dim", std::int64_t{-1}}})),
        b.op("flatten", "using_ints", {{"self", z}}, attrs({{"start_dim", std::int64_t{2}}})),  // end_dim's default
        b.op("squeeze", "dim", {{"self", unsq}}, attrs({{"dim", std::int64_t{-1}}})),
        b.op("flip", "", {{"self", z}}, attrs({{"dims", Ints{-1, 1}}})),
        b.op("expand", "", {{"self", b.op("select", "int", {{"self", z}}, attrs({{"dim", std::int64_t{0}}, {"index", std::int64_t{0}}}))}},
             attrs({{"size", Ints{2, -1, -1, -1}}}))};
    outs.push_back(b.op("cat", "", {{"tensors", z}, {"tensors", z}}, attrs({{"dim", std::int64_t{-2}}})));
    outs.push_back(b.op("stack", "", {{"tensors", z}, {"tensors", z}}, attrs({{"dim", std::int64_t{-1}}})));
    for (ValueId part : b.ops("unbind", {{"self", z}}, attrs({{"dim", std::int64_t{-1}}}), 4)) outs.push_back(part);
    b.g.set_outputs(outs);
  }});
  // neuraloperator's spectral weights: einsum of complex operands (an
  // ellipsis with an implicit output too, one operand alone), complex matmul
  // and bmm, complex zeros written through slice_scatter and copy; size-1 dims, odd lengths.
  out.push_back({"complex_einsum_matmul_and_scatter", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5, 1});
    const ValueId z = b.op("fft_rfft", "", {{"self", x}}, attrs({{"dim", std::int64_t{2}}}));  // [2, 3, 3, 1] complex
    const ValueId w = b.g.add_constant("w", native::from_aten(at::randn({3, 4, 3, 1}, at::kComplexFloat)));
    const ValueId v = b.g.add_constant("v", native::from_aten(at::randn({1, 2}, at::kComplexFloat)));
    const ValueId u = b.g.add_constant("u", native::from_aten(at::randn({6, 1, 2}, at::kComplexFloat)));
    auto einsum = [&](const std::string& eq, ValueId p, ValueId q) {
      return b.op("einsum", "", {{"tensors", p}, {"tensors", q}}, attrs({{"equation", eq}}));
    };
    const ValueId mixed = einsum("bixy,ioxy->boxy", z, w);  // [2, 4, 3, 1]
    const ValueId zeros = b.op("zeros", "", {}, attrs({{"size", Ints{2, 4, 3, 1}}, {"dtype", std::int64_t{9}}}));
    const ValueId low = b.op("slice", "Tensor", {{"self", mixed}}, attrs({{"dim", std::int64_t{2}}, {"start", std::int64_t{0}}, {"end", std::int64_t{2}}, {"step", std::int64_t{1}}}));
    b.g.set_outputs({
        mixed,
        einsum("...y,yk", z, v),
        b.op("einsum", "", {{"tensors", z}}, attrs({{"equation", std::string("bixy->bxi")}})),  // one operand, a sum over y
        b.op("matmul", "", {{"self", z}, {"other", v}}),
        b.op("bmm", "", {{"self", b.op("view", "", {{"self", z}}, attrs({{"size", Ints{6, 3, 1}}}))}, {"mat2", u}}),
        b.op("slice_scatter", "", {{"self", zeros}, {"src", low}},
             attrs({{"dim", std::int64_t{2}}, {"start", std::int64_t{1}}, {"end", std::int64_t{3}}, {"step", std::int64_t{1}}})),
        b.op("copy", "", {{"self", zeros}, {"src", mixed}}),
    });
  }});
  // stft (audio front ends): odd lengths, a window shorter than n_fft, hop
  // lengths that leave a remainder, one- and two-sided, normalized, the
  // center overload's reflect and constant padding, no window; the window
  // functions; Tensor.unfold (core ATen's stft frames).
  out.push_back({"stft_windows_and_unfold", [](Builder& b) {
    auto i = [](std::int64_t v) { return AttributeValue(v); };
    const ValueId x1 = b.input({37});
    const ValueId x2 = b.input({2, 50});
    const ValueId hann = b.op("hann_window", "", {}, attrs({{"window_length", i(6)}}));
    const ValueId hamming = b.op("hamming_window", "periodic", {}, attrs({{"window_length", i(8)}, {"periodic", false}}));
    b.g.set_outputs({
        b.op("stft", "", {{"self", x1}, {"window", hann}},
             attrs({{"n_fft", i(8)}, {"hop_length", i(3)}, {"win_length", i(6)}, {"normalized", false}, {"onesided", true}, {"return_complex", true}})),
        b.op("stft", "", {{"self", x2}, {"window", hamming}},
             attrs({{"n_fft", i(8)}, {"hop_length", i(2)}, {"win_length", i(8)}, {"normalized", true}, {"onesided", false}, {"return_complex", true}})),
        b.op("stft", "center", {{"self", x2}},
             attrs({{"n_fft", i(10)}, {"hop_length", i(4)}, {"center", true}, {"pad_mode", std::string("reflect")}, {"normalized", false},
                    {"return_complex", true}})),
        b.op("stft", "center", {{"self", x1}},
             attrs({{"n_fft", i(7)}, {"hop_length", i(5)}, {"center", true}, {"pad_mode", std::string("constant")}, {"normalized", false},
                    {"return_complex", true}})),
        b.op("bartlett_window", "", {}, attrs({{"window_length", i(5)}})),
        b.op("blackman_window", "periodic", {}, attrs({{"window_length", i(9)}, {"periodic", true}})),
        b.op("unfold", "", {{"self", x2}}, attrs({{"dimension", i(1)}, {"size", i(7)}, {"step", i(3)}})),
        b.op("unfold", "", {{"self", x1}}, attrs({{"dimension", i(-1)}, {"size", i(1)}, {"step", i(4)}})),
    });
  }});
  // clone() then an update in place: the clone's, not its source's.
  out.push_back({"clone_then_update_in_place", [](Builder& b) {
    const ValueId x = b.input({2, 3});
    const ValueId copy = b.op("clone", "", {{"self", x}});
    const ValueId updated = b.op("add_", "Tensor", {{"self", copy}, {"other", b.constant({3})}});
    b.g.set_outputs({updated, b.op("mul", "Tensor", {{"self", x}, {"other", x}}), copy});
  }});
  // The spellings a functionalized graph (the fx trace, core ATen) gives views: their copying forms.
  out.push_back({"view_copies_of_complex_and_real", [](Builder& b) {
    const ValueId x = b.input({2, 5, 6});
    const ValueId pairs = b.op("view_as_real_copy", "", {{"self", b.op("fft_rfft", "", {{"self", x}}, attrs({}))}});
    b.g.set_outputs({b.op("select_copy", "int", {{"self", pairs}}, attrs({{"dim", std::int64_t{-1}}, {"index", std::int64_t{1}}})),
                     b.op("select_copy", "int", {{"self", x}}, attrs({{"dim", std::int64_t{1}}, {"index", std::int64_t{3}}})),
                     b.op("unsqueeze_copy", "", {{"self", x}}, attrs({{"dim", std::int64_t{0}}}))});
  }});
  return out;
}

// Runs b's graph on the LibTorch backend, then on XNNPACK at each of
// `threads`: same(got, want) for each output.
void against_libtorch(const Builder& b, std::initializer_list<int> threads, const std::function<void(const Tensor&, const Tensor&)>& same) {
  Graph copy = b.g;
  TracedGraph reference(std::move(copy), std::nullopt, std::nullopt, native::make_libtorch_backend());
  reference.finalize();
  const auto want = reference.run(b.inputs);
  for (int t : threads) {
    SCOPED_TRACE("threads " + std::to_string(t));
    Graph graph = b.g;
    TracedGraph g(std::move(graph), std::nullopt, std::nullopt, make_backend({t}));
    g.finalize();
    const auto got = g.run(b.inputs);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE("output " + std::to_string(i));
      same(got[i], want[i]);
    }
  }
}

class XnnpackOpTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(XnnpackOpTest, MatchesLibTorch) {
  at::manual_seed(7);
  Builder b;
  GetParam().build(b);
  against_libtorch(b, {1, 3}, [](const Tensor& got, const Tensor& want) {
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_LE(max_relative_error(got, want), 1e-5);
  });
}

// int64 tensors are exact past float32's 2^24 (Slot::int64): integer
// inputs through the ops that compute on int64 (arithmetic that wraps around,
// divisions, bitwise ops, comparisons, where, clamp, reductions, cumsum,
// casts) and the layout ops that move them, to int64 outputs and back to
// narrower types, each equal to LibTorch's.
TEST(XnnpackInt64, ExactPast2To24AndEqualToLibTorch) {
  Builder b;
  const std::int64_t big = (std::int64_t{1} << 40) + 3;
  const ValueId ids = b.typed_input(at::tensor({std::int64_t{5}, big, -(std::int64_t{1} << 33) - 1, std::int64_t{16777217}, std::int64_t{-7},
                                                std::int64_t{123456789012}},
                                               at::kLong)
                                        .view({2, 3}));
  const ValueId small = b.typed_input(at::tensor({3, -2, 7}, at::kLong));
  auto typed = [&](ValueId v, DType dtype) {
    b.g.set_value_type(v, dtype, std::nullopt);
    return v;
  };
  auto i64 = [](std::int64_t v) { return AttributeValue(v); };
  const ValueId gt = typed(b.op("gt", "Tensor", {{"self", ids}, {"other", small}}), DType::kBool);
  const ValueId copy = b.op("clone", "", {{"self", ids}});
  const ValueId bumped = b.op("add_", "Tensor", {{"self", copy}, {"other", small}});
  // An op that computes on float32 and writes in place: its result reaches the int64 tensor.
  const ValueId small_copy = b.op("clone", "", {{"self", small}});
  b.op("relu_", "", {{"self", small_copy}});
  std::vector<ValueId> outs = {
      b.op("mul", "Tensor", {{"self", ids}, {"other", small}}),
      b.op("add", "Tensor", {{"self", ids}, {"other", small}}, attrs({{"alpha", i64(2)}})),
      b.op("sub", "Scalar", {{"self", ids}}, attrs({{"other", i64(16777216)}, {"alpha", i64(1)}})),
      b.op("mul", "Scalar", {{"self", ids}}, attrs({{"other", i64(1 << 30)}})),  // wraps around past 2^63, as torch's
      b.op("abs", "", {{"self", b.op("neg", "", {{"self", ids}})}}),
      b.op("floor_divide", "", {{"self", ids}, {"other", small}}),
      b.op("remainder", "Tensor", {{"self", ids}, {"other", small}}),
      b.op("div", "Tensor_mode", {{"self", ids}, {"other", small}}, attrs({{"rounding_mode", std::string("trunc")}})),
      b.op("bitwise_xor", "Tensor", {{"self", ids}, {"other", small}}),
      b.op("maximum", "", {{"self", ids}, {"other", small}}),
      gt,
      typed(b.op("eq", "Scalar", {{"self", ids}}, attrs({{"other", i64(16777217)}})), DType::kBool),
      b.op("where", "self", {{"condition", gt}, {"self", ids}, {"other", small}}),
      b.op("clamp", "", {{"self", ids}}, attrs({{"min", i64(-100)}, {"max", i64(std::int64_t{1} << 35)}})),
      b.op("sum", "dim_IntList", {{"self", ids}}, attrs({{"dim", Ints{1}}, {"keepdim", false}})),
      b.op("sum", "", {{"self", ids}}),
      b.op("cumsum", "", {{"self", ids}}, attrs({{"dim", i64(1)}})),
      b.op("amax", "", {{"self", ids}}, attrs({{"dim", Ints{0}}, {"keepdim", true}})),
      b.op("view", "", {{"self", b.op("permute", "", {{"self", ids}}, attrs({{"dims", Ints{1, 0}}}))}}, attrs({{"size", Ints{6}}})),
      b.op("cat", "", {{"tensors", ids}, {"tensors", b.op("unsqueeze", "", {{"self", small}}, attrs({{"dim", i64(0)}}))}}, attrs({{"dim", i64(0)}})),
      b.op("slice", "Tensor", {{"self", b.op("flip", "", {{"self", ids}}, attrs({{"dims", Ints{-1}}}))}},
           attrs({{"dim", i64(1)}, {"start", i64(1)}, {"end", i64(3)}, {"step", i64(1)}})),
      typed(b.op("to", "dtype", {{"self", ids}}, attrs({{"dtype", i64(3)}})), DType::kInt32),    // wraps to 32 bits
      typed(b.op("to", "dtype", {{"self", ids}}, attrs({{"dtype", i64(6)}})), DType::kFloat32),  // rounds, as torch's
      typed(b.op("add", "Scalar", {{"self", ids}}, attrs({{"other", 0.5}, {"alpha", i64(1)}})), DType::kFloat32),
      bumped,
      ids,  // the clone's update left its source alone
      b.op("add", "Tensor", {{"self", small_copy}, {"other", small}}, attrs({{"alpha", i64(1)}})),
      // size-1 dims broadcast: [2, 1, 3] x [3, 1]
      b.op("mul", "Tensor", {{"self", b.op("view", "", {{"self", ids}}, attrs({{"size", Ints{2, 1, 3}}}))},
                             {"other", b.op("view", "", {{"self", small}}, attrs({{"size", Ints{3, 1}}}))}}),
  };
  b.g.set_outputs(outs);
  against_libtorch(b, {1, 2}, [](const Tensor& got, const Tensor& want) {
    const at::Tensor a = native::to_aten(got), w = native::to_aten(want);
    EXPECT_EQ(a.scalar_type(), w.scalar_type());
    EXPECT_TRUE(a.to(w.scalar_type()).equal(w)) << a << " against LibTorch's " << w;
  });
}

// An int64 constant past 2^24 (a table of ids, hashes) is held as int64:
// exact, and again in the plans for new input shapes.
TEST(XnnpackInt64, ConstantsPast2To24StayExactAcrossPlans) {
  Builder b;
  const ValueId ids = b.typed_input(at::tensor({1, 2, 3}, at::kLong).view({1, 3}));
  b.g.set_value_type(ids, DType::kInt64, std::nullopt);  // any shape
  const at::Tensor table = at::tensor({std::int64_t{1} << 40, -(std::int64_t{1} << 35) - 7, std::int64_t{16777217}}, at::kLong).view({1, 3});
  const ValueId c = b.g.add_constant("table", native::from_aten(table));
  b.g.set_outputs({b.op("add", "Tensor", {{"self", ids}, {"other", c}}, attrs({{"alpha", std::int64_t{1}}}))});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  g.finalize();
  for (std::int64_t rows : {1, 4, 1}) {
    const at::Tensor in = at::arange(rows * 3, at::kLong).view({rows, 3}) * 1000003;
    const at::Tensor got = native::to_aten(g.run({native::from_aten(in)})[0]);
    EXPECT_TRUE(got.equal(in + table)) << rows << " rows: " << got;
  }
}

// An op that computes on float32 here refuses an int64 input past 2^24 at
// the run, naming the node, the input and the element, rather than give a
// rounded result; the same graph runs on integers float32 holds. An input of
// another dtype than the graph's is refused too.
TEST(XnnpackInt64, OtherOpsRefuseIntegersPast2To24ByName) {
  Builder b;
  const ValueId ids = b.typed_input(at::tensor({3, 7}, at::kLong));
  const ValueId rolled = b.op("roll", "", {{"self", ids}}, attrs({{"shifts", Ints{1}}, {"dims", Ints{0}}}));
  b.g.set_value_type(rolled, DType::kInt64, std::nullopt);
  b.g.set_outputs({rolled});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  g.finalize();
  auto roll = [&](std::vector<std::int64_t> v) { return native::to_aten(g.run({Tensor::from_vector<std::int64_t>(v, {2})})[0]); };
  EXPECT_TRUE(roll({-(1 << 24), 1 << 24}).equal(at::tensor({1 << 24, -(1 << 24)}, at::kLong)));
  EXPECT_TG_ERROR(g.run({Tensor::from_vector<std::int64_t>({5, (1 << 24) + 1}, {2})}), ErrorCode::kOutOfRange,
                  "(aten::roll): input 'x0' element 1 is 16777217, past 2^24");
  EXPECT_TG_ERROR(g.run({Tensor::from_vector<float>({5, 6}, {2})}), ErrorCode::kDTypeMismatch, "input %x0 must be int64, given float32");
  EXPECT_TRUE(roll({4, -9}).equal(at::tensor({-9, 4}, at::kLong)));
}

// Integers the graph makes from floats (a cast) are held as float32: an
// int64 output computed past 2^24 from them is refused naming the output
// rather than given rounded.
TEST(XnnpackOpErrors, AnIntegerOutputPast2To24IsRefusedNotRounded) {
  Builder b;
  const ValueId x = b.input({2});
  const ValueId ids = b.op("to", "dtype", {{"self", x}}, attrs({{"dtype", std::int64_t{4}}}));
  b.g.set_value_type(ids, DType::kInt64, symbolic({2}));
  const ValueId big = b.op("mul", "Scalar", {{"self", ids}}, attrs({{"other", std::int64_t{3000000}}}));
  b.g.set_value_type(big, DType::kInt64, symbolic({2}));
  b.g.set_outputs({big});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  g.finalize();
  const Tensor small = Tensor::from_vector<float>({1, -5}, {2});
  EXPECT_TRUE(native::to_aten(g.run({small})[0]).equal(at::tensor({3000000, -15000000}, at::kLong)));
  EXPECT_TG_ERROR(g.run({Tensor::from_vector<float>({2, 6}, {2})}), ErrorCode::kOutOfRange, "element 1 is about 18000000");
  EXPECT_TRUE(native::to_aten(g.run({small})[0]).equal(at::tensor({3000000, -15000000}, at::kLong)));  // and it still runs
}

// nonzero's count, what a boolean mask selects and item()'s value are known
// only to the run: a run that reads another count or value than the plan's
// plans again. Each run matches LibTorch's, through counts of none, some and
// all, a count seen before, and an integer item() that sizes a slice.
TEST(XnnpackDataDependent, ANewCountOrValuePlansAgainAndMatchesLibTorch) {
  Builder b;
  const ValueId x = b.input({3, 1, 5});
  const ValueId n = b.typed_input(at::scalar_tensor(3, at::kLong));
  auto typed = [&](ValueId v, DType dtype, std::optional<SymbolicShape> shape = std::nullopt) {
    b.g.set_value_type(v, dtype, std::move(shape));
    return v;
  };
  const ValueId mask = typed(b.op("gt", "Scalar", {{"self", x}}, attrs({{"other", 0.25}})), DType::kBool, symbolic({3, 1, 5}));
  const ValueId coordinates = typed(b.op("nonzero", "", {{"self", mask}}), DType::kInt64);
  const ValueId selected = b.op("index", "Tensor", {{"self", x}, {"indices", mask}});
  // A mask over the first dim (rows kept whole), and one over the last behind Nones.
  const ValueId first = b.op("select", "int", {{"self", b.op("select", "int", {{"self", x}}, attrs({{"dim", std::int64_t{2}}, {"index", std::int64_t{0}}}))}},
                             attrs({{"dim", std::int64_t{1}}, {"index", std::int64_t{0}}}));
  const ValueId rows = typed(b.op("lt", "Scalar", {{"self", first}}, attrs({{"other", 0.0}})), DType::kBool, symbolic({3}));
  const ValueId by_rows = b.op("index", "Tensor", {{"self", x}, {"indices", rows}});
  const ValueId last = typed(b.op("gt", "Scalar", {{"self", b.op("select", "int", {{"self", b.op("select", "int", {{"self", x}}, attrs({{"dim", std::int64_t{0}}, {"index", std::int64_t{1}}}))}},
                                                                 attrs({{"dim", std::int64_t{0}}, {"index", std::int64_t{0}}}))}},
                                   attrs({{"other", -0.5}})),
                             DType::kBool, symbolic({5}));
  Attributes behind;
  behind.set("indices", std::vector<bool>{false, false, true});
  const ValueId by_last = b.op("index", "Tensor", {{"self", x}, {"indices", last}}, behind);
  const ValueId peak = typed(b.op("amax", "", {{"self", x}}, attrs({{"dim", Ints{}}, {"keepdim", false}})), DType::kFloat32, symbolic({}));
  const ValueId top = b.op("item", "", {{"self", peak}});
  const ValueId scaled = b.op("mul", "Tensor", {{"self", x}, {"other", top}});
  const ValueId padded = b.op("constant_pad_nd", "", {{"self", x}, {"value", top}}, attrs({{"pad", Ints{1, 2}}}));
  const ValueId head = b.op("slice", "Tensor", {{"self", x}, {"end", b.op("item", "", {{"self", n}})}},
                            attrs({{"dim", std::int64_t{2}}, {"start", std::int64_t{0}}, {"step", std::int64_t{1}}}));
  // A mask the graph leaves untyped (a scripted model read without shapes), broadcast.
  const ValueId untyped = b.op("ge", "Scalar", {{"self", b.op("select", "int", {{"self", x}}, attrs({{"dim", std::int64_t{0}}, {"index", std::int64_t{2}}}))}},
                               attrs({{"other", 0.0}}));
  const ValueId picked = b.op("masked_select", "", {{"self", x}, {"mask", untyped}});
  // x[mask] = x[mask] * 2: one value per position set.
  Attributes put;
  put.set("accumulate", false);
  const ValueId doubled = b.op("index_put", "", {{"self", x}, {"indices", mask}, {"values", b.op("mul", "Scalar", {{"self", selected}}, attrs({{"other", 2.0}}))}}, put);
  // Repeats computed in the graph (the count of each row's kept elements): x's rows
  // repeated that often, directly and as torch.export writes it (indices, then index_select).
  const ValueId per_row = b.op("sum", "dim_IntList", {{"self", mask}}, attrs({{"dim", Ints{1, 2}}, {"keepdim", false}}));
  b.g.set_value_type(per_row, DType::kInt64, symbolic({3}));
  const ValueId rows_repeated = b.op("repeat_interleave", "self_Tensor", {{"self", x}, {"repeats", per_row}}, attrs({{"dim", std::int64_t{0}}}));
  const ValueId which = b.op("repeat_interleave", "Tensor", {{"repeats", per_row}});
  b.g.set_value_type(which, DType::kInt64, std::nullopt);
  const ValueId gathered = b.op("index_select", "", {{"self", x}, {"index", which}}, attrs({{"dim", std::int64_t{0}}}));
  b.g.set_outputs({coordinates, selected, by_rows, by_last, scaled, head, padded, picked, doubled, rows_repeated, which, gathered});

  Graph copy = b.g;
  TracedGraph reference(std::move(copy), std::nullopt, std::nullopt, native::make_libtorch_backend());
  reference.finalize();
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({2}));
  g.finalize();
  const at::Tensor some = native::to_aten(b.inputs[0]);
  const std::vector<std::pair<at::Tensor, std::int64_t>> runs = {
      {some, 3}, {-some.abs() - 1, 0}, {some.abs() + 1, 5}, {some, 3}, {some * -1, 1}};
  for (std::size_t r = 0; r < runs.size(); ++r) {
    SCOPED_TRACE("run " + std::to_string(r));
    const std::vector<Tensor> inputs = {native::from_aten(runs[r].first.contiguous()), Tensor::from_vector<std::int64_t>({runs[r].second}, {})};
    const auto want = reference.run(inputs);
    const auto got = g.run(inputs);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
      EXPECT_EQ(got[i].dtype(), want[i].dtype()) << "output " << i;
      EXPECT_LE(max_relative_error(got[i], want[i]), 1e-6) << "output " << i;
    }
  }
}

// A number computed from a size is planned again with a new input shape (the
// scalar operand kept in the node's state follows it).
TEST(XnnpackDataDependent, ANumberFromASizeFollowsANewInputShape) {
  Builder b;
  const ValueId x = b.input({2, 3});
  b.g.set_value_type(x, DType::kFloat32, std::nullopt);
  const ValueId width = b.op("size", "int", {{"self", x}}, attrs({{"dim", std::int64_t{1}}}));
  b.g.set_outputs({b.op("mul", "Tensor", {{"self", x}, {"other", width}})});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  g.finalize();
  for (std::int64_t w : {3, 5, 3}) {
    const at::Tensor in = at::randn({2, w});
    EXPECT_TRUE(at::allclose(native::to_aten(g.run({native::from_aten(in)})[0]), in * w)) << "width " << w;
  }
}

// A NaN item() is the value planned for, not a new one at each pass: the run
// ends, with torch's NaNs.
TEST(XnnpackDataDependent, ANaNItemSettles) {
  Builder b;
  const ValueId x = b.input({2, 3});
  const ValueId peak = b.op("amax", "", {{"self", x}}, attrs({{"dim", Ints{}}, {"keepdim", false}}));
  b.g.set_value_type(peak, DType::kFloat32, symbolic({}));
  b.g.set_outputs({b.op("add", "Tensor", {{"self", x}, {"other", b.op("item", "", {{"self", peak}})}})});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  g.finalize();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int r = 0; r < 2; ++r) {
    const auto got = native::to_aten(g.run({Tensor::from_vector<float>({1, nan, 2, 3, 4, 5}, {2, 3})})[0]);
    EXPECT_TRUE(got.isnan().all().item<bool>());
  }
  const auto got = native::to_aten(g.run({Tensor::from_vector<float>({1, 0, 2, 3, 4, 5}, {2, 3})})[0]);
  EXPECT_TRUE(got.equal(at::tensor({6.f, 5.f, 7.f, 8.f, 9.f, 10.f}).view({2, 3}))) << got;
}

// A value known to be complex goes only to the ops that take one: finalize()
// names the node and its input; so does planning where the reader gave no dtype.
TEST(XnnpackComplex, OtherOpsOnComplexValuesAreRefusedByName) {
  for (bool typed : {true, false}) {
    Builder b;
    const ValueId x = b.input({2, 6});
    const ValueId spectrum = b.op("fft_rfft", "", {{"self", x}}, attrs({}));
    if (typed) b.g.set_value_type(spectrum, DType::kComplex64, std::nullopt);
    b.g.set_outputs({b.op("sum", "", {{"self", spectrum}}, attrs({}))});
    TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
    try {
      g.finalize();
      FAIL() << "a sum of complex values was planned";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
      EXPECT_NE(e.message().find("aten::sum"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("is complex"), std::string::npos) << e.message();
    }
  }
}

// New input lengths give the transforms new DFT matrices (and the old length's again).
TEST(XnnpackComplex, NewLengthsPlanNewTransforms) {
  Builder b;
  const ValueId x = b.input({2, 8});
  b.g.set_value_type(x, DType::kFloat32, std::nullopt);  // any shape
  b.g.set_outputs({b.op("fft_rfftn", "", {{"self", x}}, attrs({{"norm", std::string("ortho")}}))});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({2}));
  g.finalize();
  for (std::int64_t w : {8, 12, 8, 1}) {
    const at::Tensor in = at::randn({2, w});
    EXPECT_LE(testing::max_relative_error(native::to_aten(g.run({native::from_aten(in)})[0]), at::fft_rfftn(in, std::nullopt, std::nullopt, "ortho")), 1e-5)
        << "width " << w;
  }
}

// Random ops draw from a generator of ours (not torch's): the distributions
// are checked, new values come at every run, and randperm is a permutation.
TEST(XnnpackRandom, DrawsTheDistributionsAnewAtEachRun) {
  Builder b;
  const ValueId like = b.input({5, 7});
  const ValueId uniform = b.op("rand", "", {}, attrs({{"size", Ints{1000, 3}}}));
  const ValueId normal = b.op("randn", "", {}, attrs({{"size", Ints{4001}}}));
  const ValueId perm = b.op("randperm", "", {}, attrs({{"n", std::int64_t{257}}}));
  b.g.set_value_type(perm, DType::kInt64, symbolic({257}));
  const ValueId ints = b.op("randint", "low", {}, attrs({{"low", std::int64_t{-3}}, {"high", std::int64_t{10}}, {"size", Ints{2000}}}));
  b.g.set_value_type(ints, DType::kInt64, symbolic({2000}));
  const ValueId noise = b.op("randn_like", "", {{"self", like}});
  b.g.set_outputs({uniform, normal, perm, ints, noise});
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    Graph graph = b.g;
    TracedGraph g(std::move(graph), std::nullopt, std::nullopt, make_backend({threads}));
    g.finalize();
    const auto first = g.run(b.inputs), second = g.run(b.inputs);
    const at::Tensor u = native::to_aten(first[0]), n = native::to_aten(first[1]), p = native::to_aten(first[2]), k = native::to_aten(first[3]);
    EXPECT_EQ(u.sizes(), at::IntArrayRef({1000, 3}));
    EXPECT_GE(u.min().item<float>(), 0.0f);
    EXPECT_LT(u.max().item<float>(), 1.0f);
    EXPECT_NEAR(u.mean().item<float>(), 0.5f, 0.02f);  // 4 sigma of 3000 draws
    EXPECT_NEAR(n.mean().item<float>(), 0.0f, 0.07f);
    EXPECT_NEAR(n.std().item<float>(), 1.0f, 0.05f);
    EXPECT_EQ(p.scalar_type(), at::kLong);
    EXPECT_TRUE(std::get<0>(p.sort()).equal(at::arange(257, at::kLong)));
    EXPECT_FALSE(p.equal(at::arange(257, at::kLong)));
    EXPECT_EQ(k.min().item<std::int64_t>(), -3);
    EXPECT_EQ(k.max().item<std::int64_t>(), 9);
    EXPECT_EQ(std::get<0>(at::_unique(k)).numel(), 13);
    EXPECT_EQ(first[4].shape(), (Shape{5, 7}));
    for (std::size_t i = 0; i < first.size(); ++i) EXPECT_FALSE(native::to_aten(first[i]).equal(native::to_aten(second[i]))) << "output " << i << " drawn again";
  }
}

// What torch refuses, these lowerings refuse at finalize(), typed and naming the node.
TEST(XnnpackOpErrors, RefusedAtFinalizeNamingTheNode) {
  auto refused = [](const std::function<void(Builder&)>& build, ErrorCode code, const std::string& words) {
    Builder b;
    build(b);
    TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
    EXPECT_TG_ERROR(g.finalize(), code, words);
  };
  refused([](Builder& b) {
    b.g.set_outputs({b.op("as_strided", "", {{"self", b.input({3, 10})}}, attrs({{"size", Ints{4, 3, 5}}, {"stride", Ints{7, 1, 2}}, {"storage_offset", std::int64_t{2}}}))});
  }, ErrorCode::kOutOfRange, "node 'as_strided_0' (aten::as_strided): size [4, 3, 5], stride [7, 1, 2] at offset 2 reads past the 30 elements");
  refused([](Builder& b) {
    const ValueId q = b.input({2, 3, 4});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", q}, {"value", q}}, attrs({{"dropout_p", 0.1}, {"is_causal", false}}))});
  }, ErrorCode::kUnsupported, "dropout_p 0.1");
  refused([](Builder& b) {
    b.g.set_outputs({b.op("repeat", "", {{"self", b.input({2, 3})}}, attrs({{"repeats", Ints{2}}}))});
  }, ErrorCode::kSchema, "repeats [2] for a tensor of rank 2");
  refused([](Builder& b) {
    b.g.set_outputs(b.ops("split_with_sizes", {{"self", b.input({2, 7})}}, attrs({{"split_sizes", Ints{3, 3}}, {"dim", std::int64_t{1}}}), 2));
  }, ErrorCode::kShapeMismatch, "split sizes [3, 3] for a dim of 7");
  refused([](Builder& b) {  // a window wider than the padded image
    b.g.set_outputs({b.op("im2col", "", {{"self", b.input({1, 2, 4, 4})}},
                          attrs({{"kernel_size", Ints{5, 2}}, {"dilation", Ints{1, 1}}, {"padding", Ints{0, 0}}, {"stride", Ints{1, 1}}}))});
  }, ErrorCode::kShapeMismatch, "for 0 x 3 sliding windows");
  refused([](Builder& b) {  // sizes past what any window holds, never multiplied out
    b.g.set_outputs({b.op("im2col", "", {{"self", b.input({1, 2, 4, 4})}},
                          attrs({{"kernel_size", Ints{std::int64_t{1} << 40, 2}}, {"dilation", Ints{1, 1}}, {"padding", Ints{0, 0}}, {"stride", Ints{1, 1}}}))});
  }, ErrorCode::kLimitExceeded, "'kernel_size'");
  refused([](Builder& b) {  // a float has no bitwise ops
    const ValueId x = b.input({3});
    b.g.set_value_type(x, DType::kFloat32, symbolic({3}));
    b.g.set_outputs({b.op("bitwise_not", "", {{"self", x}})});
  }, ErrorCode::kUnsupported, "bitwise_not of a float32 (masks and integers only)");
  refused([](Builder& b) {  // group norm's sizes are checked against the input's, never multiplied out
    const ValueId x = b.input({2, 6, 3});
    b.g.set_outputs(b.ops("native_group_norm_backward", {{"grad_out", x}, {"input", x}, {"mean", b.input({2, 3})}, {"rstd", b.input({2, 3})}},
                          attrs({{"N", std::int64_t{1} << 40}, {"C", std::int64_t{1} << 40}, {"HxW", std::int64_t{3}}, {"group", std::int64_t{3}},
                                 {"output_mask", std::vector<bool>{true, false, false}}}), 3));
  }, ErrorCode::kShapeMismatch, "N, C, HxW and group for input [2, 6, 3]");
  refused([](Builder& b) {
    const ValueId x = b.input({1, 4, 5}), w = b.constant({6, 2, 3});
    b.g.set_outputs(b.ops("convolution_backward", {{"grad_output", b.input({1, 6, 3})}, {"input", x}, {"weight", w}},
                          attrs({{"bias_sizes", Ints{6}}, {"stride", Ints{1}}, {"padding", Ints{0}}, {"dilation", Ints{1}}, {"transposed", false},
                                 {"output_padding", Ints{0}}, {"groups", std::int64_t{1} << 50}, {"output_mask", std::vector<bool>{true, true, true}}}), 3));
  }, ErrorCode::kShapeMismatch, "weight [6, 2, 3] for 4 in and 6 out channels in 1125899906842624 groups");
  refused([](Builder& b) {
    const ValueId x = b.input({1, 2, 5});
    b.g.set_outputs(b.ops("convolution_backward", {{"grad_output", b.input({1, 3, 4})}, {"input", x}, {"weight", b.constant({3, 2, 3})}},
                          attrs({{"bias_sizes", Ints{3}}, {"stride", Ints{1}}, {"padding", Ints{0}}, {"dilation", Ints{1}}, {"transposed", false},
                                 {"output_padding", Ints{0}}, {"groups", std::int64_t{1}}, {"output_mask", std::vector<bool>{true, true, true}}}), 3));
  }, ErrorCode::kShapeMismatch, "grad_output [1, 3, 4] is not the output of input [1, 2, 5]");
  refused([](Builder& b) {
    b.g.set_outputs({b.op("randperm", "", {}, attrs({{"n", std::int64_t{1} << 30}}))});
  }, ErrorCode::kInvalidArgument, "randperm of 1073741824 (0 to 2^24 here)");
}

// An embedding gradient's index out of range stops the run naming the node.
TEST(XnnpackOpErrors, BackwardIndicesOutOfRangeStopTheRun) {
  Builder b;
  const ValueId ids = b.typed_input(at::tensor({1, 0}, at::kLong));
  b.g.set_outputs({b.op("embedding_dense_backward", "", {{"grad_output", b.input({2, 3})}, {"indices", ids}},
                        attrs({{"num_weights", std::int64_t{4}}, {"padding_idx", std::int64_t{-1}}, {"scale_grad_by_freq", false}}))});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  g.finalize();
  EXPECT_EQ(g.run(b.inputs)[0].shape(), (Shape{4, 3}));
  const std::vector<Tensor> bad{Tensor::from_vector<std::int64_t>({1, 9}, {2}), b.inputs[1]};
  EXPECT_TG_ERROR(g.run(bad), ErrorCode::kOutOfRange, "index 9.000000 is out of range for 4 weights");
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(op_cases()), [](const auto& info) { return info.param.name; });

// Column blocks: convolutions and linears whose weights outgrow the L2 cache
// (over 2 MB), over 32 or more rows, run as XNNPACK operators over blocks of
// their output channels. Each case: its node's blocks in the profile (0: one
// operator), and its output against LibTorch, at 1 and 2 threads.
struct BlockCase {
  std::string name;
  std::function<ValueId(Builder&)> build;  // the node under test's output
  int blocks;
};
void PrintTo(const BlockCase& c, std::ostream* os) { *os << c.name; }

Attributes conv_attrs(std::size_t rank, std::int64_t stride, std::int64_t padding) {
  return attrs({{"stride", Ints(rank, stride)}, {"padding", Ints(rank, padding)}, {"dilation", Ints(rank, 1)}, {"groups", std::int64_t{1}}});
}

std::vector<BlockCase> block_cases() {
  std::vector<BlockCase> out;
  // 157 x 3 x 3 inputs per output channel (5.6 KB): blocks of 64 channels, the
  // last of 16; 6 x 6 output pixels; relu6 fused into each block.
  out.push_back({"conv2d_strided_relu6_partial_last_block", [](Builder& b) {
    Attributes a = conv_attrs(2, 2, 1);
    a.set("fused_activation", std::string("clip"));
    a.set("fused_min", 0.0);
    a.set("fused_max", 6.0);
    return b.op("conv2d", "", {{"input", b.input({1, 157, 11, 11})}, {"weight", b.constant({400, 157, 3, 3}, 0.05)}, {"bias", b.constant({400})}}, a);
  }, 7});
  // The same weights over 3 x 3 = 9 output pixels: one operator.
  out.push_back({"conv2d_few_rows_stays_whole", [](Builder& b) {
    return b.op("conv2d", "", {{"input", b.input({1, 157, 3, 3})}, {"weight", b.constant({400, 157, 3, 3}, 0.05)}, {"bias", b.constant({400})}},
                conv_attrs(2, 1, 1));
  }, 0});
  // A 1x1 convolution without bias, batch 2, height 1, 34 pixels: 1300 x 4 B per channel, blocks of 96, the last of 66.
  out.push_back({"conv2d_1x1_batch_2_height_1_no_bias", [](Builder& b) {
    return b.op("conv2d", "", {{"input", b.input({2, 1300, 1, 17})}, {"weight", b.constant({450, 1300, 1, 1}, 0.05)}}, conv_attrs(2, 1, 0));
  }, 5});
  // 3D (the depth unfolded into the channels): 100 x 27 per channel, blocks of 32, the last of 18.
  out.push_back({"conv3d_depth_3", [](Builder& b) {
    return b.op("conv3d", "", {{"input", b.input({1, 100, 3, 4, 5})}, {"weight", b.constant({210, 100, 3, 3, 3}, 0.05)}, {"bias", b.constant({210})}},
                conv_attrs(3, 1, 1));
  }, 7});
  // A linear over [2, 17] rows, 700 inputs: blocks of 160, the last of 10.
  out.push_back({"linear_rows_of_a_3d_input", [](Builder& b) {
    return b.op("linear", "", {{"input", b.input({2, 17, 700})}, {"weight", b.constant({810, 700}, 0.05)}, {"bias", b.constant({810})}});
  }, 6});
  out.push_back({"linear_three_rows_stays_whole", [](Builder& b) {
    return b.op("linear", "", {{"input", b.input({3, 700})}, {"weight", b.constant({810, 700}, 0.05)}, {"bias", b.constant({810})}});
  }, 0});
  // torch.export's linear: addmm(bias, x, mat2 [700, 810]), mat2's columns copied per block.
  out.push_back({"addmm_40_rows", [](Builder& b) {
    const ValueId x = b.input({40, 700});
    return b.op("addmm", "", {{"self", b.constant({810})}, {"mat1", x}, {"mat2", b.constant({700, 810}, 0.05)}});
  }, 6});
  return out;
}

// A graph on LibTorch (the reference) and on XNNPACK's direct convolutions
// with profiling, both finalized.
struct AgainstLibTorch {
  AgainstLibTorch(const Graph& graph, int threads) {
    auto owned = std::make_unique<XnnpackBackend>(Options{threads, true, 0, ConvAlgorithm::kDirect});
    backend = owned.get();
    reference.emplace(Graph(graph), std::nullopt, std::nullopt, native::make_libtorch_backend());
    xnnpack.emplace(Graph(graph), std::nullopt, std::nullopt, std::move(owned));
    reference->finalize();
    xnnpack->finalize();
  }
  // Runs both; checks the output's shape and values within 1e-5.
  void run_and_check(const std::vector<Tensor>& inputs, const std::string& what = "") {
    const Tensor want = reference->run(inputs).at(0), got = xnnpack->run(inputs).at(0);
    EXPECT_EQ(got.shape(), want.shape()) << what;
    EXPECT_LE(max_relative_error(got, want), 1e-5) << what;
  }
  std::optional<TracedGraph> reference, xnnpack;
  const XnnpackBackend* backend = nullptr;
};

// Runs the graph `build` makes against LibTorch and returns the profile of
// the node under test (`build`'s output).
NodeTime profile_against_libtorch(const std::function<ValueId(Builder&)>& build, int threads) {
  at::manual_seed(7);
  Builder b;
  const ValueId y = build(b);
  b.g.set_outputs({y});
  const std::string node = b.g.node(*b.g.value(y).producer).name;
  AgainstLibTorch graphs(b.g, threads);
  graphs.run_and_check(b.inputs);
  const auto times = graphs.backend->profile();
  const auto it = std::find_if(times.begin(), times.end(), [&](const NodeTime& t) { return t.node == node; });
  if (it == times.end()) {
    ADD_FAILURE() << node << " is not in the profile";
    return {};
  }
  return *it;
}

class ColumnBlockTest : public ::testing::TestWithParam<BlockCase> {};

TEST_P(ColumnBlockTest, RunsInBlocksAndMatchesLibTorch) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    EXPECT_EQ(profile_against_libtorch(GetParam().build, threads).column_blocks, GetParam().blocks);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ColumnBlockTest, ::testing::ValuesIn(block_cases()), [](const auto& info) { return info.param.name; });

// One graph, its input's height symbolic: the blocks are made for many rows,
// the whole operator for few, and the blocks again; each run right.
TEST(ColumnBlocks, ANewInputShapeChangesTheBlocksAndKeepsTheResultsRight) {
  at::manual_seed(3);
  Builder b;
  const ValueId x = b.g.add_input("x", DType::kFloat32, SymbolicShape{Dim::of(1), Dim::of(157), Dim::sym("H"), Dim::of(5)});
  const ValueId y = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({400, 157, 3, 3}, 0.05)}, {"bias", b.constant({400})}}, conv_attrs(2, 1, 1));
  b.g.set_outputs({y});
  AgainstLibTorch graphs(b.g, 1);
  for (const auto& [height, blocks] : {std::pair{8, 7}, std::pair{1, 0}, std::pair{7, 7}}) {
    graphs.run_and_check({native::from_aten(at::randn({1, 157, height, 5}))}, "height " + std::to_string(height));
    EXPECT_EQ(graphs.backend->profile().at(0).column_blocks, blocks) << "height " << height;
  }
}

// Pixel folding: a convolution with few output channels computes
// neighbouring output pixels of a row as one, to fill XNNPACK's tiles of
// output channels (32 wide with AVX-512, 16 with AVX, 8 in wasm and on Arm).
// Each case: the fold its node's profile shows for each tile width, and its
// output against LibTorch, at 1 and 2 threads.
struct FoldCase {
  std::string name;
  std::function<ValueId(Builder&)> build;
  std::map<int, int> fold;  // by XnnpackBackend::gemm_tile_columns()
};
void PrintTo(const FoldCase& c, std::ostream* os) { *os << c.name; }

std::vector<FoldCase> fold_cases() {
  std::vector<FoldCase> out;
  auto conv2d = [](Shape in, Shape weight, std::int64_t stride, std::int64_t padding, std::int64_t dilation = 1) {
    return [=](Builder& b) {
      Attributes a = conv_attrs(2, stride, padding);
      a.set("dilation", Ints(2, dilation));
      return b.op("conv2d", "", {{"input", b.input(in)}, {"weight", b.constant(weight, 0.2)}, {"bias", b.constant({weight[0]})}}, a);
    };
  };
  // 16 channels, 5 inputs, 14 columns: two pixels fill a tile of 32.
  out.push_back({"conv2d_16_channels", conv2d({1, 5, 7, 14}, {16, 5, 3, 3}, 1, 1), {{32, 2}, {16, 1}, {8, 1}}});
  // 13 output columns do not pair: one operator as it was.
  out.push_back({"conv2d_16_channels_odd_width_stays", conv2d({1, 5, 7, 13}, {16, 5, 3, 3}, 1, 1), {{32, 1}, {16, 1}, {8, 1}}});
  // Stride 2, 8 channels, 8 columns: four pixels under a kernel 9 wide with stride 8.
  out.push_back({"conv2d_8_channels_stride_2", conv2d({1, 3, 9, 16}, {8, 3, 3, 3}, 2, 1), {{32, 4}, {16, 1}, {8, 1}}});
  // 2 channels (a head), batch 2: up to 16 pixels.
  out.push_back({"conv2d_2_channels_batch_2", conv2d({2, 3, 5, 34}, {2, 3, 3, 3}, 1, 0), {{32, 16}, {16, 8}, {8, 4}}});
  // A 5x5 kernel: two pixels widen it to 6 columns only.
  out.push_back({"conv2d_5x5_16_channels", conv2d({1, 4, 6, 10}, {16, 4, 5, 5}, 1, 2), {{32, 2}, {16, 1}, {8, 1}}});
  // A 1x1 kernel would widen with the pixels: nothing gained.
  out.push_back({"conv2d_1x1_stays", conv2d({1, 6, 4, 8}, {16, 6, 1, 1}, 1, 0), {{32, 1}, {16, 1}, {8, 1}}});
  out.push_back({"conv2d_dilated_stays", conv2d({1, 5, 9, 12}, {16, 5, 3, 3}, 1, 2, 2), {{32, 1}, {16, 1}, {8, 1}}});
  // 3D (the depth unfolded into the channels), 12 channels from 1: 24 of a tile of 32.
  out.push_back({"conv3d_12_channels", [](Builder& b) {
    Attributes a = conv_attrs(3, 1, 0);
    a.set("fused_activation", std::string("relu"));
    return b.op("conv3d", "", {{"input", b.input({1, 1, 5, 6, 8})}, {"weight", b.constant({12, 1, 3, 3, 3}, 0.2)}, {"bias", b.constant({12})}}, a);
  }, {{32, 2}, {16, 1}, {8, 1}}});
  return out;
}

class PixelFoldTest : public ::testing::TestWithParam<FoldCase> {};

TEST_P(PixelFoldTest, FoldsPixelsAndMatchesLibTorch) {
  const int nr = XnnpackBackend::gemm_tile_columns();
  ASSERT_TRUE(GetParam().fold.count(nr)) << "tile width " << nr;
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    EXPECT_EQ(profile_against_libtorch(GetParam().build, threads).pixel_fold, GetParam().fold.at(nr)) << "tile width " << nr;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, PixelFoldTest, ::testing::ValuesIn(fold_cases()), [](const auto& info) { return info.param.name; });

// The input's width symbolic, 8 output channels: output widths that four
// divide fold four pixels (AVX-512), other even ones two, odd ones none; each
// run right.
TEST(PixelFold, ANewInputWidthChangesTheFoldAndKeepsTheResultsRight) {
  at::manual_seed(5);
  Builder b;
  const ValueId x = b.g.add_input("x", DType::kFloat32, SymbolicShape{Dim::of(1), Dim::of(5), Dim::of(6), Dim::sym("W")});
  const ValueId y = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({8, 5, 3, 3}, 0.2)}, {"bias", b.constant({8})}}, conv_attrs(2, 1, 0));
  b.g.set_outputs({y});
  AgainstLibTorch graphs(b.g, 1);
  // Output widths 12, 10, 11, 8 (inputs 2 wider), their folds by tile width.
  const std::map<int, std::vector<int>> folds{{32, {4, 2, 1, 4}}, {16, {2, 2, 1, 2}}, {8, {1, 1, 1, 1}}};
  const int nr = XnnpackBackend::gemm_tile_columns();
  ASSERT_TRUE(folds.count(nr)) << "tile width " << nr;
  const std::vector<int> widths{12, 10, 11, 8};
  for (std::size_t k = 0; k < widths.size(); ++k) {
    graphs.run_and_check({native::from_aten(at::randn({1, 5, 6, widths[k] + 2}))}, "output width " + std::to_string(widths[k]));
    EXPECT_EQ(graphs.backend->profile().at(0).pixel_fold, folds.at(nr)[k]) << "output width " << widths[k];
  }
}

}  // namespace
}  // namespace tracegraph::xnnpack
