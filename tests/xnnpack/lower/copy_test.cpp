// Identities and copies (lower/copy.cpp): a clone that a later op updates in place.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> copy_cases() {
  std::vector<OpCase> out;
  // clone() then an update in place: the clone's, not its source's.
  out.push_back({"clone_then_update_in_place", [](Builder& b) {
    const ValueId x = b.input({2, 3});
    const ValueId copy = b.op("clone", "", {{"self", x}});
    const ValueId updated = b.op("add_", "Tensor", {{"self", copy}, {"other", b.constant({3})}});
    b.g.set_outputs({updated, b.op("mul", "Tensor", {{"self", x}, {"other", x}}), copy});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(copy_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
