// The TorchScript test models made by tests/models/make_test_models.py (run
// as the ctest fixture make_test_models) and their expected facts.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "tracegraph/activation.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/file_io.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/pt2.h"
#include "tracegraph/safetensors.h"

namespace tracegraph::testing {

// Every model the script makes that the reader must read.
inline const std::vector<std::string> kReadableModels = {
    "mobilenet_v2_scripted", "mobilenet_v2_traced", "resnet18_scripted", "resnet18_traced",
    "unet2d", "unet3d_clamp", "unet3d_dict_out", "unet3d_eval_sigmoid", "unet3d_hardtanh",
    "unet3d_none", "unet3d_sigmoid_inplace", "unet3d_sigmoid_inplace_scripted", "unet3d_sigmoid_scripted",
    "unet3d_sigmoid_traced", "unet3d_softmax", "unet3d_tanh", "unet3d_tuple_out", "unet3d_two_heads", "detection_head_scripted",
    "unet2d_list_skips_scripted",
    // The same models saved by torch 1.13 (make_test_models.py --old): the older file format.
    "mobilenet_v2_scripted_torch113", "resnet18_traced_torch113", "unet2d_torch113", "unet3d_dict_out_torch113",
    "unet3d_sigmoid_scripted_torch113", "unet3d_sigmoid_traced_torch113", "unet2d_list_skips_scripted_torch113",
};
// And those it must refuse.
inline const std::vector<std::string> kRefusedModels = {"branch_on_values", "loop_on_values", "write_through_view"};

inline std::string model_path(const std::string& file) { return std::string(TRACEGRAPH_MODELS_DIR) + "/" + file; }

#ifdef TRACEGRAPH_EXPORTED_DIR
// The models tests/models/make_exported_models.py writes with the Python
// exporter: torch.export programs (_export) and fx traces (_fx) of test models.
inline const std::vector<std::string> kExportedPrograms = {
    "mobilenet_v2_export",   "resnet18_export",       "unet2d_export",          "unet2d_fx",
    "unet3d_clamp_export",   "unet3d_dict_out_export", "unet3d_dict_out_fx",    "unet3d_sigmoid_export",
    "unet3d_sigmoid_fx",     "unet3d_softmax_export", "unet3d_two_heads_export",
};
// DIR/NAME/NAME.json, .io.safetensors, .expected.json
inline std::string exported_path(const std::string& name, const std::string& suffix) {
  return std::string(TRACEGRAPH_EXPORTED_DIR) + "/" + name + "/" + name + suffix;
}
// What the Python exporter wrote for one of kExportedPrograms, as its facts
// name it: NAME.pt2 (a torch.export program, read by the core's .pt2 reader)
// or NAME.json (an fx trace in the exported format).
inline ExportedGraph read_exported_program(const std::string& name) {
  std::ifstream in(exported_path(name, ".expected.json"));
  if (!in) throw std::runtime_error("missing " + exported_path(name, ".expected.json") + ": run the make_exported_programs fixture");
  const std::string file = std::string(TRACEGRAPH_EXPORTED_DIR) + "/" + name + "/" + nlohmann::json::parse(in).at("file").get<std::string>();
  return file.ends_with(".pt2") ? load_pt2(file) : load_graph(file);
}
#endif

inline nlohmann::json expected(const std::string& model) {
  std::ifstream in(model_path(model + ".expected.json"));
  if (!in) throw std::runtime_error("missing " + model_path(model + ".expected.json") + ": run the make_test_models fixture");
  return nlohmann::json::parse(in);
}

// The seeded inputs ("input.N") and LibTorch's outputs ("output.N") of a model.
struct ModelIo {
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};

inline ModelIo read_model_io(const std::string& path) {
  auto bytes = read_file_bytes(path, 1ull << 32);
  Safetensors st = parse_safetensors(*bytes, bytes, path);
  ModelIo io;
  for (int i = 0;; ++i) {
    const Tensor* t = st.find("input." + std::to_string(i));
    if (!t) break;
    io.inputs.push_back(*t);
  }
  for (int i = 0;; ++i) {
    const Tensor* t = st.find("output." + std::to_string(i));
    if (!t) break;
    io.outputs.push_back(*t);
  }
  return io;
}

inline ModelIo model_io(const std::string& model) { return read_model_io(model_path(model + ".io.safetensors")); }

// Each output's activation is the one the facts file says the model was built with.
inline void expect_activations(const std::vector<Activation>& got, const nlohmann::json& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i) + ": " + got[i].str());
    EXPECT_EQ(activation_kind_name(got[i].kind), want[i]["kind"].get<std::string>());
    if (want[i].contains("dim")) {
      EXPECT_EQ(got[i].dim, want[i]["dim"].get<std::int64_t>());
    }
    if (want[i].contains("min")) {
      EXPECT_EQ(got[i].min, want[i]["min"].get<double>());
    }
    if (want[i].contains("max")) {
      EXPECT_EQ(got[i].max, want[i]["max"].get<double>());
    }
    if (want[i].contains("channels")) {
      ASSERT_EQ(got[i].channels.size(), want[i]["channels"].size());
      for (std::size_t c = 0; c < got[i].channels.size(); ++c) {
        EXPECT_EQ(got[i].channels[c].begin, want[i]["channels"][c]["begin"].get<std::int64_t>());
        EXPECT_EQ(got[i].channels[c].end, want[i]["channels"][c]["end"].get<std::int64_t>());
        EXPECT_EQ(activation_kind_name(got[i].channels[c].kind), want[i]["channels"][c]["kind"].get<std::string>());
      }
    }
  }
}

// max |got - want| / max |want|, in double precision on the CPU.
// The largest |got - want| over the largest finite |want|; a NaN or an
// infinity matches only itself (torch's NaN where torch gives one is right).
inline double max_relative_error(const at::Tensor& got, const at::Tensor& want) {
  if (got.is_complex() != want.is_complex()) return INFINITY;
  // Complex tensors as their (real, imaginary) pairs.
  auto pairs = [](const at::Tensor& t) { return (t.is_complex() ? at::view_as_real(t.resolve_conj()) : t).to(at::kCPU).to(at::kDouble); };
  const at::Tensor g = pairs(got);
  const at::Tensor w = pairs(want);
  if (g.sizes() != w.sizes()) return INFINITY;
  if (g.numel() == 0) return 0;
  const at::Tensor same = (g == w) | (g.isnan() & w.isnan());
  const at::Tensor diff = at::where(same, at::zeros_like(g), (g - w).abs().nan_to_num(INFINITY, INFINITY, INFINITY));
  const at::Tensor finite = w.isfinite();
  const double scale = std::max(finite.any().item<bool>() ? w.masked_select(finite).abs().max().item<double>() : 0.0, 1e-12);
  return diff.max().item<double>() / scale;
}
inline double max_relative_error(const Tensor& got, const Tensor& want) {
  return max_relative_error(native::to_aten(got), native::to_aten(want));
}

}  // namespace tracegraph::testing
