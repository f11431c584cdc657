// Permutations (lower/permute.cpp): of channels-last tensors, of size-1 dims,
// of more dims than XNNPACK takes, transposes, roll.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> permute_cases() {
  std::vector<OpCase> out;
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
  out.push_back({"roll_two_dims_negative_and_flat", [](Builder& b) {
    const ValueId x = b.input({2, 5, 7, 3});
    const ValueId y = b.input({3, 1, 5});
    b.g.set_outputs({b.op("roll", "", {{"self", x}}, attrs({{"shifts", Ints{-3, 9}}, {"dims", Ints{1, 2}}})),
                     b.op("roll", "", {{"self", y}}, attrs({{"shifts", Ints{4}}, {"dims", Ints{}}})),
                     b.op("roll", "", {{"self", y}}, attrs({{"shifts", Ints{1, -2}}, {"dims", Ints{1, -1}}}))});
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
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(permute_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
