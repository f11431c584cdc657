#include "formats/torchscript/reader.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "tracegraph/error.h"

namespace tracegraph::torchscript {

Slot Reader::call(const Function& fn, const Slot& self, const std::vector<Slot>& args, const std::vector<std::pair<std::string, Slot>>& kwargs, int depth) {
  if (static_cast<std::uint64_t>(depth) > limits_.max_call_depth) {
    fail(ErrorCode::kLimitExceeded, fn.where.str() + ": calls nest deeper than max_call_depth (" + std::to_string(limits_.max_call_depth) + "; recursion?)");
  }
  // The depth alone does not bound the work: 40 methods that each call the
  // next twice nest 40 deep and inline 2^40 calls.
  if (++calls_ > limits_.max_inlined_calls) {
    fail(ErrorCode::kLimitExceeded, fn.where.str() + ": more than max_inlined_calls (" + std::to_string(limits_.max_inlined_calls) +
                                        ") calls inlined in all");
  }
  std::unordered_map<std::string, Slot> env;
  std::size_t next = 0;
  const bool method = fn.method;
  if (method) env[fn.params[0]] = self;
  for (std::size_t p = method ? 1 : 0; p < fn.params.size(); ++p) {
    if (next < args.size()) {
      env[fn.params[p]] = args[next++];
      continue;
    }
    auto kw = std::find_if(kwargs.begin(), kwargs.end(), [&](const auto& a) { return a.first == fn.params[p]; });
    if (kw != kwargs.end()) {
      env[fn.params[p]] = kw->second;
    } else if (!fn.defaults[p].empty()) {
      env[fn.params[p]] = constant_expression(fn.defaults[p], fn.where, depth);
    } else {
      unsupported(fn.where, "parameter '" + fn.params[p] + "' is not given");
    }
  }
  if (next != args.size()) unsupported(fn.where, "called with " + std::to_string(args.size()) + " arguments");
  if (fn.check) {
    // A check the reader cannot follow (its loops and branches on the
    // input) computes nothing the graph uses: dropped, as a branch that only raises is.
    try {
      run_block(fn, 0, fn.body.size(), env, depth);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kUnsupported && e.code() != ErrorCode::kNeedsInputShapes) throw;
    }
    return Slot{};
  }
  std::optional<Slot> result = run_block(fn, 0, fn.body.size(), env, depth);
  return result ? std::move(*result) : Slot{};
}

