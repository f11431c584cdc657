// Our 3x3 depthwise kernel (conv::Kernels::depthwise) alone, at every
// width this CPU has, against LibTorch's grouped convolution on odd shapes: channels not a multiple of 4 and fewer
// than 4, size-1 and size-2 images, strides 1 and 2 per axis (odd sizes: the
// last window partial), padding 0 to 2, with and without bias and clamp, and
// the output rows split between calls as threads split them. Then in a graph:
// the measured choice (ours or XNNPACK's) matches LibTorch either way.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <limits>

#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/depthwise.h"
#include "native/test_models.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/op_table.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/transforms/transforms.h"
#include "tracegraph/xnnpack/backend.h"

namespace tracegraph::xnnpack {
namespace {

using Ints = std::vector<std::int64_t>;

struct DepthwiseCase {
  std::int64_t channels, height, width, stride_h, stride_w, pad_h, pad_w;
  bool bias;
  bool clamp;  // to [0, 6]
};

std::string name_of(const DepthwiseCase& c) {
  return "c" + std::to_string(c.channels) + "_" + std::to_string(c.height) + "x" + std::to_string(c.width) + "_s" + std::to_string(c.stride_h) +
         std::to_string(c.stride_w) + "_p" + std::to_string(c.pad_h) + std::to_string(c.pad_w) + (c.bias ? "_bias" : "") + (c.clamp ? "_clamp" : "");
}

void PrintTo(const DepthwiseCase& c, std::ostream* os) { *os << name_of(c); }

class DepthwiseKernelTest : public ::testing::TestWithParam<std::tuple<DepthwiseCase, int>> {};

TEST_P(DepthwiseKernelTest, MatchesLibTorch) {
  const auto& [c, lanes] = GetParam();
  const conv::Kernels* k = conv::kernels(lanes);
  if (!k) GTEST_SKIP() << lanes << "-lane kernels: not in this build or not on this CPU";
  at::manual_seed(5);
  const std::int64_t batch = 2;
  const at::Tensor x = at::randn({batch, c.channels, c.height, c.width});
  const at::Tensor w = at::randn({c.channels, 1, 3, 3});
  const at::Tensor b = c.bias ? at::randn({c.channels}) : at::Tensor();
  at::Tensor want = at::conv2d(x, w, b, {c.stride_h, c.stride_w}, {c.pad_h, c.pad_w}, {1, 1}, c.channels);
  if (c.clamp) want = at::clamp(want, 0.0, 6.0);

  depthwise::Conv d;
  d.batch = batch, d.channels = c.channels, d.in_h = c.height, d.in_w = c.width;
  d.stride_h = c.stride_h, d.stride_w = c.stride_w, d.pad_h = c.pad_h, d.pad_w = c.pad_w;
  d.out_h = want.size(2), d.out_w = want.size(3);
  const std::int64_t padded = depthwise::padded_channels(c.channels, lanes);
  std::vector<float> weights(static_cast<std::size_t>(10 * padded), 0.0f);
  const at::Tensor wc = w.contiguous();
  for (std::int64_t ch = 0; ch < c.channels; ++ch) {
    for (std::int64_t t = 0; t < 9; ++t) weights[static_cast<std::size_t>(t * padded + ch)] = wc.data_ptr<float>()[ch * 9 + t];
    if (c.bias) weights[static_cast<std::size_t>(9 * padded + ch)] = b.data_ptr<float>()[ch];
  }
  const at::Tensor x_last = x.permute({0, 2, 3, 1}).contiguous();
  at::Tensor y = at::full({batch, d.out_h, d.out_w, c.channels}, std::numeric_limits<float>::quiet_NaN());
  const float lo = c.clamp ? 0.0f : -std::numeric_limits<float>::infinity();
  const float hi = c.clamp ? 6.0f : std::numeric_limits<float>::infinity();
  // The rows in two calls, as two threads would take them.
  const std::int64_t rows = batch * d.out_h, half = rows / 2;
  k->depthwise(x_last.data_ptr<float>(), y.data_ptr<float>(), weights.data(), weights.data() + 9 * padded, d, lo, hi, 0, half);
  k->depthwise(x_last.data_ptr<float>(), y.data_ptr<float>(), weights.data(), weights.data() + 9 * padded, d, lo, hi, half, rows - half);
  const at::Tensor got = y.permute({0, 3, 1, 2});
  EXPECT_FALSE(at::isnan(got).any().item<bool>()) << "every output written";
  EXPECT_LE(tracegraph::testing::max_relative_error(native::from_aten(got.contiguous()), native::from_aten(want)), 1e-5);
}

std::vector<DepthwiseCase> kernel_cases() {
  return {
      {1, 1, 1, 1, 1, 1, 1, true, false},     // one pixel: every tap but the centre in the padding
      {3, 2, 5, 1, 1, 1, 1, false, true},     // fewer than 4 channels
      {4, 7, 9, 2, 2, 1, 1, true, true},      // odd sizes at stride 2
      {7, 6, 1, 2, 1, 1, 1, true, false},     // width 1
      {13, 9, 10, 1, 2, 0, 2, true, false},   // no padding along H, 2 along W
      {16, 11, 12, 2, 2, 2, 0, false, false}, // padding 2 along H, none along W
      {24, 3, 3, 1, 1, 0, 0, true, true},     // one output pixel
      {37, 8, 17, 2, 2, 1, 1, true, true},    // channels past a multiple of 4 over a longer row
      {40, 5, 6, 1, 1, 1, 1, true, true},     // past a multiple of 8 and 16
      {20, 4, 9, 1, 1, 1, 1, false, true},    // 7 inner pixels a row: pairs and one alone
      {144, 4, 7, 2, 2, 1, 1, false, true},   // whole vectors of 16
  };
}

INSTANTIATE_TEST_SUITE_P(Shapes, DepthwiseKernelTest, ::testing::Combine(::testing::ValuesIn(kernel_cases()), ::testing::Values(4, 8, 16)),
                         [](const auto& info) { return name_of(std::get<0>(info.param)) + "_lanes_" + std::to_string(std::get<1>(info.param)); });

// A depthwise convolution with ReLU6 in a graph, under the measured choice.
TEST(DepthwiseInAGraph, TheMeasuredChoiceMatchesLibTorch) {
  for (int threads : {1, 2}) {
    at::manual_seed(9);
    auto build = [] {
      Graph g;
      const ValueId x = g.add_input("x", DType::kFloat32, symbolic({1, 21, 30, 29}));
      std::vector<ValueId> ins{x, g.add_constant("w", native::from_aten(at::randn({21, 1, 3, 3}))),
                               g.add_constant("b", native::from_aten(at::randn({21})))};
      Attributes a;
      a.set(std::string(kArgNamesAttribute), std::vector<std::string>{"input", "weight", "bias"});
      a.set("stride", Ints{2, 2});
      a.set("padding", Ints{1, 1});
      a.set("dilation", Ints{1, 1});
      a.set("groups", std::int64_t{21});
      a.set(std::string(kFusedActivation), std::string("clip"));
      a.set(std::string(kFusedMin), 0.0);
      a.set(std::string(kFusedMax), 6.0);
      const NodeId n = g.add_node("aten::conv2d", ins, {NewValue{}}, std::move(a), "dw");
      g.set_outputs({g.node(n).outputs[0]});
      return g;
    };
    Graph for_torch = build();
    at::manual_seed(9);
    Graph for_xnnpack = build();
    const std::vector<Tensor> inputs{native::from_aten(at::randn({1, 21, 30, 29}) * 3)};
    TracedGraph torch(std::move(for_torch), std::nullopt, std::nullopt, native::make_libtorch_backend());
    torch.finalize();
    auto owned = std::make_unique<XnnpackBackend>(Options{threads, true});
    const XnnpackBackend* backend = owned.get();
    TracedGraph ours(std::move(for_xnnpack), std::nullopt, std::nullopt, std::move(owned));
    ours.finalize();
    const Tensor want = torch.run(inputs).at(0), got = ours.run(inputs).at(0);
    EXPECT_EQ(got.shape(), (Shape{1, 21, 15, 15}));
    EXPECT_LE(tracegraph::testing::max_relative_error(got, want), 1e-5) << threads << " threads";
    ASSERT_EQ(backend->profile().size(), 1u);
    const Engine engine = backend->profile()[0].engine;
    EXPECT_TRUE(engine == Engine::kPortable || engine == Engine::kXnnpack) << engine_name(engine);
  }
}

}  // namespace
}  // namespace tracegraph::xnnpack
