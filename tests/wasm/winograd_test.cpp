// Winograd convolutions, F(2,3) and F(4,3) (ConvAlgorithm::kWinograd,
// kWinogradF4), alone, on odd
// shapes: size-1 outputs, partial tiles, channels not a multiple of 4 (the
// transforms' vectors), padding 0 and 2, batches, several chunks and blocks of tiles,
// fused activations, 2D and 3D, one thread and two, the GEMM either way round
// (ours, or XNNPACK's with 256 channels); each against the LibTorch
// backend on the same graph, and against the direct convolution.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "native/test_models.h"
#include "tracegraph/error.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/op_table.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/xnnpack/backend.h"

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
  if (c.activation == "relu") a.set("fused_activation", std::string("relu"));
  if (c.activation == "clip") {
    a.set("fused_activation", std::string("clip"));
    a.set("fused_min", 0.0);
    a.set("fused_max", 6.0);
  }
  const NodeId n = b.graph.add_node(rank == 3 ? "aten::conv3d" : "aten::conv2d", ins, {NewValue{}}, std::move(a), "conv");
  b.graph.set_outputs({b.graph.node(n).outputs[0]});
  return b;
}

// The output on XNNPACK with `algorithm`, and the engine that ran the convolution.
std::pair<Tensor, Engine> run_on_xnnpack(const ConvCase& c, ConvAlgorithm algorithm) {
  Built b = build(c);
  Options options{c.threads, true};
  options.conv_algorithm = algorithm;
  auto owned = std::make_unique<XnnpackBackend>(options);
  const XnnpackBackend* backend = owned.get();
  TracedGraph g(std::move(b.graph), std::nullopt, std::nullopt, std::move(owned));
  g.finalize();
  Tensor out = g.run(b.inputs).at(0);
  for (const NodeTime& t : backend->profile())
    if (t.node == "conv") return {out, t.engine};
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
  // The measured choice runs one of the two.
  const auto [fastest, fastest_engine] = run_on_xnnpack(c, ConvAlgorithm::kFastest);
  EXPECT_TRUE(fastest_engine == Engine::kWinograd || fastest_engine == Engine::kXnnpack);
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
