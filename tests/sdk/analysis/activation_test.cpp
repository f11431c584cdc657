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

// Range-keeping ops after the activation: each activation survives the ops
// that cannot take its values out of its range, and the report names them.
TEST(OutputActivationTest, ResizesAndPoolsKeepTheRangeAndAreNamed) {
  {
    Model m;
    m.then("aten::sigmoid");
    m.then("aten::upsample_bilinear2d", attrs({{"align_corners", true}}));
    const Activation a = m.result();
    EXPECT_EQ(a.str(), "sigmoid, then upsample_bilinear2d");
    EXPECT_EQ(a.after, std::vector<std::string>{"upsample_bilinear2d"});
    EXPECT_NE(output_activation_json({a}).find("\"after\":[\"upsample_bilinear2d\"]"), std::string::npos);
  }
  {
    Model m;  // logits resized: still raw values
    m.then("aten::upsample_nearest2d");
    EXPECT_EQ(m.result().str(), "none, then upsample_nearest2d");
  }
  {
    Model m;  // bicubic overshoots its inputs' range
    m.then("aten::sigmoid");
    m.then("aten::upsample_bicubic2d");
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;  // F.interpolate's mode says which
    m.then("aten::tanh");
    m.then("aten::__interpolate", attrs({{"mode", std::string("bicubic")}}));
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;
    m.then("aten::relu");
    m.then("aten::max_pool2d");
    m.then("aten::avg_pool2d");
    m.then("aten::adaptive_avg_pool2d");
    EXPECT_EQ(m.result().str(), "relu, then max_pool2d, then avg_pool2d, then adaptive_avg_pool2d");
  }
}

