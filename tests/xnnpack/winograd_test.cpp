// Winograd convolutions, F(2,3) and F(4,3) (ConvAlgorithm::kWinograd,
// kWinogradF4), alone, on odd
// shapes: size-1 outputs, partial tiles, channels not a multiple of 4 (the
// transforms' vectors), padding 0 and 2, batches, several chunks and blocks of tiles,
// fused activations, 2D and 3D, one thread and two, the GEMM either way round
// (ours, or XNNPACK's with 256 channels); each against the LibTorch
// backend on the same graph, and against the direct convolution. Then the
// kernels alone at each vector width (4 lanes; 8 and 16 where the CPU has AVX2, AVX-512):
// transforms and our GEMM block by block, against LibTorch's convolution.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <limits>

#include "native/test_models.h"
#include "tracegraph/error.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/op_table.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/transforms/transforms.h"
#include "tracegraph/xnnpack/backend.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/winograd.h"

namespace tracegraph::xnnpack {
namespace {

using tracegraph::testing::max_relative_error;
using Ints = std::vector<std::int64_t>;

struct ConvCase {
  std::string name;
  Shape input;   // [N, C, (D,) H, W]
  std::int64_t out_channels = 1;
  std::int64_t padding = 1;
  std::int64_t stride = 1;
  bool bias = true;
  std::string activation;  // "", "relu" or "clip" (relu6) fused into the convolution
  int threads = 1;
};
void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

// One convolution graph and its input.
struct Built {
  Graph graph;
  std::vector<Tensor> inputs;
};
Built build(const ConvCase& c) {
  at::manual_seed(11);
  Built b;
  const std::size_t rank = c.input.size() - 2;
  std::vector<std::int64_t> shape = c.input;
  const ValueId x = b.graph.add_input("x", DType::kFloat32, symbolic(shape));
  b.inputs.push_back(native::from_aten(at::randn(at::IntArrayRef(shape))));
  Shape ws{c.out_channels, c.input[1]};
  for (std::size_t i = 0; i < rank; ++i) ws.push_back(3);
  std::vector<ValueId> ins{x, b.graph.add_constant("w", native::from_aten(at::randn(at::IntArrayRef(ws)) * 0.3))};
  std::vector<std::string> names{"input", "weight"};
  if (c.bias) {
    ins.push_back(b.graph.add_constant("b", native::from_aten(at::randn({c.out_channels}))));
    names.push_back("bias");
  }
  Attributes a;
  a.set(std::string(kArgNamesAttribute), names);
  a.set("stride", Ints(rank, c.stride));
  a.set("padding", Ints(rank, c.padding));
  a.set("dilation", Ints(rank, 1));
  a.set("groups", std::int64_t{1});
  if (c.activation == "relu") a.set(std::string(kFusedActivation), std::string("relu"));
  if (c.activation == "clip") {
    a.set(std::string(kFusedActivation), std::string("clip"));
    a.set(std::string(kFusedMin), 0.0);
    a.set(std::string(kFusedMax), 6.0);
  }
  const NodeId n = b.graph.add_node(rank == 3 ? "aten::conv3d" : "aten::conv2d", ins, {NewValue{}}, std::move(a), "conv");
  b.graph.set_outputs({b.graph.node(n).outputs[0]});
  return b;
}

// The output on XNNPACK with `algorithm`, and the engine that ran the
// convolution (and into `form`, where given, how a Winograd one ran).
std::pair<Tensor, Engine> run_on_xnnpack(const ConvCase& c, ConvAlgorithm algorithm, std::string* form = nullptr) {
  Built b = build(c);
  Options options{c.threads, true};
  options.conv_algorithm = algorithm;
  auto owned = std::make_unique<XnnpackBackend>(options);
  const XnnpackBackend* backend = owned.get();
  TracedGraph g(std::move(b.graph), std::nullopt, std::nullopt, std::move(owned));
  g.finalize();
  Tensor out = g.run(b.inputs).at(0);
  for (const NodeTime& t : backend->profile())
    if (t.node == "conv") {
      // A Winograd convolution says its tile and GEMM; a direct one nothing.
      if (t.engine == Engine::kWinograd) EXPECT_EQ(t.winograd.rfind("F(", 0), 0u) << t.winograd;
      else EXPECT_EQ(t.winograd, "");
      if (form) *form = t.winograd;
      return {out, t.engine};
    }
  ADD_FAILURE() << "no profile entry for the convolution";
  return {out, Engine::kNone};
}

Tensor run_on_libtorch(const ConvCase& c) {
  Built b = build(c);
  TracedGraph g(std::move(b.graph), std::nullopt, std::nullopt, native::make_libtorch_backend());
  g.finalize();
  return g.run(b.inputs).at(0);
}

class WinogradTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(WinogradTest, MatchesLibTorchAndTheDirectConvolution) {
  const ConvCase& c = GetParam();
  const Tensor want = run_on_libtorch(c);
  const auto [direct, direct_engine] = run_on_xnnpack(c, ConvAlgorithm::kDirect);
  EXPECT_EQ(direct_engine, Engine::kXnnpack);
  for (ConvAlgorithm tiles : {ConvAlgorithm::kWinograd, ConvAlgorithm::kWinogradF4}) {
    SCOPED_TRACE(std::string(conv_algorithm_name(tiles)));
    const auto [winograd, engine] = run_on_xnnpack(c, tiles);
    EXPECT_EQ(engine, c.stride == 1 ? Engine::kWinograd : Engine::kXnnpack) << "stride 1 runs as Winograd, other strides directly";
    EXPECT_EQ(winograd.shape(), want.shape());
    EXPECT_LE(max_relative_error(winograd, want), 1e-4);
    EXPECT_LE(max_relative_error(winograd, direct), 1e-4);
  }
  // The measured choice runs one of the two, or (few inputs per pixel) our
  // GEMM over the unfolded input, a portable step.
  const auto [fastest, fastest_engine] = run_on_xnnpack(c, ConvAlgorithm::kFastest);
  EXPECT_TRUE(fastest_engine == Engine::kWinograd || fastest_engine == Engine::kXnnpack || fastest_engine == Engine::kPortable)
      << engine_name(fastest_engine);
  EXPECT_LE(max_relative_error(fastest, want), 1e-4);
}

ConvCase conv(std::string name, Shape input, std::int64_t out_channels, std::int64_t padding = 1, std::int64_t stride = 1,
              bool bias = true, std::string activation = "", int threads = 1) {
  return {std::move(name), std::move(input), out_channels, padding, stride, bias, std::move(activation), threads};
}

std::vector<ConvCase> cases() {
  return {
      conv("partial_tiles_2d", {1, 3, 7, 5}, 5),
      conv("partial_tiles_of_4_2d", {1, 5, 10, 13}, 7, 1, 1, true, "relu"),
      conv("one_pixel_out_no_padding_batch_2", {2, 1, 3, 3}, 1, 0),
      conv("channels_past_the_block_relu", {1, 37, 9, 11}, 70, 1, 1, true, "relu"),
      conv("padding_2_height_1_relu6_no_bias", {1, 6, 1, 6}, 3, 2, 1, false, "clip"),
      conv("several_chunks_two_threads", {1, 64, 40, 38}, 64, 1, 1, true, "", 2),
      conv("several_chunks_one_thread", {2, 48, 33, 30}, 40),
      conv("strided_runs_directly", {1, 4, 9, 9}, 6, 1, 2),
      // 256 channels over many tiles: XNNPACK's GEMM for the tile rows (ours below 256).
      conv("xnnpack_gemm_256_channels", {1, 256, 34, 33}, 257, 1, 1, true, "relu"),
      // Few tiles, many output channels: the transposed GEMM (output channels as rows).
      conv("channel_rows_2d", {1, 40, 5, 5}, 72, 1, 1, true, "relu"),
      conv("channel_rows_2d_batch_3_two_threads", {3, 19, 3, 4}, 66, 1, 1, false, "", 2),
      conv("partial_tiles_3d", {1, 2, 5, 6, 7}, 3),
      conv("one_voxel_out_3d", {1, 5, 3, 3, 3}, 4, 0),
      conv("several_chunks_3d_two_threads", {1, 16, 18, 17, 18}, 13, 1, 1, true, "relu", 2),
      conv("depth_1_padding_2_3d", {2, 3, 1, 4, 5}, 2, 2),
      conv("channel_rows_3d", {1, 8, 3, 4, 3}, 25),
  };
}

INSTANTIATE_TEST_SUITE_P(Shapes, WinogradTest, ::testing::ValuesIn(cases()), [](const auto& info) { return info.param.name; });

// Our GEMM's run gives each thread a block of tiles: where there are fewer
// blocks than threads (here one block: 16 tiles in F(4,3), 64 in F(2,3) at
// 24 channels) it is no candidate, forced or measured, so two threads run
// XNNPACK's GEMM over all of them (or the direct convolution).
TEST(WinogradChoice, OurGemmNeedsABlockPerThread) {
  for (int threads : {1, 2})
    for (ConvAlgorithm algorithm : {ConvAlgorithm::kWinograd, ConvAlgorithm::kWinogradF4, ConvAlgorithm::kFastest}) {
      const ConvCase c = conv("few_tiles", {1, 24, 16, 16}, 24, 1, 1, true, "", threads);
      SCOPED_TRACE(std::to_string(threads) + " threads, " + std::string(conv_algorithm_name(algorithm)));
      std::string form;
      const Tensor out = run_on_xnnpack(c, algorithm, &form).first;
      EXPECT_LE(max_relative_error(out, run_on_libtorch(c)), 1e-4);
      const bool ours = form.find("our GEMM") != std::string::npos;
      if (algorithm != ConvAlgorithm::kFastest) {
        EXPECT_EQ(ours, threads == 1) << form;  // forced: ours at one thread, XNNPACK's at two
      } else if (threads > 1) {
        EXPECT_FALSE(ours) << form;
      }
    }
}

// The kernels alone: one convolution through transform_input, gemm and
// transform_output, block by block as run_blocked() does, at a vector width.
struct KernelCase {
  std::string name;
  int tile;
  std::int64_t in_channels, out_channels;
  Ints sizes;  // H, W or D, H, W
  std::int64_t padding;
  bool bias_and_clamp;
};
void PrintTo(const KernelCase& c, std::ostream* os) { *os << c.name; }

class WinogradKernelsTest : public ::testing::TestWithParam<std::tuple<KernelCase, int>> {};

TEST_P(WinogradKernelsTest, MatchLibTorch) {
  const auto& [c, lanes] = GetParam();
  const conv::Kernels* k = conv::kernels(lanes);
  if (!k) GTEST_SKIP() << lanes << "-lane Winograd kernels: not in this build or not on this CPU";
  ASSERT_EQ(k->lanes, lanes);
  const int rank = static_cast<int>(c.sizes.size());
  Ints padding(3, c.padding);
  winograd::Geometry g;
  ASSERT_TRUE(winograd::Geometry::make(rank, c.tile, 2, c.in_channels, c.out_channels, c.sizes.data(), padding.data(), g));

  at::manual_seed(3);
  Ints xs{2, c.in_channels}, ws{c.out_channels, c.in_channels};
  xs.insert(xs.end(), c.sizes.begin(), c.sizes.end());
  ws.insert(ws.end(), static_cast<std::size_t>(rank), 3);
  const at::Tensor x = at::randn(xs), w = at::randn(ws) * 0.3, b = at::randn({c.out_channels});
  const Ints pads(static_cast<std::size_t>(rank), c.padding), ones(static_cast<std::size_t>(rank), 1);
  at::Tensor want = rank == 3 ? at::conv3d(x, w, c.bias_and_clamp ? b : at::Tensor(), ones, pads)
                              : at::conv2d(x, w, c.bias_and_clamp ? b : at::Tensor(), ones, pads);
  const float lo = c.bias_and_clamp ? -0.5f : -std::numeric_limits<float>::infinity();
  const float hi = c.bias_and_clamp ? 1.0f : std::numeric_limits<float>::infinity();
  want = at::clamp(want, lo, hi);
  // Channels-last, as the backend keeps them.
  const at::Tensor xl = x.movedim(1, -1).contiguous(), wc = w.contiguous();
  const at::Tensor want_l = want.movedim(1, -1).contiguous();

  const std::vector<float> u = winograd::pad_columns(g, winograd::transform_weights(g, wc.data_ptr<float>(), false), lanes);
  const std::int64_t block = 2 * k->rows, P = g.points();  // several blocks, the last partial
  std::vector<float> v(static_cast<std::size_t>(P * block * c.in_channels)), m(static_cast<std::size_t>(P * block * c.out_channels));
  std::vector<float> y(static_cast<std::size_t>(want_l.numel()), std::numeric_limits<float>::quiet_NaN());
  for (std::int64_t start = 0; start < g.tiles(); start += block) {
    const std::int64_t count = std::min(block, g.tiles() - start);
    k->transform_input(g, xl.data_ptr<float>(), v.data(), start, block, start, count);
    for (std::int64_t p = 0; p < P; ++p) k->gemm(g, v.data(), u.data(), m.data(), block, p, 0, count);
    k->transform_output(g, m.data(), false, y.data(), c.bias_and_clamp ? b.data_ptr<float>() : nullptr, lo, hi, start, block, start, count);
  }
  const float* expected = want_l.data_ptr<float>();
  double worst = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    ASSERT_FALSE(std::isnan(y[i])) << "output " << i << " never written";
    worst = std::max(worst, std::abs(static_cast<double>(y[i]) - expected[i]) / (1.0 + std::abs(expected[i])));
  }
  EXPECT_LE(worst, 1e-4);
}

std::vector<KernelCase> kernel_cases() {
  return {
      {"f2_one_channel_one_pixel", 2, 1, 1, {1, 1}, 1, false},
      {"f2_channels_5_to_13", 2, 5, 13, {7, 9}, 1, true},
      {"f2_channels_9_to_17_no_padding", 2, 9, 17, {6, 5}, 0, true},
      {"f4_channels_3_to_7", 4, 3, 7, {11, 10}, 1, false},
      {"f4_channels_12_padding_2", 4, 12, 12, {9, 9}, 2, true},
      {"f4_channels_16_to_20", 4, 16, 20, {13, 6}, 1, true},
      {"f4_channels_33_to_8_height_1", 4, 33, 8, {1, 14}, 1, false},
      {"f2_3d_channels_12", 2, 12, 12, {5, 6, 7}, 1, true},
      {"f2_3d_one_voxel", 2, 1, 3, {3, 3, 3}, 0, false},
      {"f2_3d_channels_13_to_9", 2, 13, 9, {4, 5, 3}, 1, true},
  };
}

INSTANTIATE_TEST_SUITE_P(Shapes, WinogradKernelsTest, ::testing::Combine(::testing::ValuesIn(kernel_cases()), ::testing::Values(4, 8, 16)),
                         [](const auto& info) { return std::get<0>(info.param).name + "_lanes_" + std::to_string(std::get<1>(info.param)); });

TEST(ConvAlgorithm, NamesRoundTripAndAnUnknownOneIsRefused) {
  for (ConvAlgorithm a : {ConvAlgorithm::kFastest, ConvAlgorithm::kDirect, ConvAlgorithm::kWinograd, ConvAlgorithm::kWinogradF4})
    EXPECT_EQ(conv_algorithm_from(conv_algorithm_name(a)), a);
  try {
    conv_algorithm_from("fast");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'fast'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tracegraph::xnnpack
