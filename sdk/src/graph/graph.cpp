#include "tracegraph/graph.h"

#include <algorithm>
#include <iterator>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace tracegraph {

SymbolicShape symbolic(const Shape& shape) {
  SymbolicShape out;
  out.reserve(shape.size());
  for (auto d : shape) out.push_back(Dim::of(d));
  return out;
}

std::string shape_str(const SymbolicShape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].is_static() ? std::to_string(shape[i].size) : shape[i].symbol;
  }
  return s + "]";
}

std::string module_class_name(std::string_view q) {
  if (q.starts_with("<class '")) q.remove_prefix(8);
  if (q.ends_with("'>")) q.remove_suffix(2);
  if (const auto dot = q.rfind('.'); dot != std::string_view::npos) q.remove_prefix(dot + 1);
  return std::string(q);
}

// ---- attributes -------------------------------------------------------------

bool attribute_equal(const AttributeValue& a, const AttributeValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* ta = std::get_if<Tensor>(&a)) return ta->equal(std::get<Tensor>(b));
  // NaN attributes (a fill value, say) equal themselves here.
  auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  if (const auto* da = std::get_if<double>(&a)) return same(*da, std::get<double>(b));
  if (const auto* va = std::get_if<std::vector<double>>(&a)) {
    const auto& vb = std::get<std::vector<double>>(b);
    return va->size() == vb.size() && std::equal(va->begin(), va->end(), vb.begin(), same);
  }
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          return false;  // handled above
        } else {
          return x == std::get<T>(b);
        }
      },
      a);
}

std::string_view attribute_kind(const AttributeValue& value) {
  static constexpr std::string_view kNames[] = {"int",  "float",  "bool",  "string", "ints",
                                                "floats", "bools", "strings", "tensor"};
  return kNames[value.index()];
}

void Attributes::set(std::string name, AttributeValue value) {
  for (auto& [n, v] : entries_) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(name), std::move(value));
}

bool Attributes::erase(std::string_view name) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.first == name; });
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

const AttributeValue* Attributes::find(std::string_view name) const {
  for (const auto& [n, v] : entries_) {
    if (n == name) return &v;
  }
  return nullptr;
}

namespace {
template <class T>
std::optional<T> get_as(const Attributes& attrs, std::string_view name, std::string_view want) {
  const AttributeValue* v = attrs.find(name);
  if (!v) return std::nullopt;
  if (const T* t = std::get_if<T>(v)) return *t;
  fail(ErrorCode::kSchema, "attribute '" + std::string(name) + "' is " + std::string(attribute_kind(*v)) +
                               ", read as " + std::string(want));
}
}  // namespace

std::optional<std::int64_t> Attributes::get_int(std::string_view name) const {
  return get_as<std::int64_t>(*this, name, "int");
}
std::optional<double> Attributes::get_float(std::string_view name) const {
  const AttributeValue* v = find(name);
  if (v && std::holds_alternative<std::int64_t>(*v)) return static_cast<double>(std::get<std::int64_t>(*v));
  return get_as<double>(*this, name, "float");
}
std::optional<bool> Attributes::get_bool(std::string_view name) const { return get_as<bool>(*this, name, "bool"); }
std::optional<std::string> Attributes::get_string(std::string_view name) const {
  return get_as<std::string>(*this, name, "string");
}
std::optional<std::vector<std::int64_t>> Attributes::get_ints(std::string_view name) const {
  return get_as<std::vector<std::int64_t>>(*this, name, "ints");
}

bool operator==(const Attributes& a, const Attributes& b) {
  if (a.entries_.size() != b.entries_.size()) return false;
  for (std::size_t i = 0; i < a.entries_.size(); ++i) {
    if (a.entries_[i].first != b.entries_[i].first) return false;
    if (!attribute_equal(a.entries_[i].second, b.entries_[i].second)) return false;
  }
  return true;
}

// ---- graph: building ----------------------------------------------------------

