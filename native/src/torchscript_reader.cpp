#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/loop_unrolling.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/peephole_dict_idioms.h>
#include <torch/csrc/jit/passes/peephole_list_idioms.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/script.h>
#include <torch/version.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "tracegraph/load_limits.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/op_table.h"
#include "tracegraph/torchscript_archive.h"
#include "tracegraph/transforms/inplace_to_functional.h"

namespace tracegraph::native {
namespace {

namespace tj = torch::jit;

// The first line of a message that says something: LibTorch's script
// errors start with a newline.
std::string first_line(const std::string& s) {
  const auto begin = s.find_first_not_of(" \n\r\t");
  if (begin == std::string::npos) return {};
  return s.substr(begin, s.find('\n', begin) - begin);
}

// "prim::If (output %x.3) at model.py:42"
std::string describe(const tj::Node* n) {
  std::string s = std::string("node ") + n->kind().toQualString();
  if (n->outputs().size() > 0) s += " (output %" + n->output(0)->debugName() + ")";
  // Prefer the model's own Python source over the archive's serialized code.
  tj::SourceRange range = n->sourceRange();
  if (auto original = range.findSourceRangeThatGenerated()) range = *original;
  if (auto flc = range.file_line_col()) {
    s += " at " + std::filesystem::path(std::get<0>(*flc)).filename().string() + ":" + std::to_string(std::get<1>(*flc));
  }
  return s;
}

struct TypeInfo {
  std::optional<DType> dtype;
  std::optional<SymbolicShape> shape;
};

// What a non-tensor TorchScript type says of a value without running it.
TypeInfo static_type(const tj::Value* v) {
  const c10::TypePtr& t = v->type();
  if (t->kind() == c10::TypeKind::IntType) return {DType::kInt64, SymbolicShape{}};
  if (t->kind() == c10::TypeKind::FloatType) return {DType::kFloat64, SymbolicShape{}};
  if (t->kind() == c10::TypeKind::BoolType) return {DType::kBool, SymbolicShape{}};
  if (auto tt = t->cast<c10::TensorType>()) {
    TypeInfo info;
    if (auto st = tt->scalarType()) {
      try {
        info.dtype = from_aten_dtype(*st);
      } catch (const Error&) {
      }
    }
    if (auto sizes = tt->sizes().concrete_sizes()) info.shape = symbolic(Shape(sizes->begin(), sizes->end()));
    return info;
  }
  if (auto lt = t->cast<c10::ListType>(); lt && lt->getElementType()->kind() == c10::TypeKind::IntType) {
    return {DType::kInt64, std::nullopt};
  }
  return {};
}

std::optional<AttributeValue> to_attribute(const c10::IValue& iv) {
  if (iv.isInt()) return iv.toInt();
  if (iv.isDouble()) return iv.toDouble();
  if (iv.isBool()) return iv.toBool();
  if (iv.isString()) return iv.toStringRef();
  if (iv.isDevice()) return iv.toDevice().str();
  if (iv.isList() || iv.isTuple()) {
    std::vector<c10::IValue> items;
    if (iv.isList()) {
      for (const auto& e : iv.toListRef()) items.push_back(e);
    } else {
      for (const auto& e : iv.toTupleRef().elements()) items.push_back(e);
    }
    bool ints = true, numbers = true, bools = true, strings = true;
    for (const auto& e : items) {
      ints = ints && e.isInt();
      numbers = numbers && (e.isInt() || e.isDouble());
      bools = bools && e.isBool();
      strings = strings && e.isString();
    }
    if (ints) {
      std::vector<std::int64_t> out;
      for (const auto& e : items) out.push_back(e.toInt());
      return out;
    }
    if (numbers) {
      std::vector<double> out;
      for (const auto& e : items) out.push_back(e.isInt() ? static_cast<double>(e.toInt()) : e.toDouble());
      return out;
    }
    if (bools) {
      std::vector<bool> out;
      for (const auto& e : items) out.push_back(e.toBool());
      return out;
    }
    if (strings) {
      std::vector<std::string> out;
      for (const auto& e : items) out.push_back(e.toStringRef());
      return out;
    }
  }
  return std::nullopt;
}

// The graph a call node (prim::CallMethod, prim::CallFunction) would inline,
// found as LibTorch's Inline finds it; nullptr for a call it leaves.
const tj::Graph* callee_graph(const tj::Node* n) {
  tj::Function* fn = nullptr;
  if (n->kind() == c10::prim::CallMethod) {
    if (auto type = n->input(0)->type()->cast<c10::ClassType>()) fn = &type->getMethod(n->s(c10::attr::name));
  } else if (n->kind() == c10::prim::CallFunction && n->input(0)->node()->kind() == c10::prim::Constant) {
    if (auto type = n->input(0)->type()->cast<c10::FunctionType>()) fn = type->function();
  }
  if (fn == nullptr) return nullptr;
  tj::GraphFunction* graph_fn = tj::tryToGraphFunction(*fn);
  return graph_fn == nullptr ? nullptr : graph_fn->graph().get();
}

// How many calls inlining `block` makes, each counted however deep it sits,
// before Inline makes them: methods that each call the next twice are 2^N
// calls from N methods (LibTorch's Inline would run for hours). Memoised per
// callee graph, so the count is linear in the code; kLimitExceeded past
// max_inlined_calls or max_call_depth, naming the file.
std::uint64_t inlined_calls(const tj::Block* block, const std::string& source, const LoadLimits& limits,
                            std::unordered_map<const tj::Graph*, std::uint64_t>& memo, std::uint64_t depth) {
  std::uint64_t calls = 0;
  for (const tj::Node* n : block->nodes()) {
    for (const tj::Block* inner : n->blocks()) calls += inlined_calls(inner, source, limits, memo, depth);
    const tj::Graph* callee = callee_graph(n);
    if (callee == nullptr) continue;
    if (depth + 1 > limits.max_call_depth) {
      fail(ErrorCode::kLimitExceeded, source + ": calls nested deeper than max_call_depth (" + std::to_string(limits.max_call_depth) + ")");
    }
    auto [it, fresh] = memo.try_emplace(callee, 0);
    if (fresh) it->second = inlined_calls(callee->block(), source, limits, memo, depth + 1);
    calls += 1 + it->second;
    if (calls > limits.max_inlined_calls) {
      fail(ErrorCode::kLimitExceeded, source + ": forward would inline more than max_inlined_calls (" +
                                          std::to_string(limits.max_inlined_calls) + ") calls of methods and functions");
    }
  }
  return calls;
}

class Reader {
 public:
  Reader(std::string source, const TorchScriptOptions& options) : source_(std::move(source)), options_(options) {}

