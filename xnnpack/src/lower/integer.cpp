// int64 tensors, exact. A graph's integer inputs, and the integer constants
// float32 cannot hold exactly, are int64 slots (Slot::int64): each element's
// 8 bytes as two 32-bit words, torch's shape with a last dim of 2, as complex
// values are held (complex.cpp), so that the layout ops move them as pairs.
// The ops of computes_on_int64() compute on them exactly, as torch does
// (wrapping around); a node of any other op reads a float32 copy, which the
// run refuses past 2^24 (float32's last exact integer) unless the node's
// result is a float that torch also computes from the rounded integers
// (int64 + 0.5). Integers the graph makes from floats (a cast, argmax) stay
// float32 slots, exact where they are made (index.cpp).
#include "lower/integer.h"
#include "lower/complex.h"
#include "lower/reduction.h"

namespace tracegraph::xnnpack {
namespace {

using portable::IntBinary;
using portable::IntCompare;
using portable::IntReduce;
using portable::IntUnary;

std::optional<DType> dtype_of(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  if (value.dtype) return value.dtype;
  if (value.is_constant() && value.data.defined()) return value.data.dtype();
  return std::nullopt;
}

// Ops whose float result torch computes from the integers cast to float
// first: a float32 copy rounded as that cast rounds gives torch's result.
bool rounds_as_torch(const Graph& g, const Node& n) {
  static const std::set<std::string_view> kOps = {
      "add", "sub", "rsub", "mul", "div", "true_divide", "mean", "pow", "sqrt", "rsqrt", "exp", "log", "sin", "cos", "tanh",
      "sigmoid", "reciprocal", "to", "_to_copy", "type_as", "float", "softmax", "log_softmax"};
  std::string base = base_op(n.op);
  if (!base.empty() && base.back() == '_') base.pop_back();
  if (!kOps.count(base) || n.outputs.empty()) return false;
  return std::all_of(n.outputs.begin(), n.outputs.end(), [&](ValueId o) {
    const auto d = dtype_of(g, o);
    return d && is_floating(*d);
  });
}

// Runs `f` with values standing for other slots (`with`), then gives them
// their own slots again, also when `f` fails.
void with_slots(Context& cx, const std::vector<std::pair<ValueId, int>>& with, const std::function<void()>& f) {
  std::vector<std::pair<ValueId, int>> restore;
  for (const auto& [v, s] : with) restore.emplace_back(v, cx.slot_index(v)), cx.define(v, s);
  try {
    f();
  } catch (...) {
    for (const auto& [v, s] : restore) cx.define(v, s);
    throw;
  }
  for (const auto& [v, s] : restore) cx.define(v, s);
}

int int_tensor(Context& cx, Shape shape) {
  shape.push_back(2);
  const int s = cx.new_tensor(std::move(shape), false);
  cx.slot(s).int64 = true;
  return s;
}

// A float32 copy of int64 slot `s` (value `v`) for node n; with `exact`,
// the run stops at an integer past 2^24, naming it.
int narrowed(Context& cx, const Node& n, ValueId v, int s, bool exact) {
  const i64 count = numel(logical(cx.slot(s)));
  const int out = cx.new_tensor(logical(cx.slot(s)), false);
  Step& step = cx.add_step({s}, {out});
  step.conversion = true;
  step.run = [&cx, s, out, count, exact, where = cx.where(n), name = cx.graph().value(v).name] {
    const i64 bad = portable::int_to_float(cx.int_ptr(s), cx.ptr(out), count, exact);
    if (bad >= 0)
      fail(ErrorCode::kOutOfRange, where + ": input '" + name + "' element " + std::to_string(bad) + " is " + std::to_string(cx.int_ptr(s)[bad]) +
                                       ", past 2^24: this op computes on float32 here, where that integer is not exact (the ops that compute on int64: docs/design.md)");
  };
  return out;
}

// Float32 slot `s` holding integers (a cast's, an arange's) as an int64 slot.
int widened(Context& cx, int s) {
  s = cx.as_layout(s, false);
  const Shape shape = cx.slot(s).shape;
  const i64 count = numel(shape);
  if (const float* c = cx.slot(s).constant) {
    std::vector<i64> values(static_cast<std::size_t>(count));
    portable::float_to_int(c, values.data(), count);
    return cx.planned_int64(values, shape);
  }
  const int out = int_tensor(cx, shape);
  Step& step = cx.add_step({s}, {out});
  step.conversion = true;
  step.run = [&cx, s, out, count] { portable::float_to_int(cx.ptr(s), cx.int_ptr(out), count); };
  return out;
}

// Whether value v is an integer (or bool) operand: an int64 slot, a number
// or list of ints planning knows, or a float32 slot the graph types as an
// integer or bool. A float (tensor or number) is not: torch computes in float.
bool integer_valued(Context& cx, ValueId v) {
  const Slot& s = cx.slot_of(v);
  if (s.kind == Kind::kInt || s.kind == Kind::kInts) return true;
  if (s.kind != Kind::kTensor || s.complex) return false;
  if (s.int64) return true;
  const auto d = dtype_of(cx.graph(), v);
  return d && (is_integer(*d) || *d == DType::kBool);
}
// Value v (integer_valued) as an int64 slot.
int as_int64(Context& cx, ValueId v) {
  const Slot s = cx.slot_of(v);  // a copy: the slots may move
  if (s.kind == Kind::kInt) return cx.planned_int64({s.i}, {});
  if (s.kind == Kind::kInts) return cx.planned_int64(s.ints, {static_cast<i64>(s.ints.size())});
  if (s.int64) return cx.slot_index(v);
  return widened(cx, cx.slot_index(v));
}

// An operand: the input filling argument `name`, else an int attribute.
struct Operand {
  std::optional<ValueId> value;
  std::optional<i64> number;
  bool present() const { return value || number; }
};
Operand operand(const Node& n, std::string_view name, std::size_t position) {
  Operand o;
  o.value = input_for_arg(n, name, position);
  if (o.value) return o;
  if (const AttributeValue* a = n.attributes.find(name)) {
    if (auto i = std::get_if<std::int64_t>(a)) o.number = *i;
    else if (auto b = std::get_if<bool>(a)) o.number = *b ? 1 : 0;
  }
  return o;
}
bool integer_valued(Context& cx, const Operand& o) { return o.number || (o.value && integer_valued(cx, *o.value)); }
int as_int64(Context& cx, const Operand& o) { return o.number ? cx.planned_int64({*o.number}, {}) : as_int64(cx, *o.value); }

// The int64 result `out` as node n's integer output type, wrapped around as torch's int32 (and narrower) are.
int as_output_type(Context& cx, const Node& n, int out) {
  const auto d = dtype_of(cx.graph(), n.outputs[0]);
  if (!d) return out;
  const int bits = *d == DType::kInt32 ? 32 : *d == DType::kInt16 ? 16 : (*d == DType::kInt8 || *d == DType::kUInt8) ? 8 : 64;
  if (bits == 64) return out;
  const i64 count = numel(logical(cx.slot(out)));
  Step& step = cx.add_step({out}, {out});
  step.run = [&cx, out, count, bits, uns = *d == DType::kUInt8] { portable::int_narrow_type(cx.int_ptr(out), cx.int_ptr(out), count, bits, uns); };
  return out;
}

Shape broadcast_of(const Context& cx, const Node& n, const Shape& a, const Shape& b) {
  auto s = shape_rules::broadcast(a, b);
  if (!s) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
  return *s;
}

// The value `name` has in a table of (name, value) pairs.
template <class T, std::size_t N>
std::optional<T> entry_of(const std::pair<std::string_view, T> (&table)[N], std::string_view name) {
  for (const auto& [key, value] : table)
    if (key == name) return value;
  return std::nullopt;
}

// add, sub, mul, the divisions, the bitwise ops, maximum/minimum and the comparisons.
bool lower_binary_on_int64(Context& cx, const Node& n, std::string base, bool inplace) {
  static constexpr std::pair<std::string_view, IntBinary> kBinary[] = {
      {"add", IntBinary::kAdd}, {"sub", IntBinary::kSub}, {"mul", IntBinary::kMul}, {"floor_divide", IntBinary::kFloorDivide},
      {"floordiv", IntBinary::kFloorDivide}, {"remainder", IntBinary::kRemainder}, {"fmod", IntBinary::kFmod},
      {"bitwise_and", IntBinary::kAnd}, {"__and__", IntBinary::kAnd}, {"bitwise_or", IntBinary::kOr}, {"__or__", IntBinary::kOr},
      {"bitwise_xor", IntBinary::kXor}, {"__xor__", IntBinary::kXor}, {"maximum", IntBinary::kMaximum}, {"minimum", IntBinary::kMinimum},
      {"max", IntBinary::kMaximum}, {"min", IntBinary::kMinimum}};
  static constexpr std::pair<std::string_view, IntCompare> kCompare[] = {
      {"eq", IntCompare::kEq}, {"ne", IntCompare::kNe}, {"lt", IntCompare::kLt}, {"le", IntCompare::kLe}, {"gt", IntCompare::kGt}, {"ge", IntCompare::kGe}};
  std::optional<IntBinary> op = entry_of(kBinary, base);
  if (base == "div") {  // integers only with a rounding mode; true division is a float's
    const auto mode = n.attributes.get_string("rounding_mode");
    if (!mode || (*mode != "trunc" && *mode != "floor")) return false;
    op = *mode == "trunc" ? IntBinary::kDivTrunc : IntBinary::kFloorDivide;
  }
  const std::optional<IntCompare> cmp = entry_of(kCompare, base);
  if (!op && !cmp) return false;
  Operand a = operand(n, "self", 0), b = operand(n, "other", 1);
  if (!a.present()) a = operand(n, "a", 0);
  if (!b.present()) b = operand(n, "b", 1);
  if (!a.present() || !b.present() || !integer_valued(cx, a) || !integer_valued(cx, b)) return false;
  i64 alpha = 1;
  if (auto f = cx.float_arg(n, "alpha")) {
    if (*f != std::trunc(*f) || std::fabs(*f) > 9.0e18) return false;  // a float alpha makes a float result
    alpha = static_cast<i64>(*f);
  }
  const int sa = as_int64(cx, a), sb = as_int64(cx, b);
  const Shape as = logical(cx.slot(sa)), bs = logical(cx.slot(sb)), shape = broadcast_of(cx, n, as, bs);
  if (cmp) {
    const int out = cx.new_tensor(shape, false);
    Step& step = cx.add_step({sa, sb}, {out});
    step.run = [&cx, sa, sb, out, as, bs, shape, c = *cmp] { portable::int_compare(c, cx.int_ptr(sa), as, cx.int_ptr(sb), bs, cx.ptr(out), shape); };
    cx.define(n.outputs[0], out);
    return true;
  }
  if (inplace && (!cx.slot(sa).int64 || shape != as)) return false;
  const int out = inplace ? sa : int_tensor(cx, shape);
  Step& step = cx.add_step({sa, sb}, {out});
  step.run = [&cx, sa, sb, out, as, bs, shape, o = *op, alpha, where = cx.where(n)] {
    if (portable::int_binary(o, cx.int_ptr(sa), as, cx.int_ptr(sb), bs, cx.int_ptr(out), shape, alpha) >= 0)
      fail(ErrorCode::kInvalidArgument, where + ": integer division by zero");
  };
  cx.define(n.outputs[0], as_output_type(cx, n, out));
  return true;
}

bool lower_unary_on_int64(Context& cx, const Node& n, const std::string& base, bool inplace) {
  static constexpr std::pair<std::string_view, IntUnary> kUnary[] = {
      {"abs", IntUnary::kAbs}, {"neg", IntUnary::kNeg}, {"negative", IntUnary::kNeg}, {"sign", IntUnary::kSign},
      {"bitwise_not", IntUnary::kBitwiseNot}, {"__invert__", IntUnary::kBitwiseNot}};
  const std::optional<IntUnary> op = entry_of(kUnary, base);
  const Operand a = operand(n, "self", 0);
  if (!op || !a.value || !cx.slot_of(*a.value).int64) return false;
  const int x = cx.slot_index(*a.value);
  const i64 count = numel(logical(cx.slot(x)));
  const int out = inplace ? x : int_tensor(cx, logical(cx.slot(x)));
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, count, op = *op] { portable::int_unary(op, cx.int_ptr(x), cx.int_ptr(out), count); };
  cx.define(n.outputs[0], as_output_type(cx, n, out));
  return true;
}

// clamp with integer bounds (a float bound makes a float result).
bool lower_clamp_on_int64(Context& cx, const Node& n, const std::string& base, bool inplace) {
  const Operand a = operand(n, "self", 0);
  if (!a.value || !cx.slot_of(*a.value).int64) return false;
  i64 lo = std::numeric_limits<i64>::min(), hi = std::numeric_limits<i64>::max();
  const auto bound = [&](std::string_view name, std::size_t position, i64& to) {
    const Operand o = operand(n, name, position);
    if (o.number) return to = *o.number, true;
    if (!o.value) return true;
    const Slot& s = cx.slot_of(*o.value);
    if (s.kind == Kind::kNone) return true;  // None
    if (s.kind != Kind::kInt) return false;  // a float, or a tensor bound
    return to = s.i, true;
  };
  if (base == "clamp" || base == "clip") {
    if (!bound("min", 1, lo) || !bound("max", 2, hi)) return false;
  } else if (!bound(base == "clamp_min" ? "min" : "max", 1, base == "clamp_min" ? lo : hi)) {
    return false;
  }
  const int x = cx.slot_index(*a.value);
  const i64 count = numel(logical(cx.slot(x)));
  const int out = inplace ? x : int_tensor(cx, logical(cx.slot(x)));
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, count, lo, hi] { portable::int_clamp(cx.int_ptr(x), cx.int_ptr(out), count, lo, hi); };
  cx.define(n.outputs[0], out);
  return true;
}

