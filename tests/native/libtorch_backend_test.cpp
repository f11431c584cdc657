#include "tracegraph/native/libtorch_backend.h"

#include <torch/script.h>

#include <filesystem>

#include "native/test_models.h"
#include "test_util.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/op_table.h"
#include "tracegraph/trace.h"

namespace tracegraph::native {
namespace {

using tracegraph::testing::model_io;
using tracegraph::testing::model_path;

using tracegraph::testing::max_relative_error;

// LibTorch's own forward of the same file on the same inputs, flattened.
std::vector<at::Tensor> torch_forward(const std::string& model, const std::vector<Tensor>& inputs) {
  torch::jit::Module m = torch::jit::load(model_path(model + ".ts"));
  m.eval();
  std::vector<c10::IValue> args;
  for (const auto& t : inputs) args.emplace_back(to_aten(t).clone());
  c10::InferenceMode guard;
  c10::IValue out = m.forward(args);
  std::vector<at::Tensor> flat;
  std::function<void(const c10::IValue&)> walk = [&](const c10::IValue& v) {
    if (v.isTensor()) flat.push_back(v.toTensor());
    else if (v.isTuple()) for (const auto& e : v.toTupleRef().elements()) walk(e);
    else if (v.isList()) for (const auto& e : v.toListRef()) walk(e);
    else if (v.isGenericDict()) for (const auto& e : v.toGenericDict()) walk(e.value());
  };
  walk(out);
  return flat;
}

class ParityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ParityTest, RunEqualsLibTorchsOwnForward) {
  const auto io = model_io(GetParam());
  TorchScriptOptions options;
  options.example_inputs = io.inputs;
  TracedGraph g = load(model_path(GetParam() + ".ts"), options);
  g.finalize();
  const std::vector<Tensor> out = g.run(io.inputs);
  const std::vector<at::Tensor> want = torch_forward(GetParam(), io.inputs);
  ASSERT_EQ(out.size(), want.size());
  ASSERT_EQ(out.size(), io.outputs.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_LE(max_relative_error(to_aten(out[i]), want[i]), 1e-5) << "output " << i << " vs the C++ forward";
    EXPECT_LE(max_relative_error(to_aten(out[i]), to_aten(io.outputs[i])), 1e-5) << "output " << i << " vs PyTorch's forward";
  }
  // A second run gives the same numbers: nothing is left over from the first.
  const std::vector<Tensor> again = g.run(io.inputs);
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_TRUE(to_aten(again[i]).equal(to_aten(out[i])));
}

TEST_P(ParityTest, AnExportedGraphRunsTheSame) {
  const auto io = model_io(GetParam());
  TorchScriptOptions options;
  options.example_inputs = io.inputs;
  const auto dir = std::filesystem::temp_directory_path() / ("tracegraph_parity_" + GetParam());
  std::filesystem::create_directories(dir);
  save_graph(read_torchscript(model_path(GetParam() + ".ts"), options), (dir / "m.json").string());
  TracedGraph g = load((dir / "m.json").string());
  g.finalize();
  const std::vector<Tensor> out = g.run(io.inputs);
  ASSERT_FALSE(io.outputs.empty());
  ASSERT_EQ(out.size(), io.outputs.size());
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_LE(max_relative_error(to_aten(out[i]), to_aten(io.outputs[i])), 1e-5);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(TestModels, ParityTest, ::testing::ValuesIn(tracegraph::testing::kReadableModels),
                         [](const auto& info) { return info.param; });

class TracedGraphTest : public ::testing::Test {
 protected:
  TracedGraph dict_model() {
    TorchScriptOptions options;
    options.example_inputs = model_io("unet3d_dict_out").inputs;
    return load(model_path("unet3d_dict_out.ts"), options);
  }
  Tensor input() { return model_io("unet3d_dict_out").inputs[0]; }
};

TEST_F(TracedGraphTest, ExposesTheGraphsSurface) {
  TracedGraph g = dict_model();
  EXPECT_FALSE(g.is_finalized());
  EXPECT_EQ(g.input_names(), std::vector<std::string>{"x.1"});
  EXPECT_EQ(g.output_names().size(), 2u);
  EXPECT_EQ(g.nodes().size(), g.graph().num_nodes());
  EXPECT_EQ(g.out_spec().str(), "{'mask': *, 'affinities': *}");
  EXPECT_EQ(g.in_spec()->str(), "((*,), {})");
  EXPECT_EQ(g.backend()->name(), "libtorch");
}

TEST_F(TracedGraphTest, OnlyAFinalizedGraphRuns) {
  TracedGraph g = dict_model();
  EXPECT_TG_ERROR(g.run({input()}), ErrorCode::kNotFinalized, "call finalize() before running it");
  g.finalize();
  EXPECT_TRUE(g.is_finalized());
  g.finalize();  // a second call changes nothing
  EXPECT_TRUE(g.is_finalized());
  EXPECT_EQ(g.run({input()}).size(), 2u);
  EXPECT_TG_ERROR(g.mutable_graph(), ErrorCode::kInvalidArgument, "is finalized");
}

TEST_F(TracedGraphTest, BothRunFormsAgree) {
  TracedGraph g = dict_model();
  g.finalize();
  auto positional = g.run(std::vector<Tensor>{input()});
  auto named = g.run(std::map<std::string, Tensor>{{"x.1", input()}});
  ASSERT_EQ(positional.size(), named.size());
  for (std::size_t i = 0; i < positional.size(); ++i) EXPECT_TRUE(to_aten(positional[i]).equal(to_aten(named[i])));
}

TEST_F(TracedGraphTest, RunErrorsNameWhatIsWrong) {
  TracedGraph g = dict_model();
  g.finalize();
  EXPECT_TG_ERROR(g.run(std::vector<Tensor>{}), ErrorCode::kInvalidArgument, "takes 1 inputs, given 0");
  EXPECT_TG_ERROR(g.run(std::vector<Tensor>{input(), input()}), ErrorCode::kInvalidArgument, "takes 1 inputs, given 2");
  EXPECT_TG_ERROR(g.run(std::map<std::string, Tensor>{{"x", input()}}), ErrorCode::kInvalidArgument, "input %x.1 of graph main is missing");
  EXPECT_TG_ERROR(g.run(std::map<std::string, Tensor>{{"x.1", input()}, {"y", input()}}), ErrorCode::kNotFound, "no input %y (its inputs: %x.1)");
  EXPECT_TG_ERROR(g.run({Tensor::zeros(DType::kFloat64, {1, 1, 44, 44, 44})}), ErrorCode::kDTypeMismatch, "input %x.1 must be float32, given float64");
  EXPECT_TG_ERROR(g.run({Tensor::zeros(DType::kFloat32, {1, 1, 40, 44, 44})}), ErrorCode::kShapeMismatch,
                  "must have shape [1, 1, 44, 44, 44], given [1, 1, 40, 44, 44]");
}

TEST_F(TracedGraphTest, TheCallTakesAndGivesStructures) {
  TracedGraph g = dict_model();
  g.finalize();
  using T = Tree<Tensor>;
  T out = g(T::tuple({T::tuple({T(input())}), T::dict({})}));
  ASSERT_EQ(out.kind(), TreeKind::kDict);
  EXPECT_EQ(out.keys(), (std::vector<std::string>{"mask", "affinities"}));
  EXPECT_EQ(out.at("mask").leaf().shape(), (Shape{1, 1, 28, 28, 28}));
  EXPECT_EQ(out.at("affinities").leaf().shape(), (Shape{1, 2, 28, 28, 28}));
  EXPECT_TG_ERROR(g(T::tuple({T::list({T(input())}), T::dict({})})), ErrorCode::kTreeSpecMismatch, "at [0]: expected a tuple, got a list");
  EXPECT_TG_ERROR(g(T::tuple({T::tuple({T(input())}), T::dict({{"extra", T(input())}})})), ErrorCode::kTreeSpecMismatch,
                  "at [1]: expected 0 children, got 1");
}

TEST_F(TracedGraphTest, AtenTensorsGoInAndComeOutWithoutCopies) {
  TracedGraph g = dict_model();
  g.finalize();
  at::Tensor x = to_aten(input()).clone();
  std::vector<at::Tensor> out = run(g, {x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].equal(to_aten(g.run({input()})[0])));
  // Interop views share memory.
  Tensor view = from_aten(x);
  EXPECT_EQ(view.data(), x.data_ptr());
  EXPECT_EQ(to_aten(view).data_ptr(), x.data_ptr());
}

TEST_F(TracedGraphTest, OpsWithoutAKernelFailAtFinalizeAllNamedAtOnce) {
  Graph graph;
  ValueId x = graph.add_input("x", DType::kFloat32, symbolic({2}));
  NodeId a = graph.add_node("aten::frobnicate", {x}, {"y"}, {}, "frob");
  Attributes self_arg;
  self_arg.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self"});
  NodeId b = graph.add_node("aten::relu", {graph.node(a).outputs[0]}, {"r"}, self_arg, "relu");
  NodeId c = graph.add_node("aten::frobnicate", {graph.node(b).outputs[0]}, {"z"}, {}, "frob2");
  NodeId d = graph.add_node("mylib::twiddle", {graph.node(c).outputs[0]}, {"w"}, {}, "twiddle");
  graph.set_outputs({graph.node(d).outputs[0]});
  auto backend = make_libtorch_backend();
  // Asked before finalize, the backend names every node it cannot run.
  const auto missing = backend->unsupported(graph);
  ASSERT_EQ(missing.size(), 3u);
  EXPECT_EQ(missing[0].node, "frob");
  EXPECT_EQ(missing[2].op, "mylib::twiddle");
  TracedGraph g(std::move(graph), std::nullopt, std::nullopt, std::move(backend));
  // finalize() refuses with one error that counts each op and names its nodes.
  EXPECT_TG_ERROR(g.finalize(), ErrorCode::kUnsupported, "cannot run 3 nodes (2 ops): aten::frobnicate x2 (frob, frob2: ");
  EXPECT_TG_ERROR(g.finalize(), ErrorCode::kUnsupported, "; mylib::twiddle x1 (twiddle: ");
  EXPECT_FALSE(g.is_finalized());
}

TEST_F(TracedGraphTest, NoBackendIsAClearError) {
  Graph graph;
  ValueId x = graph.add_input("x");
  graph.set_outputs({x});
  // Natively the default is LibTorch; with it cleared, a graph has none.
  ASSERT_NE(default_backend(), nullptr);
  const BackendFactory saved = default_backend();
  set_default_backend(nullptr);
  TracedGraph g(std::move(graph), std::nullopt, std::nullopt);
  set_default_backend(saved);
  EXPECT_EQ(g.backend(), nullptr);
  EXPECT_TG_ERROR(g.finalize(), ErrorCode::kInvalidArgument, "has no backend");
  EXPECT_TG_ERROR(g(Tree<Tensor>(Tensor())), ErrorCode::kInvalidArgument, "has no in_spec; use run()");
}

TEST_F(TracedGraphTest, ToChoosesTheDevice) {
  TracedGraph g = dict_model();
  g.to("cpu");
  EXPECT_EQ(g.device(), Device::cpu());
  EXPECT_TG_ERROR(g.to("gpu"), ErrorCode::kInvalidArgument, "'gpu'");
  if (!cuda_available()) {
    // Refused at once, and the graph stays where it was.
    EXPECT_TG_ERROR(g.to("cuda"), ErrorCode::kUnsupported, "has no CUDA");
    EXPECT_EQ(g.device(), Device::cpu());
  }
}

TEST_F(TracedGraphTest, AFinalizedGraphMovesOnTheCpuAndOntoAStream) {
  TracedGraph g = dict_model();
  g.finalize();
  const auto io = model_io("unet3d_dict_out");
  const std::vector<Tensor> before = g.run(io.inputs);
  g.to(Stream{Device::cpu(), 0});  // the CPU's default stream
  EXPECT_EQ(g.device(), Device::cpu());
  ASSERT_TRUE(g.stream().has_value());
  EXPECT_EQ(g.stream()->id, 0);
  std::vector<Tensor> after = g.run(io.inputs);
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) EXPECT_TRUE(to_aten(after[i]).equal(to_aten(before[i])));
  g.to("cpu");
  EXPECT_FALSE(g.stream().has_value());
  after = g.run(io.inputs);
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) EXPECT_TRUE(to_aten(after[i]).equal(to_aten(before[i])));
}

