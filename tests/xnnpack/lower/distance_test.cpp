// Distances of rows (lower/distance.cpp).
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> distance_cases() {
  std::vector<OpCase> out;
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
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(distance_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
