// Our 1x1 convolution (conv::Kernels::pointwise, driven by
// pointwise::run) against LibTorch's conv2d and conv3d at every width
// this CPU has, on odd shapes: channels not a multiple of 4 (and one), one
// pixel, panels partly filled, rows past a multiple of the block, several
// slabs, and 1 or 3 threads (the panels split where slabs are few). Then in a
// graph: the measured choice (ours or XNNPACK's) matches LibTorch either way.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "native/test_models.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/op_table.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/transforms/transforms.h"
#include "tracegraph/xnnpack/backend.h"
#include "kernels/layout.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/depthwise.h"
#include "kernels/conv/pointwise.h"

namespace tracegraph::xnnpack {
namespace {

using Ints = std::vector<std::int64_t>;

struct PointwiseCase {
  std::string name;
  Ints shape;  // [N, C, (D,) H, W]
  std::int64_t out_channels;
  bool bias_and_clamp;  // bias, then clamped to [-0.5, 1]
};
void PrintTo(const PointwiseCase& c, std::ostream* os) { *os << c.name; }

class PointwiseKernelTest : public ::testing::TestWithParam<std::tuple<PointwiseCase, int, int>> {};

TEST_P(PointwiseKernelTest, MatchesLibTorch) {
  const auto& [c, lanes, threads] = GetParam();
  const conv::Kernels* k = conv::kernels(lanes);
  if (!k) GTEST_SKIP() << lanes << "-lane kernels: not in this build or not on this CPU";
  at::manual_seed(7);
  const std::int64_t in_channels = c.shape[1];
  Ints ws{c.out_channels, in_channels};
  ws.insert(ws.end(), c.shape.size() - 2, 1);
  const at::Tensor x = at::randn(c.shape), w = at::randn(ws) * 0.3, b = at::randn({c.out_channels});
  const at::Tensor bias = c.bias_and_clamp ? b : at::Tensor();
  at::Tensor want = c.shape.size() == 5 ? at::conv3d(x, w, bias) : at::conv2d(x, w, bias);
  pointwise::Conv p;
  p.in_channels = in_channels, p.out_channels = c.out_channels;
  if (c.bias_and_clamp) p.min = -0.5f, p.max = 1.0f;
  want = at::clamp(want, p.min, p.max);
  // Channels-last, as the backend keeps them.
  const at::Tensor xl = x.movedim(1, -1).contiguous(), want_l = want.movedim(1, -1).contiguous(), wc = w.contiguous();
  const std::vector<float> packed =
      pointwise::pack(wc.data_ptr<float>(), c.bias_and_clamp ? b.data_ptr<float>() : nullptr, in_channels, c.out_channels, k->panel);
  std::vector<float> y(static_cast<std::size_t>(want_l.numel()), std::numeric_limits<float>::quiet_NaN());
  std::unique_ptr<pthreadpool, decltype(&pthreadpool_destroy)> pool(pthreadpool_create(static_cast<std::size_t>(threads)), pthreadpool_destroy);
  pointwise::run(*k, p, packed.data(), xl.data_ptr<float>(), y.data(), xl.numel() / in_channels, pool.get());
  const float* expected = want_l.data_ptr<float>();
  double worst = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    ASSERT_FALSE(std::isnan(y[i])) << "output " << i << " never written";
    worst = std::max(worst, std::abs(static_cast<double>(y[i]) - expected[i]) / (1.0 + std::abs(expected[i])));
  }
  EXPECT_LE(worst, 1e-5);
}

std::vector<PointwiseCase> kernel_cases() {
  return {
      {"one_channel_one_pixel", {1, 1, 1, 1}, 1, false},
      {"channels_3_to_5", {2, 3, 4, 5}, 5, true},
      {"channels_16_to_24_width_1", {1, 16, 9, 1}, 24, true},  // 9 rows: past a multiple of the block
      {"channels_7_to_37", {1, 7, 5, 7}, 37, false},            // several panels, the last partial
      {"channels_64_to_1", {1, 64, 3, 3}, 1, true},
      {"channels_33_to_70_slabs", {2, 33, 40, 30}, 70, true},   // 2400 pixels: 2 slabs (past 256 KB each)
      {"channels_960_to_20_seven_by_seven", {1, 960, 7, 7}, 20, false},
      {"3d_channels_12_to_2", {1, 12, 5, 6, 7}, 2, true},
      {"3d_one_voxel", {2, 6, 1, 1, 1}, 9, false},
  };
}

INSTANTIATE_TEST_SUITE_P(Shapes, PointwiseKernelTest,
                         ::testing::Combine(::testing::ValuesIn(kernel_cases()), ::testing::Values(4, 8, 16), ::testing::Values(1, 3)),
                         [](const auto& info) {
                           return std::get<0>(info.param).name + "_lanes_" + std::to_string(std::get<1>(info.param)) + "_threads_" +
                                  std::to_string(std::get<2>(info.param));
                         });

// kernels::silu against torch's silu (x * sigmoid(x) in double, as float)
// over a sweep of values, the edges of its exp and the special values, with a
// count past a multiple of 4.
TEST(SiluKernel, MatchesTorchWithinThreeUlp) {
  std::vector<float> x;
  for (float v = -100.0f; v <= 100.0f; v += 0.0137f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, -87.0f, -87.3f, -87.4f, -88.0f, -103.0f, 88.0f, 3e38f, -3e38f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
    x.push_back(v);
  x.push_back(0.5f);  // count % 4 != 0 either way
  if (x.size() % 4 == 0) x.push_back(-0.25f);
  std::vector<float> y(x.size(), 123.0f);
  kernels::silu(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
  const at::Tensor want = at::silu(at::from_blob(x.data(), {static_cast<std::int64_t>(x.size())}).to(at::kDouble)).to(at::kFloat);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float w = want[static_cast<std::int64_t>(i)].item<float>();
    if (std::isnan(w) || std::isinf(w)) {
      EXPECT_TRUE(std::isnan(w) ? std::isnan(y[i]) : y[i] == w) << "silu(" << x[i] << ") = " << y[i] << " against " << w;
      continue;
    }
    // 3 ulp; below the cutoff ours is -0 where torch's is at most 87.4 x the
    // smallest normal float.
    const double tolerance = std::max(3.0 * std::abs(static_cast<double>(w)) * std::numeric_limits<float>::epsilon(),
                                      87.4 * static_cast<double>(std::numeric_limits<float>::min()));
    EXPECT_LE(std::abs(static_cast<double>(y[i]) - w), tolerance) << "silu(" << x[i] << "): " << y[i] << " against " << w;
  }
}

#if defined(__x86_64__)
// Whether the AVX upper halves are in use (XGETBV with ECX = 1, XINUSE bit 2);
// nullopt where the CPU cannot say.
std::optional<bool> upper_halves_dirty() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(0xd, 1, &eax, &ebx, &ecx, &edx) || !(eax & 4)) return std::nullopt;
  unsigned lo = 0, hi = 0;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  return (lo & 4) != 0;
}

