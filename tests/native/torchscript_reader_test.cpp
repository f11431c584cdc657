#include "tracegraph/native/torchscript.h"

#include <torch/script.h>

#include <filesystem>
#include <map>

#include "native/test_models.h"
#include "test_util.h"
#include "tracegraph/activation.h"
#include "tracegraph/module_graph.h"
#include "tracegraph/op_table.h"

namespace tracegraph::native {
namespace {

using tracegraph::testing::expected;
using tracegraph::testing::model_io;
using tracegraph::testing::model_path;

class ReadModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    facts_ = expected(GetParam());
    TorchScriptOptions options;
    options.example_inputs = model_io(GetParam()).inputs;
    read_ = read_torchscript(model_path(GetParam() + ".ts"), options);
  }
  nlohmann::json facts_;
  ExportedGraph read_;
};

TEST_P(ReadModelTest, OutputActivationIsTheOneBuiltIn) {
  tracegraph::testing::expect_activations(output_activation(read_.graph), facts_["activation"]);
}

TEST_P(ReadModelTest, OutputTreeSpecIsTheReturnedStructure) {
  ASSERT_TRUE(read_.out_spec.has_value());
  EXPECT_EQ(read_.out_spec->to_json(), facts_["out_spec"].get<std::string>());
  ASSERT_TRUE(read_.in_spec.has_value());
  EXPECT_EQ(read_.in_spec->str(), "((*,), {})");
}

TEST_P(ReadModelTest, OpCountsMatchTheFrozenTorchScriptGraph) {
  std::map<std::string, int> got;
  for (NodeId id : read_.graph.nodes()) {
    const std::string& op = read_.graph.node(id).op;
    EXPECT_FALSE(is_inplace_op(op)) << "in-place op left: " << op;
    if (op.rfind("aten::", 0) == 0) ++got[op];
  }
  std::map<std::string, int> want;
  for (auto& [op, n] : facts_["op_counts"].items()) want[op] = n.get<int>();
  EXPECT_EQ(got, want);
}

TEST_P(ReadModelTest, WeightsAreConstantsWithTheirData) {
  std::int64_t elements = 0;
  for (ValueId c : read_.graph.constants()) {
    const Value& v = read_.graph.value(c);
    EXPECT_FALSE(v.producer.has_value());
    if (is_floating(v.data.dtype())) elements += v.data.numel();
  }
  EXPECT_EQ(elements, facts_["constant_elements"].get<std::int64_t>());
}

TEST_P(ReadModelTest, EveryValueHasItsDTypeAndShape) {
  for (ValueId v : read_.graph.values()) {
    const Value& value = read_.graph.value(v);
    EXPECT_TRUE(value.dtype.has_value()) << "%" << value.name;
    EXPECT_TRUE(value.shape.has_value()) << "%" << value.name;
  }
  const auto& shapes = facts_["output_shapes"];
  ASSERT_EQ(read_.graph.outputs().size(), shapes.size());
  // A size the values decide (nonzero's count) is a symbol; the rest are the model's.
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto& read = read_.graph.value(read_.graph.outputs()[i]).shape;
    const Shape want = shapes[i].get<Shape>();
    ASSERT_TRUE(read.has_value());
    ASSERT_EQ(read->size(), want.size()) << "output " << i;
    for (std::size_t d = 0; d < want.size(); ++d) {
      if ((*read)[d].is_static()) {
        EXPECT_EQ((*read)[d].size, want[d]) << "output " << i << " dim " << d;
      }
    }
  }
}

// The sizes nonzero and a boolean mask give are symbols (what the example run
// gave holds only for its values); an elementwise op of one keeps its symbol.
TEST(ReadModelDataDependent, SizesTheValuesDecideAreSymbols) {
  TorchScriptOptions options;
  options.example_inputs = model_io("detection_head_scripted").inputs;
  const ExportedGraph read = read_torchscript(model_path("detection_head_scripted.ts"), options);
  std::vector<std::string> shapes;
  for (ValueId v : read.graph.outputs()) shapes.push_back(shape_str(*read.graph.value(v).shape));
  EXPECT_EQ(shapes, (std::vector<std::string>{"[u0, 4]", "[u1]", "[u2, 2]"}));
}

