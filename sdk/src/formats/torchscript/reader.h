// The TorchScript archive reader, stage three: the interpreter. It runs the
// root module's forward over what names hold while reading (Slot): tensors
// become graph values, each aten call a node, submodules' methods and the
// code's functions are inlined, and control flow runs where what decides it
// is known while reading (constants, and sizes when the input shapes are
// given). One class, its parts by what they read, each in its own file:
//
//   reader.cpp        read(): forward's inputs, the run, the finished graph
//   code.cpp          the code's files: a class's methods, functions, class constants
//   statements.cpp    calls and blocks: if, for, return, assignments
//   evaluate.cpp      expressions: names, attributes, indexing, calls, folding
//   aten_calls.cpp    an aten call bound to its schema and made a node
//   known_values.cpp  the shapes and numbers the input shapes say
//   attributes.cpp    the module's attributes, tensors and constants (the pickles)
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "formats/torchscript/aten_schemas.h"
#include "formats/torchscript/lexer.h"
#include "formats/torchscript/parser.h"
#include "formats/torchscript/torchscript_shapes.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/graph.h"
#include "tracegraph/load_limits.h"
#include "tracegraph/pickle.h"
#include "tracegraph/zip_archive.h"

namespace tracegraph::torchscript {

using PKind = PickleValue::Kind;

// ---- what names hold while the code runs ------------------------------------------

struct Pending;
struct ListObject;

struct Slot {
  enum class K { kNone, kInt, kFloat, kBool, kString, kTensor, kScalar, kRuntimeList, kList, kTuple, kDict, kModule, kPath, kPendingList };
  K k = K::kNone;
  std::int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;                       // a string; a kPath ("torch.conv2d", "__torch__.mod.fn")
  ValueId v;                           // kTensor, kScalar (an int or float the graph computes), kRuntimeList (an int[])
  std::string scalar;                  // kScalar's type: "I", "F", "B" or "N" (a number)
  std::vector<Slot> items;             // tuple, dict values
  std::vector<std::string> keys;       // dict keys
  // kList: the list object, shared by every name and structure that holds it,
  // as Python's lists are: `skips.append(x)` grows it wherever it is held
  // (a name, a function's parameter, another list).
  std::shared_ptr<ListObject> list;
  std::uint32_t depth = 0;             // kTuple, kDict: 1 + the deepest container they hold
  const PickleValue* module = nullptr;  // kModule
  std::shared_ptr<Pending> pending;    // kPendingList
  // kScalar (one number), kRuntimeList (its items): what the graph will
  // compute, known from the input shapes while reading (x.size(2), x.dim() - 2).
  std::optional<std::vector<double>> known;
  bool from_shape = false;  // kScalar, kRuntimeList: computed from a tensor's shape

  bool constant_number() const { return k == K::kInt || k == K::kFloat || k == K::kBool; }
  // A list's, tuple's or dict's items.
  const std::vector<Slot>& elements() const;
};

// A list the reader sees: what the code's list operations (append, insert,
// pop, extend, item assignment, ...) change while reading, so that no list
// op reaches the graph.
struct ListObject {
  std::vector<Slot> items;
  std::uint32_t depth = 1;  // 1 + the deepest container it holds
  // An item of another container: it may still grow by items that are not
  // containers, never deeper, so the depth its holders counted stays true
  // and no list can come to hold itself.
  bool held = false;
};

inline const std::vector<Slot>& Slot::elements() const { return k == K::kList ? list->items : items; }

// A call that returns a Tensor[]: its node is made once the code says how
// many elements it has (`a, b, = torch.chunk(x, 2)`).
struct Pending {
  std::string op, name;
  std::vector<ValueId> inputs;
  Attributes attributes;
  std::optional<NodeId> node;
};

inline Slot constant_int(std::int64_t x) {
  Slot s;
  s.k = Slot::K::kInt;
  s.i = x;
  return s;
}

// A method or function in the code.
struct Function {
  Where where;  // its def line
  std::vector<std::string> params;
  std::vector<std::string> defaults;  // each parameter's default as written ("None", "[0, 0]"); empty: none
  std::vector<Line> body;
  // Returns None and changes nothing (no in-place op, no submodule call): an
  // argument check (`_check_input_dim`, `_verify_batch_size`).
  bool check = false;
  // A class's method: its first parameter is the module (named as its
  // source named it: `self`, `s`, `module`).
  bool method = false;
};

// Reads one archive (the zip and limits outlive it); read() once.
class Reader {
 public:
  Reader(const ZipArchive& zip, const LoadLimits& limits, const std::vector<Shape>& input_shapes)
      : zip_(zip), limits_(limits), input_shapes_(input_shapes) {}