TEST_F(TracedGraphTest, AMoveTheBackendRefusesLeavesTheGraphWhereItWas) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is here: the move to cuda would succeed";
  TracedGraph g = dict_model();
  g.finalize();
  EXPECT_TG_ERROR(g.to("cuda"), ErrorCode::kUnsupported, "CUDA");
  EXPECT_EQ(g.device(), Device::cpu());
  EXPECT_TG_ERROR(g.to(Stream{Device::cuda(0), 3}), ErrorCode::kUnsupported, "CUDA");
  EXPECT_EQ(g.device(), Device::cpu());
  EXPECT_FALSE(g.stream().has_value());
  EXPECT_EQ(g.run({input()}).size(), 2u);
}

class CudaTest : public TracedGraphTest {
 protected:
  void SetUp() override {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA device: this LibTorch has no CUDA or sees no GPU";
  }
};

TEST_F(CudaTest, RunsOnCudaWithParity) {
  TracedGraph g = dict_model();
  g.to("cuda:0");
  g.finalize();
  const auto io = model_io("unet3d_dict_out");
  const std::vector<Tensor> out = g.run(io.inputs);  // a CPU input is moved to the device
  ASSERT_EQ(out.size(), io.outputs.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].device().type, DeviceType::kCUDA);
    EXPECT_LE(max_relative_error(to_aten(out[i]), to_aten(io.outputs[i])), 1e-4);
  }
  g.to("cpu");  // a finalized graph moves
  EXPECT_EQ(g.run(io.inputs)[0].device().type, DeviceType::kCPU);
}

}  // namespace
}  // namespace tracegraph::native