TEST_P(ReadModelTest, ExportsAndLoadsBackEqual) {
  const auto dir = std::filesystem::temp_directory_path() / ("tracegraph_read_" + GetParam());
  std::filesystem::create_directories(dir);
  save_graph(read_, (dir / "model.json").string());
  ExportedGraph back = load_graph((dir / "model.json").string());
  EXPECT_EQ(back.graph.dump(), read_.graph.dump());
  EXPECT_EQ(back.out_spec, read_.out_spec);
  EXPECT_EQ(module_graph_json(module_graph(back.graph)), module_graph_json(module_graph(read_.graph)));
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(TestModels, ReadModelTest, ::testing::ValuesIn(tracegraph::testing::kReadableModels),
                         [](const auto& info) { return info.param; });

TEST(ReadModelsIndexTest, EveryModelTheScriptMakesIsTested) {
  std::ifstream in(model_path("index.json"));
  std::vector<std::string> index = nlohmann::json::parse(in).get<std::vector<std::string>>();
  std::vector<std::string> tested = tracegraph::testing::kReadableModels;
  tested.insert(tested.end(), tracegraph::testing::kRefusedModels.begin(), tracegraph::testing::kRefusedModels.end());
  std::sort(tested.begin(), tested.end());
  EXPECT_EQ(index, tested);
}

TEST(ReadRefusedTest, EachRefusedModelNamesTheNodeAndWhy) {
  for (const auto& name : tracegraph::testing::kRefusedModels) {
    SCOPED_TRACE(name);
    const auto facts = expected(name);
    const ErrorCode code = ErrorCode::kUnsupported;
    ASSERT_EQ(facts["error"]["code"].get<std::string>(), error_code_name(code));
    EXPECT_TG_ERROR(read_torchscript(model_path(name + ".ts")), code, facts["error"]["message"].get<std::string>());
    EXPECT_TG_ERROR(read_torchscript(model_path(name + ".ts")), code, name + ".ts");
  }
}

TEST(ReadRefusedTest, ABranchErrorNamesTheSourceLine) {
  EXPECT_TG_ERROR(read_torchscript(model_path("branch_on_values.ts")), ErrorCode::kUnsupported, "make_test_models.py:");
}

TEST(ReadBadFileTest, EachBadFileGetsItsTypedError) {
  EXPECT_TG_ERROR(read_torchscript(model_path("bad_not_a_zip.ts")), ErrorCode::kParse, "no zip header at byte 0");
  EXPECT_TG_ERROR(read_torchscript(model_path("bad_not_torchscript.ts")), ErrorCode::kSchema, "not a TorchScript module");
  EXPECT_TG_ERROR(read_torchscript(model_path("bad_truncated.ts")), ErrorCode::kTruncated, "ends early");
  EXPECT_TG_ERROR(read_torchscript(model_path("absent.ts")), ErrorCode::kIo, "absent.ts: no such file");
  EXPECT_TG_ERROR(read_torchscript(model_path("")), ErrorCode::kIo, "is a directory, not a TorchScript file");
}

TEST(ReadBadFileTest, ARunTimeFailureShowsItsRootCause) {
  // An example input of the wrong channel count: LibTorch's interpreter wraps
  // the convolution's error in a traceback; the message is its root cause.
  TorchScriptOptions options;
  options.example_inputs = {Tensor::zeros(DType::kFloat32, {1, 2, 44, 44, 44})};
  try {
    read_torchscript(model_path("unet3d_sigmoid_scripted.ts"), options);
    FAIL() << "read with a wrong example input";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kShapeMismatch);
    EXPECT_EQ(std::string(e.message()).find("The following operation failed"), std::string::npos) << e.message();
    EXPECT_NE(std::string(e.message()).find("channels"), std::string::npos) << e.message();
  }
}

TEST(ReadOptionsTest, ExampleInputCountMustMatch) {
  TorchScriptOptions options;
  options.example_inputs = {Tensor::zeros(DType::kFloat32, {1, 1, 44, 44, 44}), Tensor::zeros(DType::kFloat32, {1})};
  EXPECT_TG_ERROR(read_torchscript(model_path("unet3d_none.ts"), options), ErrorCode::kInvalidArgument,
                  "forward takes 1 inputs, given 2 example inputs");
}

TEST(ReadOptionsTest, ASignatureGivesShapesAndForwardsArgumentsTheInSpec) {
  TorchScriptOptions options;
  options.signature = {{DType::kFloat32, {1, 1, 44, 44, 44}}};
  ExportedGraph g = read_torchscript(model_path("unet3d_none.ts"), options);
  ASSERT_TRUE(g.in_spec.has_value());
  EXPECT_EQ(g.in_spec->str(), "((*,), {})");
  EXPECT_EQ(g.graph.value(g.graph.outputs()[0]).shape, symbolic({1, 1, 28, 28, 28}));
}

TEST(ReadOptionsTest, WithoutShapesOnlyConstantsAreTyped) {
  ExportedGraph g = read_torchscript(model_path("unet3d_none.ts"));
  EXPECT_FALSE(g.graph.value(g.graph.outputs()[0]).shape.has_value());
  EXPECT_EQ(output_activation(g.graph)[0].kind, ActivationKind::kNone);
}

TEST(ReadModuleTest, ALoadedModuleReadsTheSameAndStaysUnchanged) {
  torch::jit::Module m = torch::jit::load(model_path("unet3d_eval_sigmoid.ts"));
  m.train();
  ExportedGraph from_module = read_torchscript(m);
  EXPECT_TRUE(m.is_training());  // the reader froze an eval copy, not the caller's module
  ExportedGraph from_file = read_torchscript(model_path("unet3d_eval_sigmoid.ts"));
  EXPECT_EQ(from_module.graph.dump(), from_file.graph.dump());
  EXPECT_EQ(output_activation(from_module.graph)[0].kind, ActivationKind::kSigmoid);
}

TEST(ModuleGraphTest, TheSeedViewOfAClampModel) {
  ExportedGraph g = read_torchscript(model_path("unet3d_clamp.ts"));
  ModuleGraph view = module_graph(g.graph);
  ASSERT_FALSE(view.nodes.empty());
  const ModuleGraphNode& last = view.nodes.back();
  EXPECT_EQ(last.op, "aten::clamp");
  EXPECT_EQ(last.min, 0.0);
  EXPECT_EQ(last.max, 1.0);
  EXPECT_EQ(view.output, last.outputs[0]);
  // Weights are inputs of the nodes that read them, produced by no node.
  bool reads_weight = false;
  for (const auto& n : view.nodes) {
    for (const auto& in : n.inputs) reads_weight = reads_weight || in.find("weight") != std::string::npos;
  }
  EXPECT_TRUE(reads_weight);
}

}  // namespace
}  // namespace tracegraph::native