  // forward's graph: its inputs (shaped by input_shapes when given), the
  // values it returns as outputs, in-place ops made functional.
  ExportedGraph read();

 private:
  Graph& graph() { return out_.graph; }
  // graph().add_node, the node in the module whose method is running (module_).
  NodeId add_node(std::string op, std::vector<ValueId> inputs, std::vector<NewValue> outputs, Attributes attributes, std::string name);
  // Each submodule object's path from the root ("encoder.blocks.3.attn"), by
  // a walk over data.pkl's module attributes, shallowest first.
  void index_module_paths();
  // While a submodule's method is inlined: its module (called by the one
  // running before) is where the nodes made go.
  class ModuleScope {
   public:
    ModuleScope(Reader& r, const PickleValue* object);
    ~ModuleScope() { r_.module_ = saved_, r_.module_object_ = saved_object_; }
    ModuleScope(const ModuleScope&) = delete;
    ModuleScope& operator=(const ModuleScope&) = delete;

   private:
    Reader& r_;
    ModuleId saved_;
    const PickleValue* saved_object_;
  };
  // `base`, or base.1, base.2, ...: unique among the nodes.
  std::string node_name(const std::string& base);
  // list[index] of an int[] the graph computes (x.size()[1]).
  Slot list_item(const Slot& list, std::int64_t index, const std::string& hint);
  // The returned structure as graph outputs and their tree spec.
  TreeSpec spec_of(const Slot& s, std::vector<ValueId>& outputs, const Where& w);

  // ---- the code's files (code.cpp) ------------------------------------------------
  // A method: "__torch__.torch.nn.modules.conv.___torch_mangle_4.Conv2d", "forward" is
  // `def forward(` in `class Conv2d(` of code/__torch__/torch/nn/modules/conv/___torch_mangle_4.py.
  const Function& method(const std::string& qualified_class, const std::string& name, const Where& from);
  // A function: "__torch__.torch.nn.functional.relu" is `def relu(` of code/__torch__/torch/nn/functional.py.
  const Function& function(const std::string& qualified, const Where& from);
  // The def `name` in `module`'s file, in its class `cls` ("" for a function), read once.
  const Function& find_def(const std::string& module, const std::string& cls, const std::string& name, const Where& from);
  // An entry of the archive as logical lines, read once.
  const std::vector<Line>& file(const std::string& entry);
  // A class's `name : Final[T] = value` (a scripted module's constants: eps, momentum, ...).
  std::optional<Slot> class_constant(const std::string& qualified_class, const std::string& name, const Where& w);
  // The position of the first '=' outside brackets, npos when none.
  static std::size_t top_level_equals(const std::string& text);

