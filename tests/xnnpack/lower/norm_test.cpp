// Normalizations and softmax (lower/norm.cpp): statistics over many blocks
// and far from zero, the native forms' statistics, batch norm in training
// mode, softmax on any dim, PReLU.
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> norm_cases() {
  std::vector<OpCase> out;
  out.push_back({"group_instance_and_layer_norm", [](Builder& b) {
    const ValueId x = b.input({2, 6, 5, 3});
    const ValueId g = b.op("group_norm", "", {{"input", x}, {"weight", b.constant({6})}, {"bias", b.constant({6})}},
                           attrs({{"num_groups", std::int64_t{3}}, {"eps", 1e-5}, {"cudnn_enabled", false}}));
    const ValueId i = b.op("instance_norm", "", {{"input", x}, {"weight", b.constant({6})}, {"bias", b.constant({6})}},
                           attrs({{"use_input_stats", true}, {"momentum", 0.1}, {"eps", 1e-5}, {"cudnn_enabled", false}}));
    const ValueId l = b.op("layer_norm", "", {{"input", x}, {"weight", b.constant({5, 3})}, {"bias", b.constant({5, 3})}},
                           attrs({{"normalized_shape", Ints{5, 3}}, {"eps", 1e-5}, {"cudnn_enable", false}}));
    const ValueId y = b.input({1, 4, 7});
    const ValueId plain = b.op("group_norm", "", {{"input", y}}, attrs({{"num_groups", std::int64_t{1}}, {"eps", 1e-3}, {"cudnn_enabled", false}}));
    b.g.set_outputs({g, i, l, plain});
  }});
  // The norms' statistics merge blocks of 256 floats: rows and groups of
  // several blocks and a ragged last one, a mean far from zero (100 + noise:
  // at 1000, torch's own float mean is 3e-5 off, past this test's 1e-5),
  // rows of one element (variance 0), and the batch norm of torch.export's instance norm.
  out.push_back({"norms_over_many_blocks_and_far_from_zero", [](Builder& b) {
    const ValueId far = b.op("add", "Scalar", {{"self", b.input({3, 1003})}}, attrs({{"other", 100.0}, {"alpha", std::int64_t{1}}}));
    const ValueId l = b.op("layer_norm", "", {{"input", far}, {"weight", b.constant({1003})}, {"bias", b.constant({1003})}},
                           attrs({{"normalized_shape", Ints{1003}}, {"eps", 1e-5}, {"cudnn_enable", false}}));
    const ValueId plain = b.op("layer_norm", "", {{"input", far}}, attrs({{"normalized_shape", Ints{1003}}, {"eps", 1e-5}, {"cudnn_enable", false}}));
    const ValueId one = b.op("layer_norm", "", {{"input", b.input({4, 1})}, {"weight", b.constant({1})}},
                             attrs({{"normalized_shape", Ints{1}}, {"eps", 1e-5}, {"cudnn_enable", false}}));
    const ValueId x = b.op("add", "Scalar", {{"self", b.input({2, 6, 17, 23})}}, attrs({{"other", -300.0}, {"alpha", std::int64_t{1}}}));
    const ValueId g = b.op("group_norm", "", {{"input", x}, {"weight", b.constant({6})}, {"bias", b.constant({6})}},
                           attrs({{"num_groups", std::int64_t{3}}, {"eps", 1e-5}, {"cudnn_enabled", false}}));
    const ValueId i = b.op("instance_norm", "", {{"input", x}}, attrs({{"use_input_stats", true}, {"momentum", 0.1}, {"eps", 1e-5}, {"cudnn_enabled", false}}));
    const auto bn = b.ops("_native_batch_norm_legit", {{"input", x}, {"weight", b.constant({6})}, {"bias", b.constant({6})}},
                          attrs({{"training", true}, {"momentum", 0.1}, {"eps", 1e-5}}), 3);
    const ValueId r = b.op("rms_norm", "", {{"input", b.input({5, 301})}, {"weight", b.constant({301})}}, attrs({{"normalized_shape", Ints{301}}, {"eps", 1e-6}}));
    b.g.set_outputs({l, plain, one, g, i, bn[0], bn[1], bn[2], r});
  }});
  out.push_back({"prelu_channels_last_3d_and_1d", [](Builder& b) {
    const ValueId x = b.input({1, 3, 4, 5, 2});
    const ValueId c = b.op("conv3d", "", {{"input", x}, {"weight", b.constant({7, 3, 1, 1, 1})}},
                           attrs({{"stride", Ints{1, 1, 1}}, {"padding", Ints{0, 0, 0}}, {"dilation", Ints{1, 1, 1}}, {"groups", std::int64_t{1}}}));
    b.g.set_outputs({b.op("prelu", "", {{"self", c}, {"weight", b.constant({7})}}), b.op("prelu", "", {{"self", b.input({9})}, {"weight", b.constant({1})}}),
                     b.op("prelu", "", {{"self", b.input({2, 3})}, {"weight", b.constant({3})}})});
  }});
  out.push_back({"prelu_per_channel_and_shared", [](Builder& b) {
    const ValueId x = b.input({2, 5, 3, 3});
    const ValueId y = b.input({3, 7});
    b.g.set_outputs({b.op("prelu", "", {{"self", x}, {"weight", b.constant({5})}}), b.op("prelu", "", {{"self", y}, {"weight", b.constant({1})}})});
  }});
  out.push_back({"softmax_and_log_softmax_on_any_dim", [](Builder& b) {
    const ValueId x = b.input({2, 3, 5, 4});
    const ValueId big = b.op("mul", "Scalar", {{"self", x}}, attrs({{"other", 60.0}}));  // softmax underflows, log_softmax does not
    const ValueId v = b.input({7});
    b.g.set_outputs({b.op("softmax", "int", {{"self", x}}, attrs({{"dim", std::int64_t{2}}})),
                     b.op("softmax", "int", {{"self", x}}, attrs({{"dim", std::int64_t{0}}})),
                     b.op("log_softmax", "int", {{"self", big}}, attrs({{"dim", std::int64_t{1}}})),
                     b.op("log_softmax", "int", {{"self", x}}, attrs({{"dim", std::int64_t{-1}}})),
                     b.op("log_softmax", "int", {{"self", v}}, attrs({{"dim", std::int64_t{0}}})),
                     b.op("_log_softmax", "", {{"self", x}}, attrs({{"dim", std::int64_t{2}}, {"half_to_float", false}}))});
  }});
  out.push_back({"native_layer_norm_first_output", [](Builder& b) {
    const ValueId x = b.input({2, 5, 7});
    const auto outs = b.ops("native_layer_norm", {{"input", x}, {"weight", b.constant({7})}, {"bias", b.constant({7})}},
                            attrs({{"normalized_shape", Ints{7}}, {"eps", 1e-5}}), 3);
    b.g.set_outputs({outs[0]});
  }});
  out.push_back({"native_group_norm_first_output", [](Builder& b) {
    const ValueId x = b.input({2, 6, 3, 5});
    const auto outs = b.ops("native_group_norm", {{"input", x}, {"weight", b.constant({6})}, {"bias", b.constant({6})}},
                            attrs({{"N", std::int64_t{2}}, {"C", std::int64_t{6}}, {"HxW", std::int64_t{15}}, {"group", std::int64_t{3}}, {"eps", 1e-5}}), 3);
    b.g.set_outputs({outs[0]});
  }});
  out.push_back({"batch_norm_with_the_batch_statistics", [](Builder& b) {
    const ValueId x = b.input({3, 5, 4, 2});
    const auto outs = b.ops("_native_batch_norm_legit", {{"input", x}, {"weight", b.constant({5})}, {"bias", b.constant({5})}},
                            attrs({{"overload", std::string("no_stats")}, {"training", true}, {"momentum", 0.1}, {"eps", 1e-5}}), 3);
    b.g.set_outputs({outs[0]});
  }});
  out.push_back({"native_norms_give_their_statistics_with_computed_parameters", [](Builder& b) {
    const ValueId x = b.input({3, 6, 1, 5});
    // Weights computed in the graph (or inputs), not only constants.
    const ValueId w6 = b.op("add", "Scalar", {{"self", b.input({6})}}, attrs({{"other", 1.0}, {"alpha", std::int64_t{1}}})), b6 = b.input({6});
    std::vector<ValueId> outs;
    auto all = [&](const std::vector<ValueId>& three) { outs.insert(outs.end(), three.begin(), three.end()); };
    all(b.ops("native_layer_norm", {{"input", x}, {"weight", b.input({1, 5})}, {"bias", b.constant({1, 5})}}, attrs({{"normalized_shape", Ints{1, 5}}, {"eps", 1e-3}}), 3));
    all(b.ops("native_group_norm", {{"input", x}, {"weight", w6}, {"bias", b6}},
              attrs({{"N", std::int64_t{3}}, {"C", std::int64_t{6}}, {"HxW", std::int64_t{5}}, {"group", std::int64_t{3}}, {"eps", 1e-5}}), 3));
    // Each its own running statistics (training mode updates them in place, in torch).
    for (bool training : {true, false}) {
      const ValueId var = b.op("add", "Scalar", {{"self", b.op("abs", "", {{"self", b.input({6})}})}}, attrs({{"other", 0.5}, {"alpha", std::int64_t{1}}}));
      all(b.ops("_native_batch_norm_legit", {{"input", x}, {"weight", w6}, {"bias", b6}, {"running_mean", b.input({6})}, {"running_var", var}},
                attrs({{"training", training}, {"momentum", 0.1}, {"eps", 1e-5}}), 3));
    }
    b.g.set_outputs(outs);
  }});
  out.push_back({"rms_norm_cosine_similarity_pairwise_distance", [](Builder& b) {
    const ValueId x = b.input({2, 3, 1, 5});
    const ValueId weighted = b.op("rms_norm", "", {{"input", x}, {"weight", b.constant({1, 5})}}, attrs({{"normalized_shape", Ints{1, 5}}, {"eps", 1e-3}}));
    const ValueId plain = b.op("rms_norm", "", {{"input", x}}, attrs({{"normalized_shape", Ints{5}}}));  // eps: float32's epsilon
    const ValueId computed = b.op("rms_norm", "", {{"input", x}, {"weight", b.input({5})}}, attrs({{"normalized_shape", Ints{5}}}));  // a weight given at the run
    const ValueId a = b.input({4, 1, 7}), c = b.input({3, 7});
    std::vector<ValueId> outs{weighted, plain, computed,
                              b.op("cosine_similarity", "", {{"x1", a}, {"x2", c}}, attrs({{"dim", std::int64_t{-1}}, {"eps", 1e-8}})),
                              b.op("cosine_similarity", "", {{"x1", a}, {"x2", c}}, attrs({{"dim", std::int64_t{1}}, {"eps", 1e-8}})),
                              // A zero operand: its norm clamped to eps.
                              b.op("cosine_similarity", "", {{"x1", b.op("mul", "Scalar", {{"self", c}}, attrs({{"other", 0.0}}))}, {"x2", c}},
                                   attrs({{"dim", std::int64_t{0}}, {"eps", 1e-3}}))};
    for (double p : {0.0, 1.0, 2.0, 3.0, std::numeric_limits<double>::infinity()})
      outs.push_back(b.op("pairwise_distance", "", {{"x1", a}, {"x2", c}}, attrs({{"p", p}, {"eps", 1e-6}, {"keepdim", p == 1.0}})));
    outs.push_back(b.op("pairwise_distance", "", {{"x1", b.input({1})}, {"x2", b.input({6, 1})}}, attrs({{"p", 2.0}, {"eps", 0.5}, {"keepdim", false}})));
    b.g.set_outputs(outs);
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(norm_cases()), op_case_name);

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