std::string Graph::describe(ValueId id) const {
  if (id.index < values_.size()) return "value %" + values_[id.index].name;
  return "value id " + std::to_string(id.index);
}

std::string Graph::describe(NodeId id) const {
  if (id.index < nodes_.size()) return "node '" + nodes_[id.index].name + "' (" + nodes_[id.index].op + ")";
  return "node id " + std::to_string(id.index);
}

bool Graph::is_live(ValueId id) const { return id.index < values_.size() && value_live_[id.index]; }
bool Graph::is_live(NodeId id) const { return id.index < nodes_.size() && node_live_[id.index]; }

const Value& Graph::value(ValueId id) const {
  if (!is_live(id)) fail(ErrorCode::kDanglingId, describe(id) + " is not a live value of graph " + name_);
  return values_[id.index];
}

const Node& Graph::node(NodeId id) const {
  if (!is_live(id)) fail(ErrorCode::kDanglingId, describe(id) + " is not a live node of graph " + name_);
  return nodes_[id.index];
}

Value& Graph::value_mut(ValueId id) { return const_cast<Value&>(value(id)); }
Node& Graph::node_mut(NodeId id) { return const_cast<Node&>(node(id)); }

std::string Graph::unique_value_name(std::string_view base) const {
  std::string name(base.empty() ? "v" : base);
  if (!value_by_name_.count(name)) return name;
  std::size_t& next = next_suffix_[name];
  for (next = std::max<std::size_t>(next, 1);; ++next) {
    std::string candidate = name + "." + std::to_string(next);
    if (!value_by_name_.count(candidate)) return candidate;  // not taken yet: `next` stays, the invariant holds
  }
}

void Graph::value_name_freed(const std::string& name) {
  // "base.k" with k as std::to_string writes it: a name unique_value_name
  // may hand out again.
  const auto dot = name.rfind('.');
  if (dot == std::string::npos || dot + 1 >= name.size() || name.size() - dot - 1 > 18 || name[dot + 1] == '0') return;
  std::size_t k = 0;
  for (std::size_t i = dot + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return;
    k = k * 10 + static_cast<std::size_t>(name[i] - '0');
  }
  if (auto it = next_suffix_.find(name.substr(0, dot)); it != next_suffix_.end() && k < it->second) it->second = k;
}

ValueId Graph::new_value(std::string name, std::optional<DType> dtype, std::optional<SymbolicShape> shape) {
  if (name.empty()) name = unique_value_name("v" + std::to_string(values_.size()));
  if (value_by_name_.count(name)) {
    fail(ErrorCode::kDuplicateName, "graph " + name_ + " already has a value named %" + name);
  }
  ValueId id(static_cast<std::uint32_t>(values_.size()));
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = std::move(shape);
  values_.push_back(std::move(v));
  value_live_.push_back(true);
  value_by_name_.emplace(std::move(name), id);
  return id;
}