  // ---- running the code (statements.cpp) ------------------------------------------
  // `fn` run with these arguments (its defaults for the rest): what it returns.
  // `depth` counts the calls it runs inside.
  Slot call(const Function& fn, const Slot& self, const std::vector<Slot>& args, const std::vector<std::pair<std::string, Slot>>& kwargs, int depth);
  // The lines [begin, end) of `fn`'s body, one block: what a `return` in it
  // returns, or nullopt when it runs to its end.
  std::optional<Slot> run_block(const Function& fn, std::size_t begin, std::size_t end, std::unordered_map<std::string, Slot>& env, int depth);
  // for NAME in range(N): / for NAME in LIST: with the trip count known
  // while reading (the rank of a tensor, a list's length): unrolled.
  std::optional<Slot> run_for(const Function& fn, std::size_t li, std::size_t end, std::unordered_map<std::string, Slot>& env, int depth);
  // The end of the block that starts at `begin`: the first line at most as indented as its header.
  static std::size_t block_end(const Function& fn, std::size_t begin, std::size_t end, std::size_t header_indent);
  // A block that does nothing but raise (a check's failing branch), strings built for its message aside.
  static bool only_raises(const Function& fn, std::size_t begin, std::size_t end);
  // `a, b = v`: v's items, one per name (a Tensor[] call's node is made here).
  std::vector<Slot> unpacked(const Slot& v, const std::vector<std::string>& names, const Where& w);
  // A known scalar (a size the input shapes say) as the constant it is where
  // the reader must decide something by it.
  Slot static_value(const Slot& s);
  // The items of a list the reader sees, or of an int[] the graph computes whose length the input shapes say.
  std::optional<std::vector<Slot>> as_items(const Slot& v);
  // Refuses to decide `what` by `c`, a value the graph computes: typed by why.
  [[noreturn]] void run_time(const Where& w, const Slot& c, const std::string& what);
  // A default or a class constant as written ("None", "[0, 0]", "1.0000000000000001e-05").
  Slot constant_expression(const std::string& text, const Where& w, int depth);

  // ---- expressions (evaluate.cpp) -------------------------------------------------
  // The value of `e` where `env` holds the names; `hint` names the values it makes.
  Slot eval(const Expr& e, std::unordered_map<std::string, Slot>& env, const Where& w, const std::string& hint, int depth);
  // A call: folded or a list operation where the reader sees the values, an
  // aten op as a node, a method or function of the code inlined.
  Slot eval_call(const Expr& e, std::unordered_map<std::string, Slot>& env, const Where& w, const std::string& hint, int depth);
  // Python's list operations on lists the reader sees (and int[]s the graph
  // computes whose length the input shapes say): append, +, *, slicing,
  // list(), `in`. nullopt for other calls.
  // Each is read as what it does to the reader's list: no list op reaches
  // the graph; one on a list the reader cannot see is refused naming the line.
  std::optional<Slot> list_op(const std::string& name, const std::vector<Slot>& args, const Where& w);
  // torch.tensor(data, dtype=...) of numbers known while reading (a list,
  // nested for more dims: `x[[0, 2, 1]]` scripted) as the constant it is;
  // nullopt where data is not that.
  std::optional<Tensor> constant_tensor(const Slot& data, const std::vector<std::pair<std::string, Slot>>& kwargs, const Where& w);
  // A new list of these items (each container among them held by it).
  Slot make_list(std::vector<Slot> items, const Where& w);
  // A new tuple (or, with keys, dict) of these items.
  Slot make_tuple(std::vector<Slot> items, const Where& w, Slot::K kind = Slot::K::kTuple);
  // `item` becomes an item of a container whose depth is `depth`: a list in
  // it is held; refused past max_expression_depth.
  void hold(const Slot& item, std::uint32_t& depth, const Where& w);
  // `item` put into `list` at `at` (a list op): a container only into a list
  // no other container holds, never a list into itself.
  void put(ListObject& list, std::size_t at, const Slot& item, const std::string& op, const Where& w);
  // seq[index] of a list or tuple, negative from the end; refused past its items.
  Slot item_at(const Slot& seq, std::int64_t index, const Where& w);
  // How deep the containers in `s` nest (0: not a container).
  static std::uint32_t nesting(const Slot& s) { return s.k == Slot::K::kList ? s.list->depth : s.depth; }
  // Scripted code's arithmetic and tests on values known while reading
  // (`if training:`, `torch.__is__(stride, None)`, `torch.lt(eps, 0.)`):
  // folded, so that the branch they decide is known.
  static std::optional<Slot> fold(const std::string& name, const std::vector<Slot>& args);
  // Python's arithmetic on constant numbers (ints stay ints; / is true
  // division), and the loop helpers scripting emits.
  static std::optional<Slot> arithmetic(const std::string& name, const std::vector<Slot>& args);
  // A constant number (or a scalar the graph computes) as a value: 0-d constants, as the native reader makes them.
  ValueId as_value(const Slot& s, const std::string& hint);

