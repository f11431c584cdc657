// Factories (lower/factory.cpp).
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> factory_cases() {
  std::vector<OpCase> out;
  out.push_back({"arange_full_and_fmod_as_index_arithmetic", [](Builder& b) {
    const ValueId x = b.input({2, 7});
    const ValueId r = b.op("arange", "start_step", {}, attrs({{"start", std::int64_t{1}}, {"end", std::int64_t{8}}, {"step", std::int64_t{1}},
                                                            {"dtype", std::int64_t{6}}}));
    const ValueId f = b.op("full", "", {}, attrs({{"size", Ints{2, 7}}, {"fill_value", 0.5}, {"dtype", std::int64_t{6}}}));
    const ValueId m = b.op("fmod", "Scalar", {{"self", r}}, attrs({{"other", 3.0}}));
    b.g.set_outputs({b.op("add", "Tensor", {{"self", b.op("mul", "Tensor", {{"self", x}, {"other", m}})}, {"other", f}}, attrs({{"alpha", std::int64_t{1}}}))});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(factory_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
