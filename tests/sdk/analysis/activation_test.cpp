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

// Interval reasoning: each op sets a range, keeps it, maps it by constants,
// or loses it. The report names the op that set it and the ops after it.

// A norm is an affine map of normalised values: raw, whatever came before.
TEST(OutputActivationTest, ANormEndsInRawValues) {
  for (const char* op : {"aten::layer_norm", "aten::group_norm", "aten::batch_norm", "aten::instance_norm", "aten.native_layer_norm.default"}) {
    Model m;
    m.then("aten::relu");
    m.then(op);
    const Activation a = m.result();
    EXPECT_EQ(a.str(), "none") << op;
    EXPECT_EQ(a.op, op);
  }
  {
    // native_layer_norm's mean and rstd (outputs 1 and 2) are no raw values.
    Model m;
    const NodeId ln = m.g.add_node("aten::native_layer_norm", {m.last},
                                   {NewValue("y", DType::kFloat32, nchw(4)), NewValue("mean", DType::kFloat32, symbolic({1, 1, 1, 1})),
                                    NewValue("rstd", DType::kFloat32, symbolic({1, 1, 1, 1}))});
    m.last = m.g.node(ln).outputs[2];
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
}

// LayerNorm2d as ConvNeXt and SAM write it, over channels of an NCHW map:
//   u = x.mean(1, keepdim=True); d = x - u; s = d.pow(2).mean(1, keepdim=True)
//   y = d / sqrt(s + eps);        out = weight[:, None, None] * y + bias[:, None, None]
struct LayerNorm2d {
  Model m;
  ValueId x;
  LayerNorm2d() { x = m.then("aten::relu"); }  // normalised, even relu's values are raw again
  ValueId op(const std::string& name, std::vector<ValueId> in, SymbolicShape shape, Attributes a = {}) {
    return m.g.node(m.g.add_node(name, std::move(in), {NewValue("", DType::kFloat32, std::move(shape))}, std::move(a))).outputs[0];
  }
  ValueId channel_mean(ValueId v) {
    return op("aten::mean", {v}, symbolic({1, 1, 8, 8}), attrs({{"dim", std::vector<std::int64_t>{1}}, {"keepdim", true}}));
  }
  // weight[:, None, None]: a constant seen through two unsqueezes.
  ValueId per_channel(float value) {
    const ValueId c = m.g.add_constant("", Tensor::from_vector<float>({value, value, value, value}, {4}));
    const ValueId u = op("aten::unsqueeze", {c}, symbolic({4, 1}), attrs({{"dim", std::int64_t{1}}}));
    return op("aten::unsqueeze", {u}, symbolic({4, 1, 1}), attrs({{"dim", std::int64_t{2}}}));
  }
  // d / sqrt(s + eps), or d * rsqrt(s + eps)
  ValueId normalised(bool rsqrt = false, const std::string& square = "aten::pow") {
    const ValueId d = op("aten::sub", {x, channel_mean(x)}, nchw(4));
    const ValueId sq = square == "aten::pow" ? op("aten::pow", {d}, nchw(4), attrs({{"exponent", 2.0}})) : op("aten::mul", {d, d}, nchw(4));
    const ValueId eps = op("aten::add", {channel_mean(sq)}, symbolic({1, 1, 8, 8}), attrs({{"other", 1e-6}}));
    if (rsqrt) return op("aten::mul", {d, op("aten::rsqrt", {eps}, symbolic({1, 1, 8, 8}))}, nchw(4));
    return op("aten::div", {d, op("aten::sqrt", {eps}, symbolic({1, 1, 8, 8}))}, nchw(4));
  }
  Activation result(ValueId y) {
    const ValueId scaled = op("aten::mul", {per_channel(0.5f), y}, nchw(4));
    m.last = op("aten::add", {scaled, per_channel(-0.1f)}, nchw(4));
    return m.result();
  }
};

TEST(OutputActivationTest, ALayerNormWrittenByHandEndsInRawValues) {
  {
    LayerNorm2d ln;
    const Activation a = ln.result(ln.normalised());
    EXPECT_EQ(a.str(), "none");
    EXPECT_EQ(a.op, "aten::add");  // the affine map's last op
  }
  {
    LayerNorm2d ln;  // x * rsqrt(mean(d * d) + eps)
    EXPECT_EQ(ln.result(ln.normalised(true, "aten::mul")).str(), "none");
  }
  {
    LayerNorm2d ln;  // without the affine map
    ln.m.last = ln.normalised();
    EXPECT_EQ(ln.m.result().str(), "none");
  }
  {
    // relu / (1 + |relu|) divides by no statistic over dims: not a normalisation.
    LayerNorm2d ln;
    const ValueId abs = ln.op("aten::abs", {ln.x}, nchw(4));
    const ValueId denominator = ln.op("aten::add", {abs}, nchw(4), attrs({{"other", 1.0}}));
    ln.m.last = ln.op("aten::div", {ln.x, denominator}, nchw(4));
    EXPECT_EQ(ln.m.result().kind, ActivationKind::kUnknown);
  }
}

TEST(OutputActivationTest, AnActivationScaledInsideItsRangeKeepsIt) {
  {
    Model m;  // relu * 2: still in [0, inf)
    m.then("aten::relu");
    m.then("aten.mul.Tensor", attrs({{"other", 2.0}, {"arg_names", std::vector<std::string>{"self"}}}));
    const Activation a = m.result();
    EXPECT_EQ(a.str(), "relu, then mul");
    EXPECT_EQ(a.op, "aten::relu");
  }
  {
    Model m;  // a constant tensor of positive scales, on the left: 3 * relu, then / 4
    m.then("aten::relu");
    const ValueId k = m.g.add_constant("k", Tensor::from_vector<float>({1.0f, 2.0f, 3.0f, 4.0f}, {4, 1, 1}));
    m.last = m.g.node(m.g.add_node("aten::mul", {k, m.last}, {NewValue("", DType::kFloat32, nchw(4))})).outputs[0];
    m.then("aten::div", attrs({{"other", 4.0}}));
    EXPECT_EQ(m.result().str(), "relu, then mul, then div");
  }
  {
    Model m;  // relu * -1 lies in (-inf, 0]: no longer relu
    m.then("aten::relu");
    m.then("aten::mul", attrs({{"other", -1.0}}));
    const Activation a = m.result();
    EXPECT_EQ(a.kind, ActivationKind::kUnknown);
    EXPECT_EQ(a.op, "aten::mul");  // where the range was lost
  }
  {
    Model m;  // a scale of mixed signs, neither
    m.then("aten::relu");
    m.then("aten::mul", {}, {m.g.add_constant("k", Tensor::from_vector<float>({1.0f, -1.0f, 1.0f, 1.0f}, {4, 1, 1}))});
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;  // sigmoid * 0.5 lies in [0, 0.5], inside sigmoid's [0, 1]: said with the mul after it
    m.then("aten::sigmoid");
    m.then("aten::mul", attrs({{"other", 0.5}}));
    EXPECT_EQ(m.result().str(), "sigmoid, then mul");
  }
  {
    Model m;  // sigmoid / 0.5 may reach 2
    m.then("aten::sigmoid");
    m.then("aten::div", attrs({{"other", 0.5}}));
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;  // 1 - sigmoid(x) is sigmoid(-x)
    m.then("aten::sigmoid");
    const ValueId one = m.g.add_constant("one", Tensor::from_vector<float>({1.0f}, {}));
    m.last = m.g.node(m.g.add_node("aten::sub", {one, m.last}, {NewValue("", DType::kFloat32, nchw(4))})).outputs[0];
    EXPECT_EQ(m.result().str(), "sigmoid, then sub");
  }
  {
    Model m;  // a softmax scaled no longer sums to one
    m.then("aten::softmax", attrs({{"dim", std::int64_t{1}}}));
    m.then("aten::mul", attrs({{"other", 0.5}}));
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;  // a number only the run knows (a symbolic size, as text) is no constant, and no error
    m.then("aten::relu");
    m.then("aten::mul", attrs({{"other", std::string("s0")}}));
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;  // a division that rounds is no scale
    m.then("aten::relu");
    m.then("aten::div", attrs({{"other", 2.0}, {"rounding_mode", std::string("floor")}}));
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;  // raw values scaled per channel and shifted stay raw, named where the map ends
    const ValueId k = m.g.add_constant("k", Tensor::from_vector<float>({1.0f, -2.0f, 3.0f, 0.0f}, {4, 1, 1}));
    m.then("aten::mul", {}, {k});
    m.then("aten::add", attrs({{"other", 1.0}}));
    const Activation a = m.result();
    EXPECT_EQ(a.str(), "none");
    EXPECT_EQ(a.op, "aten::add");
  }
}

// One channel that is the maximum over the others: out = cat([s, s.amax(1, keepdim=True)], 1).
TEST(OutputActivationTest, AMaximumOfOneActivationKeepsIt) {
  {
    Model m;
    const ValueId s = m.then("aten::sigmoid");
    const ValueId best = m.g.node(m.g.add_node("aten::amax", {s}, {NewValue("best", DType::kFloat32, symbolic({1, 1, 8, 8}))},
                                               attrs({{"dim", std::vector<std::int64_t>{1}}, {"keepdim", true}})))
                             .outputs[0];
    m.last = m.g.node(m.g.add_node("aten::cat", {s, best}, {NewValue("out", DType::kFloat32, nchw(5))}, attrs({{"dim", std::int64_t{1}}})))
                 .outputs[0];
    EXPECT_EQ(m.result().str(), "sigmoid");
    m.last = best;
    EXPECT_EQ(m.result().str(), "sigmoid, then amax");
  }
  {
    Model m;  // max.dim: its values keep the range, its indices are none of it
    m.then("aten::sigmoid");
    const NodeId max = m.g.add_node("aten::max", {m.last},
                                    {NewValue("values", DType::kFloat32, symbolic({1, 8, 8})), NewValue("indices", DType::kInt64, symbolic({1, 8, 8}))},
                                    attrs({{"dim", std::int64_t{1}}}));
    m.last = m.g.node(max).outputs[0];
    EXPECT_EQ(m.result().str(), "sigmoid, then max");
    m.last = m.g.node(max).outputs[1];
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    // Elementwise: maximum(minimum(a, b), c) of sigmoid channels.
    Model m;
    const ValueId s = m.then("aten::sigmoid");
    auto channel = [&](std::int64_t i) {
      return m.g.node(m.g.add_node("aten::slice", {s}, {NewValue("", DType::kFloat32, nchw(1))},
                                   attrs({{"dim", std::int64_t{1}}, {"start", i}, {"end", i + 1}})))
          .outputs[0];
    };
    const ValueId lo = m.g.node(m.g.add_node("aten::minimum", {channel(0), channel(1)}, {NewValue("", DType::kFloat32, nchw(1))})).outputs[0];
    m.last = m.g.node(m.g.add_node("aten::maximum", {lo, channel(2)}, {NewValue("", DType::kFloat32, nchw(1))})).outputs[0];
    EXPECT_EQ(m.result().str(), "sigmoid, then minimum, then maximum");
  }
  {
    Model m;  // the maximum of a sigmoid and raw values is neither
    const ValueId raw = m.last;
    m.then("aten::sigmoid");
    m.then("aten::maximum", {}, {raw});
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
  {
    Model m;  // the maximum of probabilities is no distribution
    m.then("aten::softmax", attrs({{"dim", std::int64_t{1}}}));
    m.then("aten::amax", attrs({{"dim", std::vector<std::int64_t>{2}}, {"keepdim", true}}));
    EXPECT_EQ(m.result().kind, ActivationKind::kUnknown);
  }
}

}  // namespace
}  // namespace tracegraph
