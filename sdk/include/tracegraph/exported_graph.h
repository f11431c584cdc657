// The exported format: one JSON document (schema version, graph, tree specs,
// metadata) and a safetensors file of weights beside it. docs/format.md
// describes it precisely enough to write a reader in another language.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/graph.h"
#include "tracegraph/load_limits.h"
#include "tracegraph/tree_spec.h"

namespace tracegraph {

inline constexpr int kSchemaVersion = 1;

struct ExportedGraph {
  Graph graph;
  std::optional<TreeSpec> in_spec;   // nullopt when the graph was made from a signature alone
  std::optional<TreeSpec> out_spec;  // nullopt: the outputs are a flat tuple
  std::map<std::string, std::string> metadata;
};

struct SerializedGraph {
  std::string json;
  std::vector<std::byte> weights;  // a safetensors file
};

// The graph is verified first. Values are written in a canonical order (graph
// inputs, constants, then node outputs in node order), so loading what was
// written and writing it again gives the same bytes.
SerializedGraph serialize_graph(const ExportedGraph& graph, std::string_view weights_file_name);

// The document serialize_graph writes, without making the weights file (its
// "weights" is ""): what a viewer needs to show a graph.
std::string graph_json(const ExportedGraph& graph, int indent = -1);

// Reads a document and its weights. `json_source` and `weights_source` name
// them in errors. Every id, size, offset, dtype and shape is checked before
// use; errors name the JSON pointer or byte offset.
ExportedGraph deserialize_graph(std::string_view json, std::span<const std::byte> weights,
                                std::shared_ptr<const void> weights_owner, std::string_view json_source,
                                std::string_view weights_source, const LoadLimits& limits = {});

// Writes `json_path` and the weights beside it (same stem, ".safetensors").
void save_graph(const ExportedGraph& graph, const std::string& json_path);
// Reads `json_path` and the weights file it names (a plain file name in the
// same directory).
ExportedGraph load_graph(const std::string& json_path, const LoadLimits& limits = {});

}  // namespace tracegraph