  ExportedGraph read(const tj::Module& module) {
    // The forward graph with every submodule call inlined and every module
    // attribute it reads a constant, the module in eval mode: what freezing
    // gives, without copying the module (read_attributes, or freezing a
    // clone where that cannot see everything).
    tj::Module frozen = module;
    std::shared_ptr<tj::Graph> g = module.get_method("forward").graph()->copy();
    std::unordered_map<const tj::Graph*, std::uint64_t> memo;
    inlined_calls(g->block(), source_, LoadLimits{}, memo, 0);
    tj::Inline(*g);
    if (!read_attributes(g, module)) {
      frozen = module.clone();
      frozen.eval();
      tj::freeze_module_inplace(&frozen);
      g = frozen.get_method("forward").graph();
      tj::Inline(*g);
    }
    // Each pass only where its nodes are (each costs milliseconds on a large graph).
    if (contains(g->block(), {c10::prim::TupleConstruct, c10::prim::TupleUnpack, c10::prim::TupleIndex})) tj::LowerSimpleTuples(g);
    // A dict built and read by constant keys inside the model (a wrapper
    // picking one head, `unet(x)["out"]`): each read is the value.
    if (contains(g->block(), {c10::prim::DictConstruct})) tj::PeepholeOptimizeDictIdioms(g);
    // Argument checks (`if x.dim() != 4: raise ...`) guard against inputs the
    // model was not made for; they compute nothing the graph returns.
    take_branches_that_do_not_raise(g->block());
    tj::ConstantPropagation(g);
    tj::EliminateDeadCode(g);
    remove_list_mutation(g);
    std::vector<c10::IValue> probe_inputs = make_probe_inputs(*g);
    if (!probe_inputs.empty() && has_control_flow(g->block())) specialize(g, frozen, probe_inputs);
    check_static(g->block(), !probe_inputs.empty());
    if (!probe_inputs.empty()) probe(g, frozen, probe_inputs);
    convert(*g);
    ExportedGraph out;
    out.graph = std::move(graph_);
    out.out_spec = std::move(out_spec_);
    // forward's schema says its arguments: positional tensors, no keywords
    // (the reader refuses other inputs), with or without example inputs.
    out.in_spec = TreeSpec::tuple({TreeSpec::tuple(std::vector<TreeSpec>(out.graph.inputs().size())), TreeSpec::dict({})});
    out.metadata = {{"source", source_}, {"reader", "torchscript"}, {"torch_version", TORCH_VERSION}};
    // Control flow resolved from the example inputs' sizes (not only their
    // ranks): the graph holds for inputs of these shapes.
    if (specialized_sizes_) {
      std::string shapes;
      for (ValueId in : out.graph.inputs()) shapes += (shapes.empty() ? "" : ", ") + shape_str(*out.graph.value(in).shape);
      out.metadata["specialized_to_input_shapes"] = shapes;
    }
    try {
      inplace_to_functional(out.graph);
    } catch (const Error& e) {
      fail(e.code(), source_ + ": " + e.message());
    }
    name_functional_arguments(out.graph);
    out.graph.verify();
    return out;
  }

 private:
  enum class SlotKind { kValue, kConstant, kTensorList, kStructure };
  struct Slot {
    SlotKind kind = SlotKind::kValue;
    ValueId id;
    c10::IValue constant;
    std::vector<ValueId> list;
    std::vector<bool> present = {};  // Tensor?[]: which entries `list` fills (empty: all)
  };

  [[noreturn]] void unsupported(const tj::Node* n, const std::string& why) const {
    fail(ErrorCode::kUnsupported, source_ + ": " + describe(n) + ": " + why);
  }

