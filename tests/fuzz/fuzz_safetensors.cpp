// Fuzzes parse_safetensors: any bytes must give tensors or a tracegraph::Error.
#include <cstddef>
#include <cstdint>

#include "tracegraph/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tracegraph::LoadLimits limits;
  limits.max_tensor_bytes = 1 << 20;
  try {
    auto st = tracegraph::parse_safetensors({reinterpret_cast<const std::byte*>(data), size}, nullptr, "fuzz.safetensors", limits);
    // Touch every byte the parser handed out: a bad view shows up under ASan.
    volatile std::uint8_t sink = 0;
    for (const auto& [name, t] : st.tensors) {
      for (std::byte b : t.bytes()) sink = sink ^ static_cast<std::uint8_t>(b);
    }
  } catch (const tracegraph::Error&) {
  }
  return 0;
}