bool lower_where_on_int64(Context& cx, const Node& n) {
  const auto c = input_for_arg(n, "condition", 0);
  const Operand a = operand(n, "self", 1), b = operand(n, "other", 2);
  if (!c || cx.slot_of(*c).kind != Kind::kTensor || cx.slot_of(*c).int64 || !integer_valued(cx, a) || !integer_valued(cx, b)) return false;
  const int sc = cx.as_layout(cx.slot_index(*c), false), sa = as_int64(cx, a), sb = as_int64(cx, b);
  const Shape cs = cx.slot(sc).shape, as = logical(cx.slot(sa)), bs = logical(cx.slot(sb));
  const Shape shape = broadcast_of(cx, n, broadcast_of(cx, n, cs, as), bs);
  const int out = int_tensor(cx, shape);
  Step& step = cx.add_step({sc, sa, sb}, {out});
  step.run = [&cx, sc, sa, sb, out, cs, as, bs, shape] { portable::int_where(cx.ptr(sc), cs, cx.int_ptr(sa), as, cx.int_ptr(sb), bs, cx.int_ptr(out), shape); };
  cx.define(n.outputs[0], out);
  return true;
}

// A dtype argument that asks for a float result (sum(x, dtype=float32)).
bool float_dtype_arg(const Context& cx, const Node& n) {
  const auto code = cx.int_arg(n, "dtype");
  const auto d = code ? dtype_from_torch_code(*code) : std::nullopt;
  return d && !is_integer(*d);
}