  // Replaces each chain of prim::GetAttr from the module (input 0) by the
  // constant it reads: weights and buffers (copied: the graph owns its
  // weights), numbers, strings; `training` reads false. Returns false, leaving
  // `g` for freezing to redo, when something is beyond that: an attribute
  // written (prim::SetAttr), a module used other than for its attributes (an
  // interface call), an attribute written in place, or one of a type a
  // constant cannot hold.
  static bool read_attributes(std::shared_ptr<tj::Graph>& g, const tj::Module& module) {
    std::vector<tj::Node*> reads;
    bool simple = true;
    std::function<void(tj::Block*)> walk = [&](tj::Block* b) {
      for (tj::Node* n : b->nodes()) {
        if (n->kind() == c10::prim::SetAttr || n->kind() == c10::prim::CallMethod) simple = false;
        if (n->kind() == c10::prim::GetAttr) reads.push_back(n);
        for (tj::Block* sub : n->blocks()) walk(sub);
      }
    };
    walk(g->block());
    if (!simple) return false;
    tj::Value* self = g->inputs().at(0);
    std::unordered_map<tj::Value*, c10::IValue> objects{{self, module._ivalue()}};
    std::unordered_map<tj::Value*, std::string> paths{{self, "self"}};  // "self.down0.net.0", for the weights' names
    std::vector<std::pair<tj::Node*, c10::IValue>> constants;
    for (tj::Node* n : reads) {  // in graph order: a chain's head comes first
      auto owner = objects.find(n->input(0));
      if (owner == objects.end() || !owner->second.isObject()) return false;
      const std::string& name = n->s(c10::attr::name);
      const auto& object = owner->second.toObject();
      if (!object->type()->hasAttribute(name)) return false;
      c10::IValue value = name == "training" && object->type()->is_module() ? c10::IValue(false) : object->getAttr(name);
      paths[n->output()] = paths[n->input(0)] + "." + name;
      if (value.isObject()) {
        objects.emplace(n->output(), value);
        continue;
      }
      if (value.isTensor()) {
        if (!n->output()->type()->cast<c10::TensorType>()) return false;
        value = value.toTensor().detach().clone();
      } else if (!(value.isInt() || value.isDouble() || value.isBool() || value.isString() || value.isNone() ||
                   value.isIntList() || value.isDoubleList() || value.isBoolList())) {
        return false;
      }
      constants.emplace_back(n, std::move(value));
    }
    // A module used for anything but reading its attributes (passed to a call,
    // returned) needs freezing.
    for (const auto& [v, object] : objects) {
      for (const tj::Use& use : v->uses()) {
        if (use.user->kind() != c10::prim::GetAttr) return false;
      }
    }
    for (auto& [n, value] : constants) {
      // A weight written in place (a running statistic updated in forward) is not a constant.
      for (const tj::Use& use : n->output()->uses()) {
        const std::string kind = use.user->kind().toQualString();
        if (is_inplace_op(kind) && use.offset == 0) return false;
      }
    }
    // Equal weights become one constant, as freezing makes them (a batch
    // norm's weight of ones is every other's): bucketed by dtype, shape and
    // a hash of their ends, then compared whole.
    struct Pooled {
      tj::Value* value;
      at::Tensor data;
    };
    std::map<std::tuple<int, std::vector<std::int64_t>, std::uint64_t>, std::vector<Pooled>> pool;
    for (auto& [n, value] : constants) {
      tj::Value* c = nullptr;
      if (value.isTensor()) {
        const at::Tensor t = value.toTensor().contiguous();
        auto& bucket = pool[{static_cast<int>(t.scalar_type()), t.sizes().vec(), edge_hash(t)}];
        for (const Pooled& p : bucket) {
          if (at::equal(p.data, t)) c = p.value;
        }
        if (!c) {
          tj::WithInsertPoint guard(g->block()->nodes().front());
          c = g->insertConstant(t);
          c->setDebugName(paths[n->output()]);
          bucket.push_back({c, t});
        }
      } else {
        tj::WithInsertPoint guard(n);
        c = g->insertConstant(value);
      }
      n->output()->replaceAllUsesWith(c);
    }
    for (auto it = reads.rbegin(); it != reads.rend(); ++it) {
      if (!(*it)->hasUses()) (*it)->destroy();
    }
    return true;
  }

  // torch::jit::EliminateExceptions in one linear walk (LibTorch's takes a
  // tenth of a second on a 1,000-node graph): where one branch of an If
  // raises, the condition becomes the constant that takes the other, and
  // constant propagation drops the If.
  static void take_branches_that_do_not_raise(tj::Block* block) {
    auto raises = [](tj::Block* b) {
      for (tj::Node* n : b->nodes()) {
        if (n->kind() == c10::prim::RaiseException) return true;
      }
      return false;
    };
    for (tj::Node* n : block->nodes()) {
      for (tj::Block* sub : n->blocks()) take_branches_that_do_not_raise(sub);
      if (n->kind() != c10::prim::If) continue;
      const bool then_raises = raises(n->blocks()[0]);
      if (then_raises == raises(n->blocks()[1])) continue;
      tj::WithInsertPoint guard(n);
      n->replaceInput(0, n->owningGraph()->insertConstant(!then_raises));
    }
  }

  // A hash of a tensor's first and last bytes: equal tensors hash equal.
  static std::uint64_t edge_hash(const at::Tensor& t) {
    const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
    const std::size_t n = t.nbytes();
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&](std::size_t from, std::size_t to) {
      for (std::size_t i = from; i < to; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
    };
    mix(0, std::min<std::size_t>(n, 64));
    mix(n > 64 ? std::max<std::size_t>(64, n - 64) : n, n);
    return h ^ n;
  }

  static bool contains(const tj::Block* block, std::initializer_list<c10::Symbol> kinds) {
    for (const tj::Node* n : block->nodes()) {
      if (std::find(kinds.begin(), kinds.end(), n->kind()) != kinds.end()) return true;
      for (const tj::Block* sub : n->blocks()) {
        if (contains(sub, kinds)) return true;
      }
    }
    return false;
  }

  // A list filled by appends (encoders appending skips in a loop over a
  // ModuleList, which scripting unrolls) is the list of its elements, and a
  // read of it by a constant index is the element: no list op is left for a
  // backend. Lists that escape or change under a loop LibTorch's pass leaves,
  // and convert() names them.
  static void remove_list_mutation(std::shared_ptr<tj::Graph>& g) {
    if (!contains(g->block(), {c10::aten::append, c10::aten::insert, c10::aten::_set_item, c10::aten::pop})) return;
    tj::RemoveListMutation(g);
    tj::PeepholeOptimizeListIdioms(g, /*refine_list_len=*/true);
    tj::ConstantPropagation(g);
    tj::EliminateDeadCode(g);
  }

  static bool has_control_flow(const tj::Block* block) {
    for (const tj::Node* n : block->nodes()) {
      if (n->kind() == c10::prim::If || n->kind() == c10::prim::Loop) return true;
    }
    return false;
  }

