#include "formats/torchscript/reader.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tracegraph/error.h"
#include "tracegraph/op_table.h"
#include "tracegraph/shape_rules.h"

namespace tracegraph::torchscript {

Slot Reader::eval(const Expr& e, std::unordered_map<std::string, Slot>& env, const Where& w, const std::string& hint, int depth) {
  using K = Expr::K;
  switch (e.k) {
    case K::kInt: return constant_int(e.i);
    case K::kFloat: {
      Slot s;
      s.k = Slot::K::kFloat;
      s.f = e.f;
      return s;
    }
    case K::kStr: {
      Slot s;
      s.k = Slot::K::kString;
      s.s = e.s;
      return s;
    }
    case K::kName: {
      if (auto it = env.find(e.s); it != env.end()) return it->second;
      if (e.s == "None") return Slot{};
      if (e.s == "True" || e.s == "False") {
        Slot s;
        s.k = Slot::K::kBool;
        s.b = e.s == "True";
        return s;
      }
      Slot path;
      path.k = Slot::K::kPath;
      path.s = e.s;  // torch, ops, CONSTANTS, int, getattr, __torch__, ...
      return path;
    }
    case K::kTuple:
    case K::kList: {
      std::vector<Slot> items;
      for (const Expr& x : e.items) items.push_back(eval(x, env, w, hint, depth));
      return e.k == K::kTuple ? make_tuple(std::move(items), w) : make_list(std::move(items), w);
    }
    case K::kDict: {
      std::vector<std::string> keys;
      std::vector<Slot> items;
      for (std::size_t k = 0; k + 1 < e.items.size(); k += 2) {
        const Slot key = eval(e.items[k], env, w, hint, depth);
        if (key.k != Slot::K::kString) unsupported(w, "a dict with a key that is not a string");
        keys.push_back(key.s);
        items.push_back(eval(e.items[k + 1], env, w, key.s, depth));
      }
      Slot s = make_tuple(std::move(items), w, Slot::K::kDict);
      s.keys = std::move(keys);
      return s;
    }
    case K::kNeg: {
      const Slot x = eval(e.items[0], env, w, hint, depth);
      if (x.k == Slot::K::kInt) return constant_int(-x.i);
      if (x.k == Slot::K::kFloat) {
        Slot s = x;
        s.f = -x.f;
        return s;
      }
      unsupported(w, "negates a value the graph computes");
    }
    case K::kIndex: {
      const Slot base = eval(e.items[0], env, w, hint, depth);
      const Slot index = static_value(eval(e.items[1], env, w, hint, depth));
      if ((base.k == Slot::K::kTuple || base.k == Slot::K::kList) && index.k == Slot::K::kInt) return item_at(base, index.i, w);
      if (base.k == Slot::K::kRuntimeList && index.k == Slot::K::kInt) return list_item(base, index.i, hint);
      if (base.k == Slot::K::kDict && index.k == Slot::K::kString) {
        const auto at = std::find(base.keys.begin(), base.keys.end(), index.s);
        if (at == base.keys.end()) unsupported(w, "no key '" + index.s + "' in the dict");
        return base.items[static_cast<std::size_t>(at - base.keys.begin())];
      }
      if (index.k == Slot::K::kScalar) run_time(w, index, "this index");
      unsupported(w, "indexes a value whose elements the reader cannot see");
    }
    case K::kAttr: {
      const Slot base = eval(e.items[0], env, w, hint, depth);
      if (base.k == Slot::K::kPath) {
        if (base.s == "CONSTANTS" && e.s.size() > 1 && e.s[0] == 'c') return constant(e.s, w);
        Slot p = base;
        p.s += "." + e.s;
        return p;
      }
      if (base.k == Slot::K::kModule) return attribute(*base.module, e.s, w);
      unsupported(w, "reads attribute '" + e.s + "' of a value that is not a module");
    }
    case K::kCall: return eval_call(e, env, w, hint, depth);
  }
  unsupported(w, "an expression the reader does not know");
}

Slot Reader::eval_call(const Expr& e, std::unordered_map<std::string, Slot>& env, const Where& w, const std::string& hint, int depth) {
  const Expr& callee = e.items[0];
  // annotate(List[Optional[Tensor]], v): the type is not a value.
  if (callee.k == Expr::K::kName && (callee.s == "annotate" || callee.s == "unchecked_cast") && !env.count(callee.s)) {
    if (e.items.size() != 3) bad_code(w, callee.s + " takes a type and a value");
    return eval(e.items[2], env, w, hint, depth);
  }
  if (callee.k == Expr::K::kName && callee.s == "uninitialized" && !env.count(callee.s)) return Slot{};
  std::vector<Slot> args;
  std::vector<std::pair<std::string, Slot>> kwargs;
  const std::size_t positional = e.items.size() - 1 - e.keywords.size();
  for (std::size_t k = 1; k < e.items.size(); ++k) {
    Slot v = eval(e.items[k], env, w, hint, depth);
    if (k - 1 < positional) args.push_back(std::move(v));
    else kwargs.emplace_back(e.keywords[k - 1 - positional], std::move(v));
  }
  // (module).forward(x): the submodule's method, inlined.
  if (callee.k == Expr::K::kAttr) {
    const Slot object = eval(callee.items[0], env, w, hint, depth);
    if (object.k == Slot::K::kModule) {
      const Function& fn = method(std::string(object.module->callable()), callee.s, w);
      const ModuleScope scope(*this, object.module);  // the nodes it makes are the submodule's
      return call(fn, object, args, kwargs, depth + 1);
    }
  }
  const Slot f = eval(callee, env, w, hint, depth);
  if (f.k != Slot::K::kPath) unsupported(w, "calls a value that is not a function");
  const std::string& name = f.s;
  if (name == "getattr") {
    if (args.size() != 2 || args[0].k != Slot::K::kModule || args[1].k != Slot::K::kString) unsupported(w, "getattr of something other than a module's attribute");
    return attribute(*args[0].module, args[1].s, w);
  }
  if (auto folded = fold(name, args)) return *folded;
  if (auto listed = list_op(name, args, w)) return *listed;
  if (name == "torch.len" && args.size() == 1 && args[0].k == Slot::K::kModule) {  // len(self.encoders): its __len__
    return call(method(std::string(args[0].module->callable()), "__len__", w), args[0], {}, {}, depth + 1);
  }
  if (name == "torch.dim" && args.size() == 1 && is_tensor(args[0])) {
    if (auto it = shapes_.find(args[0].v); it != shapes_.end()) return constant_int(static_cast<std::int64_t>(it->second.size()));
  }
  if (name == "torch.len" && args.size() == 1 && args[0].k == Slot::K::kRuntimeList) {
    // len(x.size()): aten::len.t(t[] a) -> int, at run time
    Attributes attrs;
    attrs.set(std::string(kArgNamesAttribute), std::vector<std::string>{"a"});
    attrs.set(std::string(kOverloadAttribute), std::string("t"));
    Slot out;
    out.k = Slot::K::kScalar;
    out.scalar = "I";
    out.v = graph().node(add_node("aten::len", {args[0].v}, {NewValue(graph().unique_value_name(hint))}, std::move(attrs), node_name(hint))).outputs[0];
    out.from_shape = true;
    return out;
  }
  if (name == "torch.device") {
    if (args.size() != 1 || args[0].k != Slot::K::kString) unsupported(w, "torch.device of something other than a string");
    return args[0];
  }
  if (name == "int" || name == "float" || name == "bool") {
    if (args.size() != 1) bad_code(w, name + "() takes one argument");
    const Slot& a = args[0];
    if (a.constant_number()) {
      const double x = a.k == Slot::K::kInt ? static_cast<double>(a.i) : a.k == Slot::K::kFloat ? a.f : a.b;
      Slot s;
      if (name == "int") return constant_int(static_cast<std::int64_t>(x));
      s.k = name == "float" ? Slot::K::kFloat : Slot::K::kBool;
      s.f = x;
      s.b = x != 0;
      return s;
    }
    return aten(name == "int" ? "Int" : name == "float" ? "Float" : "Bool", args, kwargs, w, hint);
  }
  if (name == "ops.prim.NumToTensor") {
    if (args.size() != 1 || (args[0].k != Slot::K::kScalar && !args[0].constant_number())) unsupported(w, "NumToTensor of a value that is not a number");
    Slot out;
    out.k = Slot::K::kTensor;
    std::vector<ValueId> ins{as_value(args[0], hint)};
    Attributes attrs;  // prim::NumToTensor.Scalar(Scalar a) -> Tensor
    attrs.set(std::string(kArgNamesAttribute), std::vector<std::string>{"a"});
    attrs.set(std::string(kOverloadAttribute), std::string("Scalar"));
    out.v = graph().node(add_node("prim::NumToTensor", ins, {NewValue(graph().unique_value_name(hint))}, std::move(attrs), node_name(hint))).outputs[0];
    return out;
  }
  if (name == "torch.tensor" && args.size() == 1) {
    if (auto t = constant_tensor(args[0], kwargs, w)) {
      Slot out;
      out.k = Slot::K::kTensor;
      out.v = graph().add_constant(graph().unique_value_name(hint), std::move(*t));
      return out;
    }
  }
  if (name.rfind("torch.", 0) == 0 && name.find('.', 6) == std::string::npos) return aten(name.substr(6), args, kwargs, w, hint);
  if (name.rfind("ops.aten.", 0) == 0) return aten(name.substr(9), args, kwargs, w, hint);
  if (name.rfind("__torch__.", 0) == 0) {  // a function of the code: __torch__.torch.nn.functional.relu
    return call(function(name, w), Slot{}, args, kwargs, depth + 1);
  }
  unsupported(w, "calls " + name + ", which the reader does not know");
}

namespace {

// The methods of a list scripting prints as torch.NAME(list, ...) that change
// the list: read as what they do to the reader's list, never made a node.
const std::set<std::string> kChangesTheList = {"append", "insert", "extend", "pop", "_set_item", "Delete", "clear", "reverse", "sort", "remove"};

// Python's slice of n items by start:stop:step (None: the default), as
// indices in order; nullopt for a step of 0.
std::optional<std::vector<std::size_t>> slice_indices(std::int64_t n, std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
                                                      std::int64_t step) {
  if (step == 0) return std::nullopt;
  const auto clamp = [&](std::optional<std::int64_t> x, std::int64_t fallback) {
    if (!x) return fallback;
    std::int64_t v = *x < 0 ? *x + n : *x;
    return step > 0 ? std::clamp<std::int64_t>(v, 0, n) : std::clamp<std::int64_t>(v, -1, n - 1);
  };
  const std::int64_t lo = clamp(start, step > 0 ? 0 : n - 1), hi = clamp(stop, step > 0 ? n : -1);
  std::vector<std::size_t> out;
  for (std::int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) out.push_back(static_cast<std::size_t>(i));
  return out;
}

bool same_constant(const Slot& a, const Slot& b) {
  if (a.k == Slot::K::kString || b.k == Slot::K::kString) return a.k == b.k && a.s == b.s;
  const auto num = [](const Slot& x) { return x.k == Slot::K::kInt ? static_cast<double>(x.i) : x.k == Slot::K::kFloat ? x.f : x.b ? 1.0 : 0.0; };
  return num(a) == num(b);
}

double number(const Slot& x) { return x.k == Slot::K::kInt ? static_cast<double>(x.i) : x.k == Slot::K::kFloat ? x.f : x.b ? 1.0 : 0.0; }

}  // namespace

std::optional<Slot> Reader::list_op(const std::string& name, const std::vector<Slot>& args, const Where& w) {
  const auto is_list = [](const Slot& x) { return x.k == Slot::K::kList || x.k == Slot::K::kTuple || (x.k == Slot::K::kRuntimeList && x.known); };
  // The same on an int[] whose length is known only at run time: no node says it.
  static const std::set<std::string> kListOps = {"torch.list", "torch.slice", "torch.__contains__", "torch.add", "torch.mul"};
  const auto unknown = [](const Slot& x) { return x.k == Slot::K::kRuntimeList && !x.known; };
  if (kListOps.count(name) && !args.empty() && (unknown(args[0]) || (name == "torch.add" && args.size() == 2 && is_list(args[0]) && unknown(args[1])))) {
    run_time(w, unknown(args[0]) ? args[0] : args[1], "this list operation");
  }
  const std::string method = name.rfind("torch.", 0) == 0 ? name.substr(6) : std::string();
  if (!args.empty() && kChangesTheList.count(method) && args[0].k != Slot::K::kList && !is_tensor(args[0])) {
    const std::string what = "list." + method + " (" + name + ")";
    if (args[0].k == Slot::K::kRuntimeList) unsupported(w, what + " changes an int[] the graph computes (a tensor's size): the reader changes only the lists the code builds");
    if (args[0].k == Slot::K::kTuple) unsupported(w, what + " of a tuple");
    unsupported(w, what + " of a value that is not a list the reader sees while reading");
  }
  if (args.empty() || !is_list(args[0])) return std::nullopt;
  const auto index = [&](const Slot& i, const std::string& what) {
    const Slot x = static_value(i);
    if (x.k == Slot::K::kScalar) run_time(w, x, what);
    if (x.k != Slot::K::kInt) unsupported(w, what + " is not an int");
    return x.i;
  };
  // An index into n items, negative from the end: refused past them.
  const auto within = [&](std::int64_t i, std::size_t n, const std::string& what) {
    const auto size = static_cast<std::int64_t>(n);
    const std::int64_t at = i < 0 ? i + size : i;
    if (at < 0 || at >= size) unsupported(w, what + " at index " + std::to_string(i) + " of a list of " + std::to_string(n) + " items");
    return static_cast<std::size_t>(at);
  };
  if (args[0].k == Slot::K::kList && kChangesTheList.count(method)) {
    ListObject& l = *args[0].list;
    const std::string what = "list." + method;
    if (method == "append" && args.size() == 2) {
      put(l, l.items.size(), args[1], what, w);
      return Slot{};
    }
    if (method == "insert" && args.size() == 3) {  // Python clamps the index to the list
      const auto n = static_cast<std::int64_t>(l.items.size());
      std::int64_t i = index(args[1], "list.insert's index");
      i = std::clamp<std::int64_t>(i < 0 ? i + n : i, 0, n);
      put(l, static_cast<std::size_t>(i), args[2], what, w);
      return Slot{};
    }
    if (method == "extend" && args.size() == 2) {
      const auto more = as_items(args[1]);
      if (!more) unsupported(w, "list.extend by a value that is not a list the reader sees while reading");
      for (const Slot& x : *more) put(l, l.items.size(), x, what, w);
      return Slot{};
    }
    if (method == "pop" && args.size() <= 2) {
      const std::size_t at = within(args.size() == 2 ? index(args[1], "list.pop's index") : -1, l.items.size(), "list.pop");
      Slot out = l.items[at];
      l.items.erase(l.items.begin() + static_cast<std::ptrdiff_t>(at));
      return out;
    }
    if (method == "_set_item" && args.size() == 3) {  // list[i] = x
      const std::size_t at = within(index(args[1], "this index"), l.items.size(), "list[i] = x");
      l.items.erase(l.items.begin() + static_cast<std::ptrdiff_t>(at));
      put(l, at, args[2], "list[i] = x", w);
      return args[0];
    }
    if (method == "Delete" && args.size() == 2) {  // del list[i]
      const std::size_t at = within(index(args[1], "this index"), l.items.size(), "del list[i]");
      l.items.erase(l.items.begin() + static_cast<std::ptrdiff_t>(at));
      return Slot{};
    }
    if (method == "clear" && args.size() == 1) {
      l.items.clear();
      return Slot{};
    }
    if (method == "reverse" && args.size() == 1) {
      std::reverse(l.items.begin(), l.items.end());
      return Slot{};
    }
    if (method == "sort" && args.size() == 1) {
      std::vector<Slot> items;
      for (const Slot& x : l.items) items.push_back(static_value(x));
      if (!std::all_of(items.begin(), items.end(), [](const Slot& x) { return x.constant_number(); })) {
        unsupported(w, "list.sort of a list whose items are not numbers known while reading");
      }
      std::stable_sort(items.begin(), items.end(), [](const Slot& a, const Slot& b) { return number(a) < number(b); });
      l.items = std::move(items);
      return Slot{};
    }
    unsupported(w, what + " (" + name + ") with these arguments is not read");
  }
  if (name == "torch.len" && args.size() == 1) return constant_int(static_cast<std::int64_t>(as_items(args[0])->size()));
  if (name == "torch.__getitem__" && args.size() == 2) {
    if (args[0].k == Slot::K::kRuntimeList) return list_item(args[0], index(args[1], "this index"), "size");
    const std::vector<Slot>& items = args[0].elements();
    return items[within(index(args[1], "this index"), items.size(), "list[i]")];
  }
  if ((name == "torch.list" || name == "torch.copy") && args.size() == 1) return make_list(*as_items(args[0]), w);
  if (name == "torch.add" && args.size() == 2 && is_list(args[1])) {
    std::vector<Slot> items = *as_items(args[0]);
    const std::vector<Slot> more = *as_items(args[1]);
    items.insert(items.end(), more.begin(), more.end());
    if (items.size() > limits_.max_trips_per_loop) {
      fail(ErrorCode::kLimitExceeded, w.str() + ": a list of more than max_trips_per_loop (" + std::to_string(limits_.max_trips_per_loop) + ") items");
    }
    return make_list(std::move(items), w);
  }
  if (name == "torch.mul" && args.size() == 2) {
    const Slot n = static_value(args[1]);
    if (n.k != Slot::K::kInt) return std::nullopt;
    const std::vector<Slot> items = *as_items(args[0]);
    if (n.i > 0 && !items.empty() && static_cast<std::uint64_t>(n.i) > limits_.max_trips_per_loop / items.size()) {
      fail(ErrorCode::kLimitExceeded, w.str() + ": a list of more than max_trips_per_loop (" + std::to_string(limits_.max_trips_per_loop) + ") items");
    }
    std::vector<Slot> out;
    for (std::int64_t k = 0; k < n.i; ++k) out.insert(out.end(), items.begin(), items.end());
    return make_list(std::move(out), w);
  }
  if (name == "torch.slice" && args.size() >= 1 && args.size() <= 4) {  // list[start:stop:step]
    const std::vector<Slot> items = *as_items(args[0]);
    std::optional<std::int64_t> bound[3];
    for (std::size_t k = 1; k < args.size(); ++k) {
      const Slot b = static_value(args[k]);
      if (b.k == Slot::K::kNone) continue;
      if (b.k != Slot::K::kInt) return std::nullopt;
      bound[k - 1] = b.i;
    }
    const auto at = slice_indices(static_cast<std::int64_t>(items.size()), bound[0], bound[1], bound[2].value_or(1));
    if (!at) unsupported(w, "a list slice with a step of 0");
    std::vector<Slot> out;
    for (std::size_t i : *at) out.push_back(items[i]);
    return make_list(std::move(out), w);
  }
  if (name == "torch.__contains__" && args.size() == 2) {
    const Slot key = static_value(args[1]);
    if (!(key.constant_number() || key.k == Slot::K::kString)) return std::nullopt;
    Slot found;
    found.k = Slot::K::kBool;
    const std::vector<Slot> items = *as_items(args[0]);
    for (const Slot& x : items) {
      const Slot item = static_value(x);
      if (!(item.constant_number() || item.k == Slot::K::kString)) return std::nullopt;
      found.b = found.b || same_constant(item, key);
    }
    return found;
  }
  // min(list), max(list), sum(list) of numbers known while reading (what
  // enumerate() prints: ops.prim.min([9223372036854775807, torch.len(xs)])).
  if ((name == "ops.prim.min" || name == "ops.prim.max" || name == "torch.sum") && args.size() == 1) {
    std::vector<Slot> items;
    const std::optional<std::vector<Slot>> list = as_items(args[0]);
    for (const Slot& x : *list) {
      items.push_back(static_value(x));
      if (items.back().k == Slot::K::kScalar) run_time(w, items.back(), name.substr(name.rfind('.') + 1) + "() of this list");
      if (!items.back().constant_number()) return std::nullopt;
    }
    if (items.empty()) return name == "torch.sum" ? std::optional<Slot>(constant_int(0)) : std::nullopt;
    const bool ints = std::all_of(items.begin(), items.end(), [](const Slot& x) { return x.k != Slot::K::kFloat; });
    double r = number(items[0]);
    for (std::size_t k = 1; k < items.size(); ++k) {
      const double x = number(items[k]);
      r = name == "torch.sum" ? r + x : name == "ops.prim.min" ? std::min(r, x) : std::max(r, x);
    }
    if (ints) {
      if (name == "torch.sum") {
        std::int64_t total = 0;
        for (const Slot& x : items) total += x.k == Slot::K::kInt ? x.i : x.b;
        return constant_int(total);
      }
      for (const Slot& x : items) {
        if (number(x) == r) return x.k == Slot::K::kInt ? x : constant_int(x.b);
      }
    }
    Slot f;
    f.k = Slot::K::kFloat;
    f.f = r;
    return f;
  }
  return std::nullopt;
}

std::optional<Tensor> Reader::constant_tensor(const Slot& data, const std::vector<std::pair<std::string, Slot>>& kwargs, const Where& w) {
  std::optional<DType> dtype;
  for (const auto& kw : kwargs) {
    if (kw.first == "dtype" && kw.second.k == Slot::K::kInt) {
      dtype = dtype_from_torch_code(kw.second.i);
      if (!dtype) unsupported(w, "torch.tensor of dtype code " + std::to_string(kw.second.i) + ", which the core does not have");
    } else if (!(kw.first == "device" || kw.first == "requires_grad" || kw.second.k == Slot::K::kNone)) {
      return std::nullopt;
    }
  }
  // Its shape from the nesting, its elements row-major; every row as long as the first.
  Shape shape;
  std::vector<double> xs;
  bool floats = false, bools = true;
  const auto walk = [&](const auto& self, const Slot& s, std::size_t level) -> bool {
    if (s.k != Slot::K::kList) {
      const Slot x = static_value(s);
      if (!x.constant_number() || level != shape.size()) return false;
      floats = floats || x.k == Slot::K::kFloat;
      bools = bools && x.k == Slot::K::kBool;
      xs.push_back(number(x));
      return xs.size() <= limits_.max_trips_per_loop;
    }
    const auto n = static_cast<std::int64_t>(s.list->items.size());
    if (level == shape.size() && xs.empty()) shape.push_back(n);
    if (level >= shape.size() || shape[level] != n) return false;
    for (const Slot& x : s.list->items) {
      if (!self(self, x, level + 1)) return false;
    }
    return true;
  };
  if (!walk(walk, data, 0)) return std::nullopt;
  if (!dtype) dtype = floats || xs.empty() ? DType::kFloat32 : bools ? DType::kBool : DType::kInt64;  // torch.tensor([]) is float32
  switch (*dtype) {
    case DType::kInt64: {
      std::vector<std::int64_t> v(xs.begin(), xs.end());
      return Tensor::from_vector(v, shape);
    }
    case DType::kInt32: {
      std::vector<std::int32_t> v(xs.begin(), xs.end());
      return Tensor::from_vector(v, shape);
    }
    case DType::kFloat32: {
      std::vector<float> v(xs.begin(), xs.end());
      return Tensor::from_vector(v, shape);
    }
    case DType::kFloat64: return Tensor::from_vector(xs, shape);
    case DType::kBool: {
      std::vector<bool> v;
      for (double x : xs) v.push_back(x != 0);
      return Tensor::from_vector(v, shape);
    }
    default: unsupported(w, "torch.tensor of dtype " + std::string(dtype_name(*dtype)) + " (the reader makes int64, int32, float32, float64 and bool constants)");
  }
}

Slot Reader::make_list(std::vector<Slot> items, const Where& w) {
  Slot s;
  s.k = Slot::K::kList;
  s.list = std::make_shared<ListObject>();
  for (const Slot& x : items) hold(x, s.list->depth, w);
  s.list->items = std::move(items);
  return s;
}

Slot Reader::make_tuple(std::vector<Slot> items, const Where& w, Slot::K kind) {
  Slot s;
  s.k = kind;
  s.depth = 1;
  for (const Slot& x : items) hold(x, s.depth, w);
  s.items = std::move(items);
  return s;
}

void Reader::hold(const Slot& item, std::uint32_t& depth, const Where& w) {
  const std::uint32_t d = nesting(item);
  if (d == 0) return;
  // Deeper nesting would make the reader's own recursion (the out spec, the
  // lists' destruction) as deep: a limit, as an expression's depth is.
  if (d + 1 > limits_.max_expression_depth) {
    fail(ErrorCode::kLimitExceeded, w.str() + ": lists and tuples nested deeper than max_expression_depth (" + std::to_string(limits_.max_expression_depth) + ")");
  }
  if (item.k == Slot::K::kList) item.list->held = true;
  depth = std::max(depth, d + 1);
}

void Reader::put(ListObject& list, std::size_t at, const Slot& item, const std::string& op, const Where& w) {
  if (list.items.size() >= limits_.max_trips_per_loop) {
    fail(ErrorCode::kLimitExceeded, w.str() + ": a list of more than max_trips_per_loop (" + std::to_string(limits_.max_trips_per_loop) + ") items");
  }
  if (nesting(item) > 0) {
    if (item.k == Slot::K::kList && item.list.get() == &list) unsupported(w, op + " puts a list into itself");
    if (list.held) unsupported(w, op + " puts a list or tuple into a list that another list or tuple holds (nesting that deepens after it is built is not read)");
    hold(item, list.depth, w);
  }
  list.items.insert(list.items.begin() + static_cast<std::ptrdiff_t>(at), item);
}

Slot Reader::item_at(const Slot& seq, std::int64_t index, const Where& w) {
  const std::vector<Slot>& items = seq.elements();
  const auto n = static_cast<std::int64_t>(items.size());
  const std::int64_t at = index < 0 ? index + n : index;
  if (at < 0 || at >= n) {
    unsupported(w, "index " + std::to_string(index) + " of a " + (seq.k == Slot::K::kList ? "list" : "tuple") + " of " + std::to_string(n) + " items");
  }
  return items[static_cast<std::size_t>(at)];
}

std::optional<Slot> Reader::fold(const std::string& name, const std::vector<Slot>& args) {
  auto boolean = [](bool b) {
    Slot s;
    s.k = Slot::K::kBool;
    s.b = b;
    return s;
  };
  const auto known = [](const Slot& x) { return x.constant_number() || x.k == Slot::K::kNone || x.k == Slot::K::kString; };
  if ((name == "torch.__is__" || name == "torch.__isnot__") && args.size() == 2 && (args[1].k == Slot::K::kNone || args[0].k == Slot::K::kNone)) {
    const Slot& other = args[0].k == Slot::K::kNone ? args[1] : args[0];
    if (other.k == Slot::K::kScalar) return std::nullopt;  // an optional the graph computes
    const bool is_none = other.k == Slot::K::kNone;
    return boolean(name == "torch.__is__" ? is_none : !is_none);
  }
  if (name == "torch.__not__" && args.size() == 1 && args[0].constant_number()) {
    return boolean(!(args[0].k == Slot::K::kBool ? args[0].b : args[0].k == Slot::K::kInt ? args[0].i != 0 : args[0].f != 0));
  }
  if (name == "torch.len" && args.size() == 1 && (args[0].k == Slot::K::kList || args[0].k == Slot::K::kTuple)) {
    return constant_int(static_cast<std::int64_t>(args[0].elements().size()));
  }
  if (auto x = arithmetic(name, args)) return x;
  static const std::set<std::string> kCompare = {"torch.eq", "torch.ne", "torch.lt", "torch.le", "torch.gt", "torch.ge"};
  if (kCompare.count(name) && args.size() == 2 && known(args[0]) && known(args[1])) {
    const auto num = [](const Slot& x) { return x.k == Slot::K::kInt ? static_cast<double>(x.i) : x.k == Slot::K::kFloat ? x.f : x.b ? 1.0 : 0.0; };
    if (args[0].k == Slot::K::kString || args[1].k == Slot::K::kString || args[0].k == Slot::K::kNone || args[1].k == Slot::K::kNone) {
      if (name != "torch.eq" && name != "torch.ne") return std::nullopt;
      const bool same = args[0].k == args[1].k && args[0].s == args[1].s;
      return boolean(name == "torch.eq" ? same : !same);
    }
    const double a = num(args[0]), b = num(args[1]);
    const std::string op = name.substr(6);
    return boolean(op == "eq" ? a == b : op == "ne" ? a != b : op == "lt" ? a < b : op == "le" ? a <= b : op == "gt" ? a > b : a >= b);
  }
  return std::nullopt;
}

std::optional<Slot> Reader::arithmetic(const std::string& name, const std::vector<Slot>& args) {
  if (args.empty() || args.size() > 3) return std::nullopt;
  for (const Slot& a : args) {
    if (a.k != Slot::K::kInt && a.k != Slot::K::kFloat) return std::nullopt;
  }
  const bool ints = std::all_of(args.begin(), args.end(), [](const Slot& a) { return a.k == Slot::K::kInt; });
  const auto num = [](const Slot& a) { return a.k == Slot::K::kInt ? static_cast<double>(a.i) : a.f; };
  const auto real = [](double x) {
    Slot s;
    s.k = Slot::K::kFloat;
    s.f = x;
    return s;
  };
  // torch.add(a, b); ops.prim.min(a, b) (what min() of two numbers prints)
  const std::string op = name.rfind("torch.", 0) == 0 ? name.substr(6) : name.rfind("ops.prim.", 0) == 0 ? name.substr(9) : name;
  if (args.size() == 3) {
    if (!ints) return std::nullopt;
    if (op == "__derive_index") return constant_int(args[1].i + args[0].i * args[2].i);  // (index, start, step)
    if (op != "__range_length") return std::nullopt;
    const std::int64_t lo = args[0].i, hi = args[1].i, step = args[2].i;
    if (step == 0) return std::nullopt;
    const std::int64_t n = step > 0 ? (hi > lo ? (hi - lo + step - 1) / step : 0) : (lo > hi ? (lo - hi - step - 1) / -step : 0);
    return constant_int(n);
  }
  if (args.size() == 1) {
    const double x = num(args[0]);
    if (op == "neg") return ints ? constant_int(-args[0].i) : real(-x);
    if (op == "floor" || op == "ceil") return constant_int(static_cast<std::int64_t>(op == "floor" ? std::floor(x) : std::ceil(x)));
    return std::nullopt;
  }
  const double a = num(args[0]), b = num(args[1]);
  if (op == "__derive_index" || op == "__range_length") return std::nullopt;  // (the three-argument forms above)
  if (ints) {
    const std::int64_t x = args[0].i, y = args[1].i;
    if (op == "add") return constant_int(x + y);
    if (op == "sub") return constant_int(x - y);
    if (op == "mul") return constant_int(x * y);
    if (op == "floordiv" || op == "remainder") {
      const auto r = op == "floordiv" ? shape_rules::floor_divide(x, y) : shape_rules::remainder(x, y);
      return r ? std::optional<Slot>(constant_int(*r)) : std::nullopt;
    }
    if (op == "min") return constant_int(std::min(x, y));
    if (op == "max") return constant_int(std::max(x, y));
  }
  if (op == "add") return real(a + b);
  if (op == "sub") return real(a - b);
  if (op == "mul") return real(a * b);
  if (op == "div" && b != 0) return real(a / b);
  if (op == "floordiv" && b != 0) return real(std::floor(a / b));
  if (op == "min") return real(std::min(a, b));
  if (op == "max") return real(std::max(a, b));
  return std::nullopt;
}

ValueId Reader::as_value(const Slot& s, const std::string& hint) {
  if (s.k == Slot::K::kScalar || s.k == Slot::K::kTensor || s.k == Slot::K::kRuntimeList) return s.v;
  Tensor t;
  if (s.k == Slot::K::kInt) t = Tensor::from_vector<std::int64_t>({s.i}, {});
  else if (s.k == Slot::K::kFloat) t = Tensor::from_vector<double>({s.f}, {});
  else if (s.k == Slot::K::kBool) t = Tensor::from_vector<bool>({s.b}, {});
  else fail(ErrorCode::kInternal, "as_value of a slot that is not a number");
  return graph().add_constant(graph().unique_value_name(hint + ".item"), std::move(t));
}

}  // namespace tracegraph::torchscript
