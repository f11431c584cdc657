// The real-model zoo on the XNNPACK backend (natively): each model, as read
// and optimized, on one thread and two, within 1e-4 of the module's own
// forward; ops XNNPACK has no operator for run as portable kernels.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "native/test_models.h"
#include "native/zoo_models.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/xnnpack/backend.h"

namespace tracegraph::xnnpack {
namespace {

using tracegraph::testing::max_relative_error;
using tracegraph::testing::zoo_path;

// The models this backend cannot run yet, refused at finalize() with a typed
// error: swin builds its attention masks from int64 and bool tensors
// (new_zeros, fill, ne, masked_fill, roll over indices), which the backend's
// float32 slots do not hold. A model that starts to run fails here: move it.
const std::set<std::string> kKnownGaps = {"swin_t", "swin_small_traced"};

// One test per model (each ctest test is a process that loads LibTorch), both variants in it.
class XnnpackZooTest : public ::testing::TestWithParam<std::string> {};

TEST_P(XnnpackZooTest, RunsWithinToleranceAsReadAndOptimized) {
  const std::string model = GetParam();
  const auto io = tracegraph::testing::read_model_io(zoo_path(model + ".io.safetensors"));
  native::TorchScriptOptions options;
  options.example_inputs = io.inputs;
  const ExportedGraph read = native::read_torchscript(zoo_path(model + ".ts"), options);
  struct Variant {
    bool optimized;
    int threads;
  };
  for (const Variant v : {Variant{false, 1}, Variant{true, 2}}) {
    SCOPED_TRACE(std::string(v.optimized ? "optimized" : "as read") + " on " + std::to_string(v.threads) + " threads");
    TracedGraph g = TracedGraph::from_exported(read, make_backend(Options{v.threads, true}));
    if (v.optimized) g.optimize();
    if (kKnownGaps.count(model)) {
      try {
        g.finalize();
        FAIL() << model << " finalized: take it off kKnownGaps";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
        std::printf("[gap] %s: %s\n", model.c_str(), e.what());
      }
      continue;
    }
    g.finalize();
    const std::vector<Tensor> out = g.run(io.inputs);
    ASSERT_EQ(out.size(), io.outputs.size());
    for (std::size_t i = 0; i < out.size(); ++i) EXPECT_LE(max_relative_error(out[i], io.outputs[i]), 1e-4) << "output " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, XnnpackZooTest, ::testing::ValuesIn(tracegraph::testing::kZooSmall),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace tracegraph::xnnpack
