// The module tree: a graph's nodes grouped by the module whose forward made
// them (Node::module), as a viewer folds them: each group with its node count,
// parameters and FLOPs (its own nodes and every group below it), its children,
// and which of its siblings it repeats (24 identical transformer blocks: the
// first one, and 23 that repeat it).
//
// Deterministic: the same graph gives the same tree, groups in the same order
// (a group's children in the order of their first node).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracegraph/graph.h"

namespace tracegraph {

struct ModuleGroup {
  ModuleId module;                    // invalid for the root
  std::string path;                   // "" for the root
  std::string type;                   // "" for the root
  std::optional<std::size_t> parent;  // index into ModuleTree::groups; nullopt for the root
  std::vector<std::size_t> children;  // indexes, in the order of their first node
  std::vector<NodeId> nodes;          // the nodes whose innermost module this is, in graph order
  std::size_t node_count = 0;         // nodes here and in every group below
  // Elements of the constants (weights, buffers, lifted tensors) the nodes
  // here and below read, each constant counted once per group.
  std::int64_t parameters = 0;
  double flops = 0;  // node_flops summed here and below (nodes it does not count add 0)
  // The computation, hashed: the class, and each node here and below in
  // order with its op, attributes, shapes, dtypes, the group below it sits
  // in (by its path relative to this one) and where its inputs come from
  // (which earlier node of the group, or from outside). Equal signatures:
  // the same computation on the same shapes.
  std::uint64_t signature = 0;
  // The first earlier sibling with the same signature; nullopt for a group
  // that repeats none.
  std::optional<std::size_t> repeat_of;
  // On a group that repeats none: how many siblings share its signature,
  // itself included (24 for the first of 24 identical blocks); 1 otherwise.
  std::size_t repeats = 1;
};

struct ModuleTree {
  std::vector<ModuleGroup> groups;  // groups[0] is the root: the whole graph
  // The group of each module id (index into groups); no entry for a module
  // no live node is in or below.
  std::optional<std::size_t> group_of(ModuleId module) const;
  std::vector<std::size_t> group_of_module;  // by module index; SIZE_MAX: none
};

ModuleTree module_tree(const Graph& graph);

// {"groups": [{"path", "type", "parent", "children", "nodes" (names),
// "node_count", "parameters", "flops", "signature" (16 hex digits),
// "repeat_of", "repeats"}]}: parent and repeat_of null where none.
std::string module_tree_json(const Graph& graph, const ModuleTree& tree, int indent = -1);

}  // namespace tracegraph
