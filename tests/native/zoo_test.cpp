// The real-model zoo (tests/models/make_zoo_models.py): torchvision's
// architectures and the UNets people build, traced and scripted, made by real
// PyTorch with seeded weights. Each is read with its example input, names the
// activation it was built with, and runs on the LibTorch backend within 1e-4
// of the module's own forward, as read and optimized.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/script.h>

#include <chrono>
#include <fstream>
#include <set>

#include "test_models.h"
#include "zoo_models.h"
#include "tracegraph/activation.h"
#include "tracegraph/error.h"
#include "tracegraph/geometry.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/module_graph.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/traced_graph.h"

namespace tracegraph {
namespace {

using testing::max_relative_error;

#ifndef TRACEGRAPH_ZOO_LARGE
const std::vector<std::string>& kZoo = testing::kZooSmall;
const char* const kSet = "small";
#else
const std::vector<std::string>& kZoo = testing::kZooLarge;
const char* const kSet = "large";
#endif

using testing::read_json;
using testing::zoo_path;

// The lists above are the script's: a model added there is tested here.
TEST(Zoo, ListsMatchTheScript) {
  const nlohmann::json index = read_json(zoo_path("index.json"));
  EXPECT_EQ(std::set<std::string>(kZoo.begin(), kZoo.end()), index[kSet].get<std::set<std::string>>());
}

class ZooModel : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooModel, ReadsNamesItsActivationAndRunsOnLibTorch) {
  const std::string name = GetParam();
  const nlohmann::json facts = read_json(zoo_path(name + ".expected.json"));
  const testing::ModelIo io = testing::read_model_io(zoo_path(name + ".io.safetensors"));
  native::TorchScriptOptions options;
  options.example_inputs = io.inputs;

  const auto start = std::chrono::steady_clock::now();
  ExportedGraph read = native::read_torchscript(zoo_path(name + ".ts"), options);
  const double read_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("[zoo] %s: %zu nodes, read in %.0f ms, %lld parameters\n", name.c_str(), read.graph.num_nodes(), read_ms,
              static_cast<long long>(facts["parameters"].get<std::int64_t>()));

  const auto activations = output_activation(read.graph);
  testing::expect_activations(activations, facts["activation"]);
  for (std::size_t i = 0; i < activations.size() && i < facts["activation"].size(); ++i) {
    const auto& want = facts["activation"][i];
    EXPECT_EQ(activations[i].after, want.value("after", std::vector<std::string>{})) << activations[i].str();
  }
  // The JSON views read every argument with its kind (list arguments are lists).
  EXPECT_NO_THROW(module_graph_json(module_graph(read.graph)));
  EXPECT_NO_THROW(output_activation_json(activations));
  ASSERT_TRUE(read.out_spec.has_value());
  EXPECT_EQ(read.out_spec->to_json(), facts["out_spec"].get<std::string>());

  for (bool optimized : {false, true}) {
    SCOPED_TRACE(optimized ? "optimized" : "as read");
    TracedGraph g = TracedGraph::from_exported(read, native::make_libtorch_backend());
    if (optimized) {
      g.optimize();
      // The optimizer keeps what the model applies last.
      const auto after = output_activation(g.graph());
      ASSERT_EQ(after.size(), activations.size());
      for (std::size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i].str(), activations[i].str());
    }
    g.finalize();
    const std::vector<Tensor> out = g.run(io.inputs);
    ASSERT_EQ(out.size(), io.outputs.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      EXPECT_LE(max_relative_error(out[i], io.outputs[i]), 1e-4) << "output " << i;
    }
  }
}

// The tensors of a forward's result (a tensor, or tuples, lists and dicts of them), in order.
void flatten_outputs(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) out.push_back(v.toTensor());
  else if (v.isTuple()) for (const auto& e : v.toTupleRef().elements()) flatten_outputs(e, out);
  else if (v.isList()) for (const auto& e : v.toListRef()) flatten_outputs(e, out);
  else if (v.isGenericDict()) for (const auto& kv : v.toGenericDict()) flatten_outputs(kv.value(), out);
}

