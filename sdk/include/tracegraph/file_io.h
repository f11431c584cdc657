// Whole-file reads and writes with typed errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tracegraph {

// Reads a whole file; kIo when it cannot be opened or read, kLimitExceeded
// (before reading) when it is larger than `max_bytes`.
std::shared_ptr<std::vector<std::byte>> read_file_bytes(const std::string& path, std::uint64_t max_bytes);
std::string read_text_file(const std::string& path, std::uint64_t max_bytes);
// Writes through a temporary file renamed into place, so a failed write never
// leaves a half-written file under `path`.
void write_file_bytes(const std::string& path, std::span<const std::byte> bytes);

}  // namespace tracegraph
