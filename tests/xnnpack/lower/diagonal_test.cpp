// Diagonals (lower/diagonal.cpp).
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> diagonal_cases() {
  std::vector<OpCase> out;
  out.push_back({"diagonal_select_scatter_and_dropout", [](Builder& b) {
    const ValueId x = b.input({3, 4, 1, 5});
    const ValueId main = b.op("diagonal", "", {{"self", x}}, attrs({{"offset", std::int64_t{0}}, {"dim1", std::int64_t{0}}, {"dim2", std::int64_t{1}}}));
    const ValueId above = b.op("diagonal", "", {{"self", x}}, attrs({{"offset", std::int64_t{2}}, {"dim1", std::int64_t{-1}}, {"dim2", std::int64_t{1}}}));
    const ValueId below = b.op("diagonal", "", {{"self", x}}, attrs({{"offset", std::int64_t{-2}}, {"dim1", std::int64_t{3}}, {"dim2", std::int64_t{0}}}));
    const ValueId scattered = b.op("select_scatter", "", {{"self", x}, {"src", b.input({3, 1, 5})}}, attrs({{"dim", std::int64_t{1}}, {"index", std::int64_t{-1}}}));
    const auto dropped = b.ops("native_dropout", {{"input", x}}, attrs({{"p", 0.5}, {"train", false}}), 2);
    b.g.set_outputs({main, above, below, scattered, dropped[0], dropped[1]});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(diagonal_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
