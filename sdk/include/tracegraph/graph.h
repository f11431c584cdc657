// The graph model: values and nodes owned by the Graph and named by small
// strong ids. A value has at most one producer and a list of users; only the
// Graph's editing API changes those, so a rewrite cannot leave them wrong.
//
// A node may name the module whose forward made it (Node::module): an id into
// the graph's table of modules, each with its parent, so a node's module path
// (encoder > encoder.blocks.3 > encoder.blocks.3.attn) is held once per module,
// not once per node.
//
// Nodes run in the order of nodes() (a topological order). Graph inputs and
// constants (weights: values that hold data and that no node writes) have no
// producer. Erased nodes and values leave holes: ids stay valid handles until
// erased and are never reused.
#pragma once

#include <cstdint>
#include <compare>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "tracegraph/dtype.h"
#include "tracegraph/tensor.h"

namespace tracegraph {

template <class Tag>
struct StrongId {
  static constexpr std::uint32_t kInvalid = 0xffffffffu;
  std::uint32_t index = kInvalid;

  constexpr StrongId() = default;
  constexpr explicit StrongId(std::uint32_t i) : index(i) {}
  constexpr bool valid() const { return index != kInvalid; }
  friend constexpr auto operator<=>(StrongId, StrongId) = default;
};
struct NodeTag;
struct ValueTag;
struct ModuleTag;
using NodeId = StrongId<NodeTag>;
using ValueId = StrongId<ValueTag>;
using ModuleId = StrongId<ModuleTag>;

// One dimension of a shape: a size, or a symbol ("N", "s0") when the size is
// not fixed.
struct Dim {
  std::int64_t size = -1;  // >= 0 for a static dim
  std::string symbol;      // non-empty for a symbolic dim

  static Dim of(std::int64_t size) { return Dim{size, {}}; }
  static Dim sym(std::string symbol) { return Dim{-1, std::move(symbol)}; }
  bool is_static() const { return symbol.empty(); }
  friend bool operator==(const Dim&, const Dim&) = default;
};
using SymbolicShape = std::vector<Dim>;
SymbolicShape symbolic(const Shape& shape);
// "[1, 3, H, 224]"
std::string shape_str(const SymbolicShape& shape);

using AttributeValue = std::variant<std::int64_t, double, bool, std::string, std::vector<std::int64_t>,
                                    std::vector<double>, std::vector<bool>, std::vector<std::string>, Tensor>;
bool attribute_equal(const AttributeValue& a, const AttributeValue& b);
// Kind names as the exported format writes them: "int", "float", "bool",
// "string", "ints", "floats", "bools", "strings", "tensor".
std::string_view attribute_kind(const AttributeValue& value);

// Named attributes in insertion order; names are unique.
class Attributes {
 public:
  using Entry = std::pair<std::string, AttributeValue>;

  void set(std::string name, AttributeValue value);
  bool erase(std::string_view name);
  const AttributeValue* find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  // Typed reads: nullopt when absent; kSchema when present with another kind.
  std::optional<std::int64_t> get_int(std::string_view name) const;
  std::optional<double> get_float(std::string_view name) const;  // an int reads as float too
  std::optional<bool> get_bool(std::string_view name) const;
  std::optional<std::string> get_string(std::string_view name) const;
  std::optional<std::vector<std::int64_t>> get_ints(std::string_view name) const;

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  friend bool operator==(const Attributes& a, const Attributes& b);

 private:
  std::vector<Entry> entries_;
};

struct Use {
  NodeId node;
  std::uint32_t input_index = 0;
  friend bool operator==(const Use&, const Use&) = default;
};

struct Value {
  std::string name;
  std::optional<DType> dtype;            // nullopt: not known
  std::optional<SymbolicShape> shape;    // nullopt: not known (not even the rank)
  std::optional<NodeId> producer;        // nullopt for graph inputs and constants
  std::uint32_t producer_output = 0;     // which output of the producer
  std::vector<Use> users;                // every (node, input slot) that reads it
  Tensor data;                           // defined for constants only

  bool is_constant() const { return data.defined(); }
};

// One frame of a module path: a module's qualified name from the root
// ("encoder.blocks.3.attn", as torch's named_modules() names it) and its class
// ("Attention": the class name alone, without the Python module that defines
// it or TorchScript's ___torch_mangle_N, so the .pt2 and the TorchScript
// archive of one model name it alike).
struct ModuleFrame {
  std::string path;
  std::string type;
  friend bool operator==(const ModuleFrame&, const ModuleFrame&) = default;
};

// A class as ModuleFrame::type names it: "torch.nn.modules.linear.Linear",
// "__torch__.models.___torch_mangle_6.Block" and "<class 'models.Block'>"
// give "Linear", "Block", "Block".
std::string module_class_name(std::string_view qualified);

// A module in the graph's table: a frame and the module whose forward called
// it. The root module (path "") has no entry: a node the root's own forward
// makes has no module.
struct Module {
  std::string path;
  std::string type;
  ModuleId parent;          // invalid: called by the root
  std::uint32_t depth = 1;  // 1 for a module the root calls, 1 + its parent's otherwise
};

struct Node {
  std::string name;
  std::string op;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  Attributes attributes;
  ModuleId module;  // the innermost module whose forward made it; invalid: the root's, or not known
};

// What add_node needs to know of each output it creates.
struct NewValue {
  std::string name;  // empty: a fresh name is made
  std::optional<DType> dtype;
  std::optional<SymbolicShape> shape;

