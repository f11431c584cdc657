// Fuzzes the zip reader: any bytes must give entries whose every byte can be
// read (stored views, deflated streams inflated to their declared size) or a
// tracegraph::Error.
#include <cstddef>
#include <cstdint>

#include "tracegraph/error.h"
#include "tracegraph/zip_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tracegraph::LoadLimits limits;
  limits.max_file_bytes = 16 << 20;
  limits.max_archive_entries = 4096;
  try {
    const auto zip = tracegraph::ZipArchive::open({reinterpret_cast<const std::byte*>(data), size}, nullptr, "fuzz.zip", limits);
    volatile std::uint8_t sink = 0;
    for (const auto& e : zip.entries()) {
      try {
        const auto d = zip.read(e);
        for (std::byte b : d.bytes) sink = sink ^ static_cast<std::uint8_t>(b);
      } catch (const tracegraph::Error&) {
      }
    }
  } catch (const tracegraph::Error&) {
  }
  return 0;
}
