// Padding (lower/pad.cpp): every mode, cropping and growing, channels-last and 5D.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> pad_cases() {
  std::vector<OpCase> out;
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
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(pad_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