TEST(OutputActivationTest, ASoftmaxSurvivesOnlyAveragesAcrossItsDistributions) {
  {
    Model m;  // a resize mixes positions, each a distribution over dim 1
    m.then("aten::softmax", attrs({{"dim", std::int64_t{1}}}));
    m.then("aten::upsample_bilinear2d");
    EXPECT_EQ(m.result().str(), "softmax(dim=1), then upsample_bilinear2d");
  }
  {
    Model m;  // the max of probabilities no longer sums to one
    m.then("aten::softmax", attrs({{"dim", std::int64_t{1}}}));
    m.then("aten::max_pool2d");
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;  // a softmax over a spatial dim: even nearest resizing repeats its entries
    m.then("aten::softmax", attrs({{"dim", std::int64_t{3}}}));
    m.then("aten::upsample_nearest2d");
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;  // a mean over the spatial dims moves the softmax dim nowhere (dim 1 stays)
    m.then("aten::softmax", attrs({{"dim", std::int64_t{1}}}));
    m.then("aten::mean", attrs({{"dim", std::vector<std::int64_t>{2, 3}}, {"keepdim", false}}));
    EXPECT_EQ(m.result().str(), "softmax(dim=1), then mean");
  }
  {
    Model m;  // a mean over dim 0 without keepdim: the softmax dim becomes 0
    m.then("aten::softmax", attrs({{"dim", std::int64_t{1}}}));
    m.then("aten::mean", attrs({{"dim", std::vector<std::int64_t>{0}}}));
    EXPECT_EQ(m.result().str(), "softmax(dim=0), then mean");
  }
  {
    Model m;  // a mean over the softmax dim itself
    m.then("aten::softmax", attrs({{"dim", std::int64_t{1}}}));
    m.then("aten::mean", attrs({{"dim", std::vector<std::int64_t>{1}}, {"keepdim", true}}));
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;  // an average of log-probabilities is not a log-probability
    m.then("aten::log_softmax", attrs({{"dim", std::int64_t{1}}}));
    m.then("aten::upsample_bilinear2d");
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
}

TEST(OutputActivationTest, AveragesThatCountZeroPaddingKeepOnlyRangesHoldingZero) {
  const Attributes padded = attrs({{"kernel_size", std::vector<std::int64_t>{3, 3}}, {"padding", std::vector<std::int64_t>{1, 1}}});
  {
    Model m;
    m.then("aten::sigmoid");
    m.then("aten::avg_pool2d", padded);
    EXPECT_EQ(m.result().kind, ActivationKind::kSigmoid);
  }
  {
    Model m;  // clamp(0.5, 1), averaged with zeros, can fall below 0.5
    m.then("aten::clamp", attrs({{"min", 0.5}, {"max", 1.0}}));
    m.then("aten::avg_pool2d", padded);
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;  // the same without counting the padding
    m.then("aten::clamp", attrs({{"min", 0.5}, {"max", 1.0}}));
    Attributes not_counted = padded;
    not_counted.set("count_include_pad", false);
    m.then("aten::avg_pool2d", not_counted);
    EXPECT_EQ(m.result().str(), "clip(min=0.5, max=1), then avg_pool2d");
  }
}

TEST(OutputActivationTest, AChannelWrittenInPlaceIsReadPerChannel) {
  // h = conv(x); h[:, 1:3].sigmoid_(); return h  -- as inplace_to_functional leaves it.
  Model m;
  const ValueId h = m.last;
  const ValueId v = m.then("aten::slice", attrs({{"dim", std::int64_t{1}}, {"start", std::int64_t{1}}, {"end", std::int64_t{3}}}));
  const ValueId s = m.then("aten::sigmoid");
  m.g.set_value_type(v, DType::kFloat32, symbolic({1, 2, 8, 8}));
  m.g.set_value_type(s, DType::kFloat32, symbolic({1, 2, 8, 8}));
  const ValueId out = m.g.node(m.g.add_node("aten::slice_scatter", {h, s}, {NewValue("out", DType::kFloat32, nchw(4))},
                                            attrs({{"dim", std::int64_t{1}}, {"start", std::int64_t{1}}, {"end", std::int64_t{3}}})))
                          .outputs[0];
  m.last = out;
  EXPECT_EQ(m.result().str(), "per_channel([0, 1): none, [1, 3): sigmoid, [3, 4): none)");
}

// The mean of two linear heads, (a + b) / 2, as torch.export writes it:
//   x -> conv -> a;  x -> conv -> b;  add(a, b) -> div.Tensor(self, other=2)
TEST(OutputActivationTest, RawValuesScaledByANumberStayNone) {
  {
    Model m;
    ValueId other = m.g.node(m.g.add_node("aten::conv2d", {m.g.inputs()[0], m.g.constants()[0]}, {NewValue("c2", DType::kFloat32, nchw(4))})).outputs[0];
    m.then("aten.add.Tensor", attrs({{"arg_names", std::vector<std::string>{"self", "other"}}}), {other});
    m.then("aten.div.Tensor", attrs({{"other", 2.0}, {"arg_names", std::vector<std::string>{"self"}}}));
    EXPECT_EQ(m.result().str(), "none");
  }
  {
    // TorchScript's form: the number is a 0-d constant input.
    Model m;
    const ValueId half = m.g.add_constant("half", Tensor::from_vector<double>({0.5}, {}));
    m.then("aten::mul", {}, {half});
    EXPECT_EQ(m.result().kind, ActivationKind::kNone);
  }
}

TEST(OutputActivationTest, AScaledActivationIsNoLongerThatActivation) {
  {
    Model m;
    m.then("aten::sigmoid");
    m.then("aten.mul.Tensor", attrs({{"other", 2.0}, {"arg_names", std::vector<std::string>{"self"}}}));
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    // 2 / x is not a scaling of x.
    Model m;
    const ValueId two = m.g.add_constant("two", Tensor::from_vector<float>({2.0f}, {}));
    const ValueId out = m.g.node(m.g.add_node("aten::div", {two, m.last}, {NewValue("inv", DType::kFloat32, nchw(4))})).outputs[0];
    m.last = out;
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    // A product of two tensors (a gate) is not a scaling either.
    Model m;
    const ValueId gate = m.g.node(m.g.add_node("aten::sigmoid", {m.last}, {NewValue("g", DType::kFloat32, nchw(4))})).outputs[0];
    m.then("aten::mul", {}, {gate});
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
}

TEST(OutputActivationTest, IndexingPicksValuesAndKeepsTheActivation) {
  Model m;
  m.then("aten::sigmoid");
  const ValueId idx = m.g.add_constant("idx", Tensor::from_vector<std::int64_t>({2, 0}, {2}));
  m.then("aten.index.Tensor", attrs({{"arg_names", std::vector<std::string>{"self", "indices"}}, {"indices", std::vector<bool>{false, true}}}), {idx});
  EXPECT_EQ(m.result().kind, ActivationKind::kSigmoid);
}

// A linear resize in core ATen (torch's _upsample_linear, after
// run_decompositions()): the input gathered at two neighbours, then
//   p + (q - p) * w,   w = clamp(source index - its floor, 0, 1)
// once per spatial dim. A convex combination: the activation before it holds.
struct Lerps {
  Model m;
  ValueId source;
  explicit Lerps(const std::string& activation, Attributes a = {}) {
    source = m.then(activation, std::move(a));
  }
  // A weight of `shape`, clamped to [min, max].
  ValueId weight(std::vector<std::int64_t> shape, double min = 0.0, double max = 1.0) {
    const ValueId raw = m.g.add_constant("", Tensor::zeros(DType::kFloat32, shape));
    return out("aten.clamp.default", {raw}, symbolic(shape), attrs({{"min", min}, {"max", max}}));
  }
  ValueId gather(ValueId v) {
    const ValueId idx = m.g.add_constant("", Tensor::from_vector<std::int64_t>({0, 1}, {2}));
    return out("aten._unsafe_index.Tensor", {v, idx}, symbolic({1, 4, 8, 8}));
  }
  // p + (q - p) * w; `subtracted` stands for p in the difference.
  ValueId lerp(ValueId p, ValueId q, ValueId w, std::optional<ValueId> subtracted = std::nullopt) {
    const SymbolicShape shape = symbolic({1, 4, 8, 8});
    const ValueId d = out("aten.sub.Tensor", {q, subtracted.value_or(p)}, shape);
    const ValueId scaled = out("aten.mul.Tensor", {d, w}, shape);
    return out("aten.add.Tensor", {p, scaled}, shape);
  }
  ValueId out(const std::string& op, std::vector<ValueId> in, SymbolicShape shape, Attributes a = {}) {
    return m.g.node(m.g.add_node(op, std::move(in), {NewValue("", DType::kFloat32, std::move(shape))}, std::move(a))).outputs[0];
  }
  Activation result(ValueId v) {
    m.last = v;
    return m.result();
  }
};

TEST(OutputActivationTest, ADecomposedLinearResizeKeepsTheRange) {
  {
    Lerps l("aten::sigmoid");  // one spatial dim
    const Activation a = l.result(l.lerp(l.gather(l.source), l.gather(l.source), l.weight({8})));
    EXPECT_EQ(a.str(), "sigmoid, then lerp");
    EXPECT_EQ(a.op, "aten::sigmoid");
  }
  {
    Lerps l("aten::sigmoid");  // two (bilinear): three lerps, one resize
    const ValueId wx = l.weight({8}), wy = l.weight({8, 1});
    const ValueId top = l.lerp(l.gather(l.source), l.gather(l.source), wx);
    const ValueId bottom = l.lerp(l.gather(l.source), l.gather(l.source), wx);
    EXPECT_EQ(l.result(l.lerp(top, bottom, wy)).str(), "sigmoid, then lerp");
  }
  {
    Lerps l("aten::softmax", attrs({{"dim", std::int64_t{1}}}));  // one weight per position
    EXPECT_EQ(l.result(l.lerp(l.gather(l.source), l.gather(l.source), l.weight({8, 1}))).str(), "softmax(dim=1), then lerp");
  }
  {
    Lerps l("aten::clamp", attrs({{"min", 0.0}, {"max", 1.0}}));  // logits clipped, then resized
    EXPECT_EQ(l.result(l.lerp(l.gather(l.source), l.gather(l.source), l.weight({8}))).str(), "clip(min=0, max=1), then lerp");
  }
}

TEST(OutputActivationTest, OnlyAConvexLerpIsReadAsOne) {
  {
    Lerps l("aten::sigmoid");  // weights that may leave [0, 1] extrapolate
    EXPECT_EQ(l.result(l.lerp(l.gather(l.source), l.gather(l.source), l.weight({8}, -1.0, 1.0))).kind, ActivationKind::kUnknown);
  }
  {
    Lerps l("aten::sigmoid");  // weights never clamped
    const ValueId raw = l.m.g.add_constant("", Tensor::zeros(DType::kFloat32, {8}));
    EXPECT_EQ(l.result(l.lerp(l.gather(l.source), l.gather(l.source), raw)).kind, ActivationKind::kUnknown);
  }
  {
    Lerps l("aten::sigmoid");  // p + (q - r) * w: not a lerp of p and q
    const ValueId p = l.gather(l.source), q = l.gather(l.source), r = l.gather(l.source);
    EXPECT_EQ(l.result(l.lerp(p, q, l.weight({8}), r)).kind, ActivationKind::kUnknown);
  }
  {
    Lerps l("aten::sigmoid");  // ends that differ: a sigmoid and raw logits
    const ValueId raw = l.gather(l.m.g.node(*l.m.g.value(l.source).producer).inputs[0]);
    EXPECT_EQ(l.result(l.lerp(l.gather(l.source), raw, l.weight({8}))).kind, ActivationKind::kUnknown);
  }
  {
    Lerps l("aten::softmax", attrs({{"dim", std::int64_t{1}}}));  // weights that vary along the softmax dim
    EXPECT_EQ(l.result(l.lerp(l.gather(l.source), l.gather(l.source), l.weight({4, 1, 1}))).kind, ActivationKind::kUnknown);
  }
}

}  // namespace
}  // namespace tracegraph
