#include "tracegraph/activation.h"

#include "test_util.h"
#include "tracegraph/module_graph.h"
#include "tracegraph/op_table.h"

namespace tracegraph {
namespace {

SymbolicShape nchw(std::int64_t c) { return symbolic({1, c, 8, 8}); }

// x -> conv -> <tail ops> -> output
struct Model {
  Graph g;
  ValueId last;
  Model() {
    ValueId x = g.add_input("x", DType::kFloat32, nchw(3));
    ValueId w = g.add_constant("w", Tensor::zeros(DType::kFloat32, {4, 3, 1, 1}));
    last = g.node(g.add_node("aten::conv2d", {x, w}, {NewValue("c", DType::kFloat32, nchw(4))})).outputs[0];
  }
  ValueId then(const std::string& op, Attributes attrs = {}, std::vector<ValueId> extra = {}) {
    std::vector<ValueId> ins{last};
    ins.insert(ins.end(), extra.begin(), extra.end());
    last = g.node(g.add_node(op, ins, {NewValue("", DType::kFloat32, g.value(last).shape)}, attrs)).outputs[0];
    return last;
  }
  Activation result() {
    g.set_outputs({last});
    return output_activation(g).at(0);
  }
};

Attributes attrs(std::initializer_list<std::pair<const char*, AttributeValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}

TEST(OutputActivationTest, ReadsEachKindOfEnding) {
  {
    Model m;
    m.then("aten::sigmoid");
    EXPECT_EQ(m.result().str(), "sigmoid");
  }
  {
    Model m;
    m.then("aten::relu6");
    EXPECT_EQ(m.result().str(), "clip(min=0, max=6)");
  }
  {
    Model m;
    m.then("aten::hardtanh");  // defaults -1, 1
    EXPECT_EQ(m.result().str(), "clip(min=-1, max=1)");
  }
  {
    Model m;
    m.then("aten::clamp", attrs({{"min", std::int64_t{0}}}));
    EXPECT_EQ(m.result().str(), "clip(min=0)");
  }
  {
    Model m;
    m.then("aten::softmax", attrs({{"dim", std::int64_t{-3}}}));
    EXPECT_EQ(m.result().str(), "softmax(dim=1)");  // negative dims are normalized
  }
  {
    Model m;
    m.then("aten::log_softmax", attrs({{"dim", std::int64_t{1}}}));
    EXPECT_EQ(m.result().kind, ActivationKind::kLogSoftmax);
  }
  {
    Model m;
    EXPECT_EQ(m.result().str(), "none");
    EXPECT_EQ(m.result().op, "aten::conv2d");
  }
}

TEST(OutputActivationTest, LooksThroughOpsThatKeepValues) {
  Model m;
  m.then("aten::tanh");
  m.then("aten::contiguous");
  m.then("aten::dropout", attrs({{"p", 0.5}, {"train", false}}));
  m.then("aten::view", attrs({{"size", std::vector<std::int64_t>{1, -1}}}));
  m.then("aten::to", attrs({{"dtype", std::int64_t{6}}}));
  const Activation a = m.result();
  EXPECT_EQ(a.kind, ActivationKind::kTanh);
  EXPECT_EQ(a.op, "aten::tanh");
}

TEST(OutputActivationTest, NeverClaimsWhatItCannotSee) {
  {
    Model m;
    m.then("aten::sigmoid");
    m.then("aten::mul", attrs({{"other", 2.0}}));  // 2 * sigmoid is not a sigmoid
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;
    m.then("aten::sigmoid");
    m.then("aten::dropout", attrs({{"train", true}}));
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;
    m.then("aten::sigmoid");
    m.then("aten::to", attrs({{"dtype", std::int64_t{3}}}));  // a cast to int32
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;
    m.then("custom::thing");
    EXPECT_EQ(m.result().str(), "unknown");
  }
}

TEST(OutputActivationTest, ChannelHeadsAreReportedPerRange) {
  Graph g;
  ValueId x = g.add_input("x", DType::kFloat32, nchw(3));
  ValueId a = g.node(g.add_node("aten::sigmoid", {x}, {NewValue("a", DType::kFloat32, nchw(3))})).outputs[0];
  ValueId w = g.add_constant("w", Tensor::zeros(DType::kFloat32, {2, 3, 1, 1}));
  ValueId b = g.node(g.add_node("aten::conv2d", {x, w}, {NewValue("b", DType::kFloat32, nchw(2))})).outputs[0];
  Attributes cat;
  cat.set("dim", std::int64_t{1});
  cat.set(std::string(kArgNamesAttribute), std::vector<std::string>{"tensors", "tensors"});
  ValueId out = g.node(g.add_node("aten::cat", {a, b}, {NewValue("out", DType::kFloat32, nchw(5))}, cat)).outputs[0];
  g.set_outputs({out});
  const Activation act = output_activation(g)[0];
  EXPECT_EQ(act.str(), "per_channel([0, 3): sigmoid, [3, 5): none)");
  // The same heads joined along a spatial dim cannot be split by channel.
  Graph h = g;
  h.set_attribute(h.nodes().back(), "dim", std::int64_t{2});
  EXPECT_EQ(output_activation(h)[0].kind, ActivationKind::kUnknown);
  // Equal heads are one activation, whatever the dim.
  Graph e = g;
  e.set_node_input(e.nodes().back(), 1, a);
  EXPECT_EQ(output_activation(e)[0].str(), "sigmoid");
  EXPECT_EQ(output_activation_json(output_activation(g)),
            R"([{"kind":"per_channel","channels":[{"begin":0,"end":3,"kind":"sigmoid"},{"begin":3,"end":5,"kind":"none"}],"node":"cat_2","op":"aten::cat"}])");
}

TEST(OutputActivationTest, AnInputReturnedAsItIsHasNone) {
  Graph g;
  ValueId x = g.add_input("x");
  g.set_outputs({x});
  EXPECT_EQ(output_activation(g)[0].kind, ActivationKind::kNone);
}

TEST(OpTableTest, MapsTheFormatsNamesToCanonicalOps) {
  Graph g;
  ValueId x = g.add_input("x");
  auto canon = [&](const std::string& op, Attributes a = {}) {
    return canonical_op(g.node(g.add_node(op, {x}, {""}, a)));
  };
  EXPECT_EQ(canon("aten::sigmoid_")->name, "sigmoid");
  EXPECT_EQ(canon("aten::clip", attrs({{"min", 0.0}, {"max", 1.0}}))->attributes.get_float("max"), 1.0);
  EXPECT_EQ(canon("aten::_convolution", attrs({{"transposed", true}}))->name, "conv_transpose");
  EXPECT_EQ(canon("aten::conv3d")->name, "conv");
  EXPECT_EQ(canon("aten::_softmax", attrs({{"dim", std::int64_t{1}}}))->attributes.get_int("dim"), 1);
  EXPECT_FALSE(canon("aten::frobnicate").has_value());
  EXPECT_TRUE(is_inplace_op("aten::add_"));
  EXPECT_FALSE(is_inplace_op("aten::__iand__"));
  EXPECT_FALSE(is_inplace_op("aten::relu"));
  EXPECT_EQ(functional_op_name("aten::clamp_"), "aten::clamp");
}

TEST(ModuleGraphTest, GivesTheSeedsView) {
  Model m;
  m.then("aten::hardtanh", attrs({{"min_val", 0.0}, {"max_val", 1.0}}));
  m.g.set_outputs({m.last});
  ModuleGraph view = module_graph(m.g);
  ASSERT_EQ(view.nodes.size(), 2u);
  EXPECT_EQ(view.nodes[0].inputs, (std::vector<std::string>{"x", "w"}));
  EXPECT_EQ(view.nodes[1].op, "aten::hardtanh");
  EXPECT_EQ(view.nodes[1].min, 0.0);
  EXPECT_EQ(view.output, view.nodes[1].outputs[0]);
  EXPECT_EQ(module_graph_json(view),
            R"({"nodes":[{"op":"aten::conv2d","inputs":["x","w"],"outputs":["c"]},{"op":"aten::hardtanh","inputs":["c"],"outputs":["v3"],"min":0.0,"max":1.0}],"output":"v3","outputs":["v3"]})");
}

}  // namespace
}  // namespace tracegraph
