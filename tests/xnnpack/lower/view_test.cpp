// Views (lower/view.cpp): flatten of a channels-last tensor, reshape_as and
// view_as, unflatten, as_strided, resize_.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> view_cases() {
  std::vector<OpCase> out;
  out.push_back({"flatten_channels_last_then_linear", [](Builder& b) {
    const ValueId x = b.input({2, 3, 4, 4});
    const ValueId c = b.op("conv2d", "", {{"input", x}, {"weight", b.constant({5, 3, 3, 3})}, {"bias", b.constant({5})}},
                           attrs({{"stride", Ints{1, 1}}, {"padding", Ints{1, 1}}, {"dilation", Ints{1, 1}}, {"groups", std::int64_t{1}}}));
    const ValueId f = b.op("flatten", "using_ints", {{"self", c}}, attrs({{"start_dim", std::int64_t{1}}, {"end_dim", std::int64_t{-1}}}));
    b.g.set_outputs({b.op("linear", "", {{"input", f}, {"weight", b.constant({7, 80})}, {"bias", b.constant({7})}})});
  }});
  out.push_back({"reshape_as_and_view_as", [](Builder& b) {
    const ValueId x = b.input({2, 3, 4}), y = b.input({6, 4}), z = b.input({4, 3, 2});
    b.g.set_outputs({b.op("reshape_as", "", {{"self", x}, {"other", y}}), b.op("view_as", "", {{"self", x}, {"other", z}})});
  }});
  out.push_back({"unflatten_clone_and_copy", [](Builder& b) {
    const ValueId x = b.input({2, 12, 3}), y = b.input({1, 12, 1});
    const ValueId u = b.op("unflatten", "int", {{"self", x}}, attrs({{"dim", std::int64_t{1}}, {"sizes", Ints{3, -1}}}));
    const ValueId c = b.op("copy", "", {{"self", x}, {"src", y}}, attrs({{"non_blocking", false}}));
    const ValueId same = b.op("copy", "", {{"self", x}, {"src", b.op("clone", "", {{"self", x}})}}, attrs({{"non_blocking", false}}));
    b.g.set_outputs({u, c, same});
  }});
  out.push_back({"as_strided_overlapping_windows", [](Builder& b) {
    const ValueId x = b.input({3, 10});
    b.g.set_outputs({b.op("as_strided", "", {{"self", x}}, attrs({{"size", Ints{4, 3, 4}}, {"stride", Ints{5, 1, 2}}, {"storage_offset", std::int64_t{1}}}))});
  }});
  // resize_ on a clone, as torch.export writes it: fewer elements (a prefix),
  // as many, and more (the new tail is memory torch leaves uninitialized, so
  // only the input's own elements are compared).
  out.push_back({"resize_shrinks_keeps_and_grows_the_storage", [](Builder& b) {
    const ValueId x = b.input({3, 1, 7});
    auto resized = [&](Ints size) { return b.op("resize_", "", {{"self", b.op("clone", "", {{"self", x}})}}, attrs({{"size", size}})); };
    const ValueId grown = b.op("view", "", {{"self", resized({5, 5})}}, attrs({{"size", Ints{-1}}}));
    b.g.set_outputs({resized({2, 1, 5}), resized({1, 21}), resized({}),
                     b.op("slice", "Tensor", {{"self", grown}}, attrs({{"dim", std::int64_t{0}}, {"start", std::int64_t{0}}, {"end", std::int64_t{21}}, {"step", std::int64_t{1}}}))});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(view_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