// sum, prod, amax, amin, max/min of the whole tensor; cumsum, cumprod.
bool lower_reduce_on_int64(Context& cx, const Node& n, const std::string& base) {
  const Operand a = operand(n, "self", 0);
  if (!a.value || !cx.slot_of(*a.value).int64 || float_dtype_arg(cx, n)) return false;
  const int x = cx.slot_index(*a.value);
  const Shape shape = logical(cx.slot(x));
  const std::size_t rank = shape.size();
  if (base == "cumsum" || base == "cumprod") {
    const auto dim = cx.int_arg(n, "dim");
    if (!dim) return false;
    const std::size_t d = static_cast<std::size_t>(normalize_dim(*dim, rank, cx.where(n)));
    const i64 outer = rank ? prod(shape, 0, d) : 1, length = rank ? shape[d] : 1, inner = rank ? prod(shape, d + 1, rank) : 1;
    const int out = int_tensor(cx, shape);
    Step& step = cx.add_step({x}, {out});
    step.run = [&cx, x, out, outer, length, inner, p = base == "cumprod"] { portable::int_cumsum(cx.int_ptr(x), cx.int_ptr(out), outer, length, inner, p); };
    cx.define(n.outputs[0], as_output_type(cx, n, out));
    return true;
  }
  if ((base == "max" || base == "min") && (n.outputs.size() != 1 || input_for_arg(n, "dim", std::numeric_limits<std::size_t>::max()) ||
                                           n.attributes.contains("dim")))
    return false;  // max(x, dim) gives indices too: on float32
  const IntReduce op = base == "sum" ? IntReduce::kSum : base == "prod" ? IntReduce::kProd : (base == "amax" || base == "max") ? IntReduce::kMax : IntReduce::kMin;
  std::vector<bool> reduced(rank, true);
  if (auto dims = cx.ints_arg(n, "dim"); dims && !dims->empty()) {
    reduced.assign(rank, false);
    for (i64 d : *dims)
      if (rank) reduced[static_cast<std::size_t>(normalize_dim(d, rank, cx.where(n)))] = true;
  }
  for (std::size_t d = 0; d < rank; ++d)  // a max or min over no elements has no value (torch refuses it too)
    if (reduced[d] && shape[d] == 0 && (op == IntReduce::kMax || op == IntReduce::kMin))
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": " + base + " over dim " + std::to_string(d) + " of size 0");
  const Shape out_shape = reduced_shape(shape, reduced, cx.int_arg(n, "keepdim").value_or(0) != 0);
  const int out = int_tensor(cx, out_shape);
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, op, shape, reduced] { portable::int_reduce(op, cx.int_ptr(x), shape, reduced, cx.int_ptr(out)); };
  cx.define(n.outputs[0], as_output_type(cx, n, out));
  return true;
}

