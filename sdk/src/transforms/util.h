// Helpers shared by the transforms (not public).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tracegraph/graph.h"
#include "tracegraph/op_table.h"

namespace tracegraph::transforms {

// The canonical op name of a node, or "" when the table does not know it.
inline std::string canonical_name(const Node& n) {
  auto c = canonical_op(n);
  return c ? c->name : std::string();
}

// The data input of a unary-like op: "self" or "input", else the first input.
inline std::optional<ValueId> data_input(const Node& n) {
  if (auto v = input_for_arg(n, "self", 0)) return v;
  if (auto v = input_for_arg(n, "input", 0)) return v;
  return std::nullopt;
}

inline bool is_graph_output(const Graph& g, ValueId v) {
  for (ValueId o : g.outputs()) {
    if (o == v) return true;
  }
  return false;
}

// A fully static shape, or nullopt.
inline std::optional<Shape> static_shape(const Value& v) {
  if (!v.shape) return std::nullopt;
  Shape s;
  for (const Dim& d : *v.shape) {
    if (!d.is_static()) return std::nullopt;
    s.push_back(d.size);
  }
  return s;
}

// Ops whose result differs from call to call (training dropout, random
// sampling): never folded or merged.
inline bool is_random(const Node& n) {
  if (canonical_name(n) == "dropout") return n.attributes.get_bool("train").value_or(true);
  return n.op.find("rand") != std::string::npos || n.op.find("bernoulli") != std::string::npos ||
         n.op.find("normal") != std::string::npos || n.op.find("uniform") != std::string::npos;
}

// The value of a 0-d (or one-element) numeric constant.
std::optional<double> scalar_constant(const Graph& g, ValueId v);

// Replaces every read of `node`'s first output by `replacement`, then erases
// the node if nothing reads its outputs any more.
void bypass(Graph& g, NodeId node, ValueId replacement);

}  // namespace tracegraph::transforms
