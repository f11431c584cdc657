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

struct Case {
  std::string model;
  bool optimized = false;
  int threads = 1;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.model << (c.optimized ? " optimized" : "") << " on " << c.threads << " threads"; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& m : tracegraph::testing::kZooSmall) {
    out.push_back({m, false, 1});
    out.push_back({m, true, 2});
  }
  return out;
}

// The models this backend cannot run yet, refused at finalize() with a typed
// error: swin builds its attention masks from int64 and bool tensors
// (new_zeros, fill, ne, masked_fill, roll over indices), which the backend's
// float32 slots do not hold. A model that starts to run fails here: move it.
const std::set<std::string> kKnownGaps = {"swin_t", "swin_small_traced"};

class XnnpackZooTest : public ::testing::TestWithParam<Case> {};

TEST_P(XnnpackZooTest, RunsWithinTolerance) {
  const Case c = GetParam();
  const auto io = tracegraph::testing::read_model_io(zoo_path(c.model + ".io.safetensors"));
  native::TorchScriptOptions options;
  options.example_inputs = io.inputs;
  TracedGraph g = TracedGraph::from_exported(native::read_torchscript(zoo_path(c.model + ".ts"), options),
                                             make_backend(Options{c.threads, true}));
  if (c.optimized) g.optimize();
  if (kKnownGaps.count(c.model)) {
    try {
      g.finalize();
      FAIL() << c.model << " finalized: take it off kKnownGaps";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
      std::printf("[gap] %s: %s\n", c.model.c_str(), e.what());
    }
    return;
  }
  g.finalize();
  const std::vector<Tensor> out = g.run(io.inputs);
  ASSERT_EQ(out.size(), io.outputs.size());
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_LE(max_relative_error(out[i], io.outputs[i]), 1e-4) << "output " << i;
}

INSTANTIATE_TEST_SUITE_P(Zoo, XnnpackZooTest, ::testing::ValuesIn(cases()), [](const ::testing::TestParamInfo<Case>& info) {
  return info.param.model + (info.param.optimized ? "_optimized" : "") + "_" + std::to_string(info.param.threads) + "t";
});

}  // namespace
}  // namespace tracegraph::xnnpack