std::optional<Slot> Reader::run_block(const Function& fn, std::size_t begin, std::size_t end, std::unordered_map<std::string, Slot>& env, int depth) {
  // Every block this runs (a function's body, an if's, a loop's) is a level
  // of recursion: held to max_block_depth across inlined calls.
  if (begin < end && blocks_ + 1 > limits_.max_block_depth) {
    fail(ErrorCode::kLimitExceeded, Where{fn.where.entry, fn.body[begin].number}.str() + ": blocks nested deeper than max_block_depth (" +
                                        std::to_string(limits_.max_block_depth) + ")");
  }
  ++blocks_;
  struct Close {
    std::uint64_t& open;
    ~Close() { --open; }
  } close{blocks_};
  for (std::size_t li = begin; li < end; ++li) {
    const Line& line = fn.body[li];
    const Where w{fn.where.entry, line.number};
    if (++statements_ > limits_.max_statements) {
      fail(ErrorCode::kLimitExceeded, w.str() + ": more than max_statements (" + std::to_string(limits_.max_statements) +
                                          ") statements run in all (loops unrolled, calls inlined)");
    }
    const std::vector<Tok> toks = tokenize(line.text, w);
    if (toks[0].t == Tok::T::kName) {
      if (toks[0].s == "if") {
        // if COND: BLOCK [else: BLOCK], each block the lines indented under it.
        const std::size_t then_begin = li + 1, then_end = block_end(fn, then_begin, end, line.indent);
        std::size_t else_begin = then_end, else_end = then_end;
        if (then_end < end && fn.body[then_end].indent == line.indent && fn.body[then_end].text == "else:") {
          else_begin = then_end + 1;
          else_end = block_end(fn, else_begin, end, line.indent);
        }
        if (line.text.back() != ':') bad_code(w, "an if without its ':'");
        std::vector<Tok> cond(toks.begin() + 1, toks.end() - 2);  // without `if` and the ':'
        cond.push_back(Tok{});
        ExprParser p(cond, 0, w);
        const Slot c = static_value(eval(p.expr(), env, w, "cond", depth));
        bool take;
        if (c.constant_number() || c.k == Slot::K::kNone) {
          take = c.k == Slot::K::kBool ? c.b : c.k == Slot::K::kInt ? c.i != 0 : c.k == Slot::K::kFloat ? c.f != 0 : false;
        } else if (only_raises(fn, then_begin, then_end)) {
          take = false;  // an argument check (`if x.dim() != 4: raise`): the model runs when it passes
        } else if (only_raises(fn, else_begin, else_end) && else_begin != else_end) {
          take = true;
        } else {
          run_time(w, c, "this 'if'");
        }
        const auto r = take ? run_block(fn, then_begin, then_end, env, depth) : run_block(fn, else_begin, else_end, env, depth);
        if (r) return r;
        li = else_end - 1;
        continue;
      }
      if (toks[0].s == "for") {
        if (auto r = run_for(fn, li, end, env, depth)) return r;
        li = block_end(fn, li + 1, end, line.indent) - 1;
        continue;
      }
      static const std::set<std::string> kControl = {"elif", "else", "while", "with", "try", "except", "raise",
                                                     "assert", "del", "break", "continue", "global", "lambda", "yield"};
      if (kControl.count(toks[0].s)) unsupported(w, "'" + toks[0].s + "' (loops and these scripted statements are not read yet)");
      if (toks[0].s == "pass") continue;
      if (toks[0].s == "return") {
        ExprParser p(toks, 1, w);
        return p.at_end() ? Slot{} : eval(p.expr_list(), env, w, "out", depth);
      }
    }
    // TARGETS = EXPR
    std::size_t eq = 0;
    int level = 0;
    for (std::size_t k = 0; k < toks.size(); ++k) {
      if (toks[k].t != Tok::T::kOp) continue;
      if (toks[k].s == "(" || toks[k].s == "[" || toks[k].s == "{") ++level;
      if (toks[k].s == ")" || toks[k].s == "]" || toks[k].s == "}") --level;
      if (toks[k].s == "=" && level == 0) {
        eq = k;
        break;
      }
    }
    if (eq == 0) {
      ExprParser p(toks, 0, w);
      eval(p.expr_list(), env, w, "t", depth);  // a call for its effect
      continue;
    }
    std::vector<std::string> targets;
    // NAME : TYPE = EXPR (an annotated assignment): the type is not a value.
    const bool annotated = eq > 2 && toks[0].t == Tok::T::kName && toks[1].t == Tok::T::kOp && toks[1].s == ":";
    for (std::size_t k = 0; k < (annotated ? 1 : eq); ++k) {
      if (toks[k].t == Tok::T::kName) targets.push_back(toks[k].s);
      else if (!(toks[k].t == Tok::T::kOp && toks[k].s == ",")) unsupported(w, "assigns to something other than names");
    }
    const bool unpack = !annotated && eq > 1;
    ExprParser p(toks, eq + 1, w);
    Slot value = eval(p.expr_list(), env, w, targets.size() == 1 ? targets[0] : "t", depth);
    if (!p.at_end()) bad_code(w, "more after the expression");
    if (!unpack) {
      env[targets[0]] = std::move(value);
      continue;
    }
    std::vector<Slot> parts = unpacked(value, targets, w);
    for (std::size_t k = 0; k < targets.size(); ++k) env[targets[k]] = std::move(parts[k]);
  }
  return std::nullopt;
}

std::optional<Slot> Reader::run_for(const Function& fn, std::size_t li, std::size_t end, std::unordered_map<std::string, Slot>& env, int depth) {
  const Line& line = fn.body[li];
  const Where w{fn.where.entry, line.number};
  const std::vector<Tok> toks = tokenize(line.text, w);
  if (toks.size() < 6 || toks[1].t != Tok::T::kName || toks[2].t != Tok::T::kName || toks[2].s != "in" || line.text.back() != ':') {
    unsupported(w, "a 'for' other than `for NAME in ITERABLE:`");
  }
  std::vector<Tok> it(toks.begin() + 3, toks.end() - 2);  // without `for NAME in` and the ':'
  it.push_back(Tok{});
  ExprParser p(it, 0, w);
  const Expr iterable = p.expr();
  std::vector<Slot> items;
  if (iterable.k == Expr::K::kCall && iterable.items[0].k == Expr::K::kName && iterable.items[0].s == "range" && !env.count("range")) {
    std::vector<std::int64_t> bounds;
    for (std::size_t k = 1; k < iterable.items.size(); ++k) {
      const Slot b = static_value(eval(iterable.items[k], env, w, "n", depth));
      if (b.k != Slot::K::kInt) run_time(w, b, "this loop's trip count");
      bounds.push_back(b.i);
    }
    if (bounds.empty() || bounds.size() > 3) bad_code(w, "range() takes 1 to 3 arguments");
    const std::int64_t lo = bounds.size() == 1 ? 0 : bounds[0], hi = bounds.size() == 1 ? bounds[0] : bounds[1];
    const std::int64_t step = bounds.size() == 3 ? bounds[2] : 1;
    if (step == 0) bad_code(w, "range() with a step of 0");
    for (std::int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) {
      if (items.size() >= limits_.max_trips_per_loop) {
        fail(ErrorCode::kLimitExceeded, w.str() + ": a loop of more than max_trips_per_loop (" + std::to_string(limits_.max_trips_per_loop) + ") trips");
      }
      items.push_back(constant_int(i));
    }
  } else {
    const Slot v = eval(iterable, env, w, "item", depth);
    auto xs = as_items(v);
    if (!xs) run_time(w, v, "this loop's trip count");
    items = std::move(*xs);
  }
  const std::size_t body_end = block_end(fn, li + 1, end, line.indent);
  for (Slot& item : items) {
    if (++trips_ > limits_.max_loop_trips) {
      fail(ErrorCode::kLimitExceeded, w.str() + ": loops run more than max_loop_trips (" + std::to_string(limits_.max_loop_trips) + ") trips in all");
    }
    env[toks[1].s] = std::move(item);
    if (auto r = run_block(fn, li + 1, body_end, env, depth)) return r;
  }
  return std::nullopt;
}

