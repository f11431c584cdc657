// Our unfolded convolution (unfolded::run: the input unfolded a slab of
// output pixels at a time, then conv::Kernels::pointwise) against
// LibTorch's conv2d and conv3d at every width this CPU has, on the shapes a
// first layer takes and odd ones: 3 channels by 3x3 at stride 2 and by 7x7 at
// stride 2 with padding 3, one channel by 3x3x3, dilation, a stride that
// does not divide the input, one output pixel, output channels not a
// multiple of 4, batch 2; at 1 and 3 threads. Then in a graph: the measured
// choice (ours or XNNPACK's) matches LibTorch either way.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <memory>

#include "native/test_models.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/op_table.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/transforms/transforms.h"
#include "tracegraph/xnnpack/backend.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/unfolded.h"

namespace tracegraph::xnnpack {
namespace {

using Ints = std::vector<std::int64_t>;

struct UnfoldedCase {
  std::string name;
  Ints shape;   // [N, C, (D,) H, W]
  Ints kernel;  // per spatial axis
  Ints stride, padding, dilation;
  std::int64_t out_channels;
  bool bias_and_clamp;  // bias, then clamped to [-0.5, 1]
};
void PrintTo(const UnfoldedCase& c, std::ostream* os) { *os << c.name; }

at::Tensor torch_conv(const UnfoldedCase& c, const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias) {
  return c.shape.size() == 5 ? at::conv3d(x, w, bias, c.stride, c.padding, c.dilation) : at::conv2d(x, w, bias, c.stride, c.padding, c.dilation);
}

class UnfoldedKernelTest : public ::testing::TestWithParam<std::tuple<UnfoldedCase, int, int>> {};

TEST_P(UnfoldedKernelTest, MatchesLibTorch) {
  const auto& [c, lanes, threads] = GetParam();
  const conv::Kernels* k = conv::kernels(lanes);
  if (!k) GTEST_SKIP() << lanes << "-lane kernels: not in this build or not on this CPU";
  at::manual_seed(11);
  const std::size_t rank = c.shape.size() - 2, skip = 3 - rank;
  Ints ws{c.out_channels, c.shape[1]};
  ws.insert(ws.end(), c.kernel.begin(), c.kernel.end());
  const at::Tensor x = at::randn(c.shape), w = at::randn(ws) * 0.3, b = at::randn({c.out_channels});
  pointwise::Conv p;
  if (c.bias_and_clamp) p.min = -0.5f, p.max = 1.0f;
  const at::Tensor want = at::clamp(torch_conv(c, x, w, c.bias_and_clamp ? b : at::Tensor()), p.min, p.max);

  unfolded::Conv u;
  u.batch = c.shape[0], u.channels = c.shape[1];
  for (std::size_t axis = 0; axis < rank; ++axis) {
    u.in[axis + skip] = c.shape[axis + 2], u.kernel[axis + skip] = c.kernel[axis];
    u.stride[axis + skip] = c.stride[axis], u.padding[axis + skip] = c.padding[axis], u.dilation[axis + skip] = c.dilation[axis];
  }
  ASSERT_TRUE(u.make_output());
  for (std::size_t axis = 0; axis < rank; ++axis) ASSERT_EQ(u.out[axis + skip], want.size(static_cast<std::int64_t>(axis) + 2));
  p.in_channels = u.row(), p.out_channels = c.out_channels;
  // Channels-last, as the backend keeps them.
  const at::Tensor xl = x.movedim(1, -1).contiguous(), want_l = want.movedim(1, -1).contiguous(), wc = w.contiguous();
  const std::vector<float> packed =
      unfolded::pack(u, wc.data_ptr<float>(), c.bias_and_clamp ? b.data_ptr<float>() : nullptr, c.out_channels, k->panel);
  std::vector<float> y(static_cast<std::size_t>(want_l.numel()), std::numeric_limits<float>::quiet_NaN());
  std::vector<float> scratch(static_cast<std::size_t>(unfolded::chunk_pixels(u) * u.row() * threads));
  std::unique_ptr<pthreadpool, decltype(&pthreadpool_destroy)> pool(pthreadpool_create(static_cast<std::size_t>(threads)), pthreadpool_destroy);
  unfolded::run(*k, u, p, packed.data(), xl.data_ptr<float>(), y.data(), scratch.data(), pool.get());
  const float* expected = want_l.data_ptr<float>();
  double worst = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    ASSERT_FALSE(std::isnan(y[i])) << "output " << i << " never written";
    worst = std::max(worst, std::abs(static_cast<double>(y[i]) - expected[i]) / (1.0 + std::abs(expected[i])));
  }
  EXPECT_LE(worst, 1e-5);
}

std::vector<UnfoldedCase> kernel_cases() {
  return {
      {"stem_3x3_stride_2", {1, 3, 17, 15}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 32, true},
      {"stem_7x7_stride_2_pad_3", {2, 3, 23, 19}, {7, 7}, {2, 2}, {3, 3}, {1, 1}, 64, false},
      {"one_channel_3x3_valid", {1, 1, 9, 8}, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 16, true},
      {"dilated_3x3_to_5", {1, 2, 12, 13}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, 5, true},
      {"stride_3_not_dividing_to_7", {1, 4, 11, 10}, {2, 4}, {3, 3}, {0, 1}, {1, 1}, 7, false},
      {"one_output_pixel", {1, 3, 5, 5}, {5, 5}, {1, 1}, {0, 0}, {1, 1}, 3, true},
      {"many_slabs_to_37", {1, 3, 70, 64}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 37, true},  // 4480 pixels of 27 inputs
      {"3d_one_channel_3x3x3_to_12", {1, 1, 9, 8, 7}, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 12, true},
      {"3d_stride_2_pad_1_batch_2", {2, 2, 5, 6, 7}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, 6, false},
  };
}

INSTANTIATE_TEST_SUITE_P(Shapes, UnfoldedKernelTest,
                         ::testing::Combine(::testing::ValuesIn(kernel_cases()), ::testing::Values(4, 8, 16), ::testing::Values(1, 3)),
                         [](const auto& info) {
                           return std::get<0>(info.param).name + "_lanes_" + std::to_string(std::get<1>(info.param)) + "_threads_" +
                                  std::to_string(std::get<2>(info.param));
                         });

// First layers in a graph (a 3x3 stride-2 stem with ReLU6, a 7x7 stride-2
// stem, a 3x3x3 one-channel 3D stem), at 1 and 2 threads, under the
// measured choice.
TEST(UnfoldedInAGraph, TheMeasuredChoiceMatchesLibTorch) {
  struct Stem {
    Ints shape, kernel, stride, padding;
    std::int64_t out_channels;
    bool relu6;
  };
  const std::vector<Stem> stems{{{1, 3, 64, 61}, {3, 3}, {2, 2}, {1, 1}, 32, true},
                                {{1, 3, 45, 50}, {7, 7}, {2, 2}, {3, 3}, 24, false},
                                {{1, 1, 12, 11, 10}, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, 12, false}};
  for (int threads : {1, 2}) {
    for (const Stem& s : stems) {
      const bool three_d = s.shape.size() == 5;
      Ints ws{s.out_channels, s.shape[1]};
      ws.insert(ws.end(), s.kernel.begin(), s.kernel.end());
      auto build = [&] {
        at::manual_seed(13);
        Graph g;
        const ValueId x = g.add_input("x", DType::kFloat32, symbolic(s.shape));
        std::vector<ValueId> ins{x, g.add_constant("w", native::from_aten(at::randn(ws) * 0.3)),
                                 g.add_constant("b", native::from_aten(at::randn({s.out_channels})))};
        Attributes a;
        a.set(std::string(kArgNamesAttribute), std::vector<std::string>{"input", "weight", "bias"});
        a.set("stride", s.stride);
        a.set("padding", s.padding);
        a.set("dilation", Ints(s.shape.size() - 2, 1));
        a.set("groups", std::int64_t{1});
        if (s.relu6) {
          a.set(std::string(kFusedActivation), std::string("clip"));
          a.set(std::string(kFusedMin), 0.0);
          a.set(std::string(kFusedMax), 6.0);
        }
        const NodeId n = g.add_node(three_d ? "aten::conv3d" : "aten::conv2d", ins, {NewValue{}}, std::move(a), "stem");
        g.set_outputs({g.node(n).outputs[0]});
        return g;
      };
      const std::vector<Tensor> inputs{native::from_aten(at::randn(s.shape) * 3)};
      TracedGraph torch(build(), std::nullopt, std::nullopt, native::make_libtorch_backend());
      torch.finalize();
      auto owned = std::make_unique<XnnpackBackend>(Options{threads, true});
      const XnnpackBackend* backend = owned.get();
      TracedGraph ours(build(), std::nullopt, std::nullopt, std::move(owned));
      ours.finalize();
      const Tensor want = torch.run(inputs).at(0), got = ours.run(inputs).at(0);
      EXPECT_EQ(got.shape(), want.shape());
      EXPECT_LE(tracegraph::testing::max_relative_error(got, want), 1e-5) << threads << " threads, " << s.shape.size() - 2 << "D";
      ASSERT_EQ(backend->profile().size(), 1u);
      const Engine engine = backend->profile()[0].engine;
      EXPECT_TRUE(engine == Engine::kPortable || engine == Engine::kXnnpack || engine == Engine::kWinograd) << engine_name(engine);
    }
  }
}

}  // namespace
}  // namespace tracegraph::xnnpack
