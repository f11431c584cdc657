// Matrix products (lower/matmul.cpp): torch.export's linear, matmul with
// broadcast batches and vectors, mm and bmm, addmm in general.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> matmul_cases() {
  std::vector<OpCase> out;
  // torch.export's linear: addmm(bias, x, permute(weight, [1, 0])), spelled as torch.export spells it.
  out.push_back({"addmm_of_a_permuted_weight_exported_names", [](Builder& b) {
    const ValueId x = b.input({4, 7});
    const ValueId w = b.constant({5, 7});
    const ValueId bias = b.constant({5});
    Attributes p = attrs({{"dims", Ints{1, 0}}, {std::string(kArgNamesAttribute), std::vector<std::string>{"self"}}});
    const ValueId wt = b.g.node(b.g.add_node("aten.permute.default", {w}, {NewValue{}}, p, "permute")).outputs[0];
    Attributes a = attrs({{std::string(kArgNamesAttribute), std::vector<std::string>{"self", "mat1", "mat2"}}});
    b.g.set_outputs({b.g.node(b.g.add_node("aten.addmm.default", {bias, x, wt}, {NewValue{}}, a, "addmm")).outputs[0]});
  }});
  out.push_back({"matmul_batched_and_mm", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5, 4});
    const ValueId y = b.input({2, 3, 4, 6});
    const ValueId z = b.input({5, 4});
    const ValueId w = b.input({3, 7, 4});
    b.g.set_outputs({b.op("matmul", "", {{"self", x}, {"other", y}}), b.op("mm", "", {{"self", z}, {"mat2", b.constant({4, 3})}}),
                     b.op("matmul", "", {{"self", w}, {"other", b.constant({4, 2})}})});
  }});
  out.push_back({"matmul_broadcast_batches_and_vectors", [](Builder& b) {
    const ValueId x = b.input({2, 1, 5, 4});
    const ValueId y = b.input({3, 4, 7});
    const ValueId v = b.input({4});
    const ValueId z = b.input({2, 3, 4, 1});
    b.g.set_outputs({b.op("matmul", "", {{"self", x}, {"other", y}}), b.op("matmul", "", {{"self", v}, {"other", y}}),
                     b.op("matmul", "", {{"self", x}, {"other", v}}), b.op("bmm", "", {{"self", y}, {"mat2", b.constant({3, 7, 1})}}),
                     b.op("matmul", "", {{"self", z}, {"other", b.constant({1, 5})}})});
  }});
  out.push_back({"addmm_general_rsub_and_masked_fill_of_tensors", [](Builder& b) {
    const ValueId self = b.input({1, 3}), m1 = b.input({5, 2}), m2 = b.input({2, 3});
    const ValueId addmm = b.op("addmm", "", {{"self", self}, {"mat1", m1}, {"mat2", m2}}, attrs({{"beta", 0.5}, {"alpha", -2.0}}));
    const ValueId a = b.input({4, 1}), c = b.input({3});
    const ValueId rsub = b.op("rsub", "Tensor", {{"self", a}, {"other", c}}, attrs({{"alpha", 3.0}}));
    const ValueId mask = b.op("gt", "Scalar", {{"self", a}}, attrs({{"other", 0.0}}));
    const ValueId value = b.op("sum", "", {{"self", c}});
    const ValueId fill = b.op("masked_fill", "Tensor", {{"self", b.input({4, 3})}, {"mask", mask}, {"value", value}});
    b.g.set_outputs({addmm, rsub, fill});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(matmul_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