// The geometry read from the graph says, for input sizes other than the
// example's, the output sizes the module's own forward gives: along each
// known axis, the next two accepted sizes above the example's, one axis at a
// time (the others as in the example).
TEST_P(ZooModel, ItsGeometryGivesTheOutputSizesLibTorchGivesAtOtherSizes) {
  const std::string name = GetParam();
  const testing::ModelIo io = testing::read_model_io(zoo_path(name + ".io.safetensors"));
  native::TorchScriptOptions options;
  options.example_inputs = io.inputs;
  const ExportedGraph read = native::read_torchscript(zoo_path(name + ".ts"), options);
  // A graph specialized to the example's sizes holds for those only.
  if (read.metadata.count("specialized_to_input_shapes")) return;
  torch::jit::Module module = native::load_torchscript_module(zoo_path(name + ".ts"));
  module.eval();
  const Graph& g = read.graph;
  auto position = [](const std::vector<ValueId>& ids, const Graph& graph, const std::string& value) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (graph.value(ids[i]).name == value) return i;
    }
    return ids.size();
  };
  int checked = 0;
  for (const OutputGeometry& o : network_geometry(g)) {
    const std::size_t in = position(g.inputs(), g, o.input), out = position(g.outputs(), g, o.output);
    ASSERT_LT(in, io.inputs.size()) << o.input;
    for (const AxisGeometry& a : o.axes) {
      if (!a.known()) continue;  // a nonlocal op keeps the sizes: checked too
      const std::int64_t example = io.inputs[in].shape()[static_cast<std::size_t>(a.dim)];
      int sizes = 0;
      for (std::int64_t n = example + 1; n <= example + 64 && sizes < 2; ++n) {
        const auto want = a.output_size(n);
        if (!want) continue;
        ++sizes;
        SCOPED_TRACE(o.output + " from " + o.input + ", dim " + std::to_string(a.dim) + ", n = " + std::to_string(n) + ": " + a.str());
        std::vector<c10::IValue> args;
        for (std::size_t k = 0; k < io.inputs.size(); ++k) {
          at::Tensor t = native::to_aten(io.inputs[k]);
          if (k == in) {
            std::vector<std::int64_t> shape = t.sizes().vec();
            shape[static_cast<std::size_t>(a.dim)] = n;
            t = at::randn(shape, t.options());
          }
          args.emplace_back(t);
        }
        c10::InferenceMode inference;
        std::vector<at::Tensor> outputs;
        flatten_outputs(module.forward(args), outputs);
        ASSERT_LT(out, outputs.size());
        EXPECT_EQ(outputs[out].size(a.dim), *want);
        ++checked;
      }
    }
  }
  std::printf("[zoo] %s: geometry checked against LibTorch at %d sizes\n", name.c_str(), checked);
}

#ifndef TRACEGRAPH_ZOO_LARGE
// A scripted UNet's F.interpolate loops over the input's dims: without example
// inputs the reader cannot unroll it, and says what would.
TEST(Zoo, ShapeDependentLoopsNeedExampleInputs) {
  try {
    native::read_torchscript(zoo_path("unet3d_in_gelu_trilinear_sigmoid_scripted.ts"));
    FAIL() << "read without example inputs";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("prim::Loop"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--input-shape resolve it"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(".py:"), std::string::npos) << "names the source line: " << e.what();
  }
  // With only a signature (shapes, no data) it reads, and the loops are gone.
  native::TorchScriptOptions options;
  options.signature = {{DType::kFloat32, {1, 1, 24, 24, 24}}};
  const ExportedGraph g = native::read_torchscript(zoo_path("unet3d_in_gelu_trilinear_sigmoid_scripted.ts"), options);
  EXPECT_EQ(output_activation(g.graph)[0].str(), "sigmoid");
  // Only the rank was needed: the graph holds for other sizes too.
  EXPECT_EQ(g.metadata.count("specialized_to_input_shapes"), 0u);
}
#endif

INSTANTIATE_TEST_SUITE_P(Zoo, ZooModel, ::testing::ValuesIn(kZoo),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace tracegraph
