// `tracegraph inspect`: a model as read, for people: its size, inputs,
// outputs with their activation, op counts, nodes in order and constants.
#pragma once

#include <string>

#include "tracegraph/exported_graph.h"

namespace tracegraph::cli {

void inspect_text(const ExportedGraph& graph, const std::string& model);

}  // namespace tracegraph::cli
