// The harness of the lowerings' tests (lowering_test.h): LibTorch against
// XNNPACK on one graph, the test every family's Ops cases run, and what the
// lowerings refuse at finalize() across families.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {

void against_libtorch(const Builder& b, std::initializer_list<int> threads, const std::function<void(const Tensor&, const Tensor&)>& same) {
  Graph copy = b.g;
  TracedGraph reference(std::move(copy), std::nullopt, std::nullopt, native::make_libtorch_backend());
  reference.finalize();
  const auto want = reference.run(b.inputs);
  for (int t : threads) {
    SCOPED_TRACE("threads " + std::to_string(t));
    Graph graph = b.g;
    TracedGraph g(std::move(graph), std::nullopt, std::nullopt, make_backend({t}));
    g.finalize();
    const auto got = g.run(b.inputs);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE("output " + std::to_string(i));
      same(got[i], want[i]);
    }
  }
}

NodeTime profile_against_libtorch(const std::function<ValueId(Builder&)>& build, int threads) {
  at::manual_seed(7);
  Builder b;
  const ValueId y = build(b);
  b.g.set_outputs({y});
  const std::string node = b.g.node(*b.g.value(y).producer).name;
  AgainstLibTorch graphs(b.g, threads);
  graphs.run_and_check(b.inputs);
  const auto times = graphs.backend->profile();
  const auto it = std::find_if(times.begin(), times.end(), [&](const NodeTime& t) { return t.node == node; });
  if (it == times.end()) {
    ADD_FAILURE() << node << " is not in the profile";
    return {};
  }
  return *it;
}

namespace {

TEST_P(XnnpackOpTest, MatchesLibTorch) {
  at::manual_seed(7);
  Builder b;
  GetParam().build(b);
  against_libtorch(b, {1, 3}, [](const Tensor& got, const Tensor& want) {
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_LE(max_relative_error(got, want), 1e-5);
  });
}

// What torch refuses, these lowerings refuse at finalize(), typed and naming the node.
TEST(XnnpackOpErrors, RefusedAtFinalizeNamingTheNode) {
  auto refused = [](const std::function<void(Builder&)>& build, ErrorCode code, const std::string& words) {
    Builder b;
    build(b);
    TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
    EXPECT_TG_ERROR(g.finalize(), code, words);
  };
  refused([](Builder& b) {
    b.g.set_outputs({b.op("as_strided", "", {{"self", b.input({3, 10})}}, attrs({{"size", Ints{4, 3, 5}}, {"stride", Ints{7, 1, 2}}, {"storage_offset", std::int64_t{2}}}))});
  }, ErrorCode::kOutOfRange, "node 'as_strided_0' (aten::as_strided): size [4, 3, 5], stride [7, 1, 2] at offset 2 reads past the 30 elements");
  refused([](Builder& b) {
    const ValueId q = b.input({2, 3, 4});
    b.g.set_outputs({b.op("scaled_dot_product_attention", "", {{"query", q}, {"key", q}, {"value", q}}, attrs({{"dropout_p", 0.1}, {"is_causal", false}}))});
  }, ErrorCode::kUnsupported, "dropout_p 0.1");
  refused([](Builder& b) {
    b.g.set_outputs({b.op("repeat", "", {{"self", b.input({2, 3})}}, attrs({{"repeats", Ints{2}}}))});
  }, ErrorCode::kSchema, "repeats [2] for a tensor of rank 2");
  refused([](Builder& b) {
    b.g.set_outputs(b.ops("split_with_sizes", {{"self", b.input({2, 7})}}, attrs({{"split_sizes", Ints{3, 3}}, {"dim", std::int64_t{1}}}), 2));
  }, ErrorCode::kShapeMismatch, "split sizes [3, 3] for a dim of 7");
  refused([](Builder& b) {  // a window wider than the padded image
    b.g.set_outputs({b.op("im2col", "", {{"self", b.input({1, 2, 4, 4})}},
                          attrs({{"kernel_size", Ints{5, 2}}, {"dilation", Ints{1, 1}}, {"padding", Ints{0, 0}}, {"stride", Ints{1, 1}}}))});
  }, ErrorCode::kShapeMismatch, "for 0 x 3 sliding windows");
  refused([](Builder& b) {  // sizes past what any window holds, never multiplied out
    b.g.set_outputs({b.op("im2col", "", {{"self", b.input({1, 2, 4, 4})}},
                          attrs({{"kernel_size", Ints{std::int64_t{1} << 40, 2}}, {"dilation", Ints{1, 1}}, {"padding", Ints{0, 0}}, {"stride", Ints{1, 1}}}))});
  }, ErrorCode::kLimitExceeded, "'kernel_size'");
  refused([](Builder& b) {  // a float has no bitwise ops
    const ValueId x = b.input({3});
    b.g.set_value_type(x, DType::kFloat32, symbolic({3}));
    b.g.set_outputs({b.op("bitwise_not", "", {{"self", x}})});
  }, ErrorCode::kUnsupported, "bitwise_not of a float32 (masks and integers only)");
  refused([](Builder& b) {  // group norm's sizes are checked against the input's, never multiplied out
    const ValueId x = b.input({2, 6, 3});
    b.g.set_outputs(b.ops("native_group_norm_backward", {{"grad_out", x}, {"input", x}, {"mean", b.input({2, 3})}, {"rstd", b.input({2, 3})}},
                          attrs({{"N", std::int64_t{1} << 40}, {"C", std::int64_t{1} << 40}, {"HxW", std::int64_t{3}}, {"group", std::int64_t{3}},
                                 {"output_mask", std::vector<bool>{true, false, false}}}), 3));
  }, ErrorCode::kShapeMismatch, "N, C, HxW and group for input [2, 6, 3]");
  refused([](Builder& b) {
    const ValueId x = b.input({1, 4, 5}), w = b.constant({6, 2, 3});
    b.g.set_outputs(b.ops("convolution_backward", {{"grad_output", b.input({1, 6, 3})}, {"input", x}, {"weight", w}},
                          attrs({{"bias_sizes", Ints{6}}, {"stride", Ints{1}}, {"padding", Ints{0}}, {"dilation", Ints{1}}, {"transposed", false},
                                 {"output_padding", Ints{0}}, {"groups", std::int64_t{1} << 50}, {"output_mask", std::vector<bool>{true, true, true}}}), 3));
  }, ErrorCode::kShapeMismatch, "weight [6, 2, 3] for 4 in and 6 out channels in 1125899906842624 groups");
  refused([](Builder& b) {
    const ValueId x = b.input({1, 2, 5});
    b.g.set_outputs(b.ops("convolution_backward", {{"grad_output", b.input({1, 3, 4})}, {"input", x}, {"weight", b.constant({3, 2, 3})}},
                          attrs({{"bias_sizes", Ints{3}}, {"stride", Ints{1}}, {"padding", Ints{0}}, {"dilation", Ints{1}}, {"transposed", false},
                                 {"output_padding", Ints{0}}, {"groups", std::int64_t{1}}, {"output_mask", std::vector<bool>{true, true, true}}}), 3));
  }, ErrorCode::kShapeMismatch, "grad_output [1, 3, 4] is not the output of input [1, 2, 5]");
  refused([](Builder& b) {
    b.g.set_outputs({b.op("randperm", "", {}, attrs({{"n", std::int64_t{1} << 30}}))});
  }, ErrorCode::kInvalidArgument, "randperm of 1073741824 (0 to 2^24 here)");
}

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
