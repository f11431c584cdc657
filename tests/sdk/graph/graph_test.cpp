#include "tracegraph/graph.h"

#include "sdk/graph/graph_internals.h"
#include "test_util.h"

namespace tracegraph {
namespace {

// x -> relu -> y -> sigmoid -> z
//        w (constant) -+-> add(y, w) -> s
struct SmallGraph {
  Graph g;
  ValueId x, w, y, z, s;
  NodeId relu, sigmoid, add;

  SmallGraph() {
    x = g.add_input("x", DType::kFloat32, SymbolicShape{Dim::sym("N"), Dim::of(4)});
    w = g.add_constant("w", Tensor::from_vector<float>({1, 2, 3, 4}, {4}));
    relu = g.add_node("relu", {x}, {"y"});
    y = g.node(relu).outputs[0];
    sigmoid = g.add_node("sigmoid", {y}, {"z"});
    z = g.node(sigmoid).outputs[0];
    add = g.add_node("add", {y, w}, {"s"});
    s = g.node(add).outputs[0];
    g.set_outputs({z, s});
  }
};

TEST(GraphTest, BuildingKeepsProducersAndUsers) {
  SmallGraph t;
  t.g.verify();
  EXPECT_EQ(t.g.value(t.y).producer, t.relu);
  ASSERT_EQ(t.g.value(t.y).users.size(), 2u);
  EXPECT_EQ(t.g.value(t.y).users[0], (Use{t.sigmoid, 0}));
  EXPECT_EQ(t.g.value(t.y).users[1], (Use{t.add, 0}));
  EXPECT_TRUE(t.g.value(t.w).is_constant());
  EXPECT_FALSE(t.g.value(t.w).producer.has_value());
  EXPECT_EQ(t.g.input_names(), std::vector<std::string>{"x"});
  EXPECT_EQ(t.g.output_names(), (std::vector<std::string>{"z", "s"}));
  EXPECT_EQ(t.g.find_value("s"), t.s);
  EXPECT_EQ(t.g.constants(), std::vector<ValueId>{t.w});
}

TEST(GraphTest, DumpIsStableAndReadable) {
  SmallGraph t;
  t.g.set_attribute(t.add, "alpha", 1.0);
  t.g.set_attribute(t.add, "axes", std::vector<std::int64_t>{0, 1});
  EXPECT_EQ(t.g.dump(),
            "graph main(%x: float32[N, 4]) {\n"
            "  %w: float32[4] = constant\n"
            "  %y: ?[?] = relu(%x)  # relu_0\n"
            "  %z: ?[?] = sigmoid(%y)  # sigmoid_1\n"
            "  %s: ?[?] = add(%y, %w) {alpha=1, axes=[0, 1]}  # add_2\n"
            "  return (%z, %s)\n"
            "}\n");
}

TEST(GraphTest, ReplaceAllUsesMovesReadersAndGraphOutputs) {
  SmallGraph t;
  t.g.replace_all_uses(t.y, t.x);
  t.g.verify();
  EXPECT_TRUE(t.g.value(t.y).users.empty());
  EXPECT_EQ(t.g.node(t.sigmoid).inputs[0], t.x);
  EXPECT_EQ(t.g.value(t.x).users.size(), 3u);
  t.g.erase_node(t.relu);
  t.g.verify();
  EXPECT_FALSE(t.g.is_live(t.y));
  EXPECT_EQ(t.g.num_nodes(), 2u);
  EXPECT_FALSE(t.g.find_value("y").has_value());
}

TEST(GraphTest, ReplaceUsesAfterLeavesEarlierReadersAlone) {
  // An in-place op's rewrite: reads after the op see its result.
  Graph g;
  ValueId x = g.add_input("x");
  NodeId first = g.add_node("neg", {x}, {"a"});
  NodeId inplace = g.add_node("sigmoid", {x}, {"x_new"});
  NodeId later = g.add_node("neg", {x}, {"b"});
  g.set_outputs({x, g.node(first).outputs[0], g.node(later).outputs[0]});
  ValueId x_new = g.node(inplace).outputs[0];
  g.replace_uses_after(inplace, x, x_new);
  g.verify();
  EXPECT_EQ(g.node(first).inputs[0], x);
  EXPECT_EQ(g.node(inplace).inputs[0], x);
  EXPECT_EQ(g.node(later).inputs[0], x_new);
  EXPECT_EQ(g.outputs()[0], x_new);
}

TEST(GraphTest, InsertBeforePlacesTheNodeInOrder) {
  SmallGraph t;
  NodeId neg = t.g.add_node("neg", {t.x}, {"nx"}, {}, "neg", t.sigmoid);
  EXPECT_EQ(t.g.position(neg), 1u);
  EXPECT_EQ(t.g.position(t.sigmoid), 2u);
  t.g.set_node_input(t.sigmoid, 0, t.g.node(neg).outputs[0]);
  t.g.verify();
  EXPECT_EQ(t.g.value(t.y).users.size(), 1u);
}

TEST(GraphTest, EditingRefusesWhatWouldBreakTheGraph) {
  SmallGraph t;
  EXPECT_TG_ERROR(t.g.erase_node(t.relu), ErrorCode::kInvalidArgument, "still read by node 'sigmoid_1'");
  EXPECT_TG_ERROR(t.g.erase_node(t.sigmoid), ErrorCode::kInvalidArgument, "graph output");
  EXPECT_TG_ERROR(t.g.add_input("x"), ErrorCode::kDuplicateName, "%x");
  EXPECT_TG_ERROR(t.g.add_node("relu", {ValueId(99)}, {"q"}), ErrorCode::kDanglingId, "input 0");
  EXPECT_TG_ERROR(t.g.add_node("relu", {t.x}, {"z"}), ErrorCode::kDuplicateName, "%z");
  EXPECT_TG_ERROR(t.g.erase_value(t.w), ErrorCode::kInvalidArgument, "still read");
  t.g.verify();  // nothing above changed the graph
  EXPECT_EQ(t.g.num_nodes(), 3u);
}

TEST(GraphTest, UniqueNamesAvoidTakenOnes) {
  SmallGraph t;
  EXPECT_EQ(t.g.unique_value_name("q"), "q");
  EXPECT_EQ(t.g.unique_value_name("y"), "y.1");
}

// unique_value_name starts its probe where the last one stopped (names in
// constant time, issue 50) and gives the names a probe from 1 gives: a freed
// suffix is handed out again.
TEST(GraphTest, UniqueNamesReuseAFreedSuffixAsAProbeFromOneWould) {
  Graph g;
  const ValueId x = g.add_input("x");
  std::vector<ValueId> made;
  for (int i = 1; i <= 3; ++i) {
    const std::string name = g.unique_value_name("x");
    EXPECT_EQ(name, "x." + std::to_string(i));
    made.push_back(g.node(g.add_node("aten::relu", {x}, {NewValue(name)})).outputs[0]);
  }
  g.erase_node(*g.value(made[1]).producer);  // frees x.2
  EXPECT_EQ(g.unique_value_name("x"), "x.2");
  g.rename_value(made[0], "y");  // frees x.1
  EXPECT_EQ(g.unique_value_name("x"), "x.1");
}

TEST(GraphVerifyTest, FindsADanglingInput) {
  SmallGraph t;
  GraphInternals::node(t.g, t.sigmoid).inputs[0] = ValueId(1000);
  EXPECT_TG_ERROR(t.g.verify(), ErrorCode::kDanglingId, "node 'sigmoid_1' (sigmoid) input 0");
}

TEST(GraphVerifyTest, FindsAValueWithTwoProducers) {
  SmallGraph t;
  GraphInternals::node(t.g, t.sigmoid).outputs[0] = t.y;
  EXPECT_TG_ERROR(t.g.verify(), ErrorCode::kMultipleProducers, "%y");
}

TEST(GraphVerifyTest, FindsACycle) {
  SmallGraph t;
  // relu reads z, which sigmoid (after relu) writes from relu's own output.
  GraphInternals::node(t.g, t.relu).inputs[0] = t.z;
  GraphInternals::value(t.g, t.z).users.push_back(Use{t.relu, 0});
  auto& xu = GraphInternals::value(t.g, t.x).users;
  xu.clear();
  EXPECT_TG_ERROR(t.g.verify(), ErrorCode::kCycle, "reads %z before node 'sigmoid_1'");
}

TEST(GraphVerifyTest, FindsAValueReadThatNothingProduces) {
  SmallGraph t;
  GraphInternals::inputs(t.g).clear();  // %x is no longer a graph input
  EXPECT_TG_ERROR(t.g.verify(), ErrorCode::kUnproducedOutput, "reads %x, which no node produces");
}

TEST(GraphVerifyTest, FindsAGraphOutputNeverProduced) {
  Graph g;
  ValueId a = g.add_input("a");
  g.set_outputs({a});
  g.verify();
  GraphInternals::inputs(g).clear();
  EXPECT_TG_ERROR(g.verify(), ErrorCode::kUnproducedOutput, "graph output %a is never produced");
}

TEST(GraphVerifyTest, FindsAUseListThatDisagrees) {
  SmallGraph t;
  GraphInternals::value(t.g, t.w).users.clear();
  EXPECT_TG_ERROR(t.g.verify(), ErrorCode::kInternal, "user list of value %w");
}

TEST(GraphVerifyTest, FindsADeadValueStillRead) {
  SmallGraph t;
  GraphInternals::kill(t.g, t.w);
  EXPECT_TG_ERROR(t.g.verify(), ErrorCode::kDanglingId, "node 'add_2' (add) input 1 is value %w");
}

TEST(AttributesTest, TypedReadsAndEquality) {
  Attributes a;
  a.set("dim", std::int64_t{1});
  a.set("min", 0.5);
  a.set("name", std::string("x"));
  EXPECT_EQ(a.get_int("dim"), 1);
  EXPECT_EQ(a.get_float("dim"), 1.0);
  EXPECT_EQ(a.get_float("min"), 0.5);
  EXPECT_FALSE(a.get_int("absent").has_value());
  EXPECT_TG_ERROR(a.get_int("min"), ErrorCode::kSchema, "attribute 'min' is float");
  Attributes b = a;
  EXPECT_TRUE(a == b);
  b.set("min", 0.25);
  EXPECT_FALSE(a == b);
}

}  // namespace
}  // namespace tracegraph