ValueId Graph::add_input(std::string name, std::optional<DType> dtype, std::optional<SymbolicShape> shape) {
  ValueId id = new_value(std::move(name), dtype, std::move(shape));
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_constant(std::string name, Tensor data) {
  if (!data.defined()) fail(ErrorCode::kInvalidArgument, "constant %" + name + " needs a defined tensor");
  ValueId id = new_value(std::move(name), data.dtype(), symbolic(data.shape()));
  values_[id.index].data = std::move(data);
  return id;
}

NodeId Graph::add_node(std::string op, std::vector<ValueId> inputs, std::vector<NewValue> outputs,
                       Attributes attributes, std::string name, std::optional<NodeId> before) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!is_live(inputs[i])) {
      fail(ErrorCode::kDanglingId, "add_node " + op + ": input " + std::to_string(i) + " is " +
                                       describe(inputs[i]) + ", not a live value");
    }
  }
  std::size_t insert_at = order_.size();
  if (before) insert_at = position(*before);
  if (name.empty()) {
    std::string base = op.substr(op.rfind(':') == std::string::npos ? 0 : op.rfind(':') + 1);
    while (base.size() > 1 && base.back() == '_') base.pop_back();
    name = base + "_" + std::to_string(nodes_.size());
    for (std::size_t i = 1; node_by_name_.count(name); ++i) name = base + "_" + std::to_string(nodes_.size()) + "." + std::to_string(i);
  }
  if (node_by_name_.count(name)) fail(ErrorCode::kDuplicateName, "graph " + name_ + " already has a node named '" + name + "'");
  // Check all output names before creating anything, so a failure leaves the graph unchanged.
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].name.empty() && value_by_name_.count(outputs[i].name)) {
      fail(ErrorCode::kDuplicateName, "add_node " + op + ": graph " + name_ + " already has a value named %" + outputs[i].name);
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (!outputs[i].name.empty() && outputs[i].name == outputs[j].name) {
        fail(ErrorCode::kDuplicateName, "add_node " + op + ": output name %" + outputs[i].name + " given twice");
      }
    }
  }

  NodeId id(static_cast<std::uint32_t>(nodes_.size()));
  Node n;
  n.name = name;
  n.op = std::move(op);
  n.attributes = std::move(attributes);
  n.inputs = std::move(inputs);
  for (std::uint32_t i = 0; i < n.inputs.size(); ++i) values_[n.inputs[i].index].users.push_back(Use{id, i});
  for (std::uint32_t i = 0; i < outputs.size(); ++i) {
    ValueId out = new_value(std::move(outputs[i].name), outputs[i].dtype, std::move(outputs[i].shape));
    values_[out.index].producer = id;
    values_[out.index].producer_output = i;
    n.outputs.push_back(out);
  }
  nodes_.push_back(std::move(n));
  node_live_.push_back(true);
  node_by_name_.emplace(std::move(name), id);
  order_.insert(order_.begin() + static_cast<std::ptrdiff_t>(insert_at), id);
  return id;
}

void Graph::set_outputs(std::vector<ValueId> outputs) {
  for (auto v : outputs) value(v);  // checks liveness
  outputs_ = std::move(outputs);
}

void Graph::add_output(ValueId v) {
  value(v);
  outputs_.push_back(v);
}

// ---- graph: reading ---------------------------------------------------------------

std::vector<std::string> Graph::input_names() const {
  std::vector<std::string> out;
  for (auto v : inputs_) out.push_back(values_[v.index].name);
  return out;
}

std::vector<std::string> Graph::output_names() const {
  std::vector<std::string> out;
  for (auto v : outputs_) out.push_back(values_[v.index].name);
  return out;
}

std::vector<ValueId> Graph::values() const {
  std::vector<ValueId> out;
  for (std::uint32_t i = 0; i < values_.size(); ++i) {
    if (value_live_[i]) out.emplace_back(i);
  }
  return out;
}

std::vector<ValueId> Graph::constants() const {
  std::vector<ValueId> out;
  for (std::uint32_t i = 0; i < values_.size(); ++i) {
    if (value_live_[i] && values_[i].is_constant()) out.emplace_back(i);
  }
  return out;
}

