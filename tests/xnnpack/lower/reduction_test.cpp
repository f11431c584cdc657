// Reductions (lower/reduction.cpp): means and sums over dims apart and
// empty ones, the portable reductions, max/min.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> reduction_cases() {
  std::vector<OpCase> out;
  out.push_back({"mean_and_softmax", [](Builder& b) {
    const ValueId x = b.input({2, 6, 5, 7});
    const ValueId c = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({4, 6, 1, 1})}, {"bias", b.constant({4})}},
                           attrs({{"stride", Ints{1, 1}}, {"padding", Ints{0, 0}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}));
    const ValueId s = b.op("softmax", "int", {{"self", c}}, attrs({{"dim", std::int64_t{1}}}));
    const ValueId m = b.op("mean", "dim", {{"self", c}}, attrs({{"dim", Ints{2, 3}}, {"keepdim", false}}));
    const ValueId last = b.op("softmax", "int", {{"self", c}}, attrs({{"dim", std::int64_t{-1}}}));
    b.g.set_outputs({s, m, last});
  }});
  out.push_back({"sum_and_mean_over_dims_apart_and_empty", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5, 4});
    const ValueId e = b.input({2, 0, 3});
    b.g.set_outputs({b.op("sum", "dim_IntList", {{"self", x}}, attrs({{"dim", Ints{1}}, {"keepdim", false}})),
                     b.op("sum", "dim_IntList", {{"self", x}}, attrs({{"dim", Ints{0, 2}}, {"keepdim", true}})),
                     b.op("mean", "dim", {{"self", x}}, attrs({{"dim", Ints{-1, 1}}, {"keepdim", false}})),
                     b.op("sum", "dim_IntList", {{"self", e}}, attrs({{"dim", Ints{1}}, {"keepdim", false}}))});
  }});
  out.push_back({"vector_norms_amax_amin", [](Builder& b) {
    const ValueId x = b.input({3, 5, 4});
    std::vector<ValueId> outs;
    outs.push_back(b.op("linalg_vector_norm", "", {{"self", x}}, attrs({{"ord", 2.0}, {"dim", Ints{1}}, {"keepdim", true}})));
    outs.push_back(b.op("linalg_vector_norm", "", {{"self", x}}, attrs({{"ord", 1.0}, {"keepdim", false}})));
    outs.push_back(b.op("linalg_vector_norm", "", {{"self", x}}, attrs({{"ord", std::numeric_limits<double>::infinity()}, {"dim", Ints{-1}}, {"keepdim", false}})));
    outs.push_back(b.op("linalg_vector_norm", "", {{"self", x}}, attrs({{"ord", 3.0}, {"dim", Ints{0, 2}}, {"keepdim", false}})));
    outs.push_back(b.op("amax", "", {{"self", x}}, attrs({{"dim", Ints{0, 2}}, {"keepdim", true}})));
    outs.push_back(b.op("amin", "", {{"self", x}}, attrs({{"dim", Ints{1}}, {"keepdim", false}})));
    b.g.set_outputs(outs);
  }});
  out.push_back({"max_min_of_all_along_a_dim_and_of_two", [](Builder& b) {
    const ValueId x = b.input({3, 1, 7}), y = b.input({5, 1});
    const auto along = b.ops("max", {{"self", x}}, attrs({{"dim", std::int64_t{2}}, {"keepdim", false}, {"overload", std::string("dim")}}), 2);
    const auto kept = b.ops("min", {{"self", x}}, attrs({{"dim", std::int64_t{0}}, {"keepdim", true}, {"overload", std::string("dim")}}), 2);
    const auto size_one = b.ops("max", {{"self", x}}, attrs({{"dim", std::int64_t{-2}}, {"keepdim", true}, {"overload", std::string("dim")}}), 2);
    b.g.set_outputs({along[0], along[1], kept[0], kept[1], size_one[0], size_one[1], b.op("max", "", {{"self", x}}), b.op("min", "", {{"self", y}}),
                     b.op("max", "other", {{"self", x}, {"other", y}}), b.op("min", "other", {{"self", y}, {"other", x}})});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(reduction_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