namespace tracegraph::native {
namespace {

TEST(LibTorchBackendTest, AGraphReturningAConstantOrAnInputRunsTwice) {
  Graph graph;
  ValueId x = graph.add_input("x", DType::kFloat32, symbolic({2}));
  ValueId c = graph.add_constant("c", Tensor::from_vector<float>({1, 2}, {2}));
  graph.set_outputs({c, x});
  TracedGraph g(std::move(graph), std::nullopt, std::nullopt, make_libtorch_backend());
  g.finalize();
  const Tensor in = Tensor::from_vector<float>({5, 6}, {2});
  for (int i = 0; i < 2; ++i) {
    auto out = g.run({in});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].data_as<float>()[1], 2.0f) << "run " << i;
    EXPECT_EQ(out[1].data_as<float>()[0], 5.0f) << "run " << i;
  }
}

}  // namespace
}  // namespace tracegraph::native

// oneDNN's convolution path: activations and residual adds fused into the
// convolution, weights reordered once. Each graph's result is checked against
// the same computation written with ATen; the plan says what was fused.
namespace tracegraph::native {
namespace {

using tracegraph::testing::max_relative_error;

Tensor randn_tensor(Shape s) { return from_aten(at::randn(s)); }

class OneDnnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!at::hasMKLDNN()) GTEST_SKIP() << "this LibTorch has no oneDNN: convolutions take ATen's own kernels";
    at::manual_seed(0);
  }
};

