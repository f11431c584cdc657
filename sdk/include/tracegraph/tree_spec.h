// Tree specs: the structure of nested values (PyTorch's pytrees).
//
// A TreeSpec is the shape of a nested value with its leaves taken out: a leaf,
// None, a tuple, a list, a dict with insertion-ordered string keys, or a named
// tuple. Tree<L> is a nested value whose leaves are L (tensors, say).
// flatten() takes a Tree apart into its leaves (depth first, left to right, as
// torch.utils._pytree.tree_flatten does) and its TreeSpec; unflatten() puts it
// back together. TreeSpec reads and writes the JSON of PyTorch's
// treespec_dumps (protocol 1), so specs travel both ways.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracegraph/error.h"

namespace tracegraph {

enum class TreeKind { kLeaf, kNone, kTuple, kList, kDict, kNamedTuple };
std::string_view tree_kind_name(TreeKind kind);

class TreeSpec {
 public:
  // A leaf.
  TreeSpec() = default;
  static TreeSpec leaf() { return {}; }
  static TreeSpec none();
  static TreeSpec tuple(std::vector<TreeSpec> children);
  static TreeSpec list(std::vector<TreeSpec> children);
  // Keys are unique (kInvalidArgument otherwise); order is kept.
  static TreeSpec dict(std::vector<std::pair<std::string, TreeSpec>> items);
  // `type_name` is the registered name PyTorch serializes ("mymodule.Point");
  // `fields` may be empty when not known (a spec read from PyTorch 2.3+ JSON).
  static TreeSpec named_tuple(std::string type_name, std::vector<std::string> fields, std::vector<TreeSpec> children);

  TreeKind kind() const { return kind_; }
  bool is_leaf() const { return kind_ == TreeKind::kLeaf; }
  const std::vector<TreeSpec>& children() const { return children_; }
  // Dict keys, or a named tuple's field names.
  const std::vector<std::string>& keys() const { return keys_; }
  const std::string& type_name() const { return type_name_; }
  std::size_t num_leaves() const { return num_leaves_; }

  friend bool operator==(const TreeSpec& a, const TreeSpec& b);

  // treespec_dumps(spec) of PyTorch, byte for byte: "[1, {"type": ...}]".
  std::string to_json() const;
  // treespec_loads. kParse, kSchema, kUnsupportedVersion or kLimitExceeded
  // (nesting deeper than max_depth), each naming the JSON pointer.
  static TreeSpec from_json(std::string_view json, std::size_t max_depth = 256);
  // A short readable form: "(*, {'x': *})", "[*, None]", "Point(x=*, y=*)".
  std::string str() const;

 private:
  TreeKind kind_ = TreeKind::kLeaf;
  std::vector<TreeSpec> children_;
  std::vector<std::string> keys_;
  std::string type_name_;
  std::size_t num_leaves_ = 1;

  void count_leaves();
};

// Path to a place inside a structure, written as "[0]['x']".
std::string tree_path_str(const std::vector<std::string>& path);

template <class L>
class Tree {
 public:
  Tree(L leaf) : kind_(TreeKind::kLeaf), leaf_(std::move(leaf)) {}
  static Tree none() { return Tree(TreeKind::kNone); }
  static Tree tuple(std::vector<Tree> children) { return Tree(TreeKind::kTuple, std::move(children)); }
  static Tree list(std::vector<Tree> children) { return Tree(TreeKind::kList, std::move(children)); }
  static Tree dict(std::vector<std::pair<std::string, Tree>> items) {
    Tree t(TreeKind::kDict);
    for (auto& [k, v] : items) {
      t.keys_.push_back(std::move(k));
      t.children_.push_back(std::move(v));
    }
    return t;
  }
  static Tree named_tuple(std::string type_name, std::vector<std::string> fields, std::vector<Tree> children) {
    Tree t(TreeKind::kNamedTuple, std::move(children));
    t.type_name_ = std::move(type_name);
    t.keys_ = std::move(fields);
    return t;
  }

  TreeKind kind() const { return kind_; }
  bool is_leaf() const { return kind_ == TreeKind::kLeaf; }
  const L& leaf() const {
    if (!leaf_) fail(ErrorCode::kInvalidArgument, "Tree::leaf() on a " + std::string(tree_kind_name(kind_)));
    return *leaf_;
  }
  const std::vector<Tree>& children() const { return children_; }
  const std::vector<std::string>& keys() const { return keys_; }
  const std::string& type_name() const { return type_name_; }
  // The child under a dict key; kNotFound when absent.
  const Tree& at(std::string_view key) const {
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] == key) return children_[i];
    }
    fail(ErrorCode::kNotFound, "no key '" + std::string(key) + "' in this " + std::string(tree_kind_name(kind_)));
  }

 private:
  explicit Tree(TreeKind kind, std::vector<Tree> children = {}) : kind_(kind), children_(std::move(children)) {}

  TreeKind kind_;
  std::optional<L> leaf_;
  std::vector<Tree> children_;
  std::vector<std::string> keys_;
  std::string type_name_;
};

