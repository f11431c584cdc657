// The XNNPACK backend computes what LibTorch computes: every test model,
// read from TorchScript, as read and after the default optimizer, against
// LibTorch's own forward (the outputs make_test_models.py saved) and against
// the LibTorch backend on the same graph in this run.
#include "tracegraph/xnnpack/backend.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>

#include "native/test_models.h"
#include "test_util.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/op_table.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/traced_graph.h"

namespace tracegraph::xnnpack {
namespace {

using tracegraph::testing::max_relative_error;
using tracegraph::testing::model_io;
using tracegraph::testing::model_path;

struct Case {
  std::string model;
  bool optimized = false;
  int threads = 1;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.model << (c.optimized ? " optimized" : "") << " on " << c.threads << " threads"; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& m : tracegraph::testing::kReadableModels) {
    out.push_back({m, false, 1});
    out.push_back({m, true, 1});
    out.push_back({m, true, 2});
  }
  return out;
}

class XnnpackParityTest : public ::testing::TestWithParam<Case> {};

TEST_P(XnnpackParityTest, OutputsMatchLibTorch) {
  const Case& c = GetParam();
  const auto io = model_io(c.model);
  native::TorchScriptOptions options;
  options.example_inputs = io.inputs;
  TracedGraph reference = native::load(model_path(c.model + ".ts"), options);
  if (c.optimized) reference.optimize();
  // The same graph through the exported format, as the wasm module gets it.
  auto serialized = std::make_shared<SerializedGraph>(
      serialize_graph(ExportedGraph{reference.graph(), reference.in_spec(), reference.out_spec(), {}}, "w.safetensors"));
  TracedGraph g = TracedGraph::from_exported(
      deserialize_graph(serialized->json, serialized->weights, serialized, c.model + ".json", "w.safetensors"),
      make_backend({c.threads}));
  g.finalize();
  reference.finalize();
  const std::vector<Tensor> got = g.run(io.inputs);
  const std::vector<Tensor> want = reference.run(io.inputs);
  ASSERT_EQ(got.size(), io.outputs.size());
  ASSERT_EQ(want.size(), io.outputs.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].shape(), io.outputs[i].shape()) << "output " << i;
    EXPECT_LE(max_relative_error(got[i], io.outputs[i]), 1e-4) << "output " << i << " against torch's forward";
    EXPECT_LE(max_relative_error(got[i], want[i]), 1e-4) << "output " << i << " against the LibTorch backend";
  }
  // A second run on the same plan gives the same numbers.
  const std::vector<Tensor> again = g.run(io.inputs);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(again[i].equal(got[i])) << "output " << i;
}

INSTANTIATE_TEST_SUITE_P(Models, XnnpackParityTest, ::testing::ValuesIn(cases()), [](const auto& info) {
  return info.param.model + (info.param.optimized ? "_optimized" : "") + "_" + std::to_string(info.param.threads) + "threads";
});

// torch.export programs (.pt2, as exported and in core ATen) and fx traces
// (multi-output batch norms and poolings), as read and optimized, against the module's forward.
class XnnpackExportedProgramTest : public ::testing::TestWithParam<Case> {};

TEST_P(XnnpackExportedProgramTest, OutputsMatchTheModule) {
  const Case& c = GetParam();
  const auto io = tracegraph::testing::read_model_io(tracegraph::testing::exported_path(c.model, ".io.safetensors"));
  TracedGraph g = TracedGraph::from_exported(tracegraph::testing::read_exported_program(c.model), make_backend({c.threads}));
  if (c.optimized) g.optimize();
  g.finalize();
  const std::vector<Tensor> got = g.run(io.inputs);
  ASSERT_FALSE(io.outputs.empty());
  ASSERT_EQ(got.size(), io.outputs.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].shape(), io.outputs[i].shape()) << "output " << i;
    EXPECT_LE(max_relative_error(got[i], io.outputs[i]), 1e-4) << "output " << i;
  }
}

std::vector<Case> exported_cases() {
  std::vector<Case> out;
  for (const auto& m : tracegraph::testing::kExportedPrograms) {
    out.push_back({m, false, 1});
    out.push_back({m, true, 2});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Exported, XnnpackExportedProgramTest, ::testing::ValuesIn(exported_cases()), [](const auto& info) {
  return info.param.model + (info.param.optimized ? "_optimized" : "") + "_" + std::to_string(info.param.threads) + "threads";
});

}  // namespace
}  // namespace tracegraph::xnnpack