int copied(Context& cx, int x) {
  const i64 count = numel(logical(cx.slot(x)));
  const int out = int_tensor(cx, logical(cx.slot(x)));
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, count] {
    if (count) std::memcpy(cx.int_ptr(out), cx.int_ptr(x), static_cast<std::size_t>(count) * sizeof(i64));
  };
  return out;
}

bool casts_or_copies(std::string_view base) {
  static const std::set<std::string_view> kOps = {"to", "_to_copy", "type_as", "contiguous", "detach", "alias", "alias_copy", "detach_copy", "clone", "lift_fresh_copy"};
  return kOps.count(base) > 0;
}

// The casts (to a float type: rounded, as torch's), the copies and the aliases.
bool lower_cast_on_int64(Context& cx, const Node& n, const std::string& base) {
  const Operand a = operand(n, "self", 0);
  if (!a.value || !cx.slot_of(*a.value).int64) return false;
  const int x = cx.slot_index(*a.value);
  if (base == "contiguous" || base == "detach" || base == "alias" || base == "alias_copy" || base == "detach_copy") {
    cx.define(n.outputs[0], x);
    return true;
  }
  if (base == "clone" || base == "lift_fresh_copy") {
    cx.define(n.outputs[0], copied(cx, x));
    return true;
  }
  // The type cast to: the output's, else the dtype argument's, else `other`'s (type_as).
  std::optional<DType> to = dtype_of(cx.graph(), n.outputs[0]);
  if (!to) {
    if (auto code = cx.int_arg(n, "dtype")) to = dtype_from_torch_code(*code);
    else if (auto other = input_for_arg(n, "other", 1)) to = cx.slot_of(*other).int64 ? std::optional<DType>(DType::kInt64) : dtype_of(cx.graph(), *other);
    else if (base != "type_as") to = DType::kInt64;  // a device or memory format only
  }
  if (!to) return false;
  if (is_floating(*to)) {
    cx.define(n.outputs[0], narrowed(cx, n, *a.value, x, false));
    return true;
  }
  if (*to == DType::kBool) {
    const int zero = cx.planned_int64({0}, {});
    const Shape shape = logical(cx.slot(x));
    const int out = cx.new_tensor(shape, false);
    Step& step = cx.add_step({x, zero}, {out});
    step.run = [&cx, x, zero, out, shape] { portable::int_compare(IntCompare::kNe, cx.int_ptr(x), shape, cx.int_ptr(zero), {}, cx.ptr(out), shape); };
    cx.define(n.outputs[0], out);
    return true;
  }
  if (!is_integer(*to)) return false;
  const bool copy = base == "_to_copy" || *to != DType::kInt64;
  const int out = copy ? copied(cx, x) : x;
  cx.define(n.outputs[0], out);
  if (*to != DType::kInt64) {  // wrapped to its width
    const i64 count = numel(logical(cx.slot(out)));
    const int bits = *to == DType::kInt32 ? 32 : *to == DType::kInt16 ? 16 : 8;
    Step& step = cx.add_step({out}, {out});
    step.run = [&cx, out, count, bits, uns = *to == DType::kUInt8] { portable::int_narrow_type(cx.int_ptr(out), cx.int_ptr(out), count, bits, uns); };
  }
  return true;
}

