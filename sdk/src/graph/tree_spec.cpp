#include "tracegraph/tree_spec.h"

#include <set>

#include "support/json_util.h"

namespace tracegraph {

using detail::Json;
using detail::JsonPlace;

std::string_view tree_kind_name(TreeKind kind) {
  switch (kind) {
    case TreeKind::kLeaf: return "leaf";
    case TreeKind::kNone: return "None";
    case TreeKind::kTuple: return "tuple";
    case TreeKind::kList: return "list";
    case TreeKind::kDict: return "dict";
    case TreeKind::kNamedTuple: return "named tuple";
  }
  return "unknown";
}

std::string tree_path_str(const std::vector<std::string>& path) {
  if (path.empty()) return "the root";
  std::string s;
  for (const auto& p : path) s += "[" + p + "]";
  return s;
}

void TreeSpec::count_leaves() {
  if (kind_ == TreeKind::kLeaf) {
    num_leaves_ = 1;
    return;
  }
  num_leaves_ = 0;
  for (const auto& c : children_) num_leaves_ += c.num_leaves_;
}

TreeSpec TreeSpec::none() {
  TreeSpec s;
  s.kind_ = TreeKind::kNone;
  s.count_leaves();
  return s;
}

TreeSpec TreeSpec::tuple(std::vector<TreeSpec> children) {
  TreeSpec s;
  s.kind_ = TreeKind::kTuple;
  s.children_ = std::move(children);
  s.count_leaves();
  return s;
}

TreeSpec TreeSpec::list(std::vector<TreeSpec> children) {
  TreeSpec s = tuple(std::move(children));
  s.kind_ = TreeKind::kList;
  return s;
}

TreeSpec TreeSpec::dict(std::vector<std::pair<std::string, TreeSpec>> items) {
  TreeSpec s;
  s.kind_ = TreeKind::kDict;
  std::set<std::string> seen;
  for (auto& [k, v] : items) {
    if (!seen.insert(k).second) fail(ErrorCode::kInvalidArgument, "dict spec: key '" + k + "' given twice");
    s.keys_.push_back(std::move(k));
    s.children_.push_back(std::move(v));
  }
  s.count_leaves();
  return s;
}

TreeSpec TreeSpec::named_tuple(std::string type_name, std::vector<std::string> fields, std::vector<TreeSpec> children) {
  if (!fields.empty() && fields.size() != children.size()) {
    fail(ErrorCode::kInvalidArgument, "named tuple " + type_name + ": " + std::to_string(fields.size()) +
                                          " fields for " + std::to_string(children.size()) + " children");
  }
  TreeSpec s = tuple(std::move(children));
  s.kind_ = TreeKind::kNamedTuple;
  s.type_name_ = std::move(type_name);
  s.keys_ = std::move(fields);
  return s;
}

bool operator==(const TreeSpec& a, const TreeSpec& b) {
  return a.kind_ == b.kind_ && a.type_name_ == b.type_name_ && a.keys_ == b.keys_ && a.children_ == b.children_;
}

// ---- JSON ----------------------------------------------------------------------

namespace {

constexpr int kProtocol = 1;

// The JSON text of one node, formatted as Python's json.dumps formats the
// dict {"type": ..., "context": ..., "children_spec": [...]}.
void dump_node(const TreeSpec& s, std::string& out) {
  std::string type = "null";
  std::string context = "null";  // a JSON string holding JSON, or null for a leaf
  switch (s.kind()) {
    case TreeKind::kLeaf: break;
    case TreeKind::kNone:
      type = "\"builtins.NoneType\"";
      context = detail::py_json_quote("null");
      break;
    case TreeKind::kTuple:
      type = "\"builtins.tuple\"";
      context = detail::py_json_quote("null");
      break;
    case TreeKind::kList:
      type = "\"builtins.list\"";
      context = detail::py_json_quote("null");
      break;
    case TreeKind::kDict: {
      type = "\"builtins.dict\"";
      std::string keys = "[";
      for (std::size_t i = 0; i < s.keys().size(); ++i) keys += (i ? ", " : "") + detail::py_json_quote(s.keys()[i]);
      context = detail::py_json_quote(keys + "]");
      break;
    }
    case TreeKind::kNamedTuple:
      type = "\"collections.namedtuple\"";
      context = detail::py_json_quote(detail::py_json_quote(s.type_name()));
      break;
  }
  out += "{\"type\": " + type + ", \"context\": " + context + ", \"children_spec\": [";
  for (std::size_t i = 0; i < s.children().size(); ++i) {
    if (i) out += ", ";
    dump_node(s.children()[i], out);
  }
  out += "]}";
}

std::vector<std::string> read_key_list(const Json& ctx, const JsonPlace& place) {
  detail::expect_array(ctx, place);
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < ctx.size(); ++i) {
    if (!ctx[i].is_string()) {
      place.fail_with(ErrorCode::kUnsupported, "dict key " + std::to_string(i) + " is a " + detail::json_type(ctx[i]) +
                                                   "; only string keys are supported");
    }
    keys.push_back(ctx[i].get<std::string>());
  }
  return keys;
}

TreeSpec load_node(const Json& j, const JsonPlace& place, std::size_t depth, std::size_t max_depth) {
  if (depth > max_depth) place.fail_with(ErrorCode::kLimitExceeded, "tree spec nests deeper than " + std::to_string(max_depth));
  detail::expect_object(j, place);
  const Json& type = detail::member(j, "type", place);
  const Json& context = detail::member(j, "context", place);
  const JsonPlace children_place = place.at("children_spec");
  const Json& children_json = detail::expect_array(detail::member(j, "children_spec", place), children_place);
  std::vector<TreeSpec> children;
  for (std::size_t i = 0; i < children_json.size(); ++i) {
    children.push_back(load_node(children_json[i], children_place.at(i), depth + 1, max_depth));
  }
  if (type.is_null()) {
    if (!children.empty()) place.fail_with(ErrorCode::kSchema, "a leaf (type null) has children");
    return TreeSpec::leaf();
  }
  const std::string type_name = detail::expect_string(type, place.at("type"));
  // The context is a JSON document inside a JSON string (or null).
  Json ctx;
  if (!context.is_null()) {
    const std::string text = detail::expect_string(context, place.at("context"));
    ctx = detail::parse_json(text, place.at("context").str(), {.max_depth = max_depth});
  }
  const JsonPlace ctx_place = place.at("context");
  if (type_name == "builtins.tuple") return TreeSpec::tuple(std::move(children));
  if (type_name == "builtins.list") return TreeSpec::list(std::move(children));
  if (type_name == "builtins.NoneType") {
    if (!children.empty()) place.fail_with(ErrorCode::kSchema, "None has children");
    return TreeSpec::none();
  }
  if (type_name == "builtins.dict" || type_name == "collections.OrderedDict") {
    std::vector<std::string> keys = read_key_list(ctx, ctx_place);
    if (keys.size() != children.size()) {
      place.fail_with(ErrorCode::kSchema, std::to_string(keys.size()) + " dict keys for " + std::to_string(children.size()) + " children");
    }
    std::vector<std::pair<std::string, TreeSpec>> items;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!seen.insert(keys[i]).second) ctx_place.fail_with(ErrorCode::kDuplicateName, "dict key '" + keys[i] + "' appears twice");
      items.emplace_back(std::move(keys[i]), std::move(children[i]));
    }
    return TreeSpec::dict(std::move(items));
  }
  if (type_name == "collections.namedtuple") {
    // PyTorch 2.3+ writes the registered type name; 2.0-2.2 wrote {"class_name", "fields"}.
    if (ctx.is_string()) return TreeSpec::named_tuple(ctx.get<std::string>(), {}, std::move(children));
    const std::string cls = detail::expect_string(detail::member(ctx, "class_name", ctx_place), ctx_place.at("class_name"));
    std::vector<std::string> fields = read_key_list(detail::member(ctx, "fields", ctx_place), ctx_place.at("fields"));
    if (fields.size() != children.size()) {
      place.fail_with(ErrorCode::kSchema, std::to_string(fields.size()) + " named tuple fields for " + std::to_string(children.size()) + " children");
    }
    return TreeSpec::named_tuple(cls, std::move(fields), std::move(children));
  }
  place.fail_with(ErrorCode::kUnsupported, "pytree type '" + type_name + "' is not one of tuple, list, dict, namedtuple, None");
}

}  // namespace