  NewValue() = default;
  NewValue(std::string n, std::optional<DType> d = std::nullopt, std::optional<SymbolicShape> s = std::nullopt)
      : name(std::move(n)), dtype(d), shape(std::move(s)) {}
  NewValue(const char* n) : name(n) {}
};

class Graph {
 public:
  Graph() = default;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // ---- building -------------------------------------------------------------
  ValueId add_input(std::string name, std::optional<DType> dtype = std::nullopt,
                    std::optional<SymbolicShape> shape = std::nullopt);
  // A constant takes its dtype and shape from `data`.
  ValueId add_constant(std::string name, Tensor data);
  // Appends a node (at the end of the order, or just before `before`). Inputs
  // must be live values; kDanglingId otherwise. Returns the node; its outputs
  // are node(id).outputs.
  NodeId add_node(std::string op, std::vector<ValueId> inputs, std::vector<NewValue> outputs,
                  Attributes attributes = {}, std::string name = {},
                  std::optional<NodeId> before = std::nullopt);
  void set_outputs(std::vector<ValueId> outputs);
  void add_output(ValueId value);

  // ---- reading --------------------------------------------------------------
  const Value& value(ValueId id) const;
  const Node& node(NodeId id) const;
  bool is_live(ValueId id) const;
  bool is_live(NodeId id) const;
  // Nodes in execution order.
  const std::vector<NodeId>& nodes() const { return order_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  // Live values in id order.
  std::vector<ValueId> values() const;
  std::vector<ValueId> constants() const;
  std::optional<ValueId> find_value(std::string_view name) const;
  std::optional<NodeId> find_node(std::string_view name) const;
  std::size_t num_nodes() const { return order_.size(); }
  std::size_t num_values() const { return value_by_name_.size(); }
  // Position of a node in nodes().
  std::size_t position(NodeId id) const;
  // `base` if no value has that name yet, else the first free of base.1,
  // base.2, ... In amortized constant time: a reader that names 65,536 values
  // "x" probes each suffix once, not 1 + 2 + ... + 65,536 times.
  std::string unique_value_name(std::string_view base) const;

  // ---- modules --------------------------------------------------------------
  // The module (path, type) as called by `parent` (invalid: by the root),
  // interned: the same three give the same id. Modules are never erased; a
  // module no live node names is simply not read.
  ModuleId add_module(std::string path, std::string type, ModuleId parent = ModuleId());
  // Each frame called by the one before it, the first by the root: the
  // innermost one's id (invalid for no frames).
  ModuleId add_module_path(const std::vector<ModuleFrame>& frames);
  const Module& module(ModuleId id) const;
  std::size_t num_modules() const { return modules_.size(); }
  // `id`'s frames from the root's child down to it; empty for an invalid id.
  std::vector<ModuleFrame> module_path(ModuleId id) const;
  std::vector<ModuleFrame> module_path(NodeId node) const { return module_path(this->node(node).module); }
  // The module of a node (a transform gives a node it makes the module of
  // the one it replaces).
  void set_node_module(NodeId node, ModuleId module);

  // ---- editing --------------------------------------------------------------
  // Every read of `from` (node inputs and graph outputs) reads `to` instead.
  void replace_all_uses(ValueId from, ValueId to);
  // Reads of `from` by nodes after `after` in the order, and graph outputs,
  // read `to` instead; earlier reads are left alone.
  void replace_uses_after(NodeId after, ValueId from, ValueId to);
  void set_node_input(NodeId node, std::size_t index, ValueId value);
  void append_node_input(NodeId node, ValueId value);
  void set_attribute(NodeId node, std::string name, AttributeValue value);
  void set_op(NodeId node, std::string op);
  void set_value_type(ValueId value, std::optional<DType> dtype, std::optional<SymbolicShape> shape);
  void rename_value(ValueId value, std::string name);
  // Removes a node whose outputs nobody reads (kInvalidArgument otherwise);
  // its outputs go with it.
  void erase_node(NodeId node);
  // Removes a constant or graph input that nobody reads.
  void erase_value(ValueId value);

  // ---- checks and text ------------------------------------------------------
  // Throws the first broken invariant found as an Error (kDanglingId,
  // kMultipleProducers, kCycle, kUnproducedOutput, kDuplicateName, kInternal).
  void verify() const;
  // A stable, readable text form; equal graphs dump equal text.
  std::string dump() const;

 private:
  friend struct GraphInternals;  // tests reach in to break invariants on purpose

  ValueId new_value(std::string name, std::optional<DType> dtype, std::optional<SymbolicShape> shape);
  Value& value_mut(ValueId id);
  Node& node_mut(NodeId id);
  std::string describe(ValueId id) const;
  std::string describe(NodeId id) const;

  std::string name_ = "main";
  std::vector<Value> values_;
  std::vector<bool> value_live_;
  std::vector<Node> nodes_;
  std::vector<bool> node_live_;
  std::vector<NodeId> order_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::unordered_map<std::string, ValueId> value_by_name_;
  std::unordered_map<std::string, NodeId> node_by_name_;
  std::vector<Module> modules_;
  std::unordered_map<std::string, ModuleId> module_by_key_;  // "parent index\0path\0type"
  // unique_value_name's memory: for a base, a suffix below which every
  // base.k is taken (lowered when such a name is freed), so a probe starts
  // there and names stay the ones a probe from 1 would give.
  mutable std::unordered_map<std::string, std::size_t> next_suffix_;
  void value_name_freed(const std::string& name);
};

}  // namespace tracegraph
