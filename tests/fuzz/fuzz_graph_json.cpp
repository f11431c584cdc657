// Fuzzes deserialize_graph's JSON side against a fixed, valid weights file
// (the one tests/data/valid/small.json uses): any text must give a graph or a
// tracegraph::Error, and a graph that loads must serialize again.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "tracegraph/exported_graph.h"
#include "tracegraph/safetensors.h"

namespace {
const std::vector<std::byte>& weights() {
  static const std::vector<std::byte> bytes = [] {
    const float w[4] = {1.0f, -2.0f, 3.0f, 0.5f};
    return tracegraph::write_safetensors({{"w", tracegraph::Tensor::borrow(const_cast<float*>(w), sizeof w, tracegraph::DType::kFloat32, {4}).clone()}});
  }();
  return bytes;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tracegraph::LoadLimits limits;
  limits.max_nodes = 4096;
  limits.max_values = 4096;
  try {
    auto g = tracegraph::deserialize_graph({reinterpret_cast<const char*>(data), size}, weights(), nullptr, "fuzz.json",
                                           "good.safetensors", limits);
    tracegraph::serialize_graph(g, "good.safetensors");
  } catch (const tracegraph::Error&) {
  }
  return 0;
}