TEST_F(OneDnnTest, AResidualAddAndItsReluRunInTheProducingConvolution) {
  // 5 and 7 channels (not multiples of 8), an odd 9x11 image, batch 2.
  const Tensor w1 = randn_tensor({7, 5, 3, 3}), b1 = randn_tensor({7}), w2 = randn_tensor({7, 7, 3, 3}), b2 = randn_tensor({7});
  const Tensor w3 = randn_tensor({7, 7, 1, 1});
  const Tensor x = randn_tensor({2, 5, 9, 11});
  TracedGraph g = trace(
      [&](const SymbolicTensor& in) {
        SymbolicTensor y = conv2d(in, w1, b1, {1, 1}, {1, 1}).relu6();
        SymbolicTensor h = conv2d(y, w3);
        SymbolicTensor r = (conv2d(h, w2, b2, {1, 1}, {1, 1}) + y).relu();  // y read by nothing after: in place
        return conv2d(r, w3).sigmoid();
      },
      x);
  g.optimize();
  g.finalize();
  const auto plan = libtorch_plan(*g.backend());
  for (int run = 0; run < 2; ++run) {
    const at::Tensor got = to_aten(g.run({x})[0]);
    const at::Tensor y = at::clamp(at::conv2d(to_aten(x), to_aten(w1), to_aten(b1), 1, 1), 0, 6);
    const at::Tensor h = at::conv2d(y, to_aten(w3));
    const at::Tensor r = at::relu(at::conv2d(h, to_aten(w2), to_aten(b2), 1, 1) + y);
    const at::Tensor want = at::sigmoid(at::conv2d(r, to_aten(w3)));
    EXPECT_LT(max_relative_error(got, want), 1e-5) << "run " << run;
  }
  ASSERT_EQ(plan.size(), 4u) << "four convolutions, the add inside the third";
  EXPECT_EQ(plan[0].kernel, "mkldnn::_convolution_pointwise");
  EXPECT_EQ(plan[0].fused_activation, "hardtanh");
  EXPECT_EQ(plan[1].fused_activation, "");
  EXPECT_EQ(plan[2].kernel, "mkldnn::_convolution_pointwise_.binary");
  ASSERT_EQ(plan[2].nodes.size(), 2u);
  EXPECT_NE(plan[2].nodes[1].find("add"), std::string::npos) << plan[2].nodes[1];
  EXPECT_EQ(plan[2].fused_activation, "relu");
  EXPECT_EQ(plan[3].fused_activation, "sigmoid");
  for (const LibTorchStep& s : plan) EXPECT_TRUE(s.packed_weight) << s.nodes[0];
}