namespace tracegraph::xnnpack {
namespace {

TracedGraph unet2d_on(std::unique_ptr<Backend> backend, bool with_shapes = true) {
  native::TorchScriptOptions options;
  if (with_shapes) options.example_inputs = model_io("unet2d").inputs;
  TracedGraph g = native::load(model_path("unet2d.ts"), options);
  g.set_backend(std::move(backend));
  return g;
}

TEST(XnnpackBackendTest, OtherInputShapesArePlannedAgainWithTheSameWeights) {
  // Read without example inputs: no shape is fixed, so each run may bring its own.
  TracedGraph g = unet2d_on(make_backend(), false);
  TracedGraph reference = unet2d_on(native::make_libtorch_backend(), false);
  g.finalize();
  reference.finalize();
  for (std::int64_t side : {32, 64, 48}) {
    const Tensor x = native::from_aten(at::randn({2, 3, side, side}));
    const auto got = g.run({x});
    const auto want = reference.run({x});
    ASSERT_EQ(got[0].shape(), want[0].shape()) << side;
    EXPECT_LE(max_relative_error(got[0], want[0]), 1e-4) << side;
  }
}

TEST(XnnpackBackendTest, ProfileGivesEachNodeItsTime) {
  auto owned = std::make_unique<XnnpackBackend>(Options{1, true});
  XnnpackBackend* backend = owned.get();
  TracedGraph g = unet2d_on(std::move(owned));
  g.finalize();
  g.run(model_io("unet2d").inputs);
  const auto times = backend->profile();
  ASSERT_EQ(times.size(), g.graph().num_nodes());
  double total = 0;
  for (const auto& t : times) {
    EXPECT_GE(t.milliseconds, 0.0);
    total += t.milliseconds;
  }
  EXPECT_GT(total, 0.0);
  EXPECT_EQ(times.front().node, g.graph().node(g.nodes().front()).name);
  // Each convolution's arithmetic, from its weight and output shapes here,
  // is what the profile counts; other nodes count none.
  const Graph& graph = g.graph();
  int convs = 0;
  for (std::size_t i = 0; i < times.size(); ++i) {
    const Node& n = graph.node(graph.nodes()[i]);
    if (n.op.find("convolution") == std::string::npos && n.op.find("conv2d") == std::string::npos) {
      EXPECT_EQ(times[i].flops, 0.0) << n.op;
      continue;
    }
    ++convs;
    const Shape& w = graph.value(n.inputs[1]).data.shape();
    double per_output = 1;
    for (std::size_t d = 1; d < w.size(); ++d) per_output *= static_cast<double>(w[d]);
    double outputs = 1;
    for (const Dim& d : *graph.value(n.outputs[0]).shape) outputs *= static_cast<double>(d.size);
    EXPECT_EQ(times[i].flops, 2 * outputs * per_output) << n.name;
    EXPECT_GT(times[i].gflops(), 0.0) << n.name;
  }
  EXPECT_GT(convs, 0);
  // The UNet is a chain of channels-last ops: no layout change inside it.
  for (const auto& t : times) EXPECT_EQ(t.layout_changes, 0) << t.node << " (" << t.op << ")";
}

TEST(XnnpackBackendTest, ProfileCountsTheLayoutChangesANodeNeeds) {
  // conv -> relu -> flatten -> linear: the flatten reads torch's order, one
  // change from the convolution's channels-last output; nothing else changes.
  Graph graph;
  const ValueId x = graph.add_input("x", DType::kFloat32, symbolic({1, 3, 6, 5}));
  auto node = [&](const std::string& op, std::vector<ValueId> ins, std::vector<std::string> names, Attributes a, const std::string& name) {
    a.set(std::string(kArgNamesAttribute), std::move(names));
    return graph.node(graph.add_node(op, std::move(ins), {NewValue{}}, std::move(a), name)).outputs[0];
  };
  Attributes conv;
  for (const char* k : {"stride", "dilation"}) conv.set(k, std::vector<std::int64_t>{1, 1});
  conv.set("padding", std::vector<std::int64_t>{1, 1});
  conv.set("groups", std::int64_t{1});
  const ValueId w = graph.add_constant("w", Tensor::from_vector(std::vector<float>(4 * 3 * 9, 0.1f), {4, 3, 3, 3}));
  const ValueId c = node("aten::conv2d", {x, w}, {"input", "weight"}, conv, "conv");
  const ValueId r = node("aten::relu", {c}, {"self"}, {}, "relu");
  Attributes flat;
  flat.set("start_dim", std::int64_t{1});
  flat.set("end_dim", std::int64_t{-1});
  const ValueId f = node("aten::flatten", {r}, {"self"}, flat, "flatten");
  const ValueId lw = graph.add_constant("lw", Tensor::from_vector(std::vector<float>(2 * 120, 0.01f), {2, 120}));
  graph.set_outputs({node("aten::linear", {f, lw}, {"input", "weight"}, {}, "linear")});
  auto owned = std::make_unique<XnnpackBackend>(Options{1, true});
  XnnpackBackend* backend = owned.get();
  TracedGraph g(std::move(graph), std::nullopt, std::nullopt, std::move(owned));
  g.finalize();
  g.run({Tensor::from_vector(std::vector<float>(90, 1.0f), {1, 3, 6, 5})});
  std::map<std::string, int> changes;
  for (const auto& t : backend->profile()) {
    changes[t.node] = t.layout_changes;
    EXPECT_LE(t.layout_milliseconds, t.milliseconds) << t.node;
  }
  EXPECT_EQ(changes, (std::map<std::string, int>{{"conv", 0}, {"relu", 0}, {"flatten", 1}, {"linear", 0}}));
}

TEST(XnnpackBackendTest, BuffersAreReusedAfterTheLastUse) {
  auto owned = std::make_unique<XnnpackBackend>(Options{});
  XnnpackBackend* backend = owned.get();
  TracedGraph g = unet2d_on(std::move(owned));
  g.finalize();
  std::size_t all_values = 0;
  for (ValueId v : g.graph().values()) {
    const Value& value = g.graph().value(v);
    if (value.is_constant() || !value.shape) continue;
    std::int64_t n = 1;
    for (const Dim& d : *value.shape) n *= d.size;
    all_values += static_cast<std::size_t>(n) * 4;
  }
  EXPECT_GT(backend->arena_bytes(), 0u);
  EXPECT_LT(backend->arena_bytes(), all_values / 2) << "the plan keeps most intermediates alive";
}

TEST(XnnpackBackendTest, OpsItCannotRunFailAtFinalizeAllNamedAtOnce) {
  Graph graph;
  const ValueId x = graph.add_input("x", DType::kFloat32, symbolic({2, 3}));
  Attributes a;
  a.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self", "other"});
  const NodeId id = graph.add_node("aten::istft", {x, x}, {NewValue{"y"}}, a, "the_istft");
  const NodeId relu = graph.add_node("aten::relu", {graph.node(id).outputs[0]}, {NewValue{"r"}}, {}, "relu");
  const NodeId f1 = graph.add_node("aten::frobnicate", {graph.node(relu).outputs[0]}, {NewValue{"f1"}}, {}, "frob1");
  const NodeId f2 = graph.add_node("aten::frobnicate", {graph.node(f1).outputs[0]}, {NewValue{"f2"}}, {}, "frob2");
  graph.set_outputs({graph.node(f2).outputs[0]});
  EXPECT_EQ(make_backend()->unsupported(graph).size(), 3u);
  TracedGraph g(std::move(graph), std::nullopt, std::nullopt, make_backend());
  try {
    g.finalize();
    FAIL() << "finalize accepted aten::istft";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(e.message().find("cannot run 3 nodes (2 ops)"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("aten::istft x1 (the_istft"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("aten::frobnicate x2 (frob1, frob2"), std::string::npos) << e.message();
  }
}

// Weights are read-only here: an in-place op on a constant works on a copy (LibTorch
// would change the weights for every later reader and run).
TEST(XnnpackBackendTest, AnInPlaceOpNeverWritesIntoTheWeights) {
  Graph graph;
  const ValueId x = graph.add_input("x", DType::kFloat32, symbolic({2, 3}));
  const ValueId c = graph.add_constant("c", Tensor::from_vector<float>({-1, 2, -3, 4, -5, 6}, {2, 3}));
  Attributes self;
  self.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self"});
  Attributes pair;
  pair.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self", "other"});
  pair.set(std::string(kOverloadAttribute), std::string("Tensor"));
  const NodeId relu = graph.add_node("aten::relu_", {c}, {NewValue{"r"}}, self, "relu_on_weights");
  const NodeId add = graph.add_node("aten::add", {x, c}, {NewValue{"y"}}, pair, "add_weights");
  graph.set_outputs({graph.node(relu).outputs[0], graph.node(add).outputs[0]});
  TracedGraph g(std::move(graph), std::nullopt, std::nullopt, make_backend());
  g.finalize();
  const Tensor in = Tensor::from_vector<float>({1, 1, 1, 1, 1, 1}, {2, 3});
  for (int run = 0; run < 2; ++run) {
    const auto out = g.run({in});
    EXPECT_TRUE(out[0].equal(Tensor::from_vector<float>({0, 2, 0, 4, 0, 6}, {2, 3}))) << "run " << run;
    EXPECT_TRUE(out[1].equal(Tensor::from_vector<float>({0, 3, -2, 5, -4, 7}, {2, 3}))) << "run " << run;
  }
  const Value& weights = g.graph().value(*g.graph().find_value("c"));
  EXPECT_EQ(weights.data.data_as<float>()[0], -1.0f);
}

TEST(XnnpackBackendTest, RefusesWhatItCannotRunWithTypedErrors) {
  TracedGraph g = unet2d_on(make_backend());
  EXPECT_TG_ERROR(g.to("cuda"), ErrorCode::kUnsupported, "CPU only");
  EXPECT_EQ(g.device(), Device::cpu());
  g.finalize();
  // A move the backend refuses leaves the graph on the CPU, and it runs.
  EXPECT_TG_ERROR(g.to("cuda"), ErrorCode::kUnsupported, "CPU only");
  EXPECT_EQ(g.device(), Device::cpu());
  const Tensor wrong = Tensor::zeros(DType::kFloat64, {1, 3, 64, 64});
  EXPECT_TG_ERROR(g.run({wrong}), ErrorCode::kDTypeMismatch, "float32");
  // A shape other than the example's is refused before the backend sees it.
  const Tensor tiny = Tensor::zeros(DType::kFloat32, {1, 3, 2, 2});
  EXPECT_TG_ERROR(g.run({tiny}), ErrorCode::kShapeMismatch, "must have shape [1, 3, 64, 64]");
  EXPECT_NO_THROW(g.run(model_io("unet2d").inputs));
}

TEST(XnnpackBackendTest, AnInputTooSmallForTheModelIsAnErrorAndTheGraphStillRuns) {
  // Read without example inputs, so every shape reaches the backend's planning.
  TracedGraph g = unet2d_on(make_backend(), false);
  g.finalize();
  const Tensor tiny = Tensor::zeros(DType::kFloat32, {1, 3, 2, 2});  // a 3x3 valid convolution needs 3x3
  EXPECT_TG_ERROR(g.run({tiny}), ErrorCode::kShapeMismatch, "[1, 3, 2, 2]");
  const auto io = model_io("unet2d");
  const auto out = g.run(io.inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_LE(max_relative_error(out[0], io.outputs[0]), 1e-4);
}

TEST(XnnpackBackendTest, ConstantPadsAndBilinearResizesRunOnXnnpackWhereItMapsAlike) {
  // Which engine runs each: XNNPACK where its semantics are torch's, portable
  // kernels where they are not (cropping pads, scale factors that disagree with
  // the sizes); the numbers themselves are checked op by op in lower/*_test.cpp.
  Graph g;
  const ValueId x = g.add_input("x", DType::kFloat32, symbolic({1, 3, 7, 5}));
  auto node = [&](const std::string& name, const std::string& op, Attributes a) {
    a.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self"});
    g.add_output(g.node(g.add_node(op, {x}, {NewValue{}}, std::move(a), name)).outputs[0]);
  };
  Attributes grow, crop, sized, factored;
  grow.set("pad", std::vector<std::int64_t>{1, 2, 0, 1});
  crop.set("pad", std::vector<std::int64_t>{-1, 2, 0, 1});
  sized.set("output_size", std::vector<std::int64_t>{14, 10});
  sized.set("align_corners", false);
  factored.set("scale_factors", std::vector<double>{1.5, 1.5});  // 7 * 1.5 -> 10, and 10 / 7 is not 1.5
  factored.set("align_corners", false);
  node("grow", "aten::constant_pad_nd", grow);
  node("crop", "aten::constant_pad_nd", crop);
  node("sized", "aten::upsample_bilinear2d", sized);
  node("factored", "aten::upsample_bilinear2d", factored);
  auto owned = std::make_unique<XnnpackBackend>(Options{1, true});
  const XnnpackBackend* backend = owned.get();
  TracedGraph traced(std::move(g), std::nullopt, std::nullopt, std::move(owned));
  traced.finalize();
  traced.run({Tensor::zeros(DType::kFloat32, {1, 3, 7, 5})});
  std::map<std::string, Engine> engines;
  for (const NodeTime& t : backend->profile()) engines[t.node] = t.engine;
  EXPECT_EQ(engines.at("grow"), Engine::kXnnpack);
  EXPECT_EQ(engines.at("crop"), Engine::kPortable);
  EXPECT_EQ(engines.at("sized"), Engine::kXnnpack);
  EXPECT_EQ(engines.at("factored"), Engine::kPortable);
}

TEST(XnnpackBackendTest, ReadingAnOutputItDoesNotComputeIsUnsupportedNotInternal) {
  // Found by fuzz_backends on max_pool2d_with_indices' indices (computed
  // since, as native_layer_norm's statistics are): a node reading
  // _embedding_bag's offset2bag, which training's backward wants and this
  // backend leaves out.
  Graph g;
  const ValueId weight = g.add_constant("weight", Tensor::from_vector<float>(std::vector<float>(30, 0.5f), {10, 3}));
  const ValueId indices = g.add_constant("indices", Tensor::from_vector<std::int64_t>({1, 2, 4}, {3}));
  const ValueId offsets = g.add_constant("offsets", Tensor::from_vector<std::int64_t>({0, 2}, {2}));
  Attributes bag;
  bag.set("mode", std::int64_t{0});
  bag.set(std::string(kArgNamesAttribute), std::vector<std::string>{"weight", "indices", "offsets"});
  const NodeId p = g.add_node("aten::_embedding_bag", {weight, indices, offsets},
                              {NewValue{"bags"}, NewValue{"offset2bag"}, NewValue{"bag_size"}, NewValue{"max_indices"}}, bag, "bag");
  Attributes relu;
  relu.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self"});
  const NodeId r = g.add_node("aten::relu", {g.node(p).outputs[1]}, {NewValue{"y"}}, relu, "relu");
  g.set_outputs({g.node(p).outputs[0], g.node(r).outputs[0]});
  TracedGraph traced(std::move(g), std::nullopt, std::nullopt, make_backend());
  EXPECT_TG_ERROR(traced.finalize(), ErrorCode::kUnsupported, "reads 'offset2bag', output 1 of node 'bag'");
}

TEST(XnnpackBackendTest, IndirectionBuffersCountAgainstTheBudget) {
  // Found by fuzz_backends: a wide input (a replicate pad of 100000) made XNNPACK's
  // convolution allocate gigabytes of indirection pointers the budget did not see.
  Graph g;
  // 19999 output columns, odd: no pixel folding, whose indirection is smaller.
  const ValueId x = g.add_input("x", DType::kFloat32, symbolic({1, 1, 64, 20001}));
  const ValueId w = g.add_constant("w", Tensor::zeros(DType::kFloat32, {8, 1, 3, 3}));
  Attributes conv;
  conv.set("stride", std::vector<std::int64_t>{1, 1});
  conv.set("padding", std::vector<std::int64_t>{0, 0});
  conv.set("dilation", std::vector<std::int64_t>{1, 1});
  conv.set("groups", std::int64_t{1});
  conv.set(std::string(kArgNamesAttribute), std::vector<std::string>{"input", "weight"});
  g.set_outputs({g.node(g.add_node("aten::conv2d", {x, w}, {NewValue{"y"}}, conv, "conv")).outputs[0]});
  // The output (40 MB) fits 64 MiB; its 89 MB of indirection pointers do not.
  // Direct convolutions only: under kFastest our unfolded GEMM, which needs no
  // indirection, may run it.
  TracedGraph traced(std::move(g), std::nullopt, std::nullopt, make_backend(Options{1, false, std::size_t{64} << 20, ConvAlgorithm::kDirect}));
  EXPECT_TG_ERROR(traced.finalize(), ErrorCode::kOutOfMemory, "XNNPACK's indirection buffers");
}

TEST(XnnpackBackendTest, TenLiveGraphsShareTheirPoolAndAllRunRight) {
  const auto io = model_io("unet2d");
  std::vector<TracedGraph> graphs;
  for (int i = 0; i < 10; ++i) {
    graphs.push_back(unet2d_on(make_backend({2})));
    graphs.back().finalize();
  }
  graphs.push_back(unet2d_on(make_backend({3})));  // a second pool beside the first
  graphs.back().finalize();
  for (TracedGraph& g : graphs) EXPECT_LE(max_relative_error(g.run(io.inputs)[0], io.outputs[0]), 1e-4);
  EXPECT_TG_ERROR(make_backend({-1}), ErrorCode::kInvalidArgument, "threads must be 0");
  EXPECT_TG_ERROR(make_backend({100000}), ErrorCode::kInvalidArgument, "a pool of 100000 threads");
}

// A model file from anyone: one convolution's attributes edited as a hostile
// file would, each refused with a typed error at finalize(); then the same
// process reads and runs the model correctly.
class HostileAttributeTest : public ::testing::Test {
 protected:
  static TracedGraph unet2d(std::unique_ptr<Backend> backend) {
    native::TorchScriptOptions options;
    options.example_inputs = model_io("unet2d").inputs;
    return TracedGraph::from_exported(native::read_torchscript(model_path("unet2d.ts"), options), std::move(backend));
  }
  static NodeId first_conv(const TracedGraph& g) {
    for (NodeId id : g.graph().nodes()) {
      if (g.graph().node(id).op == "aten::_convolution") return id;
    }
    throw std::runtime_error("no convolution");
  }
  static void edit(TracedGraph& g, const std::string& attribute, std::vector<std::int64_t> value) {
    g.mutable_graph().set_attribute(first_conv(g), attribute, std::move(value));
  }
};

TEST_F(HostileAttributeTest, EachEditIsATypedErrorOnBothBackends) {
  struct Row {
    std::string attribute;
    std::vector<std::int64_t> value;
    ErrorCode code;
    std::string message;
  };
  const std::vector<Row> rows = {
      {"padding", {-5, -5}, ErrorCode::kInvalidArgument, "negative padding is not supported"},
      {"stride", {0, 0}, ErrorCode::kInvalidArgument, "'stride' [0, 0]: each must be positive"},
      {"dilation", {0, 0}, ErrorCode::kInvalidArgument, "'dilation' [0, 0]: each must be positive"},
      {"stride", {-1, 1}, ErrorCode::kInvalidArgument, "'stride' [-1, 1]"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.attribute + " " + shape_str(row.value));
    for (bool xnnpack : {true, false}) {
      TracedGraph g = unet2d(xnnpack ? make_backend() : native::make_libtorch_backend());
      edit(g, row.attribute, row.value);
      EXPECT_TG_ERROR(g.finalize(), row.code, row.message);
      EXPECT_FALSE(g.is_finalized());
    }
  }
}

TEST_F(HostileAttributeTest, MemoryBeyondTheBudgetIsOutOfMemoryWithTheBytesNeeded) {
  {
    // padding [100000, 100000]: an output of 200,000 x 200,000 pixels per channel.
    TracedGraph g = unet2d(make_backend());
    edit(g, "padding", {100000, 100000});
    EXPECT_TG_ERROR(g.finalize(), ErrorCode::kOutOfMemory, "over the memory budget");
  }
  {
    // padding at int64's edge (found by fuzz_backends: the sizes overflowed and
    // XNNPACK's 32-bit geometry wrapped into a crash): refused before any cast.
    TracedGraph g = unet2d(make_backend());
    edit(g, "padding", {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max()});
    EXPECT_TG_ERROR(g.finalize(), ErrorCode::kLimitExceeded, "XNNPACK's geometry takes");
  }
  {
    // A budget this model does not fit in.
    TracedGraph g = unet2d(make_backend(Options{1, false, 1 << 16}));
    EXPECT_TG_ERROR(g.finalize(), ErrorCode::kOutOfMemory, "bytes");
  }
  // Nothing is left broken: the same model reads, finalizes and runs right.
  TracedGraph g = unet2d(make_backend());
  g.finalize();
  const auto io = model_io("unet2d");
  EXPECT_LE(max_relative_error(g.run(io.inputs)[0], io.outputs[0]), 1e-4);
}

}  // namespace
}  // namespace tracegraph::xnnpack
