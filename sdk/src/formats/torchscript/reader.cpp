#include "formats/torchscript/reader.h"

#include <algorithm>
#include <optional>
#include <string>

#include "tracegraph/error.h"
#include "tracegraph/op_table.h"
#include "tracegraph/optimizer.h"
#include "tracegraph/transforms/inplace_to_functional.h"
#include "tracegraph/transforms/transforms.h"

namespace tracegraph::torchscript {

ExportedGraph Reader::read() {
  for (const ZipEntry& e : zip_.entries()) {
    if (name_in_root(e.name) == "data.pkl") root_ = e.name.substr(0, e.name.size() - std::string_view("data.pkl").size());
  }
  if (!zip_.find(root_ + "data.pkl")) {
    fail(ErrorCode::kUnsupported, zip_.source() + ": no data.pkl: not a TorchScript archive (torch.jit.save)");
  }
  data_ = read_pickle(zip_.read(root_ + "data.pkl").bytes, zip_.source() + ":" + root_ + "data.pkl", limits_);
  if (zip_.find(root_ + "constants.pkl")) {
    constants_ = read_pickle(zip_.read(root_ + "constants.pkl").bytes, zip_.source() + ":" + root_ + "constants.pkl", limits_);
  }
  if (data_->kind != PKind::kBuild || data_->callable().substr(0, 10) != "__torch__.") {
    fail(ErrorCode::kUnsupported, zip_.source() + ":" + root_ + "data.pkl holds a " + std::string(data_->callable()) +
                                      ", not a TorchScript module (a torch.save file?)");
  }
  index_module_paths();
  module_object_ = data_.get();
  Slot self;
  self.k = Slot::K::kModule;
  self.module = data_.get();
  const Function& forward = method(std::string(data_->callable()), "forward", Where{zip_.source(), 0});
  std::vector<Slot> args;
  if (!input_shapes_.empty() && input_shapes_.size() + 1 != forward.params.size()) {
    fail(ErrorCode::kInvalidArgument, forward.where.str() + ": forward takes " + std::to_string(forward.params.size() - 1) + " inputs, given " +
                                          std::to_string(input_shapes_.size()) + " input shapes");
  }
  for (std::size_t i = 1; i < forward.params.size(); ++i) {
    Slot in;
    in.k = Slot::K::kTensor;
    in.v = graph().add_input(graph().unique_value_name(forward.params[i]));
    if (!input_shapes_.empty()) {
      checked_nbytes(DType::kFloat32, input_shapes_[i - 1]);
      shapes_[in.v] = input_shapes_[i - 1];
    }
    args.push_back(in);
  }
  const Slot result = call(forward, self, args, {}, 0);
  std::vector<ValueId> outputs;
  out_.out_spec = spec_of(result, outputs, forward.where);
  graph().set_outputs(outputs);
  std::vector<TreeSpec> leaves(graph().inputs().size(), TreeSpec::leaf());
  out_.in_spec = TreeSpec::tuple({TreeSpec::tuple(std::move(leaves)), TreeSpec::dict({})});
  inplace_to_functional(graph());
  // What shape queries left behind (sizes read for a branch that is gone).
  TransformContext dce(std::nullopt, nullptr, 0);
  dead_code_elimination(graph(), dce);
  // The shapes followed from the input shapes, on the values (as the native
  // reader's probe gives them): what the activation's channel ranges and
  // the page's shapes read.
  // Nodes made since (the scatters of writes in place) follow from theirs.
  if (!input_shapes_.empty()) {
    for (NodeId id : graph().nodes()) {
      const Node& n = graph().node(id);
      if (std::any_of(n.outputs.begin(), n.outputs.end(), [&](ValueId v) { return !shapes_.count(v); })) record(id);
    }
  }
  for (const auto& [v, shape] : shapes_) {
    if (graph().is_live(v) && !graph().value(v).shape) graph().set_value_type(v, graph().value(v).dtype, symbolic(shape));
  }
  out_.metadata["reader"] = "torchscript archive";
  out_.metadata["source"] = zip_.source();
  // Control flow decided by the input shapes' sizes (not only their ranks),
  // as the native reader says it: the graph holds for inputs of these shapes.
  if (specialized_) {
    std::string shapes;
    for (const Shape& sh : input_shapes_) shapes += (shapes.empty() ? "" : ", ") + shape_str(symbolic(sh));
    out_.metadata["specialized_to_input_shapes"] = shapes;
  }
  graph().verify();
  return std::move(out_);
}

NodeId Reader::add_node(std::string op, std::vector<ValueId> inputs, std::vector<NewValue> outputs, Attributes attributes, std::string name) {
  const NodeId id = graph().add_node(std::move(op), std::move(inputs), std::move(outputs), std::move(attributes), std::move(name));
  graph().set_node_module(id, module_);
  return id;
}

void Reader::index_module_paths() {
  // Breadth first, so a module held twice (a shared submodule) takes its
  // shallowest path, as named_modules() names it; each value walked once.
  std::vector<std::pair<const PickleValue*, std::string>> level{{data_.get(), ""}};
  module_paths_.emplace(data_.get(), "");
  while (!level.empty()) {
    std::vector<std::pair<const PickleValue*, std::string>> next;
    for (const auto& [module, path] : level) {
      const PickleValue* state = module->items.size() == 2 ? module->items[1].get() : nullptr;
      if (!state || state->kind != PKind::kDict) continue;
      for (std::size_t k = 0; k + 1 < state->items.size(); k += 2) {
        const PickleValue& key = *state->items[k];
        const PickleValue* v = state->items[k + 1].get();
        if (key.kind != PKind::kString || v->kind != PKind::kBuild || v->callable().substr(0, 10) != "__torch__.") continue;
        std::string child = path.empty() ? key.text : path + "." + key.text;
        if (module_paths_.emplace(v, child).second) next.emplace_back(v, std::move(child));
      }
    }
    level = std::move(next);
  }
}

Reader::ModuleScope::ModuleScope(Reader& r, const PickleValue* object) : r_(r), saved_(r.module_), saved_object_(r.module_object_) {
  if (object == r.module_object_) return;  // a method of the module running: still its nodes
  r.module_object_ = object;
  auto it = r.module_paths_.find(object);
  if (it == r.module_paths_.end() || it->second.empty()) return;  // not a submodule by path (the root again)
  r.module_ = r.graph().add_module(it->second, module_class_name(object->callable()), r.module_);
}

std::string Reader::node_name(const std::string& base) {
  if (!graph().find_node(base)) return base;
  std::size_t& k = next_node_suffix_[base];
  for (k = std::max<std::size_t>(k, 1);; ++k) {
    std::string name = base + "." + std::to_string(k);
    if (!graph().find_node(name)) return name;
  }
}

Slot Reader::list_item(const Slot& list, std::int64_t index, const std::string& hint) {
  Attributes attrs;
  attrs.set("idx", index);
  attrs.set(std::string(kArgNamesAttribute), std::vector<std::string>{"list"});
  attrs.set(std::string(kOverloadAttribute), std::string("t"));
  Slot out;
  out.k = Slot::K::kScalar;
  out.scalar = "I";
  out.from_shape = list.from_shape;
  out.v = graph().node(add_node("aten::__getitem__", {list.v}, {NewValue(graph().unique_value_name(hint))}, std::move(attrs), node_name(hint))).outputs[0];
  if (list.known) {
    const auto n = static_cast<std::int64_t>(list.known->size());
    if (index < -n || index >= n) unsupported(Where{zip_.source(), 0}, "index " + std::to_string(index) + " of a list of " + std::to_string(n) + " sizes");
    out.known = std::vector<double>{(*list.known)[static_cast<std::size_t>(index < 0 ? index + n : index)]};
    numbers_[out.v] = *out.known;
  }
  return out;
}

TreeSpec Reader::spec_of(const Slot& s, std::vector<ValueId>& outputs, const Where& w) {
  switch (s.k) {
    case Slot::K::kTensor: outputs.push_back(s.v); return TreeSpec::leaf();
    case Slot::K::kTuple:
    case Slot::K::kList: {
      std::vector<TreeSpec> children;
      for (const Slot& x : s.elements()) children.push_back(spec_of(x, outputs, w));
      return s.k == Slot::K::kTuple ? TreeSpec::tuple(std::move(children)) : TreeSpec::list(std::move(children));
    }
    case Slot::K::kDict: {
      std::vector<std::pair<std::string, TreeSpec>> items;
      for (std::size_t k = 0; k < s.items.size(); ++k) items.emplace_back(s.keys[k], spec_of(s.items[k], outputs, w));
      return TreeSpec::dict(std::move(items));
    }
    case Slot::K::kNone: return TreeSpec::none();
    default: unsupported(w, "forward returns a value that is not a tensor or a structure of tensors");
  }
}

}  // namespace tracegraph::torchscript