  // Loops and branches that depend only on the inputs' shapes (a scripted
  // F.interpolate loops over the input's dims; a scripted instance norm checks
  // its sizes) resolved for the example inputs' shapes: aten::dim folds to
  // the rank, then the sizes that feed control flow fold to the example's,
  // loops whose trip count became constant unroll and branches whose
  // condition did go, to a fixed point. Control flow on tensor values stays
  // (check_static refuses it).
  void specialize(std::shared_ptr<tj::Graph>& g, const tj::Module& frozen, const std::vector<c10::IValue>& inputs) {
    for (bool sizes : {false, true}) {
      for (int round = 0; round < 32 && has_control_flow(g->block()); ++round) {
        if (!fold_shape_queries(g, frozen, inputs, sizes)) break;
        tj::ConstantPropagation(g);
        tj::UnrollConstantLoops(g);
        // An unrolled `[s for _ in range(dim)]` appends to a list: made a list of its elements.
        remove_list_mutation(g);
        tj::ConstantPropagation(g);
        tj::EliminateDeadCode(g);
      }
      if (!has_control_flow(g->block())) return;
    }
  }

  // Replaces what the example inputs' shapes decide by constants: every
  // top-level aten::dim and len(x.size()), and (with `sizes`) each aten::size
  // whose value reaches a loop's trip count or a branch's condition. Returns
  // whether anything changed.
  bool fold_shape_queries(std::shared_ptr<tj::Graph>& g, const tj::Module& frozen, const std::vector<c10::IValue>& inputs, bool sizes) {
    std::set<const tj::Node*> feeds_control;
    if (sizes) {
      std::vector<const tj::Value*> work;
      for (const tj::Node* n : g->nodes()) {
        if (n->kind() == c10::prim::If || n->kind() == c10::prim::Loop) {
          for (const tj::Value* in : n->inputs()) work.push_back(in);
        }
      }
      while (!work.empty()) {
        const tj::Node* p = work.back()->node();
        work.pop_back();
        if (p->owningBlock() != g->block() || !feeds_control.insert(p).second) continue;
        for (const tj::Value* in : p->inputs()) work.push_back(in);
      }
    }
    std::vector<tj::Node*> targets;
    for (tj::Node* n : g->nodes()) {
      const bool on_tensor = n->inputs().size() >= 1 && n->input(0)->type()->cast<c10::TensorType>();
      const bool dim = n->kind() == c10::aten::dim && on_tensor;
      const bool rank = n->kind() == c10::aten::len && n->input(0)->node()->kind() == c10::aten::size &&
                        n->input(0)->node()->inputs().size() == 1;
      const bool size = sizes && n->kind() == c10::aten::size && on_tensor && feeds_control.count(n);
      if ((dim || rank || size) && n->outputs().size() == 1) targets.push_back(n);
    }
    if (targets.empty()) return false;
    // Their values for the example inputs, from one run of a copy of the graph.
    std::vector<const tj::Value*> wanted;
    for (tj::Node* n : targets) wanted.push_back(n->output());
    const std::vector<c10::IValue> values = run_for(*g, wanted, frozen, inputs);
    if (sizes) specialized_sizes_ = true;
    for (std::size_t k = 0; k < targets.size(); ++k) {
      tj::Node* n = targets[k];
      tj::WithInsertPoint guard(n);
      tj::Value* c = g->insertConstant(values.at(k));
      n->output()->replaceAllUsesWith(c);
    }
    return true;
  }

  // Control flow left after freezing (and specializing) depends on run-time values: no static graph can say it.
  void check_static(const tj::Block* block, bool had_shapes) const {
    const std::string hint = had_shapes ? "" : " (if it depends only on the inputs' shapes, example inputs or --input-shape resolve it)";
    for (const tj::Node* n : block->nodes()) {
      const std::string kind = n->kind().toQualString();
      if (kind == "prim::If") unsupported(n, "branches on a value known only at run time (a tensor's values, say); the graph would depend on the input" + hint);
      if (kind == "prim::Loop") unsupported(n, "loops a number of times known only at run time; the graph would depend on the input" + hint);
      if (kind == "prim::GetAttr" || kind == "prim::SetAttr") unsupported(n, "reads or writes a module attribute that freezing could not resolve");
      if (kind == "prim::CallMethod" || kind == "prim::CallFunction" || kind == "prim::PythonOp") unsupported(n, "calls code that could not be inlined");
    }
  }

  // An in-place op's written argument is `self` (aten::dropout_(Tensor(a!)
  // self, ...)); its functional form may call it otherwise (aten::dropout(Tensor
  // input, ...)). After inplace_to_functional, the argument names follow the
  // functional schema, so that a backend fills it by name.
  static void name_functional_arguments(Graph& graph) {
    for (NodeId id : graph.nodes()) {
      const Node& n = graph.node(id);
      const AttributeValue* a = n.attributes.find(kArgNamesAttribute);
      if (!a || !std::holds_alternative<std::vector<std::string>>(*a)) continue;
      std::vector<std::string> names = std::get<std::vector<std::string>>(*a);
      if (std::find(names.begin(), names.end(), "self") == names.end()) continue;
      const auto op = tj::findOperatorFor(c10::OperatorName(n.op, n.attributes.get_string(kOverloadAttribute).value_or("")));
      if (!op || op->schema().arguments().empty() || op->schema().argumentIndexWithName("self")) continue;
      for (auto& name : names) {
        if (name == "self") name = op->schema().arguments()[0].name();
      }
      graph.set_attribute(id, std::string(kArgNamesAttribute), std::move(names));
    }
  }

