#include "tracegraph/module_tree.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include "support/json_util.h"
#include "tracegraph/flops.h"

namespace tracegraph {

namespace {

constexpr std::size_t kNone = SIZE_MAX;

// FNV-1a, 64 bits, over the bytes fed to it in a fixed order (little-endian
// integers): the same graph hashes the same on every platform.
class Hasher {
 public:
  void byte(std::uint8_t b) {
    h_ ^= b;
    h_ *= 0x100000001b3ull;
  }
  void u64(std::uint64_t x) {
    for (int i = 0; i < 8; ++i) byte(static_cast<std::uint8_t>(x >> (8 * i)));
  }
  void i64(std::int64_t x) { u64(static_cast<std::uint64_t>(x)); }
  void f64(double x) {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);  // (libc++ 14 has no std::bit_cast)
    u64(bits);
  }
  void str(std::string_view s) {
    u64(s.size());
    for (char c : s) byte(static_cast<std::uint8_t>(c));
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

void hash_type(Hasher& h, const Value& v) {
  h.i64(v.dtype ? static_cast<std::int64_t>(*v.dtype) : -1);
  if (!v.shape) {
    h.i64(-1);
    return;
  }
  h.u64(v.shape->size());
  for (const Dim& d : *v.shape) {
    h.i64(d.size);
    h.str(d.symbol);
  }
}

void hash_attribute(Hasher& h, const AttributeValue& value) {
  h.u64(value.index());
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          h.i64(x);
        } else if constexpr (std::is_same_v<T, double>) {
          h.f64(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          h.byte(x ? 1 : 0);
        } else if constexpr (std::is_same_v<T, std::string>) {
          h.str(x);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          h.i64(static_cast<std::int64_t>(x.dtype()));  // its type, not its data: the weights differ from block to block
          for (std::int64_t d : x.shape()) h.i64(d);
        } else {
          h.u64(x.size());
          for (const auto& e : x) {
            using E = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<E, std::string>) h.str(e);
            else if constexpr (std::is_same_v<E, double>) h.f64(e);
            else h.i64(static_cast<std::int64_t>(e));
          }
        }
      },
      value);
}

std::optional<std::size_t> group_index(const std::vector<std::size_t>& of_module, ModuleId m) {
  if (!m.valid() || m.index >= of_module.size() || of_module[m.index] == kNone) return std::nullopt;
  return of_module[m.index];
}

}  // namespace

std::optional<std::size_t> ModuleTree::group_of(ModuleId module) const { return group_index(group_of_module, module); }

