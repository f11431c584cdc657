// einsum (lower/einsum.cpp).
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> einsum_cases() {
  std::vector<OpCase> out;
  out.push_back({"einsum_attention_implicit_outer_and_permuted", [](Builder& b) {
    // maxvit's attention, spelled with spaces and capitals as torchvision does
    const ValueId q = b.input({1, 3, 2, 5, 7});
    const ValueId k = b.input({1, 3, 2, 6, 7});
    const ValueId m = b.input({4, 5});
    const ValueId v = b.input({3});
    const ValueId w = b.input({2, 4, 3});
    auto einsum = [&](const std::string& eq, ValueId x, ValueId y) {
      return b.op("einsum", "", {{"tensors", x}, {"tensors", y}}, attrs({{"equation", eq}}));
    };
    b.g.set_outputs({einsum("B G H I D, B G H J D -> B G H I J", q, k), einsum("ij,jk", m, b.constant({5, 3})),
                     einsum("i,j->ij", v, b.input({5})), einsum("bij,jk->kbi", w, b.constant({3, 6})),
                     einsum("bij,bkj->bik", w, b.input({2, 1, 3}))});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(einsum_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