namespace detail {

template <class L>
TreeSpec flatten_into(const Tree<L>& tree, std::vector<L>& leaves) {
  std::vector<TreeSpec> children;
  children.reserve(tree.children().size());
  for (const auto& c : tree.children()) children.push_back(flatten_into(c, leaves));
  switch (tree.kind()) {
    case TreeKind::kLeaf:
      leaves.push_back(tree.leaf());
      return TreeSpec::leaf();
    case TreeKind::kNone: return TreeSpec::none();
    case TreeKind::kTuple: return TreeSpec::tuple(std::move(children));
    case TreeKind::kList: return TreeSpec::list(std::move(children));
    case TreeKind::kDict: {
      std::vector<std::pair<std::string, TreeSpec>> items;
      for (std::size_t i = 0; i < children.size(); ++i) items.emplace_back(tree.keys()[i], std::move(children[i]));
      return TreeSpec::dict(std::move(items));
    }
    case TreeKind::kNamedTuple: return TreeSpec::named_tuple(tree.type_name(), tree.keys(), std::move(children));
  }
  fail(ErrorCode::kInternal, "flatten: unknown tree kind");
}

template <class L>
Tree<L> unflatten_from(const TreeSpec& spec, std::vector<L>& leaves, std::size_t& next) {
  std::vector<Tree<L>> children;
  for (const auto& c : spec.children()) children.push_back(unflatten_from(c, leaves, next));
  switch (spec.kind()) {
    case TreeKind::kLeaf: return Tree<L>(std::move(leaves[next++]));
    case TreeKind::kNone: return Tree<L>::none();
    case TreeKind::kTuple: return Tree<L>::tuple(std::move(children));
    case TreeKind::kList: return Tree<L>::list(std::move(children));
    case TreeKind::kDict: {
      std::vector<std::pair<std::string, Tree<L>>> items;
      for (std::size_t i = 0; i < children.size(); ++i) items.emplace_back(spec.keys()[i], std::move(children[i]));
      return Tree<L>::dict(std::move(items));
    }
    case TreeKind::kNamedTuple: return Tree<L>::named_tuple(spec.type_name(), spec.keys(), std::move(children));
  }
  fail(ErrorCode::kInternal, "unflatten: unknown tree kind");
}

// Throws kTreeSpecMismatch naming the first place where tree and spec differ.
template <class L>
void match_at(const TreeSpec& spec, const Tree<L>& tree, std::vector<std::string>& path) {
  auto mismatch = [&](const std::string& what) {
    fail(ErrorCode::kTreeSpecMismatch, "at " + tree_path_str(path) + ": " + what);
  };
  if (spec.kind() != tree.kind()) {
    mismatch("expected a " + std::string(tree_kind_name(spec.kind())) + ", got a " +
             std::string(tree_kind_name(tree.kind())));
  }
  if (spec.children().size() != tree.children().size()) {
    mismatch("expected " + std::to_string(spec.children().size()) + " children, got " +
             std::to_string(tree.children().size()));
  }
  if (spec.kind() == TreeKind::kNamedTuple && spec.type_name() != tree.type_name()) {
    mismatch("expected named tuple " + spec.type_name() + ", got " + tree.type_name());
  }
  if (spec.kind() == TreeKind::kDict && spec.keys() != tree.keys()) {
    std::string want, got;
    for (const auto& k : spec.keys()) want += (want.empty() ? "'" : ", '") + k + "'";
    for (const auto& k : tree.keys()) got += (got.empty() ? "'" : ", '") + k + "'";
    mismatch("expected dict keys {" + want + "}, got {" + got + "}");
  }
  for (std::size_t i = 0; i < spec.children().size(); ++i) {
    path.push_back(spec.kind() == TreeKind::kDict ? "'" + spec.keys()[i] + "'" : std::to_string(i));
    match_at(spec.children()[i], tree.children()[i], path);
    path.pop_back();
  }
}

}  // namespace detail

// Leaves in order, and the structure around them.
template <class L>
std::pair<std::vector<L>, TreeSpec> flatten(const Tree<L>& tree) {
  std::vector<L> leaves;
  TreeSpec spec = detail::flatten_into(tree, leaves);
  return {std::move(leaves), std::move(spec)};
}

// The structure of `spec` with `leaves` put in; kTreeSpecMismatch when the
// count differs from spec.num_leaves().
template <class L>
Tree<L> unflatten(const TreeSpec& spec, std::vector<L> leaves) {
  if (leaves.size() != spec.num_leaves()) {
    fail(ErrorCode::kTreeSpecMismatch, "unflatten: the spec " + spec.str() + " has " +
                                           std::to_string(spec.num_leaves()) + " leaves, given " +
                                           std::to_string(leaves.size()));
  }
  std::size_t next = 0;
  return detail::unflatten_from(spec, leaves, next);
}

// Checks that `tree` has the structure `spec` describes; kTreeSpecMismatch
// naming the path ("[0]['x']") of the first difference.
template <class L>
void match(const TreeSpec& spec, const Tree<L>& tree) {
  std::vector<std::string> path;
  detail::match_at(spec, tree, path);
}

}  // namespace tracegraph
