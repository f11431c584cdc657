// The real-model zoo on the XNNPACK backend (natively): each model, as read
// and optimized, on one thread and two, within 1e-4 of the module's own
// forward; ops XNNPACK has no operator for run as portable kernels.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "native/test_models.h"
#include "native/zoo_models.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/torchscript_archive.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/xnnpack/backend.h"

namespace tracegraph::xnnpack {
namespace {

using tracegraph::testing::max_relative_error;
using tracegraph::testing::zoo_path;

// One test per model (each ctest test is a process that loads LibTorch), both variants in it.
class XnnpackZooTest : public ::testing::TestWithParam<std::string> {};

TEST_P(XnnpackZooTest, RunsWithinToleranceAsReadAndOptimized) {
  const std::string model = GetParam();
  const auto io = tracegraph::testing::read_model_io(zoo_path(model + ".io.safetensors"));
  native::TorchScriptOptions options;
  options.example_inputs = io.inputs;
  const ExportedGraph read = native::read_torchscript(zoo_path(model + ".ts"), options);
  // Every 3x3 stride-1 convolution as Winograd F(4,3) (2D; F(2,3) in 3D) as
  // read, as F(2,3) optimized.
  struct Variant {
    bool optimized;
    int threads;
    ConvAlgorithm algorithm;
  };
  for (const Variant v : {Variant{false, 1, ConvAlgorithm::kWinogradF4}, Variant{true, 2, ConvAlgorithm::kWinograd}}) {
    SCOPED_TRACE(std::string(v.optimized ? "optimized" : "as read") + " on " + std::to_string(v.threads) + " threads, " +
                 std::string(conv_algorithm_name(v.algorithm)) + " convolutions");
    Options options{v.threads, true};
    options.conv_algorithm = v.algorithm;
    auto owned = std::make_unique<XnnpackBackend>(options);
    const XnnpackBackend* backend = owned.get();
    TracedGraph g = TracedGraph::from_exported(read, std::move(owned));
    if (v.optimized) g.optimize();
    g.finalize();
    const std::vector<Tensor> out = g.run(io.inputs);
    ASSERT_EQ(out.size(), io.outputs.size());
    for (std::size_t i = 0; i < out.size(); ++i) EXPECT_LE(max_relative_error(out[i], io.outputs[i]), 1e-4) << "output " << i;
    // What ran where, for the record (the note's table): nodes per engine and
    // the share of the run's time in portable kernels.
    double total = 0, portable = 0;
    int on_xnnpack = 0, on_portable = 0, winograd = 0;
    for (const NodeTime& t : backend->profile()) {
      total += t.milliseconds;
      if (t.engine == Engine::kPortable) portable += t.milliseconds, ++on_portable;
      if (t.engine == Engine::kXnnpack || t.engine == Engine::kWinograd) ++on_xnnpack;
      if (t.engine == Engine::kWinograd) ++winograd;
    }
    EXPECT_GT(on_xnnpack, 0) << "every model here has a convolution or a linear layer";
    std::printf("[engines] %s %s: %zu nodes, %d on XNNPACK (%d as Winograd), %d portable, %.1f%% of %.2f ms in portable kernels\n", model.c_str(),
                v.optimized ? "optimized" : "as read", g.graph().nodes().size(), on_xnnpack, winograd, on_portable,
                total > 0 ? 100 * portable / total : 0.0, total);
  }
}

// What the page and the JS API run: the core's TorchScript reader (no
// LibTorch; scripted code read for the input shapes) and XNNPACK.
TEST_P(XnnpackZooTest, RunsWithinToleranceAsTheCoreReaderReadsIt) {
  const std::string model = GetParam();
  const auto io = tracegraph::testing::read_model_io(zoo_path(model + ".io.safetensors"));
  std::vector<Shape> shapes;
  for (const Tensor& t : io.inputs) shapes.push_back(t.shape());
  TracedGraph g = TracedGraph::from_exported(load_torchscript_archive(zoo_path(model + ".ts"), {}, shapes), std::make_unique<XnnpackBackend>(Options{1, true}));
  g.set_input_shapes(shapes);
  g.optimize();
  g.finalize();
  const std::vector<Tensor> out = g.run(io.inputs);
  ASSERT_EQ(out.size(), io.outputs.size());
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_LE(max_relative_error(out[i], io.outputs[i]), 1e-4) << "output " << i;
}

#ifndef TRACEGRAPH_ZOO_LARGE
const std::vector<std::string>& kZoo = tracegraph::testing::kZooSmall;
#else
const std::vector<std::string>& kZoo = tracegraph::testing::kZooLarge;
#endif

INSTANTIATE_TEST_SUITE_P(Zoo, XnnpackZooTest, ::testing::ValuesIn(kZoo),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace tracegraph::xnnpack