TEST_F(OneDnnTest, AResidualReadLaterOrTheCallersInputIsNotWrittenTo) {
  const Tensor w = randn_tensor({6, 6, 3, 3}), b = randn_tensor({6});
  const Tensor x = randn_tensor({1, 6, 1, 7});  // height 1
  const at::Tensor x_before = to_aten(x).clone();
  TracedGraph g = trace(
      [&](const SymbolicTensor& in) {
        SymbolicTensor a = conv2d(in, w, b, {1, 1}, {1, 1}) + in;  // the graph's input as the residual
        SymbolicTensor c = conv2d(a, w, b, {1, 1}, {1, 1}).sigmoid();
        SymbolicTensor d = conv2d(c, w, b, {1, 1}, {1, 1}) + c;     // c is read again below
        return std::make_tuple(d, c * 2.0);
      },
      x);
  g.optimize();
  g.finalize();
  const auto plan = libtorch_plan(*g.backend());
  for (int run = 0; run < 2; ++run) {
    const auto out = g.run({x});
    const at::Tensor xa = to_aten(x);
    const at::Tensor a = at::conv2d(xa, to_aten(w), to_aten(b), 1, 1) + xa;
    const at::Tensor c = at::sigmoid(at::conv2d(a, to_aten(w), to_aten(b), 1, 1));
    const at::Tensor d = at::conv2d(c, to_aten(w), to_aten(b), 1, 1) + c;
    EXPECT_LT(max_relative_error(to_aten(out[0]), d), 1e-5) << "run " << run;
    EXPECT_LT(max_relative_error(to_aten(out[1]), c * 2), 1e-5) << "run " << run;
    EXPECT_TRUE(at::equal(xa, x_before)) << "the caller's input was written to";
  }
  int out_of_place = 0;
  for (const LibTorchStep& s : plan) {
    EXPECT_NE(s.kernel, "mkldnn::_convolution_pointwise_.binary") << s.nodes[0];
    out_of_place += s.kernel == "mkldnn::_convolution_pointwise.binary";
  }
  EXPECT_EQ(out_of_place, 2);
}