std::optional<ValueId> Graph::find_value(std::string_view name) const {
  auto it = value_by_name_.find(std::string(name));
  if (it == value_by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<NodeId> Graph::find_node(std::string_view name) const {
  auto it = node_by_name_.find(std::string(name));
  if (it == node_by_name_.end()) return std::nullopt;
  return it->second;
}

std::size_t Graph::position(NodeId id) const {
  node(id);
  auto it = std::find(order_.begin(), order_.end(), id);
  if (it == order_.end()) fail(ErrorCode::kInternal, describe(id) + " is live but not in the node order");
  return static_cast<std::size_t>(it - order_.begin());
}

// ---- graph: modules ---------------------------------------------------------------

ModuleId Graph::add_module(std::string path, std::string type, ModuleId parent) {
  if (parent.valid()) module(parent);  // checks it
  std::string key = std::to_string(parent.index);
  key += '\0';
  key += path;
  key += '\0';
  key += type;
  if (auto it = module_by_key_.find(key); it != module_by_key_.end()) return it->second;
  const ModuleId id(static_cast<std::uint32_t>(modules_.size()));
  modules_.push_back(Module{std::move(path), std::move(type), parent, parent.valid() ? modules_[parent.index].depth + 1 : 1});
  module_by_key_.emplace(std::move(key), id);
  return id;
}

ModuleId Graph::add_module_path(const std::vector<ModuleFrame>& frames) {
  ModuleId id;
  for (const ModuleFrame& f : frames) id = add_module(f.path, f.type, id);
  return id;
}

const Module& Graph::module(ModuleId id) const {
  if (!id.valid() || id.index >= modules_.size()) {
    fail(ErrorCode::kDanglingId, "module id " + std::to_string(id.index) + " is not a module of graph " + name_ + " (it has " +
                                     std::to_string(modules_.size()) + ")");
  }
  return modules_[id.index];
}

std::vector<ModuleFrame> Graph::module_path(ModuleId id) const {
  std::vector<ModuleFrame> out;
  for (ModuleId m = id; m.valid(); m = module(m).parent) out.push_back(ModuleFrame{modules_[m.index].path, modules_[m.index].type});
  std::reverse(out.begin(), out.end());
  return out;
}

void Graph::set_node_module(NodeId id, ModuleId m) {
  if (m.valid()) module(m);
  node_mut(id).module = m;
}

// ---- graph: editing ---------------------------------------------------------------

void Graph::replace_all_uses(ValueId from, ValueId to) {
  value(from);
  value(to);
  if (from == to) return;
  auto users = std::move(value_mut(from).users);
  value_mut(from).users.clear();
  for (const Use& u : users) {
    nodes_[u.node.index].inputs[u.input_index] = to;
    values_[to.index].users.push_back(u);
  }
  for (auto& o : outputs_) {
    if (o == from) o = to;
  }
}

void Graph::replace_uses_after(NodeId after, ValueId from, ValueId to) {
  value(from);
  value(to);
  if (from == to) return;
  std::vector<std::size_t> pos(nodes_.size(), 0);
  for (std::size_t i = 0; i < order_.size(); ++i) pos[order_[i].index] = i;
  node(after);
  const std::size_t cut = pos[after.index];
  std::vector<Use> keep;
  for (const Use& u : values_[from.index].users) {
    if (pos[u.node.index] > cut) {
      nodes_[u.node.index].inputs[u.input_index] = to;
      values_[to.index].users.push_back(u);
    } else {
      keep.push_back(u);
    }
  }
  values_[from.index].users = std::move(keep);
  for (auto& o : outputs_) {
    if (o == from) o = to;
  }
}

void Graph::set_node_input(NodeId id, std::size_t index, ValueId v) {
  Node& n = node_mut(id);
  value(v);
  if (index >= n.inputs.size()) {
    fail(ErrorCode::kOutOfRange, describe(id) + " has " + std::to_string(n.inputs.size()) + " inputs, not " +
                                     std::to_string(index + 1));
  }
  auto& old_users = values_[n.inputs[index].index].users;
  const Use use{id, static_cast<std::uint32_t>(index)};
  old_users.erase(std::find(old_users.begin(), old_users.end(), use));
  n.inputs[index] = v;
  values_[v.index].users.push_back(use);
}

void Graph::append_node_input(NodeId id, ValueId v) {
  Node& n = node_mut(id);
  value(v);
  values_[v.index].users.push_back(Use{id, static_cast<std::uint32_t>(n.inputs.size())});
  n.inputs.push_back(v);
}

void Graph::set_attribute(NodeId id, std::string name, AttributeValue value) {
  node_mut(id).attributes.set(std::move(name), std::move(value));
}

void Graph::set_op(NodeId id, std::string op) {
  if (op.empty()) fail(ErrorCode::kInvalidArgument, "set_op " + describe(id) + ": empty op");
  node_mut(id).op = std::move(op);
}

void Graph::set_value_type(ValueId id, std::optional<DType> dtype, std::optional<SymbolicShape> shape) {
  Value& v = value_mut(id);
  v.dtype = dtype;
  v.shape = std::move(shape);
}

void Graph::rename_value(ValueId id, std::string name) {
  Value& v = value_mut(id);
  if (v.name == name) return;
  if (name.empty() || value_by_name_.count(name)) {
    fail(ErrorCode::kDuplicateName, "rename %" + v.name + ": name %" + name + " is empty or taken");
  }
  value_by_name_.erase(v.name);
  value_name_freed(v.name);
  value_by_name_.emplace(name, id);
  v.name = std::move(name);
}

void Graph::erase_node(NodeId id) {
  const Node& n = node(id);
  for (auto out : n.outputs) {
    const Value& v = values_[out.index];
    if (!v.users.empty()) {
      fail(ErrorCode::kInvalidArgument, "erase " + describe(id) + ": its output %" + v.name + " is still read by " +
                                            describe(v.users.front().node));
    }
    if (std::find(outputs_.begin(), outputs_.end(), out) != outputs_.end()) {
      fail(ErrorCode::kInvalidArgument, "erase " + describe(id) + ": its output %" + v.name + " is a graph output");
    }
  }
  // Searched from the back: dead code is erased last node first, whose use
  // is its input's latest and whose place is near the end of the order, so
  // erasing n nodes that way is linear, not quadratic (200,000 dead
  // statements reading one value took seconds).
  for (std::uint32_t i = 0; i < n.inputs.size(); ++i) {
    auto& users = values_[n.inputs[i].index].users;
    users.erase(std::prev(std::find(users.rbegin(), users.rend(), Use{id, i}).base()));
  }
  for (auto out : n.outputs) {
    value_by_name_.erase(values_[out.index].name);
    value_name_freed(values_[out.index].name);
    value_live_[out.index] = false;
  }
  node_by_name_.erase(n.name);
  node_live_[id.index] = false;
  order_.erase(std::prev(std::find(order_.rbegin(), order_.rend(), id).base()));
}

void Graph::erase_value(ValueId id) {
  const Value& v = value(id);
  if (v.producer) fail(ErrorCode::kInvalidArgument, "erase " + describe(id) + ": erase its producer instead");
  if (!v.users.empty()) {
    fail(ErrorCode::kInvalidArgument, "erase " + describe(id) + ": still read by " + describe(v.users.front().node));
  }
  if (std::find(outputs_.begin(), outputs_.end(), id) != outputs_.end()) {
    fail(ErrorCode::kInvalidArgument, "erase " + describe(id) + ": it is a graph output");
  }
  inputs_.erase(std::remove(inputs_.begin(), inputs_.end(), id), inputs_.end());
  value_by_name_.erase(v.name);
  value_name_freed(v.name);
  value_live_[id.index] = false;
}

// ---- graph: checks ----------------------------------------------------------------

void Graph::verify() const {
  const std::string where = "graph " + name_ + ": ";
  // Names: each live value's and node's name maps back to it.
  for (std::uint32_t i = 0; i < values_.size(); ++i) {
    if (!value_live_[i]) continue;
    auto it = value_by_name_.find(values_[i].name);
    if (it == value_by_name_.end() || it->second.index != i) {
      fail(ErrorCode::kDuplicateName, where + "value name %" + values_[i].name + " is used by more than one value");
    }
  }
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    if (!node_live_[i]) continue;
    auto it = node_by_name_.find(nodes_[i].name);
    if (it == node_by_name_.end() || it->second.index != i) {
      fail(ErrorCode::kDuplicateName, where + "node name '" + nodes_[i].name + "' is used by more than one node");
    }
  }
  // Ids and producers.
  std::vector<int> producer_pos(values_.size(), -1);  // position of the producing node, -1: none
  std::vector<bool> seen_node(nodes_.size(), false);
  std::vector<std::vector<Use>> expected_users(values_.size());
  for (std::size_t pos = 0; pos < order_.size(); ++pos) {
    const NodeId id = order_[pos];
    if (!is_live(id)) fail(ErrorCode::kDanglingId, where + "the node order holds " + describe(id) + ", which is not live");
    if (seen_node[id.index]) fail(ErrorCode::kDuplicateId, where + describe(id) + " appears twice in the node order");
    seen_node[id.index] = true;
    const Node& n = nodes_[id.index];
    if (n.module.valid() && n.module.index >= modules_.size()) {
      fail(ErrorCode::kDanglingId, where + describe(id) + " names module id " + std::to_string(n.module.index) + ", not in the module table");
    }
    for (std::uint32_t i = 0; i < n.inputs.size(); ++i) {
      if (!is_live(n.inputs[i])) {
        fail(ErrorCode::kDanglingId, where + describe(id) + " input " + std::to_string(i) + " is " + describe(n.inputs[i]) +
                                         ", which is not live");
      }
      expected_users[n.inputs[i].index].push_back(Use{id, i});
    }
    for (std::uint32_t i = 0; i < n.outputs.size(); ++i) {
      const ValueId out = n.outputs[i];
      if (!is_live(out)) {
        fail(ErrorCode::kDanglingId, where + describe(id) + " output " + std::to_string(i) + " is " + describe(out) +
                                         ", which is not live");
      }
      if (producer_pos[out.index] >= 0 || values_[out.index].is_constant()) {
        fail(ErrorCode::kMultipleProducers, where + describe(out) + " is written by " + describe(id) + " and by another");
      }
      const Value& v = values_[out.index];
      if (v.producer != id || v.producer_output != i) {
        fail(ErrorCode::kInternal, where + describe(out) + " records another producer than " + describe(id));
      }
      producer_pos[out.index] = static_cast<int>(pos);
    }
  }
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    if (node_live_[i] && !seen_node[i]) fail(ErrorCode::kInternal, where + describe(NodeId(i)) + " is live but not in the order");
  }
  std::vector<bool> is_input(values_.size(), false);
  for (auto in : inputs_) {
    if (!is_live(in)) fail(ErrorCode::kDanglingId, where + "graph input " + describe(in) + " is not live");
    if (producer_pos[in.index] >= 0) fail(ErrorCode::kMultipleProducers, where + "graph input " + describe(in) + " is also written by a node");
    is_input[in.index] = true;
  }
  // Every value read must exist before it is read: produced earlier, an input, or a constant.
  for (std::size_t pos = 0; pos < order_.size(); ++pos) {
    const Node& n = nodes_[order_[pos].index];
    for (auto in : n.inputs) {
      const Value& v = values_[in.index];
      if (producer_pos[in.index] >= static_cast<int>(pos)) {
        fail(ErrorCode::kCycle, where + describe(order_[pos]) + " reads %" + v.name + " before " +
                                    describe(*v.producer) + " writes it");
      }
      if (producer_pos[in.index] < 0 && !is_input[in.index] && !v.is_constant()) {
        fail(ErrorCode::kUnproducedOutput, where + describe(order_[pos]) + " reads %" + v.name +
                                               ", which no node produces and which is neither an input nor a constant");
      }
    }
  }
  for (auto out : outputs_) {
    if (!is_live(out)) fail(ErrorCode::kDanglingId, where + "graph output " + describe(out) + " is not live");
    if (producer_pos[out.index] < 0 && !is_input[out.index] && !values_[out.index].is_constant()) {
      fail(ErrorCode::kUnproducedOutput, where + "graph output %" + values_[out.index].name + " is never produced");
    }
  }
  // Use lists agree with node inputs.
  for (std::uint32_t i = 0; i < values_.size(); ++i) {
    if (!value_live_[i]) continue;
    auto a = values_[i].users;
    auto b = expected_users[i];
    auto key = [](const Use& u) { return std::pair(u.node.index, u.input_index); };
    std::sort(a.begin(), a.end(), [&](auto& x, auto& y) { return key(x) < key(y); });
    std::sort(b.begin(), b.end(), [&](auto& x, auto& y) { return key(x) < key(y); });
    if (a != b) fail(ErrorCode::kInternal, where + "the user list of " + describe(ValueId(i)) + " disagrees with the node inputs");
    if (values_[i].producer && producer_pos[i] < 0) {
      fail(ErrorCode::kDanglingId, where + describe(ValueId(i)) + " names a producer that does not write it");
    }
  }
}