  // ---- aten calls (aten_calls.cpp) ------------------------------------------------
  static bool is_tensor(const Slot& s) { return s.k == Slot::K::kTensor; }
  // How well `v` fits schema argument `a`: -1 not at all, 1 by conversion
  // (an int where a float goes, one int for an int[]), 2 exactly.
  static int fit(const detail::SchemaArg& a, const Slot& v);
  // The schema whose arguments these are: of those that take them, the one
  // they fit best (the table's order breaks ties).
  const detail::Schema* bind(const std::vector<detail::Schema>& schemas, const std::vector<Slot>& args,
                             const std::vector<std::pair<std::string, Slot>>& kwargs, std::vector<const Slot*>& bound) const;
  // aten::`name` of these arguments as a node (a Tensor[] result waits for its
  // unpacking): its outputs.
  Slot aten(const std::string& name, const std::vector<Slot>& args, const std::vector<std::pair<std::string, Slot>>& kwargs, const Where& w,
            const std::string& hint);

  // ---- what the input shapes say (known_values.cpp) -------------------------------
  // A value's shape and numbers, as far as the reader follows them.
  detail::Known known_of(ValueId v) const;
  // A constant's elements as numbers (int64, int32, bool, float64); empty for other dtypes.
  static std::vector<double> constant_numbers(const Tensor& t);
  // One number a value holds, when the reader knows it.
  std::optional<double> number_of(ValueId v) const;
  // After a node is made: its outputs' shapes and numbers, as far as the rules go.
  void record(NodeId id);
  // The numbers a shape query or int arithmetic computes (aten::size,
  // aten::dim, aten::sub.int, ...), when its inputs' are known.
  std::optional<std::vector<double>> numbers_of(const Node& n) const;

  // ---- the module's attributes and tensors (attributes.cpp) -----------------------
  // `module`'s attribute `name`: from its pickled state, else a class constant.
  Slot attribute(const PickleValue& module, const std::string& name, const Where& w);
  // A pickled value as a slot; tensors (their storage under `dir`) become graph constants.
  Slot from_pickle(const PickleValue& v, const std::string& dir, const std::string& name, const Where& w);
  // torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks) as a graph constant, once.
  ValueId tensor(const PickleValue& rebuild, const std::string& dir, const std::string& name, const Where& w);
  // CONSTANTS.cN: item N of constants.pkl.
  Slot constant(const std::string& cname, const Where& w);

  const ZipArchive& zip_;
  const LoadLimits& limits_;
  std::string root_;
  PickleRef data_, constants_;
  std::map<std::string, std::vector<Line>> files_;
  std::map<std::string, Function> functions_;
  std::unordered_map<const PickleValue*, ValueId> tensors_;
  std::unordered_map<const PickleValue*, std::string> module_paths_;  // index_module_paths()
  const PickleValue* module_object_ = nullptr;  // the module whose method runs (the root's forward first)
  ModuleId module_;                             // its module in the graph; invalid for the root
  ExportedGraph out_;
  std::vector<Shape> input_shapes_;
  std::map<ValueId, Shape> shapes_;                 // tensors' shapes, followed from the input shapes
  std::map<ValueId, std::vector<double>> numbers_;  // ints, floats and int[]s the graph computes, known from them
  std::string lost_shape_;                          // the first node whose output shape no rule gave
  bool specialized_ = false;
  // Work done so far, held to limits_ (max_loop_trips, max_inlined_calls,
  // max_statements).
  std::uint64_t trips_ = 0, calls_ = 0, statements_ = 0;
  // Blocks (if, for) open now, held to limits_.max_block_depth.
  std::uint64_t blocks_ = 0;
  // node_name's memory: per base, a suffix below which every base.k is taken
  // (the reader erases no node while it reads), so names are made in constant time.
  std::unordered_map<std::string, std::size_t> next_node_suffix_;
};

}  // namespace tracegraph::torchscript