// The 8- and 16-lane kernels return with the upper halves clean: SSE code
// after them (our portable kernels, built for the baseline) ran 3-4x slower on
// Zen 4 where they were left dirty.
TEST(WideKernels, LeaveTheUpperHalvesClean) {
  if (!upper_halves_dirty()) GTEST_SKIP() << "this CPU has no XGETBV with ECX = 1";
  int checked = 0;
  for (int lanes : {8, 16}) {
    const conv::Kernels* k = conv::kernels(lanes);
    if (!k) continue;
    depthwise::Conv d;
    d.channels = 32, d.in_h = d.in_w = 6, d.out_h = d.out_w = 6, d.pad_h = d.pad_w = 1;
    std::vector<float> x(6 * 6 * 32, 0.5f), y(x.size()), weights(10 * 32, 0.25f);
    k->depthwise(x.data(), y.data(), weights.data(), weights.data() + 9 * 32, d, 0.0f, 6.0f, 0, 6);
    EXPECT_EQ(upper_halves_dirty(), false) << lanes << "-lane depthwise";
    pointwise::Conv p;
    p.in_channels = 32, p.out_channels = 32;
    const std::vector<float> w(32 * 32, 0.125f);
    const std::vector<float> packed = pointwise::pack(w.data(), nullptr, 32, 32, k->panel);
    k->pointwise(p, x.data(), packed.data(), y.data(), 0, 36, 0, pointwise::panel_count(32, k->panel));
    EXPECT_EQ(upper_halves_dirty(), false) << lanes << "-lane pointwise";
    const std::int64_t offsets[2] = {0, 32};  // two runs of 16 inputs
    k->direct(p, x.data(), 32, offsets, 2, 16, packed.data(), y.data(), 8);
    EXPECT_EQ(upper_halves_dirty(), false) << lanes << "-lane direct";
    ++checked;
  }
  if (!checked) GTEST_SKIP() << "no 8- or 16-lane kernels on this CPU";
}
#endif