// ---- graph: text --------------------------------------------------------------------

namespace {

std::string type_str(const Value& v) {
  std::string s = v.dtype ? std::string(dtype_name(*v.dtype)) : "?";
  s += v.shape ? shape_str(*v.shape) : "[?]";
  return s;
}

std::string format_double(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // The shortest text that reads back to the same double.
  std::string text;
  for (int p = 1; p <= 17; ++p) {
    std::ostringstream t;
    t.precision(p);
    t << d;
    text = t.str();
    if (std::strtod(text.c_str(), nullptr) == d) break;
  }
  return text;
}

std::string attribute_str(const AttributeValue& value) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          return format_double(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + x + "\"";
        } else if constexpr (std::is_same_v<T, Tensor>) {
          return "tensor<" + std::string(dtype_name(x.dtype())) + shape_str(x.shape()) + ">";
        } else {
          std::string s = "[";
          for (std::size_t i = 0; i < x.size(); ++i) {
            if (i) s += ", ";
            using E = typename T::value_type;
            if constexpr (std::is_same_v<E, std::int64_t>) s += std::to_string(x[i]);
            else if constexpr (std::is_same_v<E, double>) s += format_double(x[i]);
            else if constexpr (std::is_same_v<E, bool>) s += x[i] ? "true" : "false";
            else s += "\"" + x[i] + "\"";
          }
          return s + "]";
        }
      },
      value);
}

}  // namespace

