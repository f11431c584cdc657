#include "tracegraph/optimizer.h"

#include "sdk/graph/graph_internals.h"
#include "sdk/transforms/transform_test_util.h"
#include "test_util.h"
#include "tracegraph/transforms/transforms.h"

namespace tracegraph {
namespace {

// x -> contiguous -> relu -> neg (unread)
Graph small() {
  Graph g;
  ValueId x = g.add_input("x");
  NodeId c = g.add_node("aten::contiguous", {x}, {"c"});
  NodeId r = g.add_node("aten::relu", {g.node(c).outputs[0]}, {"r"});
  g.add_node("aten::neg", {g.node(r).outputs[0]}, {"n"});
  g.set_outputs({g.node(r).outputs[0]});
  return g;
}

TEST(OptimizerTest, RunsTheDefaultsToAFixedPointWithAReport) {
  Graph g = small();
  OptimizeReport report = optimize(g);
  EXPECT_TRUE(report.converged);
  EXPECT_EQ(report.sweeps, 2u);  // one that changes, one that confirms
  EXPECT_EQ(report.nodes_before, 3u);
  EXPECT_EQ(report.nodes_after, 1u);
  EXPECT_EQ(report.total_rewrites(), 2u);
  ASSERT_EQ(report.transforms.size(), default_transform_names().size());
  EXPECT_EQ(report.transforms[1].name, "noop_elimination");
  EXPECT_EQ(report.transforms[1].rewrites, 1u);
  EXPECT_EQ(report.transforms[1].runs, 2u);
  EXPECT_NE(report.table().find("2 sweeps, converged; nodes 3 -> 1"), std::string::npos) << report.table();
  EXPECT_NE(report.json().find(R"("name":"dead_code_elimination","runs":2,"rewrites":1)"), std::string::npos) << report.json();
}

// A node that replaces another (the reshape view_chain_collapse makes) takes
// its module; nodes kept keep theirs.
//   x -> view (block.flatten) -> reshape (block) -> relu (block.act) -> contiguous (block)
// after: x -> reshape (block) -> relu (block.act)
TEST(OptimizerTest, KeepsTheModulesOfTheNodes) {
  using testing::args;
  using testing::typed;
  Graph g;
  const ModuleId block = g.add_module("block", "Block");
  const ValueId x = g.add_input("x", DType::kFloat32, symbolic({2, 3, 4}));
  const NodeId v = g.add_node("aten::view", {x}, {typed("a", {6, 4})}, args({"self"}, {{"size", std::vector<std::int64_t>{6, 4}}}));
  const NodeId r = g.add_node("aten::reshape", {g.node(v).outputs[0]}, {typed("b", {2, 12})}, args({"self"}, {{"shape", std::vector<std::int64_t>{2, 12}}}));
  const NodeId a = g.add_node("aten::relu", {g.node(r).outputs[0]}, {typed("c", {2, 12})}, args({"self"}));
  const NodeId c = g.add_node("aten::contiguous", {g.node(a).outputs[0]}, {typed("d", {2, 12})}, args({"self"}));
  g.set_outputs({g.node(c).outputs[0]});
  g.set_node_module(v, g.add_module("block.flatten", "Flatten", block));
  g.set_node_module(r, block);
  g.set_node_module(a, g.add_module("block.act", "ReLU", block));
  g.set_node_module(c, block);
  optimize(g);
  std::vector<std::string> ops, paths;
  for (NodeId id : g.nodes()) {
    ops.push_back(g.node(id).op);
    std::string path;
    for (const ModuleFrame& f : g.module_path(id)) path += (path.empty() ? "" : " > ") + f.path + ":" + f.type;
    paths.push_back(path);
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"aten::reshape", "aten::relu"})) << g.dump();
  EXPECT_EQ(paths, (std::vector<std::string>{"block:Block", "block:Block > block.act:ReLU"}));
}

TEST(OptimizerTest, DefaultsCanBeDisabledByNameAndUnknownNamesAreErrors) {
  Graph g = small();
  DefaultsOptions d;
  d.disabled = {"dead_code_elimination"};
  OptimizeReport report = optimize(g, std::nullopt, std::nullopt, d);
  EXPECT_EQ(report.nodes_after, 2u);  // the unread neg stays
  DefaultsOptions only;
  only.enabled = {"noop_elimination"};
  Graph e = small();
  OptimizeReport just_noop = optimize(e, std::nullopt, std::nullopt, only);
  ASSERT_EQ(just_noop.transforms.size(), 1u);
  EXPECT_EQ(just_noop.nodes_after, 2u);
  d.disabled = {"no_such_transform"};
  Graph h = small();
  EXPECT_TG_ERROR(optimize(h, std::nullopt, std::nullopt, d), ErrorCode::kNotFound, "no transform named 'no_such_transform'");
}

TEST(OptimizerTest, UserTransformsMixWithDefaults) {
  Graph g = small();
  std::size_t calls = 0;
  auto rename_relu = make_transform("rename_relu", [&](Graph& graph, TransformContext& ctx) -> std::size_t {
    ++calls;
    for (NodeId id : graph.nodes()) {
      if (graph.node(id).op == "aten::relu" && ctx.take()) {
        graph.set_op(id, "aten::relu6");
        return 1;
      }
    }
    return 0;
  });
  OptimizeReport report = optimize(g, std::vector<std::shared_ptr<Transform>>{rename_relu, transform_by_name("dead_code_elimination")});
  EXPECT_TRUE(report.converged);
  EXPECT_EQ(calls, 2u);
  EXPECT_EQ(g.node(g.nodes().back()).op, "aten::relu6");
}

TEST(OptimizerTest, TheIterationCapAndTheBudgetStopIt) {
  // A transform that always changes something never converges.
  auto restless = make_transform("restless", [](Graph&, TransformContext& ctx) -> std::size_t { return ctx.take() ? 1 : 0; });
  Graph g = small();
  OptimizeReport capped = optimize(g, std::vector<std::shared_ptr<Transform>>{restless}, 3);
  EXPECT_EQ(capped.sweeps, 3u);
  EXPECT_FALSE(capped.converged);
  DefaultsOptions d;
  d.rewrite_budget = 5;
  OptimizeReport budgeted = optimize(g, std::vector<std::shared_ptr<Transform>>{restless}, std::nullopt, d);
  EXPECT_TRUE(budgeted.budget_exhausted);
  EXPECT_EQ(budgeted.total_rewrites(), 5u);
  EXPECT_NE(budgeted.table().find("stopped by the rewrite budget"), std::string::npos);
}

TEST(OptimizerTest, ATransformThatBreaksTheGraphIsCaught) {
  // Puts relu before the contiguous it reads: the editing API cannot do that,
  // every single edit stays legal, and only verify() sees the order is wrong.
  auto breaker = make_transform("breaker", [](Graph& g, TransformContext&) -> std::size_t {
    std::swap(GraphInternals::order(g)[0], GraphInternals::order(g)[1]);
    return 1;
  });
  Graph g = small();
  EXPECT_TG_ERROR(optimize(g, std::vector<std::shared_ptr<Transform>>{breaker}), ErrorCode::kInternal,
                  "transform 'breaker' left an invalid graph");
  // Without verify_each, nothing looks.
  Graph unchecked = small();
  DefaultsOptions no_verify;
  no_verify.verify_each = false;
  EXPECT_NO_THROW(optimize(unchecked, std::vector<std::shared_ptr<Transform>>{breaker}, 1, no_verify));
}

}  // namespace
}  // namespace tracegraph