  std::vector<c10::IValue> make_probe_inputs(const tj::Graph& g) {
    const std::size_t n = g.inputs().size() - 1;  // input 0 is the module itself
    std::vector<c10::IValue> out;
    if (!options_.example_inputs.empty()) {
      if (options_.example_inputs.size() != n) {
        fail(ErrorCode::kInvalidArgument, source_ + ": forward takes " + std::to_string(n) + " inputs, given " +
                                              std::to_string(options_.example_inputs.size()) + " example inputs");
      }
      // A clone: the module may write its inputs in place.
      for (const auto& t : options_.example_inputs) out.emplace_back(to_aten(t).clone());
    } else if (!options_.signature.empty()) {
      if (options_.signature.size() != n) {
        fail(ErrorCode::kInvalidArgument, source_ + ": forward takes " + std::to_string(n) + " inputs, given a signature of " +
                                              std::to_string(options_.signature.size()));
      }
      for (const auto& s : options_.signature) out.emplace_back(at::ones(s.shape, at::TensorOptions().dtype(to_aten_dtype(s.dtype))));
    }
    return out;
  }

  // The values of `wanted` (outputs of top-level nodes of `g`) when the module
  // runs on `inputs`: one run of a copy of `g` that returns them too.
  std::vector<c10::IValue> run_for(tj::Graph& g, const std::vector<const tj::Value*>& wanted, const tj::Module& frozen,
                                   const std::vector<c10::IValue>& inputs) const {
    std::shared_ptr<tj::Graph> copy = g.copy();
    std::unordered_map<const tj::Value*, tj::Value*> twin;
    auto original = g.nodes().begin();
    for (tj::Node* n : copy->nodes()) {
      for (std::size_t i = 0; i < n->outputs().size(); ++i) twin[(*original)->output(i)] = n->output(i);
      ++original;
    }
    const std::size_t first_extra = copy->outputs().size();
    for (const tj::Value* v : wanted) copy->registerOutput(twin.at(v));
    std::vector<c10::IValue> stack;
    stack.push_back(frozen._ivalue());
    for (const auto& v : inputs) stack.push_back(v);
    translate_torch_errors(ErrorCode::kShapeMismatch, source_ + ": running the module on the example inputs failed", [&] {
      tj::Code code(copy, "tracegraph_probe");
      tj::InterpreterState state(code);
      state.run(stack);
    });
    return std::vector<c10::IValue>(stack.begin() + static_cast<std::ptrdiff_t>(first_extra), stack.end());
  }

  // Runs a copy of the graph with every intermediate value made an output, to
  // learn each value's dtype and shape.
  void probe(const std::shared_ptr<tj::Graph>& g, const tj::Module& frozen, const std::vector<c10::IValue>& inputs) {
    std::vector<const tj::Value*> originals;
    for (const tj::Node* n : g->nodes()) {
      if (n->kind() == c10::prim::Constant) continue;
      for (const tj::Value* o : n->outputs()) {
        const c10::TypePtr& t = o->type();
        const bool wanted = t->cast<c10::TensorType>() || t->kind() == c10::TypeKind::IntType ||
                            t->kind() == c10::TypeKind::FloatType || t->kind() == c10::TypeKind::BoolType ||
                            t->kind() == c10::TypeKind::NumberType ||  // item()'s Scalar
                            (t->cast<c10::ListType>() && t->cast<c10::ListType>()->getElementType()->kind() == c10::TypeKind::IntType);
        if (wanted) originals.push_back(o);
      }
    }
    const std::vector<c10::IValue> values = run_for(*g, originals, frozen, inputs);
    for (std::size_t i = 0; i < originals.size(); ++i) {
      const c10::IValue& iv = values.at(i);
      TypeInfo info;
      if (iv.isTensor()) {
        const at::Tensor& t = iv.toTensor();
        try {
          info.dtype = from_aten_dtype(t.scalar_type());
        } catch (const Error&) {
        }
        info.shape = symbolic(Shape(t.sizes().begin(), t.sizes().end()));
      } else if (iv.isInt()) {
        info = {DType::kInt64, SymbolicShape{}};
      } else if (iv.isDouble()) {
        info = {DType::kFloat64, SymbolicShape{}};
      } else if (iv.isBool()) {
        info = {DType::kBool, SymbolicShape{}};
      } else if (iv.isIntList()) {
        info = {DType::kInt64, SymbolicShape{Dim::of(static_cast<std::int64_t>(iv.toIntList().size()))}};
      }
      probed_[originals[i]] = info;
    }
    mark_data_dependent(*g);
  }

  // The sizes the example run gave where the values decide them (nonzero's
  // count, what a boolean mask selects) become symbols, u0, u1, ... as
  // torch.export names them; a value of the same shape as an input carrying
  // such a symbol (an elementwise op on it) carries it too.
  void mark_data_dependent(const tj::Graph& g) {
    int next = 0;
    auto is_mask = [&](const tj::Value* v) {
      auto it = probed_.find(v);
      return it != probed_.end() && it->second.dtype == DType::kBool;
    };
    auto symbolic_dims = [](const TypeInfo& t) {
      return t.shape && std::any_of(t.shape->begin(), t.shape->end(), [](const Dim& d) { return !d.is_static(); });
    };
    const std::unordered_map<const tj::Value*, TypeInfo> ran = probed_;  // the sizes of the example run, all static
    for (const tj::Node* n : g.nodes()) {
      if (n->outputs().empty() || !probed_.count(n->output(0))) continue;
      TypeInfo& out = probed_[n->output(0)];
      if (!out.shape) continue;
      // Which dim of the first output the values decide, if any.
      std::optional<std::size_t> decided;
      const std::string kind = n->kind().toQualString();
      if (kind == "aten::nonzero" || kind == "aten::argwhere" || kind == "aten::masked_select") decided = 0;
      if (kind == "aten::index" && n->inputs().size() == 2 && n->input(1)->node()->kind() == c10::prim::ListConstruct) {
        const auto items = n->input(1)->node()->inputs();
        std::size_t at = 0, given = 0;
        for (std::size_t k = 0; k < items.size(); ++k) {
          if (items[k]->type()->kind() == c10::TypeKind::NoneType) continue;
          ++given;
          if (is_mask(items[k])) at = k;
          else at = items.size();  // integer indices beside it: not followed here
        }
        if (given == 1 && at < items.size() && at < out.shape->size()) decided = at;
      }
      if (decided) {
        (*out.shape)[*decided] = Dim::sym("u" + std::to_string(next++));
        continue;
      }
      for (const tj::Value* in : n->inputs()) {
        auto it = probed_.find(in);
        if (it != probed_.end() && symbolic_dims(it->second) && ran.at(in).shape == ran.at(n->output(0)).shape) {
          out.shape = it->second.shape;
          break;
        }
      }
    }
  }

