// The real-model zoo (tests/models/make_zoo_models.py): torchvision's
// architectures and the UNets people build, traced and scripted, made by real
// PyTorch with seeded weights. Each is read with its example input, names the
// activation it was built with, and runs on the LibTorch backend within 1e-4
// of the module's own forward, as read and optimized.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <set>

#include "test_models.h"
#include "tracegraph/activation.h"
#include "tracegraph/error.h"
#include "tracegraph/module_graph.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/traced_graph.h"

namespace tracegraph {
namespace {

using testing::max_relative_error;

// The zoo, by set (the large one, over ~30M parameters, has its own ctest label).
const std::vector<std::string> kSmall = {
    "resnet18", "resnet50", "resnext50_32x4d", "densenet121", "squeezenet1_0", "squeezenet1_1", "inception_v3",
    "googlenet", "shufflenet_v2_x0_5", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large", "mnasnet0_5",
    "efficientnet_b0", "efficientnet_v2_s", "regnet_x_400mf", "regnet_y_400mf", "convnext_tiny", "swin_t",
    "vit_small_traced", "swin_small_traced", "resnet18_scripted", "mobilenet_v3_small_scripted",
    "shufflenet_v2_x0_5_scripted", "efficientnet_b0_scripted", "mnasnet0_5_scripted",
    "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large", "mc3_18",
    "unet2d_bn_relu_nearest_sigmoid_traced", "unet2d_bn_relu_nearest_sigmoid_scripted",
    "unet2d_gn_leaky_bilinear_softmax_traced", "unet2d_gn_leaky_bilinear_softmax_scripted",
    "unet2d_in_prelu_transposed_reflect_tanh_traced", "unet2d_in_prelu_transposed_reflect_tanh_scripted",
    "unet2d_elu_replicate_clamp_traced", "unet2d_elu_replicate_clamp_scripted", "unet2d_valid_gelu_cat_traced",
    "unet2d_valid_gelu_cat_scripted", "unet3d_in_gelu_trilinear_sigmoid_traced",
    "unet3d_in_gelu_trilinear_sigmoid_scripted", "unet3d_bn_silu_nearest_dict_traced",
    "unet3d_bn_silu_nearest_dict_scripted", "unet3d_valid_relu_transposed_none_traced",
    "unet3d_valid_relu_transposed_none_scripted", "unet3d_sigmoid_then_trilinear_traced",
    "unet3d_sigmoid_then_trilinear_scripted", "unet1d_bn_relu_linear_sigmoid_traced",
    "unet1d_bn_relu_linear_sigmoid_scripted", "seg_logits_bilinear", "seg_sigmoid_bilinear_aligned",
    "sigmoid_then_pool", "sigmoid_then_bicubic", "write_through_slice_scripted", "write_through_slice_traced",
    "conv1d_net_traced", "conv1d_net_scripted",
    "channel_mean_head_scripted",
};
const std::vector<std::string> kLarge = {
    "alexnet", "vgg11", "vgg11_bn", "wide_resnet50_2", "vit_b_16", "maxvit_t",
    "fcn_resnet50", "deeplabv3_resnet50", "r3d_18", "r2plus1d_18",
};

#ifndef TRACEGRAPH_ZOO_LARGE
const std::vector<std::string>& kZoo = kSmall;
const char* const kSet = "small";
#else
const std::vector<std::string>& kZoo = kLarge;
const char* const kSet = "large";
#endif

std::string zoo_path(const std::string& file) { return std::string(TRACEGRAPH_ZOO_DIR) + "/" + file; }

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing " + path + ": run the make_zoo fixture");
  return nlohmann::json::parse(in);
}

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
