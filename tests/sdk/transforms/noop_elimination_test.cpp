#include "sdk/transforms/transform_test_util.h"

namespace tracegraph {
namespace {

using testing::args;
using testing::run_transform;
using testing::typed;

TEST(NoopEliminationTest, RemovesOpsThatReturnTheirInput) {
  // x -> dropout(eval) -> contiguous -> to(float32) -> reshape(same) -> mul 1 -> add 0 -> slice(all) -> relu
  Graph g;
  const Shape s{2, 3};
  ValueId v = g.add_input("x", DType::kFloat32, symbolic(s));
  auto then = [&](const char* op, Attributes a) {
    v = g.node(g.add_node(op, {v}, {typed("", s)}, std::move(a))).outputs[0];
  };
  then("aten::dropout", args({"input"}, {{"p", 0.1}, {"train", false}}));
  then("aten::contiguous", args({"self"}));
  then("aten::to", args({"self"}, {{"dtype", std::int64_t{6}}}));
  then("aten::reshape", args({"self"}, {{"shape", std::vector<std::int64_t>{2, 3}}}));
  then("aten::mul", args({"self"}, {{"other", std::int64_t{1}}}));
  then("aten::add", args({"self"}, {{"other", 0.0}, {"alpha", std::int64_t{1}}}));
  then("aten::slice", args({"self"}, {{"dim", std::int64_t{1}}, {"start", std::int64_t{0}}, {"step", std::int64_t{1}}}));
  then("aten::relu", args({"self"}));
  g.set_outputs({v});
  EXPECT_EQ(run_transform(noop_elimination, g), 7u);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(g.nodes()[0]).inputs[0], g.inputs()[0]);
}

TEST(NoopEliminationTest, KeepsOpsThatChangeSomething) {
  Graph g;
  ValueId x = g.add_input("x", DType::kFloat32, symbolic({2, 3}));
  std::vector<ValueId> outs;
  auto add = [&](const char* op, Attributes a, Shape s, DType d = DType::kFloat32) {
    outs.push_back(g.node(g.add_node(op, {x}, {typed("", s, d)}, std::move(a))).outputs[0]);
  };
  add("aten::dropout", args({"input"}, {{"p", 0.1}, {"train", true}}), {2, 3});
  add("aten::to", args({"self"}, {{"dtype", std::int64_t{5}}}), {2, 3}, DType::kFloat16);
  add("aten::reshape", args({"self"}, {{"shape", std::vector<std::int64_t>{3, 2}}}), {3, 2});
  add("aten::mul", args({"self"}, {{"other", 2.0}}), {2, 3});
  add("aten::add", args({"self"}, {{"other", 1.0}}), {2, 3});
  add("aten::slice", args({"self"}, {{"dim", std::int64_t{1}}, {"start", std::int64_t{1}}}), {2, 2});
  g.set_outputs(outs);
  const std::string before = g.dump();
  EXPECT_EQ(run_transform(noop_elimination, g), 0u);
  EXPECT_EQ(g.dump(), before);
}

}  // namespace
}  // namespace tracegraph