  TypeInfo type_of(const tj::Value* v) const {
    auto it = probed_.find(v);
    return it != probed_.end() ? it->second : static_type(v);
  }

  NewValue new_value(const tj::Value* v) const {
    TypeInfo t = type_of(v);
    return NewValue(graph_.unique_value_name(v->debugName()), t.dtype, t.shape);
  }

  // A constant scalar needed as a node input (a list element computed partly
  // at run time): a 0-d constant tensor.
  ValueId materialize(const tj::Node* user, const c10::IValue& iv, const std::string& hint) {
    Tensor t;
    if (iv.isInt()) t = Tensor::from_vector<std::int64_t>({iv.toInt()}, {});
    else if (iv.isDouble()) t = Tensor::from_vector<double>({iv.toDouble()}, {});
    else if (iv.isBool()) t = Tensor::from_vector<bool>({iv.toBool()}, {});
    else unsupported(user, "a constant of type " + iv.tagKind() + " is used as a run-time value");
    return graph_.add_constant(graph_.unique_value_name(hint), std::move(t));
  }

  const Slot& slot(const tj::Node* user, const tj::Value* v) const {
    auto it = slots_.find(v);
    if (it == slots_.end()) unsupported(user, "reads %" + v->debugName() + ", which no node the reader understood produced");
    return it->second;
  }

  void convert(tj::Graph& g) {
    // Graph inputs; input 0 is the module itself.
    for (std::size_t i = 1; i < g.inputs().size(); ++i) {
      const tj::Value* in = g.inputs()[i];
      if (!in->type()->cast<c10::TensorType>()) {
        fail(ErrorCode::kUnsupported, source_ + ": forward input %" + in->debugName() + " is a " + in->type()->str() +
                                          "; only tensor inputs are read");
      }
      TypeInfo t = type_of(in);
      if (!options_.example_inputs.empty()) {
        const Tensor& e = options_.example_inputs[i - 1];
        t = {e.dtype(), symbolic(e.shape())};
      } else if (!options_.signature.empty()) {
        t = {options_.signature[i - 1].dtype, symbolic(options_.signature[i - 1].shape)};
      }
      slots_[in] = Slot{SlotKind::kValue, graph_.add_input(graph_.unique_value_name(in->debugName()), t.dtype, t.shape), {}, {}};
    }
    for (tj::Node* n : g.nodes()) convert_node(n);
    if (g.outputs().size() != 1) fail(ErrorCode::kUnsupported, source_ + ": forward returns " + std::to_string(g.outputs().size()) + " values");
    out_spec_ = output_spec(g.outputs()[0]);
  }

  void convert_node(const tj::Node* n) {
    const auto kind = n->kind();
    if (kind == c10::prim::Constant) {
      const tj::Value* out = n->output();
      c10::IValue iv = *tj::toIValue(out);
      if (iv.isTensor()) {
        slots_[out] = Slot{SlotKind::kValue, graph_.add_constant(graph_.unique_value_name(out->debugName()), from_aten(iv.toTensor())), {}, {}};
      } else {
        slots_[out] = Slot{SlotKind::kConstant, {}, iv, {}};
      }
      return;
    }
    if (kind == c10::prim::ListConstruct) return convert_list(n);
    if (kind == c10::prim::TupleConstruct || kind == c10::prim::DictConstruct) {
      // Only the return value may be built of tuples and dicts: they become the out_spec.
      for (const auto& use : n->output()->uses()) {
        if (use.user->kind() != c10::prim::Return && use.user->kind() != c10::prim::TupleConstruct &&
            use.user->kind() != c10::prim::DictConstruct && use.user->kind() != c10::prim::ListConstruct) {
          unsupported(n, "builds a tuple or dict that " + describe(use.user) + " reads; only returned structures are read");
        }
      }
      slots_[n->output()] = Slot{SlotKind::kStructure, {}, {}, {}};
      return;
    }
    if (kind == c10::prim::TupleUnpack || kind == c10::prim::ListUnpack) {
      const Slot& s = slot(n, n->input(0));
      if (s.kind == SlotKind::kTensorList && s.list.size() == n->outputs().size()) {
        for (std::size_t i = 0; i < n->outputs().size(); ++i) slots_[n->output(i)] = Slot{SlotKind::kValue, s.list[i], {}, {}};
        return;
      }
      if (s.kind == SlotKind::kValue && unpacked_.count(n->input(0))) return;  // outputs mapped by the producer
      auto list_type = n->input(0)->type()->cast<c10::ListType>();
      if (s.kind == SlotKind::kValue && list_type && list_type->getElementType()->kind() == c10::TypeKind::IntType) {
        // `b, c, h, w = x.size()`: element i of a list computed at run time.
        for (std::size_t i = 0; i < n->outputs().size(); ++i) {
          Attributes attrs;
          attrs.set("idx", static_cast<std::int64_t>(i));
          attrs.set(std::string(kArgNamesAttribute), std::vector<std::string>{"list"});
          attrs.set(std::string(kOverloadAttribute), std::string("t"));
          const NodeId id = graph_.add_node("aten::__getitem__", {s.id}, {new_value(n->output(i))}, std::move(attrs));
          slots_[n->output(i)] = Slot{SlotKind::kValue, graph_.node(id).outputs[0], {}, {}};
        }
        return;
      }
      unsupported(n, "unpacks a value whose elements the reader cannot see");
    }
    convert_op(n);
  }

