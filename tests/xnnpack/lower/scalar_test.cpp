// The numbers planning knows (lower/scalar.cpp): a tensor's layout numbers,
// sizes that follow a new input shape, item().
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> scalar_cases() {
  std::vector<OpCase> out;
  out.push_back({"layout_numbers_known_while_planning", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5});
    const ValueId numel = b.op("sym_numel", "", {{"self", x}});
    const ValueId stride = b.op("sym_stride", "int", {{"self", x}}, attrs({{"dim", std::int64_t{1}}}));
    const ValueId offset = b.op("sym_storage_offset", "", {{"self", x}});
    const ValueId scaled = b.op("mul", "Scalar", {{"self", x}, {"other", numel}});
    const ValueId shifted = b.op("add", "Scalar", {{"self", scaled}, {"other", stride}}, attrs({{"alpha", std::int64_t{1}}}));
    b.g.set_outputs({b.op("sub", "Scalar", {{"self", shifted}, {"other", offset}}, attrs({{"alpha", std::int64_t{1}}}))});
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(scalar_cases()), op_case_name);

// A number computed from a size is planned again with a new input shape (the
// scalar operand kept in the node's state follows it).
TEST(XnnpackDataDependent, ANumberFromASizeFollowsANewInputShape) {
  Builder b;
  const ValueId x = b.input({2, 3});
  b.g.set_value_type(x, DType::kFloat32, std::nullopt);
  const ValueId width = b.op("size", "int", {{"self", x}}, attrs({{"dim", std::int64_t{1}}}));
  b.g.set_outputs({b.op("mul", "Tensor", {{"self", x}, {"other", width}})});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  g.finalize();
  for (std::int64_t w : {3, 5, 3}) {
    const at::Tensor in = at::randn({2, w});
    EXPECT_TRUE(at::allclose(native::to_aten(g.run({native::from_aten(in)})[0]), in * w)) << "width " << w;
  }
}

// A NaN item() is the value planned for, not a new one at each pass: the run
// ends, with torch's NaNs.
TEST(XnnpackDataDependent, ANaNItemSettles) {
  Builder b;
  const ValueId x = b.input({2, 3});
  const ValueId peak = b.op("amax", "", {{"self", x}}, attrs({{"dim", Ints{}}, {"keepdim", false}}));
  b.g.set_value_type(peak, DType::kFloat32, symbolic({}));
  b.g.set_outputs({b.op("add", "Tensor", {{"self", x}, {"other", b.op("item", "", {{"self", peak}})}})});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  g.finalize();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int r = 0; r < 2; ++r) {
    const auto got = native::to_aten(g.run({Tensor::from_vector<float>({1, nan, 2, 3, 4, 5}, {2, 3})})[0]);
    EXPECT_TRUE(got.isnan().all().item<bool>());
  }
  const auto got = native::to_aten(g.run({Tensor::from_vector<float>({1, 0, 2, 3, 4, 5}, {2, 3})})[0]);
  EXPECT_TRUE(got.equal(at::tensor({6.f, 5.f, 7.f, 8.f, 9.f, 10.f}).view({2, 3}))) << got;
}

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