// 1x1 convolutions with ReLU6 in a graph (2D, and 3D without an activation),
// under the measured choice.
TEST(PointwiseInAGraph, TheMeasuredChoiceMatchesLibTorch) {
  for (int threads : {1, 2}) {
    for (const Ints& shape : {Ints{1, 21, 30, 29}, Ints{1, 10, 6, 7, 9}}) {
      const bool three_d = shape.size() == 5;
      const std::int64_t out_channels = three_d ? 13 : 40;
      Ints ws{out_channels, shape[1]};
      ws.insert(ws.end(), shape.size() - 2, 1);
      auto build = [&] {
        at::manual_seed(9);
        Graph g;
        const ValueId x = g.add_input("x", DType::kFloat32, symbolic(shape));
        std::vector<ValueId> ins{x, g.add_constant("w", native::from_aten(at::randn(ws))),
                                 g.add_constant("b", native::from_aten(at::randn({out_channels})))};
        Attributes a;
        a.set(std::string(kArgNamesAttribute), std::vector<std::string>{"input", "weight", "bias"});
        const Ints ones(shape.size() - 2, 1), zeros(shape.size() - 2, 0);
        a.set("stride", ones);
        a.set("padding", zeros);
        a.set("dilation", ones);
        a.set("groups", std::int64_t{1});
        if (!three_d) {
          a.set(std::string(kFusedActivation), std::string("clip"));
          a.set(std::string(kFusedMin), 0.0);
          a.set(std::string(kFusedMax), 6.0);
        }
        const NodeId n = g.add_node(three_d ? "aten::conv3d" : "aten::conv2d", ins, {NewValue{}}, std::move(a), "pw");
        g.set_outputs({g.node(n).outputs[0]});
        return g;
      };
      const std::vector<Tensor> inputs{native::from_aten(at::randn(shape) * 3)};
      TracedGraph torch(build(), std::nullopt, std::nullopt, native::make_libtorch_backend());
      torch.finalize();
      auto owned = std::make_unique<XnnpackBackend>(Options{threads, true});
      const XnnpackBackend* backend = owned.get();
      TracedGraph ours(build(), std::nullopt, std::nullopt, std::move(owned));
      ours.finalize();
      const Tensor want = torch.run(inputs).at(0), got = ours.run(inputs).at(0);
      Shape expect = shape;
      expect[1] = out_channels;
      EXPECT_EQ(got.shape(), expect);
      EXPECT_LE(tracegraph::testing::max_relative_error(got, want), 1e-5) << threads << " threads";
      ASSERT_EQ(backend->profile().size(), 1u);
      const Engine engine = backend->profile()[0].engine;
      EXPECT_TRUE(engine == Engine::kPortable || engine == Engine::kXnnpack) << engine_name(engine);
    }
  }
}

}  // namespace
}  // namespace tracegraph::xnnpack