TEST_F(OneDnnTest, AResidualThatIsTheConvolutionsOwnInputIsNotWrittenTo) {
  const Tensor w0 = randn_tensor({5, 3, 1, 1}), w = randn_tensor({5, 5, 3, 3}), b = randn_tensor({5});
  const Tensor x = randn_tensor({1, 3, 6, 5});
  TracedGraph g = trace(
      [&](const SymbolicTensor& in) {
        SymbolicTensor a = conv2d(in, w0).relu();           // an intermediate, dead after the add
        return (conv2d(a, w, b, {1, 1}, {1, 1}) + a).relu();  // a is both the input and the residual
      },
      x);
  g.optimize();
  g.finalize();
  const at::Tensor a = at::relu(at::conv2d(to_aten(x), to_aten(w0)));
  const at::Tensor want = at::relu(at::conv2d(a, to_aten(w), to_aten(b), 1, 1) + a);
  for (int run = 0; run < 2; ++run) EXPECT_LT(max_relative_error(to_aten(g.run({x})[0]), want), 1e-5) << "run " << run;
  const auto plan = libtorch_plan(*g.backend());
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[1].kernel, "mkldnn::_convolution_pointwise.binary");
}

TEST_F(OneDnnTest, ThreeDimensionalConvolutionsWithResidualAndActivations) {
  const Tensor w1 = randn_tensor({3, 1, 3, 3, 3}), w2 = randn_tensor({3, 3, 3, 3, 3}), b2 = randn_tensor({3});
  const Tensor w3 = randn_tensor({3, 3, 1, 1, 1});
  const Tensor x = randn_tensor({1, 1, 1, 5, 6});  // depth 1
  const std::vector<std::pair<std::string, std::string>> activations = {{"tanh", ""}, {"hardswish", "hardswish"}, {"silu", ""}};  // tanh, silu: after the op
  for (const auto& [act, post_op] : activations) {
    TracedGraph g = trace(
        [&](const SymbolicTensor& in) {
          SymbolicTensor y = conv3d(in, w1, std::nullopt, {1, 1, 1}, {1, 1, 1});
          y = act == "tanh" ? y.tanh() : act == "hardswish" ? y.hardswish() : y.silu();
          return (conv3d(conv3d(y, w3), w2, b2, {1, 1, 1}, {1, 1, 1}) + y).relu();
        },
        x);
    g.optimize();
    g.finalize();
    at::Tensor y = at::conv3d(to_aten(x), to_aten(w1), {}, 1, 1);
    y = act == "tanh" ? at::tanh(y) : act == "hardswish" ? at::hardswish(y) : at::silu(y);
    const at::Tensor want = at::relu(at::conv3d(at::conv3d(y, to_aten(w3)), to_aten(w2), to_aten(b2), 1, 1) + y);
    EXPECT_LT(max_relative_error(to_aten(g.run({x})[0]), want), 1e-5) << act;
    const auto plan = libtorch_plan(*g.backend());
    ASSERT_EQ(plan.size(), 3u) << act;
    EXPECT_EQ(plan[0].fused_activation, post_op);
    EXPECT_EQ(plan[2].kernel, "mkldnn::_convolution_pointwise_.binary") << act;
    EXPECT_EQ(plan[2].fused_activation, "relu") << act;
  }
}