std::string Graph::dump() const {
  std::string s = "graph " + name_ + "(";
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    const Value& v = values_[inputs_[i].index];
    s += (i ? ", %" : "%") + v.name + ": " + type_str(v);
  }
  s += ") {\n";
  for (auto c : constants()) {
    const Value& v = values_[c.index];
    s += "  %" + v.name + ": " + type_str(v) + " = constant\n";
  }
  for (auto id : order_) {
    const Node& n = nodes_[id.index];
    s += "  ";
    for (std::size_t i = 0; i < n.outputs.size(); ++i) {
      const Value& v = values_[n.outputs[i].index];
      s += (i ? ", %" : "%") + v.name + ": " + type_str(v);
    }
    s += (n.outputs.empty() ? "" : " = ") + n.op + "(";
    for (std::size_t i = 0; i < n.inputs.size(); ++i) s += (i ? ", %" : "%") + values_[n.inputs[i].index].name;
    s += ")";
    if (!n.attributes.empty()) {
      s += " {";
      bool first = true;
      for (const auto& [k, v] : n.attributes) {
        s += (first ? "" : ", ") + k + "=" + attribute_str(v);
        first = false;
      }
      s += "}";
    }
    s += "  # " + n.name;
    if (n.module.valid()) s += " in " + modules_[n.module.index].path + " (" + modules_[n.module.index].type + ")";
    s += "\n";
  }
  s += "  return (";
  for (std::size_t i = 0; i < outputs_.size(); ++i) s += (i ? ", %" : "%") + values_[outputs_[i].index].name;
  return s + ")\n}\n";
}

}  // namespace tracegraph
