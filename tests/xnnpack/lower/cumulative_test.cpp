// Cumulative ops (lower/cumulative.cpp).
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> cumulative_cases() {
  std::vector<OpCase> out;
  out.push_back({"cumsum_each_dim", [](Builder& b) {
    const ValueId x = b.input({3, 1, 5});
    b.g.set_outputs({b.op("cumsum", "", {{"self", x}}, attrs({{"dim", std::int64_t{0}}})), b.op("cumsum", "", {{"self", x}}, attrs({{"dim", std::int64_t{1}}})),
                     b.op("cumsum", "", {{"self", x}}, attrs({{"dim", std::int64_t{-1}}}))});
  }});
  out.push_back({"cummax_cummin_with_ties_and_nan_and_aminmax", [](Builder& b) {
    const ValueId x = b.input({3, 1, 7});
    // Ties (rounded halves) move the position forward; a NaN (log below 0) takes over and stays.
    const ValueId ties = b.op("round", "", {{"self", b.op("mul", "Scalar", {{"self", x}}, attrs({{"other", 2.0}}))}});
    const ValueId nans = b.op("log", "", {{"self", x}});
    std::vector<ValueId> outs;
    for (const char* op : {"cummax", "cummin"})
      for (auto [self, dim] : {std::pair{ties, std::int64_t{2}}, std::pair{nans, std::int64_t{-1}}, std::pair{x, std::int64_t{1}}, std::pair{x, std::int64_t{0}}}) {
        const auto both = b.ops(op, {{"self", self}}, attrs({{"dim", dim}}), 2);
        outs.insert(outs.end(), both.begin(), both.end());
      }
    const auto all = b.ops("aminmax", {{"self", x}}, attrs({}), 2);
    const auto along = b.ops("aminmax", {{"self", x}}, attrs({{"dim", std::int64_t{2}}, {"keepdim", true}}), 2);
    const auto size_one = b.ops("aminmax", {{"self", nans}}, attrs({{"dim", std::int64_t{1}}}), 2);
    for (const auto& pair : {all, along, size_one}) outs.insert(outs.end(), pair.begin(), pair.end());
    b.g.set_outputs(outs);
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(cumulative_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
