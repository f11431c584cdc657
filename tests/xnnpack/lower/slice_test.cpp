// Slices (lower/slice.cpp): strided slices of channels-last tensors, narrow,
// select, split and chunk into uneven pieces, unbind, slice_scatter.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> slice_cases() {
  std::vector<OpCase> out;
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
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(slice_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