// The ops that only read their inputs' shapes.
bool reads_shape_only(std::string_view base) {
  static const std::set<std::string_view> kOps = {
      "size", "sym_size", "dim", "numel", "sym_numel", "len", "__len__", "zeros_like", "ones_like", "full_like", "empty_like",
      "rand_like", "randn_like", "new_zeros", "new_ones", "new_full", "new_empty", "_shape_as_tensor"};
  return kOps.count(base) > 0;
}

// The ops that compute on int64 tensors exactly (docs/design.md).
bool computes_on_int64(std::string_view base) {
  static const std::set<std::string_view> kOps = {
      "add", "sub", "mul", "div", "floor_divide", "floordiv", "remainder", "fmod", "bitwise_and", "__and__", "bitwise_or", "__or__",
      "bitwise_xor", "__xor__", "maximum", "minimum", "max", "min", "eq", "ne", "lt", "le", "gt", "ge", "abs", "neg", "negative", "sign",
      "bitwise_not", "__invert__", "clamp", "clip", "clamp_min", "clamp_max", "where", "sum", "prod", "amax", "amin", "cumsum", "cumprod",
      "to", "_to_copy", "type_as", "contiguous", "detach", "alias", "alias_copy", "detach_copy", "clone", "lift_fresh_copy"};
  return kOps.count(base) > 0;
}

}  // namespace

