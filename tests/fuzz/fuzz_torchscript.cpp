// Fuzzes the TorchScript archive reader (the zip reader, the unpickler, the
// code reader and the inliner): any bytes must give a verified graph whose
// constants' bytes can all be read, or a tracegraph::Error.
#include <cstddef>
#include <cstdint>

#include "touch.h"
#include "tracegraph/error.h"
#include "tracegraph/torchscript_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tracegraph::LoadLimits limits;
  limits.max_file_bytes = 16 << 20;
  limits.max_tensor_bytes = 1 << 20;
  limits.max_archive_entries = 4096;
  limits.max_pickle_ops = 1 << 16;
  // A statement costs ~150 us under ASan + UBSan: the default (2^17) would
  // pass libFuzzer's 10 s timeout on a loop of loops.
  limits.max_statements = 1 << 14;
  try {
    const auto eg = tracegraph::read_torchscript_archive({reinterpret_cast<const std::byte*>(data), size}, nullptr, "fuzz.ts", limits);
    verify_and_touch(eg);
  } catch (const tracegraph::Error&) {
  }
  return 0;
}
