// Fuzzes the .pt2 reader over the zip reader: any bytes must give a verified
// graph whose constants' bytes can all be read, or a tracegraph::Error.
#include <cstddef>
#include <cstdint>

#include "touch.h"
#include "tracegraph/pt2.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tracegraph::LoadLimits limits;
  limits.max_file_bytes = 16 << 20;
  limits.max_tensor_bytes = 1 << 20;
  limits.max_archive_entries = 4096;
  limits.max_nodes = 1 << 12;
  try {
    const auto eg = tracegraph::read_pt2({reinterpret_cast<const std::byte*>(data), size}, nullptr, "fuzz.pt2", {}, limits);
    verify_and_touch(eg);
  } catch (const tracegraph::Error&) {
  }
  return 0;
}
