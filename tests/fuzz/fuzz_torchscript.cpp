// Fuzzes the TorchScript archive reader (the zip reader, the unpickler, the
// code reader and the inliner): any bytes must give a verified graph whose
// constants' bytes can all be read, or a tracegraph::Error.
#include <cstddef>
#include <cstdint>

#include "tracegraph/error.h"
#include "tracegraph/torchscript_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tracegraph::LoadLimits limits;
  limits.max_file_bytes = 16 << 20;
  limits.max_tensor_bytes = 1 << 20;
  limits.max_archive_entries = 4096;
  limits.max_pickle_ops = 1 << 16;
  try {
    const auto eg = tracegraph::read_torchscript_archive({reinterpret_cast<const std::byte*>(data), size}, nullptr, "fuzz.ts", limits);
    eg.graph.verify();
    volatile std::uint8_t sink = 0;
    for (auto v : eg.graph.constants()) {
      for (std::byte b : eg.graph.value(v).data.bytes()) sink = sink ^ static_cast<std::uint8_t>(b);
    }
  } catch (const tracegraph::Error&) {
  }
  return 0;
}
