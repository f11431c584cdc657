#include "tracegraph/file_io.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "tracegraph/error.h"

namespace tracegraph {

std::shared_ptr<std::vector<std::byte>> read_file_bytes(const std::string& path, std::uint64_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(ErrorCode::kIo, path + ": is a directory, not a file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail(ErrorCode::kIo, path + ": cannot read: " + ec.message());
  if (size > max_bytes) {
    fail(ErrorCode::kLimitExceeded, path + ": " + std::to_string(size) + " bytes is over the limit of " +
                                        std::to_string(max_bytes) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorCode::kIo, path + ": cannot open for reading");
  auto bytes = std::make_shared<std::vector<std::byte>>(static_cast<std::size_t>(size));
  in.read(reinterpret_cast<char*>(bytes->data()), static_cast<std::streamsize>(size));
  if (static_cast<std::uint64_t>(in.gcount()) != size) {
    fail(ErrorCode::kIo, path + ": read " + std::to_string(in.gcount()) + " of " + std::to_string(size) + " bytes");
  }
  return bytes;
}

std::string read_text_file(const std::string& path, std::uint64_t max_bytes) {
  auto bytes = read_file_bytes(path, max_bytes);
  return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

void write_file_bytes(const std::string& path, std::span<const std::byte> bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(ErrorCode::kIo, path + ": cannot open for writing");
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      fail(ErrorCode::kIo, path + ": write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    fail(ErrorCode::kIo, path + ": cannot move the written file into place: " + ec.message());
  }
}

}  // namespace tracegraph
