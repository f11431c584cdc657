#include "formats/torchscript/reader.h"

#include <algorithm>
#include <set>
#include <string>

#include "tracegraph/op_table.h"

namespace tracegraph::torchscript {

int Reader::fit(const detail::SchemaArg& a, const Slot& v) {
  std::string type = a.type;
  if (a.optional()) {
    if (v.k == Slot::K::kNone) return 1;
    type.pop_back();
  }
  const auto all = [&](auto pred) {
    return (v.k == Slot::K::kList || v.k == Slot::K::kTuple) && std::all_of(v.elements().begin(), v.elements().end(), pred);
  };
  const auto is_int = [](const Slot& x) { return x.k == Slot::K::kInt || (x.k == Slot::K::kScalar && x.scalar == "I"); };
  const auto number = [](const Slot& x) { return x.constant_number() || x.k == Slot::K::kScalar; };
  if (type == "T") return is_tensor(v) ? 2 : -1;
  if (type == "TL") return all(is_tensor) ? 2 : -1;
  if (type == "T?L") return all([](const Slot& x) { return is_tensor(x) || x.k == Slot::K::kNone; }) ? 2 : -1;
  if (type == "I") return is_int(v) ? 2 : (v.k == Slot::K::kScalar && v.scalar != "F") ? 1 : -1;
  if (type == "D" || type == "Y" || type == "M") return is_int(v) ? 1 : -1;
  if (type == "F") return (v.k == Slot::K::kFloat || (v.k == Slot::K::kScalar && v.scalar == "F")) ? 2 : number(v) && v.k != Slot::K::kBool ? 1 : -1;
  if (type == "N") return number(v) ? 1 : -1;
  if (type == "B") return (v.k == Slot::K::kBool || (v.k == Slot::K::kScalar && v.scalar == "B")) ? 2 : -1;
  if (type == "IL") return (v.k == Slot::K::kRuntimeList || all(is_int)) ? 2 : v.k == Slot::K::kInt ? 1 : -1;
  if (type == "FL") return all(number) ? 2 : -1;
  if (type == "BL") return all([](const Slot& x) { return x.k == Slot::K::kBool; }) ? 2 : -1;
  if (type == "S" || type == "V") return v.k == Slot::K::kString ? 2 : -1;
  return -1;
}

const detail::Schema* Reader::bind(const std::vector<detail::Schema>& schemas, const std::vector<Slot>& args,
                                   const std::vector<std::pair<std::string, Slot>>& kwargs, std::vector<const Slot*>& bound) const {
  const detail::Schema* best = nullptr;
  int best_score = -1;
  std::vector<const Slot*> b;
  for (const detail::Schema& s : schemas) {
    b.assign(s.args.size(), nullptr);
    bool ok = args.size() <= s.args.size();
    int score = 0;
    auto take = [&](std::size_t k, const Slot& v) {
      const int f = fit(s.args[k], v);
      ok = f >= 0;
      score += f;
      b[k] = &v;
    };
    for (std::size_t k = 0; ok && k < args.size(); ++k) {
      if (s.args[k].keyword_only) ok = false;
      else take(k, args[k]);
    }
    for (const auto& kw : kwargs) {  // (not a structured binding: clang 14 cannot capture one)
      if (!ok) break;
      auto it = std::find_if(s.args.begin(), s.args.end(), [&](const detail::SchemaArg& a) { return a.name == kw.first; });
      ok = it != s.args.end() && !b[static_cast<std::size_t>(it - s.args.begin())];
      if (ok) take(static_cast<std::size_t>(it - s.args.begin()), kw.second);
    }
    for (std::size_t k = 0; ok && k < s.args.size(); ++k) ok = b[k] || s.args[k].has_default || s.args[k].optional();
    ok = ok && std::all_of(s.returns.begin(), s.returns.end(), [](const std::string& r) {
      return r == "T" || r == "TL" || r == "I" || r == "F" || r == "N" || r == "B" || r == "IL";
    });
    if (ok && score > best_score) {
      best = &s;
      best_score = score;
      bound = b;
    }
  }
  return best;
}

Slot Reader::aten(const std::string& name, const std::vector<Slot>& args, const std::vector<std::pair<std::string, Slot>>& kwargs, const Where& w,
                  const std::string& hint) {
  const auto& schemas = detail::aten_schemas(name);
  if (schemas.empty()) unsupported(w, "aten::" + name + " is not an operator this build knows");
  std::vector<const Slot*> bound;
  const detail::Schema* s = bind(schemas, args, kwargs, bound);
  if (!s) unsupported(w, "no overload of aten::" + name + " takes these arguments");
  std::vector<ValueId> inputs;
  std::vector<std::string> names;
  Attributes attrs;
  for (std::size_t k = 0; k < s->args.size(); ++k) {
    const Slot* v = bound[k];
    const detail::SchemaArg& a = s->args[k];
    if (!v || v->k == Slot::K::kNone) continue;
    auto input = [&](ValueId id) {
      inputs.push_back(id);
      names.push_back(a.name);
    };
    switch (v->k) {
      case Slot::K::kTensor:
      case Slot::K::kScalar:
      case Slot::K::kRuntimeList: input(v->v); break;
      case Slot::K::kInt: attrs.set(a.name, v->i); break;
      case Slot::K::kFloat: attrs.set(a.name, v->f); break;
      case Slot::K::kBool: attrs.set(a.name, v->b); break;
      case Slot::K::kString: attrs.set(a.name, v->s); break;
      case Slot::K::kList:
      case Slot::K::kTuple: {
        const std::vector<Slot>& items = v->elements();
        const bool tensors = a.type.rfind("T", 0) == 0;
        if (tensors) {
          std::vector<bool> present;
          for (const Slot& x : items) {
            present.push_back(x.k != Slot::K::kNone);
            if (x.k != Slot::K::kNone) input(x.v);
          }
          if (std::find(present.begin(), present.end(), false) != present.end()) attrs.set(a.name, std::move(present));
          break;
        }
        const bool runtime = std::any_of(items.begin(), items.end(), [](const Slot& x) { return x.k == Slot::K::kScalar; });
        if (runtime) {
          std::vector<ValueId> values;
          for (const Slot& x : items) values.push_back(as_value(x, hint + "." + a.name));
          const NodeId list = add_node("prim::ListConstruct", std::move(values), {NewValue(graph().unique_value_name(hint + "." + a.name))}, {},
                                               node_name(hint + "." + a.name));
          std::vector<double> known;
          for (ValueId x : graph().node(list).inputs) {
            const auto n = number_of(x);
            if (!n) break;
            known.push_back(*n);
          }
          if (known.size() == graph().node(list).inputs.size()) numbers_[graph().node(list).outputs[0]] = std::move(known);
          input(graph().node(list).outputs[0]);
        } else if (a.type.rfind("FL", 0) == 0) {
          std::vector<double> xs;
          for (const Slot& x : items) xs.push_back(x.k == Slot::K::kFloat ? x.f : static_cast<double>(x.k == Slot::K::kInt ? x.i : x.b));
          attrs.set(a.name, std::move(xs));
        } else if (a.type.rfind("BL", 0) == 0) {
          std::vector<bool> xs;
          for (const Slot& x : items) xs.push_back(x.b);
          attrs.set(a.name, std::move(xs));
        } else {
          std::vector<std::int64_t> xs;
          for (const Slot& x : items) xs.push_back(x.i);
          attrs.set(a.name, std::move(xs));
        }
        break;
      }
      default: unsupported(w, "argument '" + a.name + "' of aten::" + name + " is a value the reader cannot pass");
    }
  }
  if (!inputs.empty()) attrs.set(std::string(kArgNamesAttribute), names);
  if (!s->overload.empty()) attrs.set(std::string(kOverloadAttribute), s->overload);
  const std::string op = "aten::" + name;
  if (s->returns.size() == 1 && s->returns[0] == "TL") {
    Slot out;
    out.k = Slot::K::kPendingList;
    out.pending = std::make_shared<Pending>(Pending{op, hint, std::move(inputs), std::move(attrs), std::nullopt});
    return out;
  }
  std::vector<NewValue> outs;
  for (std::size_t k = 0; k < std::max<std::size_t>(1, s->returns.size()); ++k) {
    outs.emplace_back(graph().unique_value_name(s->returns.size() > 1 ? hint + "." + std::to_string(k) : hint));
  }
  const NodeId id = add_node(op, std::move(inputs), std::move(outs), std::move(attrs), node_name(hint));
  record(id);
  static const std::set<std::string> kShapeQueries = {"size", "dim", "len", "numel", "sym_size", "sym_numel"};
  const bool from_shape = kShapeQueries.count(name) || std::any_of(bound.begin(), bound.end(), [](const Slot* v) {
                            return v && (v->from_shape || ((v->k == Slot::K::kList || v->k == Slot::K::kTuple) &&
                                                         std::any_of(v->elements().begin(), v->elements().end(), [](const Slot& x) { return x.from_shape; })));
                          });
  auto slot_of = [&](std::size_t k) {
    Slot out;
    const std::string& r = s->returns.empty() ? std::string("T") : s->returns[k];
    out.k = r == "T" ? Slot::K::kTensor : r == "IL" ? Slot::K::kRuntimeList : Slot::K::kScalar;
    out.scalar = r;
    out.v = graph().node(id).outputs[k];
    if (out.k != Slot::K::kTensor) {
      out.from_shape = from_shape;
      if (auto it = numbers_.find(out.v); it != numbers_.end()) out.known = it->second;
    }
    return out;
  };
  if (s->returns.size() <= 1) return slot_of(0);
  Slot tuple;
  tuple.k = Slot::K::kTuple;
  tuple.depth = 1;
  for (std::size_t k = 0; k < s->returns.size(); ++k) tuple.items.push_back(slot_of(k));
  return tuple;
}

}  // namespace tracegraph::torchscript
