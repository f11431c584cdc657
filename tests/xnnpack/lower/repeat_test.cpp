// Tiling (lower/repeat.cpp): repeat adding a dim, repeat_interleave.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> repeat_cases() {
  std::vector<OpCase> out;
  out.push_back({"repeat_adding_a_dim", [](Builder& b) {
    const ValueId x = b.input({3, 1, 2});
    b.g.set_outputs({b.op("repeat", "", {{"self", x}}, attrs({{"repeats", Ints{2, 1, 3, 2}}})),
                     b.op("repeat", "", {{"self", x}}, attrs({{"repeats", Ints{1, 1, 1}}}))});
  }});
  out.push_back({"repeat_interleave_einsum_and_nearest_exact", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5});
    const ValueId flat = b.op("repeat_interleave", "self_int", {{"self", x}}, attrs({{"repeats", std::int64_t{2}}}));
    const ValueId reps = b.g.add_constant("reps", native::from_aten(at::tensor({1, 0, 3}, at::kLong)));
    const ValueId per = b.op("repeat_interleave", "self_Tensor", {{"self", x}, {"repeats", reps}}, attrs({{"dim", std::int64_t{1}}}));
    // A diagonal, a sum over one operand, an ellipsis and three operands.
    Attributes e1 = attrs({{"equation", std::string("ii->i")}});
    const ValueId diag = b.op("einsum", "", {{"tensors", b.input({3, 3})}}, e1);
    const ValueId y = b.input({5, 4}), z = b.input({4});
    Attributes e2 = attrs({{"equation", std::string("...jk,kl,l->...j")}});
    const ValueId three = b.op("einsum", "", {{"tensors", x}, {"tensors", y}, {"tensors", z}}, e2);
    const ValueId near = b.op("_upsample_nearest_exact2d", "vec", {{"input", b.input({1, 2, 5, 3})}}, attrs({{"output_size", Ints{7, 2}}}));
    b.g.set_outputs({flat, per, diag, three, near});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(repeat_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
