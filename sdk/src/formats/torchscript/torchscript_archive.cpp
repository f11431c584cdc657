#include "tracegraph/torchscript_archive.h"

#include <memory>
#include <string>

#include "formats/torchscript/reader.h"
#include "tracegraph/error.h"
#include "tracegraph/file_io.h"
#include "tracegraph/zip_archive.h"

// The entry points. The reader itself is three stages, each in its own
// files: lexer (lines, tokens), parser (expressions), reader (the
// interpreter; reader.h lists its parts).
namespace tracegraph {

ExportedGraph read_torchscript_archive(std::span<const std::byte> bytes, std::shared_ptr<const void> owner, std::string_view source,
                                       const LoadLimits& limits, const std::vector<Shape>& input_shapes) {
  const ZipArchive zip = ZipArchive::open(bytes, std::move(owner), std::string(source), limits);
  return torchscript::Reader(zip, limits, input_shapes).read();
}

ExportedGraph load_torchscript_archive(const std::string& path, const LoadLimits& limits, const std::vector<Shape>& input_shapes) {
  auto bytes = read_file_bytes(path, limits.max_file_bytes);
  const std::span<const std::byte> view(bytes->data(), bytes->size());
  return read_torchscript_archive(view, std::move(bytes), path, limits, input_shapes);
}

bool is_torchscript_archive(std::span<const std::byte> bytes) {
  if (!looks_like_zip(bytes)) return false;
  try {
    const ZipArchive zip = ZipArchive::open(bytes, nullptr, "archive");
    bool data = false, code = false;
    for (const ZipEntry& e : zip.entries()) {
      const std::string_view rest = name_in_root(e.name);
      data = data || rest == "data.pkl";
      code = code || rest.substr(0, 5) == "code/";
    }
    return data && code;
  } catch (const Error&) {
  }
  return false;
}

}  // namespace tracegraph