// A graph of aten::conv2d nodes over one input (symbolic height and width
// unless `shape` is given), padding = dilation = paddings[i] each, their
// outputs added up (of the shape given, if any).
TracedGraph convolutions(const Tensor& weight, const std::vector<std::int64_t>& paddings, std::optional<Shape> shape = std::nullopt,
                         std::int64_t stride = 1) {
  Graph graph;
  const std::optional<SymbolicShape> out_shape = shape ? std::optional(symbolic(*shape)) : std::nullopt;
  const ValueId x = graph.add_input("x", DType::kFloat32,
                                    shape ? symbolic(*shape) : SymbolicShape{Dim::of(1), Dim::of(weight.shape()[1]), Dim::sym("H"), Dim::sym("W")});
  const ValueId w = graph.add_constant("w", weight);  // one constant, read by every convolution
  std::optional<ValueId> sum;
  for (std::size_t i = 0; i < paddings.size(); ++i) {
    Attributes attrs;
    attrs.set("stride", std::vector<std::int64_t>{stride, stride});
    attrs.set("padding", std::vector<std::int64_t>{paddings[i], paddings[i]});
    attrs.set("dilation", std::vector<std::int64_t>{paddings[i], paddings[i]});
    attrs.set("groups", std::int64_t{1});
    attrs.set(std::string(kArgNamesAttribute), std::vector<std::string>{"input", "weight"});
    const NodeId conv = graph.add_node("aten::conv2d", {x, w}, {NewValue{"", DType::kFloat32, out_shape}}, attrs, "conv" + std::to_string(i));
    const ValueId y = graph.node(conv).outputs[0];
    if (!sum) {
      sum = y;
      continue;
    }
    Attributes add;
    add.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self", "other"});
    sum = graph.node(graph.add_node("aten::add", {*sum, y}, {NewValue{"", DType::kFloat32, out_shape}}, add, "add" + std::to_string(i))).outputs[0];
  }
  graph.set_outputs({*sum});
  return TracedGraph(std::move(graph), std::nullopt, std::nullopt, make_libtorch_backend());
}

TEST_F(OneDnnTest, SiluIsThePostOpSwishIn2DAndAppliedAfterIn3D) {
  for (const Shape& s : {Shape{1, 3, 5, 6}, Shape{1, 3, 2, 5, 6}}) {
    const bool three = s.size() == 5;
    const Tensor w = randn_tensor(three ? Shape{4, 3, 3, 3, 3} : Shape{4, 3, 3, 3}), x = randn_tensor(s);
    TracedGraph g = trace([&](const SymbolicTensor& in) { return (three ? conv3d(in, w, std::nullopt, {1, 1, 1}, {1, 1, 1}) : conv2d(in, w, std::nullopt, {1, 1}, {1, 1})).silu(); }, x);
    g.optimize();
    g.finalize();
    const at::Tensor want = at::silu(three ? at::conv3d(to_aten(x), to_aten(w), {}, 1, 1) : at::conv2d(to_aten(x), to_aten(w), {}, 1, 1));
    EXPECT_LT(max_relative_error(to_aten(g.run({x})[0]), want), 1e-5) << s.size();
    const auto plan = libtorch_plan(*g.backend());
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].kernel, "mkldnn::_convolution_pointwise");
    EXPECT_EQ(plan[0].fused_activation, three ? "" : "swish");
  }
}

TEST_F(OneDnnTest, AWeightSharedWithOtherArgumentsStaysInTorchsLayout) {
  const Tensor w = randn_tensor({4, 4, 3, 3});
  const Tensor x = randn_tensor({1, 4, 8, 8});
  TracedGraph g = convolutions(w, {1, 2});  // padding = dilation = 1, then 2: same output size
  g.finalize();
  const at::Tensor xa = to_aten(x), wa = to_aten(w);
  const at::Tensor want = at::conv2d(xa, wa, {}, 1, 1) + at::conv2d(xa, wa, {}, 1, 2, 2);
  EXPECT_LT(max_relative_error(to_aten(g.run({x})[0]), want), 1e-5);
  int convolutions_seen = 0;
  for (const LibTorchStep& s : libtorch_plan(*g.backend())) {
    if (s.kernel.rfind("mkldnn::", 0) != 0) continue;
    ++convolutions_seen;
    EXPECT_FALSE(s.packed_weight) << s.nodes[0];
  }
  EXPECT_EQ(convolutions_seen, 2);
}

