// Reading torch.export archives (`.pt2`, what torch.export.save writes) in the
// core: no Python, no LibTorch, the same code natively and in wasm.
//
// What is read: the zip archive (zip_archive.h), the PT2 archive layout
// (`archive_format`, `models/<name>.json`, the weights and constants configs
// and their raw storage files), the serialized program's graph (its
// `schema_version` checked), every argument kind the graph schema has that a
// tensor program uses, the graph signature (parameters, buffers, tensor
// constants become the graph's constants; user inputs and outputs its inputs
// and outputs) and the module call graph's in/out tree specs. Both IRs read:
// the one torch.export.export gives (aten.conv2d, aten.linear, ...) and core
// ATen after run_decompositions().
//
// How the program maps onto the graph model (docs/format.md, "Read from a
// .pt2 archive"): a node's op is its target without "torch.ops."
// ("aten.conv2d.default"); tensor arguments are inputs named in `arg_names`,
// the others attributes named after the schema argument, as the TorchScript
// reader writes them. A symbolic size (torch.export.Dim) stays a symbol in
// the input's shape ("s77"); a size the graph computes (aten.sym_size.int) is
// a value, and a list of sizes that holds one is a prim::ListConstruct.
// Nodes that produce nothing (aten._assert_tensor_metadata, _assert_scalar,
// sym_constrain_range_for_size) are checks torch ran while tracing: dropped,
// and counted in the metadata's "dropped_checks".
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "tracegraph/exported_graph.h"
#include "tracegraph/load_limits.h"

namespace tracegraph {

// The graph schema majors this reader knows (torch.export's serializer
// writes its SCHEMA_VERSION as {"major", "minor"}); another major is
// kUnsupportedVersion.
inline constexpr int kPt2SchemaMajor = 8;

struct Pt2Options {
  // Which of the archive's models (models/<name>.json); empty: "model", or
  // the only one there is.
  std::string model_name;
};

// Reads a .pt2 archive held in memory. Weights stored contiguously are views
// into `bytes` (kept alive by `owner`); strided ones are copied. Errors name
// `source`, the archive entry and the JSON pointer or byte offset.
ExportedGraph read_pt2(std::span<const std::byte> bytes, std::shared_ptr<const void> owner, std::string_view source,
                       const Pt2Options& options = {}, const LoadLimits& limits = {});
ExportedGraph load_pt2(const std::string& path, const Pt2Options& options = {}, const LoadLimits& limits = {});

// True for a zip archive that holds a torch.export program (an
// `archive_format` of "pt2", or the older `serialized_exported_program.json`).
bool is_pt2_archive(std::span<const std::byte> bytes);
// The same for a file (false when it cannot be read).
bool is_pt2_file(const std::string& path);

}  // namespace tracegraph
