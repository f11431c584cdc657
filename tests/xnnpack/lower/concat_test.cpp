// Joins (lower/concat.cpp): cat of many inputs and of mixed layouts, stack.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> concat_cases() {
  std::vector<OpCase> out;
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
  out.push_back({"clip_concatenate_alpha_dropout_other_spellings", [](Builder& b) {
    const ValueId x = b.input({2, 1, 3}), y = b.input({2, 4, 3});
    const ValueId both = b.op("concatenate", "", {{"tensors", x}, {"tensors", y}}, attrs({{"dim", std::int64_t{1}}}));
    b.g.set_outputs({b.op("clip", "", {{"self", y}}, attrs({{"min", -0.5}, {"max", 0.25}})), both,
                     b.op("alpha_dropout", "", {{"input", x}}, attrs({{"p", 0.3}, {"train", false}}))});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(concat_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
