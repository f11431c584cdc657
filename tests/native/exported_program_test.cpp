// torch.export programs and fx traces written by the Python exporter
// (python/tracegraph/export, run by tests/models/make_exported_models.py):
// the programs as .pt2 archives (as torch.export gives them, or in core
// ATen) read by the core's .pt2 reader, the traces from the exported format;
// they name the activation the model was built with and run on LibTorch as
// the module's forward does, and as the TorchScript file of the same model
// (same seeded weights) does.
#include <fstream>

#include "native/test_models.h"
#include "test_util.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/op_table.h"

namespace tracegraph::native {
namespace {

using tracegraph::testing::exported_path;
using tracegraph::testing::max_relative_error;
using tracegraph::testing::read_model_io;

nlohmann::json facts_of(const std::string& name) {
  std::ifstream in(exported_path(name, ".expected.json"));
  if (!in) throw std::runtime_error("missing " + exported_path(name, ".expected.json") + ": run the make_exported_programs fixture");
  return nlohmann::json::parse(in);
}

class ExportedProgramTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    facts_ = facts_of(GetParam());
    io_ = read_model_io(exported_path(GetParam(), ".io.safetensors"));
  }
  TracedGraph load_it() {
    return TracedGraph::from_exported(tracegraph::testing::read_exported_program(GetParam()), make_libtorch_backend());
  }
  nlohmann::json facts_;
  tracegraph::testing::ModelIo io_;
};

TEST_P(ExportedProgramTest, OpsAreAtenByTheirExportedNames) {
  TracedGraph g = load_it();
  ASSERT_GT(g.nodes().size(), 0u);
  // Every test model convolves: torch.export's own IR names the convolution
  // by its module (aten.conv2d, aten.conv3d), core ATen and the fx trace by
  // aten.convolution alone.
  const bool fx = GetParam().find("_fx") != std::string::npos;
  const bool core = fx || facts_["core_aten"].get<bool>();
  std::size_t convolutions = 0, module_convolutions = 0;
  for (NodeId id : g.nodes()) {
    const Node& n = g.graph().node(id);
    EXPECT_EQ(n.op.rfind("aten.", 0), 0u) << n.op;
    EXPECT_TRUE(canonical_op(n).has_value()) << n.name << ": " << n.op << " has no canonical op";
    EXPECT_FALSE(is_inplace_op(n.op)) << n.op;
    convolutions += n.op.rfind("aten.convolution", 0) == 0;
    module_convolutions += n.op.rfind("aten.conv2d", 0) == 0 || n.op.rfind("aten.conv3d", 0) == 0;
  }
  EXPECT_GT(core ? convolutions : module_convolutions, 0u);
  EXPECT_EQ(core ? module_convolutions : convolutions, 0u);
  EXPECT_EQ(facts_["reader"].get<std::string>(), fx ? "fx" : "torch.export");
  EXPECT_EQ(facts_["file"].get<std::string>(), GetParam() + (fx ? ".json" : ".pt2"));
}

TEST_P(ExportedProgramTest, ActivationIsTheOneBuiltIn) {
  TracedGraph g = load_it();
  tracegraph::testing::expect_activations(output_activation(g.graph()), facts_["activation"]);
  ASSERT_TRUE(g.in_spec().has_value());
  EXPECT_EQ(g.out_spec().to_json(), facts_["out_spec"].get<std::string>());
}

TEST_P(ExportedProgramTest, RunsOnLibTorchAsTheModuleDoes) {
  for (bool optimized : {false, true}) {
    SCOPED_TRACE(optimized ? "optimized" : "as read");
    TracedGraph g = load_it();
    if (optimized) {
      const OptimizeReport report = g.optimize();
      EXPECT_LT(report.nodes_after, report.nodes_before);
    }
    g.finalize();
    const std::vector<Tensor> out = g.run(io_.inputs);
    ASSERT_FALSE(io_.outputs.empty());
    ASSERT_EQ(out.size(), io_.outputs.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      EXPECT_EQ(out[i].shape(), io_.outputs[i].shape()) << "output " << i;
      EXPECT_LE(max_relative_error(out[i], io_.outputs[i]), 1e-4) << "output " << i;
    }
  }
}

TEST_P(ExportedProgramTest, RunsAsTheTorchScriptFileOfTheSameModel) {
  const std::string torchscript = facts_["torchscript"].get<std::string>();
  TorchScriptOptions options;
  options.example_inputs = io_.inputs;
  TracedGraph from_ts = load(tracegraph::testing::model_path(torchscript + ".ts"), options);
  TracedGraph from_export = load_it();
  from_ts.finalize();
  from_export.finalize();
  const auto a = from_ts.run(io_.inputs);
  const auto b = from_export.run(io_.inputs);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_LE(max_relative_error(b[i], a[i]), 1e-4) << "output " << i;
  const auto ts_act = output_activation(from_ts.graph());
  const auto export_act = output_activation(from_export.graph());
  ASSERT_EQ(ts_act.size(), export_act.size());
  for (std::size_t i = 0; i < ts_act.size(); ++i) EXPECT_EQ(export_act[i].str(), ts_act[i].str()) << "output " << i;
}

INSTANTIATE_TEST_SUITE_P(Exported, ExportedProgramTest, ::testing::ValuesIn(tracegraph::testing::kExportedPrograms),
                         [](const auto& info) { return info.param; });

TEST(ExportedProgramIndexTest, EveryProgramTheScriptWritesIsTested) {
  std::ifstream in(std::string(TRACEGRAPH_EXPORTED_DIR) + "/exported_programs.json");
  ASSERT_TRUE(in) << "run the make_exported_programs fixture";
  auto index = nlohmann::json::parse(in).get<std::vector<std::string>>();
  auto tested = tracegraph::testing::kExportedPrograms;
  std::sort(tested.begin(), tested.end());
  EXPECT_EQ(index, tested);
}

}  // namespace
}  // namespace tracegraph::native
