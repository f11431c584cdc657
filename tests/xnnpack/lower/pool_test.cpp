// Pooling (lower/pool.cpp): max and average pooling in 1D, 2D and 3D, ceil
// mode, padding counted or not, divisor overrides, the maxima's positions,
// adaptive pooling.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> pool_cases() {
  std::vector<OpCase> out;
  out.push_back({"max_pool3d_padded", [](Builder& b) {
    const ValueId x = b.input({1, 3, 9, 8, 7});
    b.g.set_outputs({b.op("max_pool3d", "", {{"self", x}},
                          attrs({{"kernel_size", Ints{3, 3, 3}}, {"stride", Ints{2, 2, 2}}, {"padding", Ints{1, 1, 1}},
                                 {"dilation", Ints{1, 1, 1}}, {"ceil_mode", false}}))});
  }});
  out.push_back({"avg_pool_and_adaptive_pool", [](Builder& b) {
    const ValueId x = b.input({1, 4, 12, 10});
    const ValueId a = b.op("avg_pool2d", "", {{"self", x}},
                           attrs({{"kernel_size", Ints{2, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{0, 0}}, {"ceil_mode", false}, {"count_include_pad", true}}));
    b.g.set_outputs({b.op("adaptive_avg_pool2d", "", {{"self", a}}, attrs({{"output_size", Ints{3, 5}}}))});
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
  out.push_back({"adaptive_avg_pool2d_underscored", [](Builder& b) {
    b.g.set_outputs({b.op("_adaptive_avg_pool2d", "", {{"self", b.input({1, 3, 7, 5})}}, attrs({{"output_size", Ints{3, 2}}}))});
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
  out.push_back({"avg_pool2d_divisor_override_unbatched", [](Builder& b) {
    b.g.set_outputs({b.op("avg_pool2d", "", {{"self", b.input({3, 7, 5})}},
                          attrs({{"kernel_size", Ints{3, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"ceil_mode", true},
                                 {"count_include_pad", true}, {"divisor_override", std::int64_t{5}}}))});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(pool_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
