// Fuzzes parse_npy: any bytes must give a tensor or a tracegraph::Error.
#include <cstddef>
#include <cstdint>

#include "tracegraph/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tracegraph::LoadLimits limits;
  limits.max_tensor_bytes = 1 << 20;
  try {
    const tracegraph::Tensor t = tracegraph::parse_npy({reinterpret_cast<const std::byte*>(data), size}, "fuzz.npy", limits);
    volatile std::uint8_t sink = 0;
    for (std::byte b : t.bytes()) sink = sink ^ static_cast<std::uint8_t>(b);
  } catch (const tracegraph::Error&) {
  }
  return 0;
}
