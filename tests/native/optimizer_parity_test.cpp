// The optimizer never changes what a graph computes: every default transform,
// alone and in the default pipeline, on every test model, run on LibTorch.
#include "tracegraph/optimizer.h"

#include <ATen/ATen.h>
#include <algorithm>

#include "native/test_models.h"
#include "test_util.h"
#include "tracegraph/activation.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"

namespace tracegraph::native {
namespace {

using tracegraph::testing::model_io;
using tracegraph::testing::model_path;

using tracegraph::testing::max_relative_error;

struct Case {
  std::string model;
  std::string transform;  // "" for the whole default pipeline
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.model << " with " << (c.transform.empty() ? "the defaults" : c.transform); }

// Under the sanitizers the question is memory safety, not numbers: every model
// goes through the whole default pipeline (which runs each transform, with
// verify_each), and each transform alone runs on three models of different
// makes (scripted, traced, batch norms); the native preset runs every pair.
std::vector<Case> cases() {
#ifdef TRACEGRAPH_SANITIZED
  const std::vector<std::string> alone = {"unet3d_sigmoid_scripted", "resnet18_traced", "mobilenet_v2_traced"};
#endif
  std::vector<Case> out;
  for (const auto& m : tracegraph::testing::kReadableModels) {
    out.push_back({m, ""});
#ifdef TRACEGRAPH_SANITIZED
    if (std::find(alone.begin(), alone.end(), m) == alone.end()) continue;
#endif
    for (const auto& t : default_transform_names()) out.push_back({m, t});
  }
  return out;
}

class OptimizerParityTest : public ::testing::TestWithParam<Case> {};

TEST_P(OptimizerParityTest, NumbersAndActivationAreUnchanged) {
  const Case& c = GetParam();
  const auto io = model_io(c.model);
  TorchScriptOptions options;
  options.example_inputs = io.inputs;
  TracedGraph g = load(model_path(c.model + ".ts"), options);
  const auto activation_before = output_activation(g.graph());
  std::optional<std::vector<std::shared_ptr<Transform>>> list;
  if (!c.transform.empty()) list = std::vector<std::shared_ptr<Transform>>{transform_by_name(c.transform)};
  DefaultsOptions defaults;
  defaults.verify_each = true;
  const OptimizeReport report = g.optimize(list, std::nullopt, defaults);
  EXPECT_TRUE(report.converged) << report.table();
  EXPECT_LE(report.nodes_after, report.nodes_before);
  const auto activation_after = output_activation(g.graph());
  ASSERT_EQ(activation_after.size(), activation_before.size());
  for (std::size_t i = 0; i < activation_after.size(); ++i) EXPECT_EQ(activation_after[i].str(), activation_before[i].str()) << report.table();
  g.finalize();
  const std::vector<Tensor> out = g.run(io.inputs);
  ASSERT_EQ(out.size(), io.outputs.size());
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_LE(max_relative_error(out[i], io.outputs[i]), 1e-4) << report.table();
}

INSTANTIATE_TEST_SUITE_P(Models, OptimizerParityTest, ::testing::ValuesIn(cases()), [](const auto& info) {
  return info.param.model + "_" + (info.param.transform.empty() ? std::string("defaults") : info.param.transform);
});

TEST(OptimizerOnModelsTest, TheDefaultsShrinkTheUNetAndFoldItsShapeArithmetic) {
  TorchScriptOptions options;
  options.example_inputs = model_io("unet3d_sigmoid_traced").inputs;
  TracedGraph g = load(model_path("unet3d_sigmoid_traced.ts"), options);
  const OptimizeReport report = g.optimize();
  // The traced crop computes its offsets from sizes: with static shapes all of it folds.
  for (NodeId id : g.graph().nodes()) {
    const std::string& op = g.graph().node(id).op;
    EXPECT_NE(op, "aten::size");
    EXPECT_NE(op, "aten::Int");
    EXPECT_NE(op, "aten::floor_divide");
  }
  // conv + relu fused, and the final sigmoid fused into the head.
  EXPECT_EQ(output_activation(g.graph())[0].str(), "sigmoid");
  EXPECT_EQ(output_activation(g.graph())[0].op, "aten::_convolution");
  EXPECT_LT(report.nodes_after, report.nodes_before / 2) << report.table();
}

TEST(OptimizerOnModelsTest, BatchNormsFoldIntoResNetsConvolutions) {
  TorchScriptOptions options;
  options.example_inputs = model_io("resnet18_traced").inputs;
  TracedGraph g = load(model_path("resnet18_traced.ts"), options);
  const OptimizeReport report = g.optimize();
  std::size_t batch_norms = 0;
  for (NodeId id : g.graph().nodes()) batch_norms += g.graph().node(id).op == "aten::batch_norm";
  EXPECT_EQ(batch_norms, 0u) << report.table();
  for (const auto& t : report.transforms) {
    if (t.name == "batch_norm_folding") {
      EXPECT_EQ(t.rewrites, 20u);
    }
  }
}

TEST(OptimizerOnModelsTest, AFinalizedGraphIsNotOptimized) {
  TracedGraph g = load(model_path("unet2d.ts"));
  g.finalize();
  EXPECT_TG_ERROR(g.optimize(), ErrorCode::kInvalidArgument, "optimize it before finalize()");
}

TEST(OptimizerOnModelsTest, TheRewriteBudgetStopsEarly) {
  TorchScriptOptions options;
  options.example_inputs = model_io("unet2d").inputs;
  TracedGraph g = load(model_path("unet2d.ts"), options);
  DefaultsOptions defaults;
  defaults.rewrite_budget = 3;
  const OptimizeReport report = g.optimize(std::nullopt, std::nullopt, defaults);
  EXPECT_TRUE(report.budget_exhausted);
  EXPECT_FALSE(report.converged);
  EXPECT_EQ(report.total_rewrites(), 3u);
  g.finalize();
  const auto io = model_io("unet2d");
  EXPECT_LE(max_relative_error(g.run(io.inputs)[0], io.outputs[0]), 1e-4);
}

}  // namespace
}  // namespace tracegraph::native