  void convert_list(const tj::Node* n) {
    const tj::Value* out = n->output();
    auto list_type = out->type()->cast<c10::ListType>();
    const c10::TypePtr element = list_type ? list_type->getElementType() : nullptr;
    const auto optional = element ? element->cast<c10::OptionalType>() : nullptr;
    const bool tensors = element && element->cast<c10::TensorType>() != nullptr;
    const bool optional_tensors = optional && optional->getElementType()->cast<c10::TensorType>() != nullptr;  // index's Tensor?[]
    if (tensors || optional_tensors) {
      Slot s{SlotKind::kTensorList, {}, {}, {}, {}};
      bool gap = false;
      for (const tj::Value* in : n->inputs()) {
        const Slot& e = slot(n, in);
        const bool none = optional_tensors && e.kind == SlotKind::kConstant && e.constant.isNone();
        if (!none && e.kind != SlotKind::kValue) unsupported(n, "a tensor list element is not a tensor value");
        if (!none) s.list.push_back(e.id);
        s.present.push_back(!none);
        gap = gap || none;
      }
      if (!gap) s.present.clear();
      slots_[out] = std::move(s);
      return;
    }
    bool all_constant = true;
    for (const tj::Value* in : n->inputs()) all_constant = all_constant && slot(n, in).kind == SlotKind::kConstant;
    if (all_constant) {
      c10::impl::GenericList list(list_type ? list_type->getElementType() : c10::AnyType::get());
      for (const tj::Value* in : n->inputs()) list.push_back(slot(n, in).constant);
      slots_[out] = Slot{SlotKind::kConstant, {}, c10::IValue(list), {}};
      return;
    }
    // A list computed at run time (view(x, [n, -1]) with n from x.size(0)): a node.
    std::vector<ValueId> inputs;
    for (const tj::Value* in : n->inputs()) {
      const Slot& e = slot(n, in);
      if (e.kind == SlotKind::kValue) inputs.push_back(e.id);
      else if (e.kind == SlotKind::kConstant) inputs.push_back(materialize(n, e.constant, out->debugName() + ".item"));
      else unsupported(n, "a list element is neither a value nor a constant");
    }
    NodeId id = graph_.add_node("prim::ListConstruct", std::move(inputs), {new_value(out)});
    slots_[out] = Slot{SlotKind::kValue, graph_.node(id).outputs[0], {}, {}};
  }

  void convert_op(const tj::Node* n) {
    const c10::FunctionSchema* schema = n->maybeSchema();
    if (!schema) unsupported(n, "has no operator schema this LibTorch knows");
    const auto& args = schema->arguments();
    if (n->inputs().size() > args.size()) unsupported(n, "has more inputs than its schema's arguments");
    std::vector<ValueId> inputs;
    std::vector<std::string> arg_names;
    Attributes attrs;
    for (std::size_t i = 0; i < n->inputs().size(); ++i) {
      const std::string& arg = args[i].name();
      const Slot& s = slot(n, n->input(i));
      switch (s.kind) {
        case SlotKind::kValue:
          inputs.push_back(s.id);
          arg_names.push_back(arg);
          break;
        case SlotKind::kTensorList:
          for (ValueId v : s.list) {
            inputs.push_back(v);
            arg_names.push_back(arg);
          }
          if (!s.present.empty()) attrs.set(arg, s.present);  // the Nones of a Tensor?[] (docs/format.md)
          break;
        case SlotKind::kConstant:
          if (s.constant.isNone()) break;  // an absent optional argument
          if (auto a = to_attribute(s.constant)) {
            attrs.set(arg, std::move(*a));
          } else {
            unsupported(n, "argument '" + arg + "' is a constant of type " + s.constant.tagKind() + " the format cannot hold");
          }
          break;
        case SlotKind::kStructure:
          unsupported(n, "argument '" + arg + "' is a tuple or dict");
      }
    }
    if (!inputs.empty()) attrs.set(std::string(kArgNamesAttribute), arg_names);
    // The exact overload (aten::add.Tensor or aten::add.Scalar), so that a
    // backend runs the same kernel LibTorch would.
    if (!schema->overload_name().empty()) attrs.set(std::string(kOverloadAttribute), schema->overload_name());

    // An op returning a tensor list that is only unpacked (chunk, split,
    // unbind) becomes one node with one output per element.
    std::vector<const tj::Value*> outputs(n->outputs().begin(), n->outputs().end());
    if (outputs.size() == 1 && outputs[0]->type()->cast<c10::ListType>() && !outputs[0]->uses().empty()) {
      const tj::Node* unpack = outputs[0]->uses()[0].user;
      bool only_unpacked = true;
      for (const auto& use : outputs[0]->uses()) only_unpacked = only_unpacked && use.user->kind() == c10::prim::ListUnpack;
      if (only_unpacked && outputs[0]->type()->cast<c10::ListType>()->getElementType()->cast<c10::TensorType>()) {
        std::vector<NewValue> outs;
        for (const tj::Value* o : unpack->outputs()) outs.push_back(new_value(o));
        NodeId id = graph_.add_node(n->kind().toQualString(), std::move(inputs), std::move(outs), std::move(attrs));
        for (const auto& use : outputs[0]->uses()) {
          for (std::size_t k = 0; k < use.user->outputs().size(); ++k) {
            slots_[use.user->output(k)] = Slot{SlotKind::kValue, graph_.node(id).outputs.at(k), {}, {}};
          }
        }
        slots_[outputs[0]] = Slot{SlotKind::kValue, graph_.node(id).outputs[0], {}, {}};
        unpacked_.insert(outputs[0]);
        return;
      }
    }
    std::vector<NewValue> outs;
    for (const tj::Value* o : outputs) outs.push_back(new_value(o));
    NodeId id = graph_.add_node(n->kind().toQualString(), std::move(inputs), std::move(outs), std::move(attrs));
    for (std::size_t k = 0; k < outputs.size(); ++k) slots_[outputs[k]] = Slot{SlotKind::kValue, graph_.node(id).outputs[k], {}, {}};
  }

