// Writes by index (lower/scatter.cpp).
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> scatter_cases() {
  std::vector<OpCase> out;
  out.push_back({"scatter_src_value_and_reduce", [](Builder& b) {
    const ValueId x = b.input({5, 3}), src = b.input({4, 3});
    const ValueId idx = b.g.add_constant("idx", native::from_aten(at::tensor({4, 0, 2, 1, 3, 0, 3, 2, 1}, at::kLong).reshape({3, 3})));
    const ValueId plain = b.op("scatter", "src", {{"self", x}, {"index", idx}, {"src", src}}, attrs({{"dim", std::int64_t{0}}}));
    const ValueId value = b.op("scatter", "value", {{"self", x}, {"index", idx}}, attrs({{"dim", std::int64_t{0}}, {"value", 2.5}}));
    const ValueId add = b.op("scatter_add", "", {{"self", x}, {"index", idx}, {"src", src}}, attrs({{"dim", std::int64_t{0}}}));
    std::vector<ValueId> outs{plain, value, add};
    for (const char* r : {"sum", "prod", "mean", "amax", "amin"})
      for (bool self : {true, false})
        outs.push_back(b.op("scatter_reduce", "two", {{"self", x}, {"index", idx}, {"src", src}},
                            attrs({{"dim", std::int64_t{0}}, {"reduce", std::string(r)}, {"include_self", self}})));
    b.g.set_outputs(outs);
  }});
  out.push_back({"index_add_copy_fill_along_dim_1", [](Builder& b) {
    const ValueId x = b.input({2, 5, 3}), source = b.input({2, 3, 3});
    const ValueId idx = b.g.add_constant("idx", native::from_aten(at::tensor({4, 0, 2}, at::kLong)));
    b.g.set_outputs({b.op("index_add", "", {{"self", x}, {"index", idx}, {"source", source}}, attrs({{"dim", std::int64_t{1}}, {"alpha", 0.5}})),
                     b.op("index_copy", "", {{"self", x}, {"index", idx}, {"source", source}}, attrs({{"dim", std::int64_t{1}}})),
                     b.op("index_fill", "int_Scalar", {{"self", x}, {"index", idx}}, attrs({{"dim", std::int64_t{-2}}, {"value", -3.0}})),
                     // The value a 0-dim tensor computed in the graph.
                     b.op("index_fill", "int_Tensor", {{"self", x}, {"index", idx}, {"value", b.op("sum", "", {{"self", b.input({1, 2})}})}},
                          attrs({{"dim", std::int64_t{1}}}))});
  }});
  out.push_back({"index_put_indices_none_and_mask", [](Builder& b) {
    const ValueId x = b.input({4, 3, 5});
    const ValueId rows = b.g.add_constant("rows", native::from_aten(at::tensor({3, 0}, at::kLong)));
    const ValueId cols = b.g.add_constant("cols", native::from_aten(at::tensor({4, 1}, at::kLong)));
    // x[rows, :, cols] = v (indices apart: their dim first), accumulated; x[:, :, cols] = v.
    Attributes apart = attrs({{"accumulate", true}});
    apart.set("indices", std::vector<bool>{true, false, true});
    const ValueId put = b.op("index_put", "", {{"self", x}, {"indices", rows}, {"indices", cols}, {"values", b.input({2, 3})}}, apart);
    Attributes last = attrs({{"accumulate", false}});
    last.set("indices", std::vector<bool>{false, false, true});
    const ValueId put2 = b.op("index_put", "", {{"self", x}, {"indices", cols}, {"values", b.input({1, 3, 1})}}, last);
    const ValueId mask = b.g.add_constant("mask", native::from_aten(at::tensor({1, 0, 1, 1}, at::kLong).to(at::kBool)));
    const ValueId masked = b.op("index_put", "", {{"self", x}, {"indices", mask}, {"values", b.input({5})}}, attrs({{"accumulate", false}}));
    b.g.set_outputs({put, put2, masked});
  }});
  out.push_back({"masked_scatter_with_a_broadcast_mask", [](Builder& b) {
    const ValueId mask = b.op("gt", "Scalar", {{"self", b.input({4, 1})}}, attrs({{"other", 0.0}}));
    b.g.set_outputs({b.op("masked_scatter", "", {{"self", b.input({3, 4, 5})}, {"mask", mask}, {"source", b.input({7, 9})}})});
  }});
  out.push_back({"embedding_bag_sum_mean_max_and_weighted", [](Builder& b) {
    const ValueId weight = b.constant({10, 3});
    const ValueId indices = b.g.add_constant("idx", Tensor::from_vector<std::int64_t>({1, 2, 4, 5, 4, 3, 2, 9}, {8}));
    const ValueId offsets = b.g.add_constant("offsets", Tensor::from_vector<std::int64_t>({0, 4, 4, 6}, {4}));  // bag 1 is empty
    std::vector<ValueId> outs;
    for (std::int64_t mode : {0, 1, 2})
      outs.push_back(b.ops("_embedding_bag", {{"weight", weight}, {"indices", indices}, {"offsets", offsets}}, attrs({{"mode", mode}}), 4)[0]);
    // Weighted, the last offset the end, row 2 the padding.
    const ValueId ends = b.g.add_constant("ends", Tensor::from_vector<std::int64_t>({0, 3, 8}, {3}));
    outs.push_back(b.ops("_embedding_bag", {{"weight", weight}, {"indices", indices}, {"offsets", ends}, {"per_sample_weights", b.input({8})}},
                         attrs({{"mode", std::int64_t{0}}, {"include_last_offset", true}, {"padding_idx", std::int64_t{2}}}), 4)[0]);
    b.g.set_outputs(outs);
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(scatter_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
