// im2col and col2im (lower/fold.cpp).
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> fold_cases() {
  std::vector<OpCase> out;
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
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(fold_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
