// Elementwise ops (lower/elementwise.cpp): broadcasting, fused clamps,
// the portable functions, comparisons and masks, fills, numbers known before
// the run, bitwise ops, three operands.
#include "xnnpack/lower/lowering_test.h"
#include "tracegraph/transforms/transforms.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> elementwise_cases() {
  std::vector<OpCase> out;
  out.push_back({"broadcast_add_mul_and_batch_norm", [](Builder& b) {
    const ValueId x = b.input({2, 3, 4, 5, 6});
    const ValueId a = b.op("add", "Tensor", {{"self", x}, {"other", b.constant({3, 1, 1, 1})}}, attrs({{"alpha", std::int64_t{1}}}));
    const ValueId m = b.op("mul", "Tensor", {{"self", a}, {"other", b.constant({6})}});
    const ValueId bn = b.op("batch_norm", "", {{"input", m}, {"weight", b.constant({3})}, {"bias", b.constant({3})},
                                               {"running_mean", b.constant({3})}, {"running_var", b.positive_constant({3})}},
                            attrs({{"training", false}, {"momentum", 0.1}, {"eps", 1e-5}, {"cudnn_enabled", true}}));
    b.g.set_outputs({bn});
  }});
  out.push_back({"portable_pointwise_chain", [](Builder& b) {
    const ValueId x = b.input({2, 5, 3, 1});
    ValueId y = b.op("hardsigmoid", "", {{"self", x}});
    y = b.op("silu", "", {{"self", y}});
    y = b.op("gelu", "", {{"self", y}}, attrs({{"approximate", std::string("tanh")}}));
    y = b.op("pow", "Tensor_Scalar", {{"self", y}}, attrs({{"exponent", 3.0}}));
    b.g.set_outputs({b.op("rsub", "Scalar", {{"self", y}}, attrs({{"other", 2.5}, {"alpha", 0.5}}))});
  }});
  out.push_back({"residual_add_with_fused_clamps", [](Builder& b) {
    // activation_fusion's relu and relu6 on adds: same shapes after a
    // convolution (one pass of ours), broadcast and plain (XNNPACK and a clamp).
    const ValueId x = b.input({2, 5, 7, 3});
    const ValueId c = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({5, 5, 3, 3})}, {"bias", b.constant({5})}},
                           attrs({{"stride", Ints{1, 1}}, {"padding", Ints{1, 1}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}));
    const ValueId same = b.op("add", "Tensor", {{"self", c}, {"other", x}}, attrs({{"alpha", std::int64_t{1}}, {std::string(kFusedActivation), std::string("relu")}}));
    const ValueId six = b.op("add", "Tensor", {{"self", x}, {"other", c}},
                             attrs({{std::string(kFusedActivation), std::string("clip")}, {std::string(kFusedMin), 0.0}, {std::string(kFusedMax), 6.0}}));
    const ValueId broadcast = b.op("add", "Tensor", {{"self", c}, {"other", b.input({1, 5, 1, 1})}}, attrs({{std::string(kFusedActivation), std::string("relu")}}));
    const ValueId y = b.input({4, 6});
    const ValueId plain = b.op("add", "Tensor", {{"self", y}, {"other", b.input({4, 6})}}, attrs({{std::string(kFusedActivation), std::string("relu")}}));
    b.g.set_outputs({same, six, broadcast, plain});
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
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(elementwise_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