void lower_with_int64(Context& cx, const Node& n, NodeState& st, Lowering lower, const std::function<void(const Node&)>& rest) {
  std::string base = base_op(n.op);
  // Each input once (x + x reads x twice), with its int64 slot.
  std::vector<std::pair<ValueId, int>> ints;
  for (ValueId v : n.inputs)
    if (cx.defined(v) && cx.slot_of(v).kind == Kind::kTensor && cx.slot_of(v).int64 &&
        std::none_of(ints.begin(), ints.end(), [&](const auto& p) { return p.first == v; }))
      ints.emplace_back(v, cx.slot_index(v));

  if (reads_shape_only(base)) {  // a float32 alias of the logical shape: no data is read
    std::vector<std::pair<ValueId, int>> with;
    for (const auto& [v, s] : ints) {
      const int a = cx.alias(s, logical(cx.slot(s)), false);
      cx.slot(a).int64 = false;
      with.emplace_back(v, a);
    }
    return with_slots(cx, with, [&] { rest(n); });
  }

  if (layout_op_on_pairs(base)) {  // moved as pairs, the other integer tensors widened to int64 first
    std::vector<ValueId> others;  // the other tensor inputs, each once
    for (ValueId v : n.inputs)
      if (cx.defined(v) && cx.slot_of(v).kind == Kind::kTensor && !cx.slot_of(v).int64 && std::find(others.begin(), others.end(), v) == others.end())
        others.push_back(v);
    if (std::all_of(others.begin(), others.end(), [&](ValueId v) { return integer_valued(cx, v); })) {
      std::vector<std::pair<ValueId, int>> with;
      for (ValueId v : others) with.emplace_back(v, as_int64(cx, v));
      return with_slots(cx, with, [&] { lower_layout_on_pairs(cx, n, st, lower); });
    }
  }

  const bool inplace = base.size() > 1 && base.back() == '_' && base.compare(0, 2, "__") != 0;
  std::string op = base;
  if (inplace) op.pop_back();
  if (computes_on_int64(op) && !n.outputs.empty()) {
    const bool done = lower_binary_on_int64(cx, n, op, inplace) || lower_unary_on_int64(cx, n, op, inplace) ||
                      ((op == "clamp" || op == "clip" || op == "clamp_min" || op == "clamp_max") && lower_clamp_on_int64(cx, n, op, inplace)) ||
                      (op == "where" && lower_where_on_int64(cx, n)) ||
                      (!inplace && (op == "sum" || op == "prod" || op == "amax" || op == "amin" || op == "max" || op == "min" || op == "cumsum" ||
                                    op == "cumprod") &&
                       lower_reduce_on_int64(cx, n, op)) ||
                      (!inplace && casts_or_copies(op) && lower_cast_on_int64(cx, n, op));
    if (done) return;
  }

  // Any other op: on float32 copies.
  const bool exact = !rounds_as_torch(cx.graph(), n);
  std::vector<std::pair<ValueId, int>> with;
  for (const auto& [v, s] : ints) with.emplace_back(v, narrowed(cx, n, v, s, exact));
  with_slots(cx, with, [&] { rest(n); });
  // An op that wrote into its float32 copy in place (masked_fill_, index_put_):
  // its values back into the int64 tensor, which its views share.
  for (std::size_t k = 0; inplace && k < ints.size(); ++k) {
    const int copy = with[k].second, original = ints[k].second;
    for (ValueId o : n.outputs) {
      if (!cx.defined(o) || cx.slot_of(o).kind != Kind::kTensor || cx.root(cx.slot_index(o)) != cx.root(copy)) continue;
      const i64 count = numel(cx.slot(copy).shape);
      Step& step = cx.add_step({copy}, {original});
      step.conversion = true;
      step.run = [&cx, copy, original, count] { portable::float_to_int(cx.ptr(copy), cx.int_ptr(original), count); };
      if (cx.slot_of(o).shape == cx.slot(copy).shape) cx.define(o, original);
      break;
    }
  }
}

}  // namespace tracegraph::xnnpack