  TreeSpec output_spec(const tj::Value* v) {
    const tj::Node* p = v->node();
    if (p->kind() == c10::prim::TupleConstruct || (p->kind() == c10::prim::ListConstruct && slot(p, v).kind == SlotKind::kTensorList)) {
      std::vector<TreeSpec> children;
      for (const tj::Value* in : p->inputs()) children.push_back(output_spec(in));
      return p->kind() == c10::prim::TupleConstruct ? TreeSpec::tuple(std::move(children)) : TreeSpec::list(std::move(children));
    }
    if (p->kind() == c10::prim::DictConstruct) {
      std::vector<std::pair<std::string, TreeSpec>> items;
      for (std::size_t i = 0; i + 1 < p->inputs().size(); i += 2) {
        const Slot& key = slot(p, p->input(i));
        if (key.kind != SlotKind::kConstant || !key.constant.isString()) unsupported(p, "a returned dict has a key that is not a constant string");
        items.emplace_back(key.constant.toStringRef(), output_spec(p->input(i + 1)));
      }
      return TreeSpec::dict(std::move(items));
    }
    const Slot& s = slot(p, v);
    if (s.kind == SlotKind::kConstant && s.constant.isNone()) return TreeSpec::none();
    if (s.kind != SlotKind::kValue) unsupported(p, "returns a value that is not a tensor");
    graph_.add_output(s.id);
    return TreeSpec::leaf();
  }

  std::string source_;
  const TorchScriptOptions& options_;
  Graph graph_;
  std::optional<TreeSpec> out_spec_;
  std::unordered_map<const tj::Value*, Slot> slots_;
  std::unordered_map<const tj::Value*, TypeInfo> probed_;
  std::set<const tj::Value*> unpacked_;
  bool specialized_sizes_ = false;
};

// Why torch::jit::load refused a file, as a typed error.
[[noreturn]] void fail_load(const std::string& path, const std::string& torch_message) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  if (in.gcount() < 4 || !(magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4)) {
    fail(ErrorCode::kParse, path + ": not a TorchScript archive (no zip header at byte 0)");
  }
  const std::string m = first_line(torch_message);
  // A custom op whose library (torchvision's C++ ops, a project's own) is not
  // loaded in this process: LibTorch cannot compile the code that calls it.
  constexpr std::string_view kUnknownOp = "Unknown builtin op: ";
  if (m.starts_with(kUnknownOp)) {
    std::string op = m.substr(kUnknownOp.size());
    if (op.ends_with('.')) op.pop_back();
    fail(ErrorCode::kUnsupported, path + ": calls " + op + ", an op LibTorch here does not have: it is registered by " +
                                      "the library that defines it (" + op.substr(0, op.find("::")) + "), which this build does not load");
  }
  if (m.find("central directory") != std::string::npos || m.find("truncated") != std::string::npos ||
      m.find("end of") != std::string::npos) {
    fail(ErrorCode::kTruncated, path + ": the zip archive ends early (" + m + ")");
  }
  fail(ErrorCode::kSchema, path + ": a zip archive, but not a TorchScript module LibTorch can load (" + m + ")");
}

}  // namespace

ExportedGraph read_torchscript(const torch::jit::Module& module, const TorchScriptOptions& options, std::string_view source) {
  // LibTorch's own errors, translated at the edge.
  return translate_torch_errors(ErrorCode::kUnsupported, std::string(source), [&] { return Reader(std::string(source), options).read(module); });
}

torch::jit::Module load_torchscript_module(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(ErrorCode::kIo, path + ": is a directory, not a TorchScript file");
  if (!std::filesystem::exists(path, ec)) fail(ErrorCode::kIo, path + ": no such file");
  if (!std::filesystem::is_regular_file(path, ec)) fail(ErrorCode::kIo, path + ": not a regular file");
  // What LibTorch would parse is checked by the core's bounded readers first:
  // its parser recurses per bracket, its unpickler trusts lengths.
  screen_torchscript_archive(path);
  torch::jit::Module module;
  try {
    module = torch::jit::load(path, c10::Device(c10::kCPU));
  } catch (const std::exception& e) {
    fail_load(path, e.what());
  }
  return module;
}

ExportedGraph read_torchscript(const std::string& path, const TorchScriptOptions& options) {
  return read_torchscript(load_torchscript_module(path), options, path);
}

std::vector<std::string> torchscript_input_names(const torch::jit::Module& module) {
  // convert() adds the inputs first, each under its debug name (input 0 is
  // the module itself); the names of one graph are already unique.
  std::vector<std::string> names;
  const auto inputs = module.get_method("forward").graph()->inputs();
  for (std::size_t i = 1; i < inputs.size(); ++i) names.push_back(inputs[i]->debugName());
  return names;
}

}  // namespace tracegraph::native
