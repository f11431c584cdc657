// Sorting (lower/sort.cpp).
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> sort_cases() {
  std::vector<OpCase> out;
  out.push_back({"sort_and_topk_along_dims", [](Builder& b) {
    const ValueId x = b.input({3, 6, 5});
    const auto up = b.ops("sort", {{"self", x}}, attrs({{"dim", std::int64_t{1}}, {"descending", false}}), 2);
    const auto down = b.ops("sort", {{"self", x}}, attrs({{"dim", std::int64_t{-1}}, {"descending", true}}), 2);
    const auto top = b.ops("topk", {{"self", x}}, attrs({{"k", std::int64_t{3}}, {"dim", std::int64_t{1}}, {"largest", true}, {"sorted", true}}), 2);
    const auto least = b.ops("topk", {{"self", x}}, attrs({{"k", std::int64_t{1}}, {"dim", std::int64_t{0}}, {"largest", false}, {"sorted", true}}), 2);
    b.g.set_outputs({up[0], up[1], down[0], down[1], top[0], top[1], least[0], least[1]});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(sort_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
