// What TracedGraph checks by itself, with no backend: its tree specs must fit
// the graph they describe.
#include "tracegraph/traced_graph.h"

#include "test_util.h"

namespace tracegraph {
namespace {

// Two inputs, two outputs: x -> relu -> a, y -> sigmoid -> b.
Graph two_in_two_out() {
  Graph g;
  ValueId x = g.add_input("x", DType::kFloat32, symbolic({2}));
  ValueId y = g.add_input("y", DType::kFloat32, symbolic({2}));
  NodeId a = g.add_node("relu", {x}, {"a"});
  NodeId b = g.add_node("sigmoid", {y}, {"b"});
  g.set_outputs({g.node(a).outputs[0], g.node(b).outputs[0]});
  return g;
}

TEST(TracedGraphSpecTest, SpecsWithAsManyLeavesAsTheGraphAreTaken) {
  const TreeSpec in = TreeSpec::tuple({TreeSpec::tuple({TreeSpec::leaf(), TreeSpec::leaf()}), TreeSpec::dict({})});
  TracedGraph g(two_in_two_out(), in, TreeSpec::dict({{"a", TreeSpec::leaf()}, {"b", TreeSpec::leaf()}}));
  EXPECT_EQ(g.in_spec()->str(), "((*, *), {})");
  EXPECT_EQ(g.out_spec().str(), "{'a': *, 'b': *}");
  // No out_spec: a flat tuple of the outputs.
  TracedGraph flat(two_in_two_out(), std::nullopt, std::nullopt);
  EXPECT_EQ(flat.out_spec().str(), "(*, *)");
  EXPECT_FALSE(flat.in_spec().has_value());
}

TEST(TracedGraphSpecTest, AnOutSpecWithOtherLeavesThanOutputsIsRefused) {
  EXPECT_TG_ERROR(TracedGraph(two_in_two_out(), std::nullopt, TreeSpec::leaf()), ErrorCode::kTreeSpecMismatch,
                  "out_spec * has 1 leaves for 2 graph outputs");
  EXPECT_TG_ERROR(TracedGraph(two_in_two_out(), std::nullopt,
                              TreeSpec::tuple({TreeSpec::leaf(), TreeSpec::leaf(), TreeSpec::leaf()})),
                  ErrorCode::kTreeSpecMismatch, "has 3 leaves for 2 graph outputs");
}

TEST(TracedGraphSpecTest, AnInSpecWithOtherLeavesThanInputsIsRefused) {
  const TreeSpec one = TreeSpec::tuple({TreeSpec::tuple({TreeSpec::leaf()}), TreeSpec::dict({})});
  EXPECT_TG_ERROR(TracedGraph(two_in_two_out(), one, std::nullopt), ErrorCode::kTreeSpecMismatch,
                  "in_spec ((*,), {}) has 1 leaves for 2 graph inputs");
}

}  // namespace
}  // namespace tracegraph