std::size_t Reader::block_end(const Function& fn, std::size_t begin, std::size_t end, std::size_t header_indent) {
  std::size_t i = begin;
  while (i < end && fn.body[i].indent > header_indent) ++i;
  return i;
}

bool Reader::only_raises(const Function& fn, std::size_t begin, std::size_t end) {
  bool raises = false;
  for (std::size_t i = begin; i < end; ++i) {
    const std::string& t = fn.body[i].text;
    if (t.find("ops.prim.RaiseException(") != std::string::npos) raises = true;
    else if (t.find("torch.format(") == std::string::npos && t != "pass" && t.find("= \"") == std::string::npos) return false;
  }
  return raises;
}

std::vector<Slot> Reader::unpacked(const Slot& v, const std::vector<std::string>& names, const Where& w) {
  const std::size_t n = names.size();
  if (v.k == Slot::K::kTuple || v.k == Slot::K::kList) {
    if (v.elements().size() != n) unsupported(w, "unpacks " + std::to_string(v.elements().size()) + " values into " + std::to_string(n));
    return v.elements();
  }
  std::vector<Slot> out(n);
  if (v.k == Slot::K::kPendingList) {
    Pending& p = *v.pending;
    if (p.node) unsupported(w, "unpacks a list result a second time");
    std::vector<NewValue> outs;
    for (const auto& name : names) outs.emplace_back(graph().unique_value_name(name));
    p.node = add_node(p.op, p.inputs, std::move(outs), p.attributes, node_name(p.name));
    record(*p.node);
    for (std::size_t k = 0; k < n; ++k) {
      out[k].k = Slot::K::kTensor;
      out[k].v = graph().node(*p.node).outputs[k];
    }
    return out;
  }
  if (v.k == Slot::K::kRuntimeList) {
    // `b, c, h, w = x.size()`: element k of a list computed at run time.
    for (std::size_t k = 0; k < n; ++k) out[k] = list_item(v, static_cast<std::int64_t>(k), names[k]);
    return out;
  }
  unsupported(w, "unpacks a value that is not a tuple or a list");
}

Slot Reader::static_value(const Slot& s) {
  if (s.k != Slot::K::kScalar || !s.known || s.known->size() != 1) return s;
  specialized_ = true;
  const double x = (*s.known)[0];
  if (s.scalar == "F" || (s.scalar == "N" && x != std::floor(x))) {
    Slot f;
    f.k = Slot::K::kFloat;
    f.f = x;
    return f;
  }
  if (s.scalar == "B") {
    Slot b;
    b.k = Slot::K::kBool;
    b.b = x != 0;
    return b;
  }
  return constant_int(static_cast<std::int64_t>(x));
}

std::optional<std::vector<Slot>> Reader::as_items(const Slot& v) {
  if (v.k == Slot::K::kList || v.k == Slot::K::kTuple) return v.elements();
  if (v.k != Slot::K::kRuntimeList || !v.known) return std::nullopt;
  std::vector<Slot> out;
  for (std::size_t k = 0; k < v.known->size(); ++k) out.push_back(list_item(v, static_cast<std::int64_t>(k), "size"));
  return out;
}

[[noreturn]] void Reader::run_time(const Where& w, const Slot& c, const std::string& what) {
  if (c.from_shape && input_shapes_.empty()) {
    fail(ErrorCode::kNeedsInputShapes, w.str() + ": " + what + " depends on the input's shape: read the archive with the input shapes "
                                       "(read_torchscript_archive's input_shapes, loadModel's inputShapes, --input-shape)");
  }
  if (c.from_shape) {
    unsupported(w, what + " depends on a size the reader cannot follow: " +
                       (lost_shape_.empty() ? std::string("a shape it does not know") : "no shape rule past node " + lost_shape_));
  }
  unsupported(w, what + " depends on a value known only at run time (the graph would depend on the input)");
}

Slot Reader::constant_expression(const std::string& text, const Where& w, int depth) {
  const std::vector<Tok> toks = tokenize(text, w);
  ExprParser p(toks, 0, w);
  std::unordered_map<std::string, Slot> none;
  Slot v = eval(p.expr(), none, w, "default", depth);
  if (!p.at_end()) bad_code(w, "more after the value '" + text + "'");
  return v;
}

}  // namespace tracegraph::torchscript
