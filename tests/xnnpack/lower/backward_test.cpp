// Training graphs' backward ops (lower/backward.cpp).
#include "xnnpack/lower/lowering_test.h"

namespace tracegraph::xnnpack::lowering_test {
namespace {

std::vector<OpCase> backward_cases() {
  std::vector<OpCase> out;
  // The core opset's backward ops (training graphs), each gradient given
  // the forward's own output (so that its shape is the forward's).
  out.push_back({"backward_of_max_avg_and_adaptive_pooling", [](Builder& b) {
    const ValueId x = b.input({2, 3, 7, 6}), v = b.input({1, 2, 5, 4, 3});
    const auto pooled = b.ops("max_pool2d_with_indices", {{"self", x}},
                              attrs({{"kernel_size", Ints{3, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 0}}, {"dilation", Ints{1, 2}}, {"ceil_mode", true}}), 2);
    const ValueId max_grad = b.op("max_pool2d_with_indices_backward", "", {{"grad_output", pooled[0]}, {"self", x}, {"indices", pooled[1]}},
                                  attrs({{"kernel_size", Ints{3, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 0}}, {"dilation", Ints{1, 2}}, {"ceil_mode", true}}));
    const auto pooled3 = b.ops("max_pool3d_with_indices", {{"self", v}},
                               attrs({{"kernel_size", Ints{2, 2, 2}}, {"stride", Ints{2, 1, 2}}, {"padding", Ints{0, 1, 1}}, {"dilation", Ints{1, 1, 1}}, {"ceil_mode", false}}), 2);
    const ValueId max3_grad = b.op("max_pool3d_with_indices_backward", "", {{"grad_output", pooled3[0]}, {"self", v}, {"indices", pooled3[1]}},
                                   attrs({{"kernel_size", Ints{2, 2, 2}}, {"stride", Ints{2, 1, 2}}, {"padding", Ints{0, 1, 1}}, {"dilation", Ints{1, 1, 1}}, {"ceil_mode", false}}));
    std::vector<ValueId> outs{max_grad, max3_grad};
    for (bool include_pad : {false, true}) {
      Attributes a = attrs({{"kernel_size", Ints{3, 3}}, {"stride", Ints{2, 1}}, {"padding", Ints{1, 1}}, {"ceil_mode", true}, {"count_include_pad", include_pad}});
      if (include_pad) a.set("divisor_override", std::int64_t{5});
      const ValueId avg = b.op("avg_pool2d", "", {{"self", x}}, a);
      outs.push_back(b.op("avg_pool2d_backward", "", {{"grad_output", avg}, {"self", x}}, a));
    }
    const ValueId adaptive = b.op("_adaptive_avg_pool2d", "", {{"self", x}}, attrs({{"output_size", Ints{3, 4}}}));
    outs.push_back(b.op("_adaptive_avg_pool2d_backward", "", {{"grad_output", adaptive}, {"self", x}}));
    b.g.set_outputs(outs);
  }});
  out.push_back({"backward_of_embedding", [](Builder& b) {
    const ValueId ids = b.typed_input(at::tensor({0, 2, 5, 2, 2, 1, 0, 5, 3, 2}, at::kLong).reshape({2, 5}));
    const ValueId grad = b.input({2, 5, 3});
    std::vector<ValueId> outs;
    for (const auto& [padding, by_frequency] : {std::pair<std::int64_t, bool>{-1, false}, {2, true}})
      outs.push_back(b.op("embedding_dense_backward", "", {{"grad_output", grad}, {"indices", ids}},
                          attrs({{"num_weights", std::int64_t{7}}, {"padding_idx", padding}, {"scale_grad_by_freq", by_frequency}})));
    b.g.set_outputs(outs);
  }});
  out.push_back({"backward_of_layer_and_group_norm", [](Builder& b) {
    const ValueId x = b.input({3, 4, 5}), w = b.constant({4, 5}), bias = b.constant({4, 5}), g = b.input({3, 4, 5});
    const auto ln = b.ops("native_layer_norm", {{"input", x}, {"weight", w}, {"bias", bias}}, attrs({{"normalized_shape", Ints{4, 5}}, {"eps", 1e-5}}), 3);
    std::vector<ValueId> outs;
    const auto lb = b.ops("native_layer_norm_backward", {{"grad_out", g}, {"input", x}, {"mean", ln[1]}, {"rstd", ln[2]}, {"weight", w}, {"bias", bias}},
                          attrs({{"normalized_shape", Ints{4, 5}}, {"output_mask", std::vector<bool>{true, true, true}}}), 3);
    outs.insert(outs.end(), lb.begin(), lb.end());
    const auto unweighted = b.ops("native_layer_norm_backward", {{"grad_out", g}, {"input", x}, {"mean", ln[1]}, {"rstd", ln[2]}},
                                  attrs({{"normalized_shape", Ints{4, 5}}, {"output_mask", std::vector<bool>{true, false, false}}}), 3);
    outs.push_back(unweighted[0]);
    const ValueId y = b.input({2, 6, 3, 5}), gy = b.input({2, 6, 3, 5}), w6 = b.constant({6});
    const auto gn = b.ops("native_group_norm", {{"input", y}, {"weight", w6}, {"bias", b.constant({6})}},
                          attrs({{"N", std::int64_t{2}}, {"C", std::int64_t{6}}, {"HxW", std::int64_t{15}}, {"group", std::int64_t{3}}, {"eps", 1e-5}}), 3);
    const auto gb = b.ops("native_group_norm_backward", {{"grad_out", gy}, {"input", y}, {"mean", gn[1]}, {"rstd", gn[2]}, {"weight", w6}},
                          attrs({{"N", std::int64_t{2}}, {"C", std::int64_t{6}}, {"HxW", std::int64_t{15}}, {"group", std::int64_t{3}},
                                 {"output_mask", std::vector<bool>{true, true, true}}}), 3);
    outs.insert(outs.end(), gb.begin(), gb.end());
    b.g.set_outputs(outs);
  }});
  out.push_back({"backward_of_convolutions", [](Builder& b) {
    std::vector<ValueId> outs;
    auto backward = [&](ValueId grad, ValueId x, ValueId w, Ints stride, Ints padding, Ints dilation, bool transposed, Ints output_padding, std::int64_t groups,
                        std::int64_t out_channels) {
      const auto r = b.ops("convolution_backward", {{"grad_output", grad}, {"input", x}, {"weight", w}},
                           attrs({{"bias_sizes", Ints{out_channels}}, {"stride", stride}, {"padding", padding}, {"dilation", dilation}, {"transposed", transposed},
                                  {"output_padding", output_padding}, {"groups", groups}, {"output_mask", std::vector<bool>{true, true, true}}}), 3);
      outs.insert(outs.end(), r.begin(), r.end());
    };
    // 2D grouped, strided, dilated; channels 6 and 5 (not multiples of 4)
    const ValueId x = b.input({2, 4, 7, 6}), w = b.constant({6, 2, 3, 2});
    const ValueId y = b.op("conv2d", "", {{"input", x}, {"weight", w}},
                           attrs({{"stride", Ints{2, 1}}, {"padding", Ints{1, 0}}, {"dilation", Ints{1, 2}}, {"groups", std::int64_t{2}}}));
    backward(y, x, w, {2, 1}, {1, 0}, {1, 2}, false, {0, 0}, 2, 6);
    // 2D transposed with output padding
    const ValueId t = b.input({1, 4, 3, 5}), tw = b.constant({4, 5, 3, 3});
    const ValueId ty = b.op("conv_transpose2d", "input", {{"input", t}, {"weight", tw}},
                            attrs({{"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"output_padding", Ints{1, 0}}, {"groups", std::int64_t{1}}, {"dilation", Ints{1, 1}}}));
    backward(ty, t, tw, {2, 2}, {1, 1}, {1, 1}, true, {1, 0}, 1, 5);
    // 1D and 3D
    const ValueId s = b.input({3, 2, 9}), sw = b.constant({3, 2, 4});
    const ValueId sy = b.op("conv1d", "", {{"input", s}, {"weight", sw}}, attrs({{"stride", Ints{3}}, {"padding", Ints{2}}, {"dilation", Ints{1}}, {"groups", std::int64_t{1}}}));
    backward(sy, s, sw, {3}, {2}, {1}, false, {0}, 1, 3);
    const ValueId v = b.input({1, 3, 4, 5, 3}), vw = b.constant({2, 3, 2, 3, 1});
    const ValueId vy = b.op("conv3d", "", {{"input", v}, {"weight", vw}},
                            attrs({{"stride", Ints{1, 2, 1}}, {"padding", Ints{1, 1, 0}}, {"dilation", Ints{1, 1, 1}}, {"groups", std::int64_t{1}}}));
    backward(vy, v, vw, {1, 2, 1}, {1, 1, 0}, {1, 1, 1}, false, {0, 0, 0}, 1, 2);
    b.g.set_outputs(outs);
  }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, XnnpackOpTest, ::testing::ValuesIn(backward_cases()), op_case_name);

// An embedding gradient's index out of range stops the run naming the node.
TEST(XnnpackOpErrors, BackwardIndicesOutOfRangeStopTheRun) {
  Builder b;
  const ValueId ids = b.typed_input(at::tensor({1, 0}, at::kLong));
  b.g.set_outputs({b.op("embedding_dense_backward", "", {{"grad_output", b.input({2, 3})}, {"indices", ids}},
                        attrs({{"num_weights", std::int64_t{4}}, {"padding_idx", std::int64_t{-1}}, {"scale_grad_by_freq", false}}))});
  TracedGraph g(std::move(b.g), std::nullopt, std::nullopt, make_backend({1}));
  g.finalize();
  EXPECT_EQ(g.run(b.inputs)[0].shape(), (Shape{4, 3}));
  const std::vector<Tensor> bad{Tensor::from_vector<std::int64_t>({1, 9}, {2}), b.inputs[1]};
  EXPECT_TG_ERROR(g.run(bad), ErrorCode::kOutOfRange, "index 9.000000 is out of range for 4 weights");
}

}  // namespace
}  // namespace tracegraph::xnnpack::lowering_test