TEST_F(OneDnnTest, APackedWeightServesEveryInputShapeAndSurvivesAMove) {
  const Tensor w = randn_tensor({5, 3, 3, 3});
  TracedGraph g = convolutions(w, {1});  // height and width symbolic: reordered without a shape
  g.finalize();
  EXPECT_TRUE(libtorch_plan(*g.backend())[0].packed_weight);
  for (int move = 0; move < 2; ++move) {
    for (const Shape& s : {Shape{1, 3, 16, 16}, Shape{1, 3, 1, 1}, Shape{1, 3, 7, 30}}) {
      const Tensor in = randn_tensor(s);
      const at::Tensor want = at::conv2d(to_aten(in), to_aten(w), {}, 1, 1);
      EXPECT_LT(max_relative_error(to_aten(g.run({in})[0]), want), 1e-5) << s[2] << "x" << s[3] << ", move " << move;
    }
    g.to("cpu");  // back to torch's layout and reordered again
    EXPECT_TRUE(libtorch_plan(*g.backend())[0].packed_weight);
  }
}

TEST_F(OneDnnTest, AGeneralConvolutionTakesItsRankFromTheWeight) {
  // aten::convolution names no rank and its input's shape is not declared:
  // the weight [O, C, kh, kw] says 2D, so oneDNN runs it.
  const Tensor w = randn_tensor({4, 3, 3, 3}), x = randn_tensor({1, 3, 6, 7});
  Graph graph;
  const ValueId in = graph.add_input("x", DType::kFloat32);
  Attributes attrs;
  attrs.set("stride", std::vector<std::int64_t>{1, 1});
  attrs.set("padding", std::vector<std::int64_t>{1, 1});
  attrs.set("dilation", std::vector<std::int64_t>{1, 1});
  attrs.set("transposed", false);
  attrs.set("output_padding", std::vector<std::int64_t>{0, 0});
  attrs.set("groups", std::int64_t{1});
  attrs.set(std::string(kArgNamesAttribute), std::vector<std::string>{"input", "weight"});
  const NodeId conv = graph.add_node("aten::convolution", {in, graph.add_constant("w", w)}, {NewValue{"", DType::kFloat32, std::nullopt}}, attrs, "conv");
  graph.set_outputs({graph.node(conv).outputs[0]});
  TracedGraph g(std::move(graph), std::nullopt, std::nullopt, make_libtorch_backend());
  g.finalize();
  EXPECT_LT(max_relative_error(to_aten(g.run({x})[0]), at::conv2d(to_aten(x), to_aten(w), {}, 1, 1)), 1e-5);
  const auto plan = libtorch_plan(*g.backend());
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].kernel, "mkldnn::_convolution_pointwise");
}

TEST_F(OneDnnTest, AStrideOfZeroIsAnErrorNamingTheNode) {
  // Declared shapes that claim a residual add of two same-shaped convolutions.
  TracedGraph g = convolutions(randn_tensor({4, 4, 3, 3}), {1, 1}, Shape{1, 4, 6, 6}, 0);
  EXPECT_TG_ERROR(g.finalize(), ErrorCode::kInvalidArgument, "node 'conv0' (aten::conv2d): attribute 'stride' [0, 0]");
}

TEST(LibTorchPlanTest, AnotherBackendIsRefused) {
  struct Other : Backend {
    std::string name() const override { return "other"; }
    void prepare(const Graph&, const Device&, const Stream*) override {}
    std::vector<Tensor> run(const std::vector<Tensor>&) override { return {}; }
    void move(const Device&, const Stream*) override {}
    std::vector<UnsupportedNode> unsupported(const Graph&) const override { return {}; }
  } other;
  EXPECT_TG_ERROR(libtorch_plan(other), ErrorCode::kInvalidArgument, "the backend is 'other'");
}

}  // namespace
}  // namespace tracegraph::native
