// One surface on both sides: what a TracedGraph on the XNNPACK backend does
// natively, case by case as tests/js/surface.test.mjs checks it in wasm on the
// same exported files (README, "C++ and JavaScript"): the same calls give the
// same results and the same error codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "native/test_models.h"
#include "test_util.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/xnnpack/backend.h"

namespace tracegraph::xnnpack {
namespace {

using tracegraph::testing::exported_path;
using tracegraph::testing::read_model_io;

TracedGraph load_exported(const std::string& model) {
  return TracedGraph::from_exported(load_graph(exported_path(model, ".json")), make_backend({1}));
}

std::vector<std::string> transform_names(const OptimizeReport& report) {
  std::vector<std::string> out;
  for (const auto& t : report.transforms) out.push_back(t.name);
  return out;
}

TEST(SurfaceTest, ToTakesTheCpuAndRefusesOtherDevices) {
  TracedGraph g = load_exported("unet2d");
  g.to("cpu");
  EXPECT_EQ(g.device(), Device::cpu());
  EXPECT_EQ(g.backend()->name(), "xnnpack");
  EXPECT_TG_ERROR(g.to("cuda"), ErrorCode::kUnsupported, "runs on the CPU only, not on cuda");
  EXPECT_TG_ERROR(g.to("cuda:1"), ErrorCode::kUnsupported, "not on cuda:1");
  EXPECT_TG_ERROR(g.to("gpu"), ErrorCode::kInvalidArgument, "device 'gpu'");
  EXPECT_EQ(g.device(), Device::cpu());  // a refused device changes nothing
  g.finalize();
  g.to("cpu");
  EXPECT_TG_ERROR(g.to("cuda"), ErrorCode::kUnsupported, "not on cuda");
}

TEST(SurfaceTest, RunByNameReturnsTheListInOutputOrder) {
  TracedGraph g = load_exported("unet3d_dict_out");
  const auto io = read_model_io(exported_path("unet3d_dict_out", ".io.safetensors"));
  EXPECT_TG_ERROR(g.run(io.inputs), ErrorCode::kNotFinalized, "");
  g.finalize();
  g.finalize();  // again: nothing changes
  EXPECT_TG_ERROR(g.optimize(), ErrorCode::kInvalidArgument, "finalized");
  const std::vector<Tensor> by_order = g.run(io.inputs);
  const std::vector<Tensor> by_name = g.run(std::map<std::string, Tensor>{{g.input_names()[0], io.inputs[0]}});
  ASSERT_EQ(by_name.size(), g.output_names().size());
  for (std::size_t i = 0; i < by_name.size(); ++i) {
    ASSERT_EQ(by_name[i].shape(), by_order[i].shape());
    EXPECT_TRUE(std::equal(by_name[i].bytes().begin(), by_name[i].bytes().end(), by_order[i].bytes().begin()));
  }
  EXPECT_TG_ERROR(g.run(std::map<std::string, Tensor>{}), ErrorCode::kInvalidArgument, "is missing");
  EXPECT_TG_ERROR(g.run(std::map<std::string, Tensor>{{g.input_names()[0], io.inputs[0]}, {"nope", io.inputs[0]}}),
                  ErrorCode::kNotFound, "no input %nope");
  EXPECT_TG_ERROR(g.run(std::vector<Tensor>{io.inputs[0], io.inputs[0]}), ErrorCode::kInvalidArgument, "takes 1 input");
}

TEST(SurfaceTest, OptimizeTakesTheSameOptions) {
  TracedGraph g = load_exported("mobilenet_v2_traced");
  const std::size_t before = g.graph().num_nodes();
  // max_iterations 0: no sweep.
  const OptimizeReport none = g.optimize(std::nullopt, 0);
  EXPECT_EQ(none.sweeps, 0u);
  EXPECT_EQ(g.graph().num_nodes(), before);
  // Transforms by name, in the order given.
  const OptimizeReport named = g.optimize(std::vector{transform_by_name("dead_code_elimination"), transform_by_name("noop_elimination")});
  EXPECT_EQ(transform_names(named), (std::vector<std::string>{"dead_code_elimination", "noop_elimination"}));
  // enabled: only these defaults; a rewrite budget stops after that many rewrites.
  DefaultsOptions one;
  one.enabled = {"batch_norm_folding"};
  one.rewrite_budget = 1;
  one.verify_each = false;
  const OptimizeReport budgeted = g.optimize(std::nullopt, std::nullopt, one);
  EXPECT_EQ(transform_names(budgeted), std::vector<std::string>{"batch_norm_folding"});
  EXPECT_EQ(budgeted.total_rewrites(), 1u);
  EXPECT_TRUE(budgeted.budget_exhausted);
  DefaultsOptions unknown;
  unknown.disabled = {"no_such_transform"};
  EXPECT_TG_ERROR(g.optimize(std::nullopt, std::nullopt, unknown), ErrorCode::kNotFound, "no transform named 'no_such_transform'");
  EXPECT_TG_ERROR(transform_by_name("no_such_transform"), ErrorCode::kNotFound, "no transform named");
  // The rest converges; the report's counts are the graph's.
  const OptimizeReport rest = g.optimize();
  EXPECT_TRUE(rest.converged);
  EXPECT_EQ(rest.nodes_after, g.graph().num_nodes());
  EXPECT_LT(rest.nodes_after, before);
}

}  // namespace
}  // namespace tracegraph::xnnpack