std::string TreeSpec::to_json() const {
  std::string out = "[" + std::to_string(kProtocol) + ", ";
  dump_node(*this, out);
  return out + "]";
}

TreeSpec TreeSpec::from_json(std::string_view text, std::size_t max_depth) {
  const Json doc = detail::parse_json(text, "tree spec", {.max_depth = max_depth * 2 + 4});
  const JsonPlace place{"tree spec", ""};
  detail::expect_array(doc, place);
  if (doc.size() != 2) place.fail_with(ErrorCode::kSchema, "expected [protocol, spec], found an array of " + std::to_string(doc.size()));
  const std::int64_t protocol = detail::expect_int(doc[0], place.at(0));
  if (protocol != kProtocol) {
    place.at(0).fail_with(ErrorCode::kUnsupportedVersion, "tree spec protocol " + std::to_string(protocol) + " (this build reads protocol 1)");
  }
  return load_node(doc[1], place.at(1), 0, max_depth);
}

std::string TreeSpec::str() const {
  auto join = [&](const std::string& open, const std::string& close, bool with_keys, bool quote) {
    std::string s = open;
    for (std::size_t i = 0; i < children_.size(); ++i) {
      if (i) s += ", ";
      if (with_keys && i < keys_.size()) s += (quote ? "'" + keys_[i] + "': " : keys_[i] + "=");
      s += children_[i].str();
    }
    return s + close;
  };
  switch (kind_) {
    case TreeKind::kLeaf: return "*";
    case TreeKind::kNone: return "None";
    case TreeKind::kTuple: return join("(", children_.size() == 1 ? ",)" : ")", false, false);
    case TreeKind::kList: return join("[", "]", false, false);
    case TreeKind::kDict: return join("{", "}", true, true);
    case TreeKind::kNamedTuple: return join(type_name_ + "(", ")", true, false);
  }
  return "?";
}

}  // namespace tracegraph
