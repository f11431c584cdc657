// The TorchScript test models made by tests/models/make_test_models.py (run
// as the ctest fixture make_test_models) and their expected facts.
#pragma once

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "tracegraph/file_io.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/safetensors.h"

namespace tracegraph::testing {

// Every model the script makes that the reader must read.
inline const std::vector<std::string> kReadableModels = {
    "mobilenet_v2_scripted", "mobilenet_v2_traced", "resnet18_scripted", "resnet18_traced",
    "unet2d", "unet3d_clamp", "unet3d_dict_out", "unet3d_eval_sigmoid", "unet3d_hardtanh",
    "unet3d_none", "unet3d_sigmoid_inplace", "unet3d_sigmoid_inplace_scripted", "unet3d_sigmoid_scripted",
    "unet3d_sigmoid_traced", "unet3d_softmax", "unet3d_tanh", "unet3d_tuple_out", "unet3d_two_heads",
};
// And those it must refuse.
inline const std::vector<std::string> kRefusedModels = {"branch_on_values", "loop_on_values", "write_through_view"};

inline std::string model_path(const std::string& file) { return std::string(TRACEGRAPH_MODELS_DIR) + "/" + file; }

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

inline ModelIo model_io(const std::string& model) {
  const std::string path = model_path(model + ".io.safetensors");
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

// max |got - want| / max |want|, in double precision on the CPU.
inline double max_relative_error(const at::Tensor& got, const at::Tensor& want) {
  const at::Tensor g = got.to(at::kCPU).to(at::kDouble);
  const at::Tensor w = want.to(at::kCPU).to(at::kDouble);
  if (g.sizes() != w.sizes()) return INFINITY;
  const double scale = std::max(w.abs().max().item<double>(), 1e-12);
  return (g - w).abs().max().item<double>() / scale;
}
inline double max_relative_error(const Tensor& got, const Tensor& want) {
  return max_relative_error(native::to_aten(got), native::to_aten(want));
}

}  // namespace tracegraph::testing