ModuleTree module_tree(const Graph& graph) {
  ModuleTree tree;
  tree.groups.emplace_back();  // the root
  tree.group_of_module.assign(graph.num_modules(), kNone);

  // The group of a node's module, made with the groups above it the first
  // time a node of it is seen: parents come before their children, and
  // children in the order of their first node.
  auto group_for = [&](ModuleId m) -> std::size_t {
    std::vector<ModuleId> missing;
    ModuleId at = m;
    while (at.valid() && tree.group_of_module[at.index] == kNone) {
      missing.push_back(at);
      at = graph.module(at).parent;
    }
    std::size_t parent = at.valid() ? tree.group_of_module[at.index] : 0;
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      const Module& mod = graph.module(*it);
      ModuleGroup g;
      g.module = *it;
      g.path = mod.path;
      g.type = mod.type;
      g.parent = parent;
      const std::size_t index = tree.groups.size();
      tree.groups[parent].children.push_back(index);
      tree.groups.push_back(std::move(g));
      tree.group_of_module[it->index] = index;
      parent = index;
    }
    return m.valid() ? tree.group_of_module[m.index] : 0;
  };

  // Each group's nodes, its own and below, in graph order.
  std::vector<std::vector<NodeId>> all;
  for (NodeId id : graph.nodes()) {
    const std::size_t g = group_for(graph.node(id).module);
    tree.groups[g].nodes.push_back(id);
    all.resize(tree.groups.size());
    for (std::optional<std::size_t> at = g; at; at = tree.groups[*at].parent) all[*at].push_back(id);
  }
  all.resize(tree.groups.size());

  std::uint32_t max_node = 0;
  for (NodeId id : graph.nodes()) max_node = std::max(max_node, id.index + 1);
  std::vector<std::size_t> local(max_node, kNone);  // a node's place in the group being hashed
  std::vector<double> node_flops_of(max_node, 0);
  for (NodeId id : graph.nodes()) node_flops_of[id.index] = node_flops(graph, id).value_or(0);

  for (std::size_t gi = 0; gi < tree.groups.size(); ++gi) {
    ModuleGroup& group = tree.groups[gi];
    const std::vector<NodeId>& nodes = all[gi];
    group.node_count = nodes.size();
    std::vector<std::uint32_t> constants;
    for (NodeId id : nodes) {
      group.flops += node_flops_of[id.index];
      for (ValueId v : graph.node(id).inputs) {
        if (graph.value(v).is_constant()) constants.push_back(v.index);
      }
    }
    std::sort(constants.begin(), constants.end());
    constants.erase(std::unique(constants.begin(), constants.end()), constants.end());
    for (std::uint32_t c : constants) group.parameters += graph.value(ValueId(c)).data.numel();

    Hasher h;
    h.str(group.type);
    h.u64(nodes.size());
    for (std::size_t k = 0; k < nodes.size(); ++k) local[nodes[k].index] = k;
    const std::string prefix = group.path.empty() ? "" : group.path + ".";
    for (NodeId id : nodes) {
      const Node& n = graph.node(id);
      h.str(n.op);
      // Where in the group it sits: the module path below the group.
      for (ModuleId m = n.module; m.valid() && m != group.module; m = graph.module(m).parent) {
        const Module& mod = graph.module(m);
        h.str(mod.path.starts_with(prefix) ? std::string_view(mod.path).substr(prefix.size()) : std::string_view(mod.path));
        h.str(mod.type);
      }
      h.byte(0xff);
      h.u64(n.attributes.size());
      for (const auto& [name, value] : n.attributes) {
        h.str(name);
        hash_attribute(h, value);
      }
      h.u64(n.inputs.size());
      for (ValueId in : n.inputs) {
        const Value& v = graph.value(in);
        if (v.producer && local[v.producer->index] != kNone) {
          h.byte(1);  // made in the group: by which node, which output
          h.u64(local[v.producer->index]);
          h.u64(v.producer_output);
        } else {
          h.byte(v.is_constant() ? 2 : 3);
        }
        hash_type(h, v);
      }
      h.u64(n.outputs.size());
      for (ValueId out : n.outputs) hash_type(h, graph.value(out));
    }
    for (NodeId id : nodes) local[id.index] = kNone;
    group.signature = h.value();
  }

  // Repeats: among each group's children, those with the signature of an earlier one.
  for (ModuleGroup& parent : tree.groups) {
    std::map<std::uint64_t, std::size_t> first;
    for (std::size_t c : parent.children) {
      auto [it, inserted] = first.emplace(tree.groups[c].signature, c);
      if (inserted) continue;
      tree.groups[c].repeat_of = it->second;
      ++tree.groups[it->second].repeats;
    }
  }
  return tree;
}

std::string module_tree_json(const Graph& graph, const ModuleTree& tree, int indent) {
  using detail::Json;
  Json groups = Json::array();
  for (const ModuleGroup& g : tree.groups) {
    Json j = Json::object();
    j["path"] = g.path;
    j["type"] = g.type;
    j["parent"] = g.parent ? Json(*g.parent) : Json(nullptr);
    j["children"] = g.children;
    Json nodes = Json::array();
    for (NodeId id : g.nodes) nodes.push_back(graph.node(id).name);
    j["nodes"] = std::move(nodes);
    j["node_count"] = g.node_count;
    j["parameters"] = g.parameters;
    j["flops"] = g.flops;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(g.signature));
    j["signature"] = hex;
    j["repeat_of"] = g.repeat_of ? Json(*g.repeat_of) : Json(nullptr);
    j["repeats"] = g.repeats;
    groups.push_back(std::move(j));
  }
  Json doc = Json::object();
  doc["groups"] = std::move(groups);
  return doc.dump(indent);
}

}  // namespace tracegraph
