// Indices, masks and the values made while planning: index.Tensor (boolean
// masks too), nonzero, masked_select, item, index_select, where, any/all, the
// casts (_to_copy, to, type_as), arange, full, scalar_tensor, zeros and ones.
// Tensors torch holds as integers or bool are held as float32 here, exact up
// to 2^24 (portable.h); a graph output of such a type is cast back as it is
// read (runtime.cpp).
#include "lower/lowerings.h"

namespace tracegraph::xnnpack {
namespace {

// c10's ScalarType codes, as the readers write a dtype argument.
enum class Held { kFloat, kInteger, kBool };
std::optional<Held> held_kind(i64 code) {
  switch (code) {
    case 0: case 1: case 2: case 3: case 4: return Held::kInteger;  // uint8, int8, int16, int32, int64
    case 5: case 6: case 7: case 15: return Held::kFloat;           // half, float, double, bfloat16
    case 11: return Held::kBool;
    default: return std::nullopt;
  }
}
std::optional<Held> held_kind(DType d) {
  switch (d) {
    case DType::kFloat32: case DType::kFloat64: case DType::kFloat16: case DType::kBFloat16: return Held::kFloat;
    case DType::kInt64: case DType::kInt32: case DType::kInt16: case DType::kInt8: case DType::kUInt8: return Held::kInteger;
    case DType::kBool: return Held::kBool;
    default: return std::nullopt;
  }
}

// The shape a broadcast of all of `shapes` gives, or a typed error.
Shape broadcast_all(const Context& cx, const Node& n, const std::vector<Shape>& shapes) {
  Shape out = shapes.empty() ? Shape{} : shapes[0];
  for (const Shape& s : shapes) {
    auto b = shape_rules::broadcast(out, s);
    if (!b) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": shapes " + shape_str(out) + " and " + shape_str(s) + " do not broadcast");
    out = *b;
  }
  return out;
}

constexpr i64 kExactInFloat = i64{1} << 24;  // integers held as float32 are exact up to here

// nonzero's coordinates are held as float32: every dim must be exact there.
void coordinates_exact(const Context& cx, const Node& n, const Shape& shape) {
  for (i64 d : shape)
    if (d > kExactInFloat)
      fail(ErrorCode::kLimitExceeded, cx.where(n) + ": the coordinates of a tensor of shape " + shape_str(shape) +
                                          ": this backend holds indices as float32, exact up to 2^24");
}

}  // namespace

std::optional<i64> nonzero_count(Context& cx, int x) {
  const auto seen = cx.read_by_run(x, [count = numel(cx.slot(x).shape)](const float* p) { return static_cast<double>(portable::count_nonzero(p, count)); });
  if (!seen) return std::nullopt;
  return static_cast<i64>(*seen);
}

// A scripted model read without input shapes leaves values untyped.
bool is_mask(const Graph& g, ValueId v, int depth) {
  const Value& value = g.value(v);
  if (value.dtype) return *value.dtype == DType::kBool;
  if (value.is_constant()) return value.data.dtype() == DType::kBool;
  if (!value.producer || depth > 16) return false;
  const Node& p = g.node(*value.producer);
  const std::string base = base_op(p.op);
  static const std::set<std::string, std::less<>> kMasks = {
      "eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and", "logical_or", "logical_xor", "isnan", "isinf",
      "isfinite", "isneginf", "isposinf", "signbit", "__not__"};
  static const std::set<std::string, std::less<>> kViews = {
      "view", "reshape", "flatten", "unflatten", "unsqueeze", "squeeze", "permute", "transpose", "expand", "expand_as",
      "contiguous", "clone", "detach", "select", "slice", "repeat", "bitwise_not", "__invert__"};
  static const std::set<std::string, std::less<>> kOfMasks = {"bitwise_and", "bitwise_or", "bitwise_xor", "__and__", "__or__", "__xor__", "cat", "stack"};
  if (kMasks.count(base)) return true;
  if (base == "to" || base == "_to_copy" || base == "type") return arg_int(p, "dtype") == 11;  // c10's Bool
  if (p.inputs.empty()) return false;
  if (kViews.count(base)) return is_mask(g, p.inputs[0], depth + 1);
  return kOfMasks.count(base) && std::all_of(p.inputs.begin(), p.inputs.end(), [&](ValueId in) { return is_mask(g, in, depth + 1); });
}

void lower_index(Context& cx, const Node& n, NodeState&) {
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Shape xs = cx.slot(x).shape;
  // indices: Tensor?[]; the `indices` attribute marks the Nones (absent: every entry given).
  std::vector<ValueId> given = inputs_for_arg(n, "indices");
  std::vector<bool> entries(given.size(), true);
  if (const AttributeValue* mask = n.attributes.find("indices"))
    if (const auto* p = std::get_if<std::vector<bool>>(mask)) entries = *p;
  if (static_cast<std::size_t>(std::count(entries.begin(), entries.end(), true)) != given.size())
    fail(ErrorCode::kSchema, cx.where(n) + ": " + std::to_string(given.size()) + " index tensors for the " +
                                 std::to_string(std::count(entries.begin(), entries.end(), true)) + " entries that are not None");
  // Per dim of x from the first: indexed or taken whole. A boolean mask of k
  // dims stands for the k index tensors of its nonzero() coordinates, which
  // the run counts (one column of `mask_rows` per dim, at `offset`).
  std::vector<bool> present;
  std::vector<int> idx;
  std::vector<i64> offset;
  std::vector<Shape> shapes;
  int mask_rows = -1;
  for (std::size_t e = 0, g = 0; e < entries.size(); ++e) {
    if (!entries[e]) {
      present.push_back(false);
      continue;
    }
    const ValueId v = given[g++];
    if (!is_mask(cx.graph(), v)) {
      present.push_back(true);
      idx.push_back(cx.held_tensor_slot(n, v));
      offset.push_back(0);
      shapes.push_back(cx.slot(idx.back()).shape);
      continue;
    }
    if (mask_rows >= 0) fail(ErrorCode::kUnsupported, cx.where(n) + ": two boolean masks in one index");
    const int m = cx.as_layout(cx.held_tensor_slot(n, v), false);
    const Shape ms = cx.slot(m).shape;
    const std::size_t at = present.size();
    if (ms.empty()) fail(ErrorCode::kUnsupported, cx.where(n) + ": a boolean mask of no dims as an index");
    if (at + ms.size() > xs.size() || !std::equal(ms.begin(), ms.end(), xs.begin() + static_cast<std::ptrdiff_t>(at)))
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": the boolean mask " + shape_str(ms) + " does not match dims " + std::to_string(at) + ".. of " + shape_str(xs));
    coordinates_exact(cx, n, ms);
    const std::optional<i64> count = nonzero_count(cx, m);
    if (!count) return;
    const i64 rank = static_cast<i64>(ms.size()), rows = *count;
    mask_rows = cx.new_tensor({rank, rows}, false);
    cx.portable_map(m, mask_rows, [ms, rows](const float* a, float* b) { portable::nonzero(a, ms, b, rows, true); });
    for (i64 d = 0; d < rank; ++d) {
      present.push_back(true);
      idx.push_back(mask_rows);
      offset.push_back(d * rows);
      shapes.push_back({rows});
    }
  }
  if (present.size() > xs.size()) fail(ErrorCode::kOutOfRange, cx.where(n) + ": " + std::to_string(present.size()) + " indices for a tensor of rank " + std::to_string(xs.size()));
  if (idx.empty()) return cx.define(n.outputs[0], x);
  const Shape index_shape = broadcast_all(cx, n, shapes);
  std::vector<int> reads{x};
  for (std::size_t k = 0; k < idx.size(); ++k) {
    if (idx[k] == mask_rows) {
      if (shapes[k] != index_shape)  // a mask's coordinates broadcast to more: rare, and not a view of them
        fail(ErrorCode::kUnsupported, cx.where(n) + ": a boolean mask beside index tensors that broadcast to " + shape_str(index_shape));
    } else {
      idx[k] = broadcast_to(cx, idx[k], index_shape);
    }
    if (std::find(reads.begin(), reads.end(), idx[k]) == reads.end()) reads.push_back(idx[k]);
  }
  // The output's shape, as the kernel lays it out (portable::index).
  std::vector<std::size_t> indexed;
  for (std::size_t d = 0; d < present.size(); ++d)
    if (present[d]) indexed.push_back(d);
  const bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  Shape out_shape;
  if (adjacent) {
    out_shape.assign(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(indexed.front()));
    out_shape.insert(out_shape.end(), index_shape.begin(), index_shape.end());
    out_shape.insert(out_shape.end(), xs.begin() + static_cast<std::ptrdiff_t>(indexed.back() + 1), xs.end());
  } else {
    out_shape = index_shape;
    for (std::size_t d = 0; d < xs.size(); ++d)
      if (d >= present.size() || !present[d]) out_shape.push_back(xs[d]);
  }
  const int out = cx.new_tensor(out_shape, false);
  Step& step = cx.add_step(reads, {out});
  // One thread: an index out of range stops the run with an error naming the node.
  step.run = [&cx, &n, x, xs, idx, offset, present, index_shape, out] {
    std::vector<const float*> pointers(present.size(), nullptr);
    for (std::size_t d = 0, k = 0; d < present.size(); ++d)
      if (present[d]) {
        pointers[d] = cx.ptr(idx[k]) + offset[k];
        ++k;
      }
    double bad = 0;
    if (!portable::index(cx.ptr(x), cx.ptr(out), xs, pointers, index_shape, &bad))
      fail(ErrorCode::kOutOfRange, cx.where(n) + ": index " + std::to_string(bad) + " is out of range for " + shape_str(xs));
  };
  cx.define(n.outputs[0], out);
}

void lower_nonzero(Context& cx, const Node& n, NodeState&) {
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Shape shape = cx.slot(x).shape;
  coordinates_exact(cx, n, shape);
  i64 rows = 0;
  float fill = 0;
  if (base_op(n.op) == "nonzero_static") {  // a size given: no count to wait for
    rows = cx.int_arg(n, "size").value_or(-1);
    if (rows < 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": size " + std::to_string(rows) + " (not negative)");
    const i64 f = cx.int_arg(n, "fill_value").value_or(-1);
    if (f > kExactInFloat || f < -kExactInFloat) fail(ErrorCode::kOutOfRange, cx.where(n) + ": fill_value " + std::to_string(f) + " is past 2^24");
    fill = static_cast<float>(f);
  } else {
    const std::optional<i64> count = nonzero_count(cx, x);
    if (!count) return;
    rows = *count;
  }
  if (base_op(n.op) == "nonzero_numpy") {  // nonzero(as_tuple=True): one index tensor per dim (of a scalar, as of [1])
    const Shape dims = shape.empty() ? Shape{1} : shape;
    if (n.outputs.size() != dims.size())
      fail(ErrorCode::kSchema, cx.where(n) + ": " + std::to_string(n.outputs.size()) + " outputs for the " + std::to_string(dims.size()) + " dims of " + shape_str(shape));
    std::vector<int> outs;
    for (std::size_t d = 0; d < dims.size(); ++d) outs.push_back(cx.new_tensor({rows}, false));
    std::vector<int> ins{x};
    Step& step = cx.portable_step(ins, outs);
    step.run = [&cx, xi = ins[0], dims, rows, outs] {
      std::vector<float> columns(static_cast<std::size_t>(rows) * dims.size());
      portable::nonzero(cx.ptr(xi), dims, columns.data(), rows, true);
      for (std::size_t d = 0; d < dims.size(); ++d)
        std::copy(columns.begin() + static_cast<std::ptrdiff_t>(d) * rows, columns.begin() + static_cast<std::ptrdiff_t>(d + 1) * rows, cx.ptr(outs[d]));
    };
    for (std::size_t d = 0; d < outs.size(); ++d) cx.define(n.outputs[d], outs[d]);
    return;
  }
  const int out = cx.new_tensor({rows, static_cast<i64>(shape.size())}, false);
  cx.portable_map(x, out, [shape, rows, fill](const float* a, float* b) { portable::nonzero(a, shape, b, rows, false, fill); });
  cx.define(n.outputs[0], out);
}

void lower_masked_select(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const auto m = input_for_arg(n, "mask", 1);
  if (!m) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'mask'");
  const int mask = cx.held_tensor_slot(n, *m);
  const Shape shape = broadcast_all(cx, n, {cx.slot(x).shape, cx.slot(mask).shape});
  const int xb = cx.as_layout(broadcast_to(cx, x, shape), false), mb = cx.as_layout(broadcast_to(cx, mask, shape), false);
  const std::optional<i64> count = nonzero_count(cx, mb);
  if (!count) return;
  const int out = cx.new_tensor({*count}, false);
  Step& step = cx.add_step({xb, mb}, {out});
  step.run = [&cx, xb, mb, out, total = numel(shape)] { portable::masked_select(cx.ptr(xb), cx.ptr(mb), cx.ptr(out), total); };
  cx.define(n.outputs[0], out);
}

void lower_item(Context& cx, const Node& n, NodeState&) {
  auto self = input_for_arg(n, "self", 0);
  if (!self) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'self'");
  const Slot& known = cx.slot_of(*self);
  if (known.kind == Kind::kInt || known.kind == Kind::kFloat) return cx.define(n.outputs[0], cx.slot_index(*self));  // a number planning knows
  const int x = cx.tensor_slot(n, *self);
  const Shape shape = cx.slot(x).shape;
  if (numel(shape) != 1) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": item() of a tensor of shape " + shape_str(shape) + " (one element is needed)");
  const auto& dtype = cx.graph().value(*self).dtype;
  const bool integral = dtype && held_kind(*dtype) != Held::kFloat;
  std::optional<double> value = Context::constant_number(cx.slot(x));
  if (!value) value = cx.read_by_run(x, [](const float* p) { return static_cast<double>(p[0]); });  // computed in the graph: the run reads it
  if (!value) return;
  if (!integral) return cx.define(n.outputs[0], cx.float_slot(*value));
  if (!std::isfinite(*value)) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": item() of an integer tensor read " + std::to_string(*value));
  cx.define(n.outputs[0], cx.int_slot(static_cast<i64>(*value)));
}

void lower_index_select(Context& cx, const Node& n, NodeState&) {
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Shape xs = cx.slot(x).shape;
  const auto dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), std::max<std::size_t>(xs.size(), 1), cx.where(n)));
  auto v = input_for_arg(n, "index", 2);
  if (!v) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'index'");
  const int index = cx.held_tensor_slot(n, *v);
  const Shape is = cx.slot(index).shape;
  if (is.size() > 1) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": index " + shape_str(is) + " must have at most one dim");
  Shape out_shape = xs;
  if (!out_shape.empty()) out_shape[dim] = is.empty() ? 1 : is[0];
  const i64 outer = prod(xs, 0, dim), size = xs.empty() ? 1 : xs[dim], inner = prod(xs, dim + 1, xs.size());
  const i64 picks = numel(is);
  const int out = cx.new_tensor(out_shape, false);
  Step& step = cx.add_step({x, index}, {out});
  step.run = [&cx, &n, x, index, out, outer, size, inner, picks, xs] {
    const float* src = cx.ptr(x);
    const float* at = cx.ptr(index);
    float* dst = cx.ptr(out);
    for (i64 p = 0; p < picks; ++p) {
      i64 i = static_cast<i64>(at[p]);
      if (i < 0) i += size;
      if (i < 0 || i >= size || at[p] != std::trunc(at[p]))
        fail(ErrorCode::kOutOfRange, cx.where(n) + ": index " + std::to_string(at[p]) + " is out of range for " + shape_str(xs));
      for (i64 o = 0; o < outer; ++o) std::copy(src + (o * size + i) * inner, src + (o * size + i + 1) * inner, dst + (o * picks + p) * inner);
    }
  };
  cx.define(n.outputs[0], out);
}

void lower_where(Context& cx, const Node& n, NodeState&) {
  auto c = input_for_arg(n, "condition", 0), a = input_for_arg(n, "self", 1), b = input_for_arg(n, "other", 2);
  if (!c || !a || !b) fail(ErrorCode::kSchema, cx.where(n) + ": where(condition, self, other) with all three");
  int slots[3] = {cx.held_tensor_slot(n, *c), cx.held_tensor_slot(n, *a), cx.held_tensor_slot(n, *b)};
  const Shape out_shape = broadcast_all(cx, n, {cx.slot(slots[0]).shape, cx.slot(slots[1]).shape, cx.slot(slots[2]).shape});
  for (int& s : slots) s = broadcast_to(cx, s, out_shape);
  const int out = cx.new_tensor(out_shape, false);
  const i64 count = numel(out_shape);
  Step& step = cx.add_step({slots[0], slots[1], slots[2]}, {out});
  step.run = [&cx, c = slots[0], a = slots[1], b = slots[2], out, count] { portable::where(cx.ptr(c), cx.ptr(a), cx.ptr(b), cx.ptr(out), count); };
  cx.define(n.outputs[0], out);
}

void lower_any_all(Context& cx, const Node& n, NodeState&) {
  auto self = input_for_arg(n, "self", 0);
  if (!self) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'self'");
  const int x = cx.held_tensor_slot(n, *self);
  const Shape shape = cx.slot(x).shape;
  const std::size_t rank = shape.size();
  std::vector<bool> reduced(rank, true);
  if (auto dims = cx.ints_arg(n, "dim"); dims && !dims->empty()) {
    reduced.assign(rank, false);
    for (i64 d : *dims) {
      const i64 k = normalize_dim(d, rank, cx.where(n));
      if (rank) reduced[static_cast<std::size_t>(k)] = true;
    }
  }
  const Shape out_shape = reduced_shape(shape, reduced, cx.int_arg(n, "keepdim").value_or(0) != 0);
  const portable::Reduce op = base_op(n.op) == "any" ? portable::Reduce::kAny : portable::Reduce::kAll;
  const int out = cx.new_tensor(out_shape, false);
  cx.portable_map(x, out, [op, shape, reduced](const float* a, float* b) { portable::reduce(op, a, b, shape, reduced); });
  cx.define(n.outputs[0], out);
}

void lower_cast(Context& cx, const Node& n, NodeState&) {
  auto self = input_for_arg(n, "self", 0);
  if (!self) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'self'");
  std::optional<Held> to;
  // Complex: to a complex type ((x, 0) pairs), from one to a real type (its
  // real parts), or the same pairs.
  {
    const bool from_complex = cx.slot_of(*self).complex;
    std::optional<bool> to_complex;
    if (base_op(n.op) == "type_as" || input_for_arg(n, "other", std::numeric_limits<std::size_t>::max())) {
      const auto& d = cx.graph().value(*input_for_arg(n, "other", 1)).dtype;
      if (d) to_complex = is_complex(*d);
    } else if (auto code = cx.int_arg(n, "dtype")) {
      to_complex = *code == 8 || *code == 9 || *code == 10;  // c10's ComplexHalf, ComplexFloat, ComplexDouble
    }
    const bool want = to_complex.value_or(from_complex);
    if (from_complex == want && want) return cx.define(n.outputs[0], cx.slot_index(*self));
    if (from_complex != want) return cx.define(n.outputs[0], complex_cast(cx, n, cx.held_tensor_slot(n, *self), want));
  }
  if (base_op(n.op) == "type_as" || input_for_arg(n, "other", std::numeric_limits<std::size_t>::max())) {
    auto other = input_for_arg(n, "other", 1);
    const Value& o = cx.graph().value(*other);
    if (!o.dtype) fail(ErrorCode::kUnsupported, cx.where(n) + ": the type of '" + o.name + "' is not known");
    to = held_kind(*o.dtype);
  } else if (auto code = cx.int_arg(n, "dtype")) {
    to = held_kind(*code);
    if (!to) fail(ErrorCode::kUnsupported, cx.where(n) + ": a cast to the scalar type " + std::to_string(*code) + " (complex or quantized)");
  } else {
    to = Held::kFloat;  // a device, layout or memory format change only: the same values
  }
  const int x = cx.held_tensor_slot(n, *self);
  const Value& in = cx.graph().value(*self);
  const auto from = in.dtype ? held_kind(*in.dtype) : std::optional<Held>(Held::kFloat);
  // float to float, or to a type at least as wide as the values: the same floats.
  if (*to == Held::kFloat || from == to || (*to == Held::kInteger && from == Held::kBool)) return cx.define(n.outputs[0], x);
  const Shape shape = cx.slot(x).shape;
  const int out = cx.new_tensor(shape, false);
  const i64 count = numel(shape);
  if (*to == Held::kBool) cx.portable_map(x, out, [count](const float* a, float* b) { portable::cast_to_bool(a, b, count); });
  else cx.portable_map(x, out, [count](const float* a, float* b) { portable::cast_to_integer(a, b, count); });
  cx.define(n.outputs[0], out);
}

namespace {

// A factory's 'size' (zeros, full, rand, ...): a shape of no negative dim.
Shape size_arg(const Context& cx, const Node& n) {
  const auto size = cx.ints_arg(n, "size");
  if (!size) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'size'");
  for (i64 d : *size)
    if (d < 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": size " + shape_str(*size));
  return *size;
}

}  // namespace

void lower_factory(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const auto code = cx.int_arg(n, "dtype");
  if (code && *code == 9 && (base == "zeros" || base == "full" || base == "ones" || base == "empty")) {
    // complex64 (c10's ComplexFloat): its (value, 0) pairs (complex.cpp).
    Shape shape = size_arg(cx, n);
    const double value = base == "full" ? number_arg(cx, n, "fill_value") : base == "ones" ? 1.0 : 0.0;
    const i64 count = numel(shape);
    shape.push_back(2);
    cx.within_budget(shape);
    std::vector<float> pairs(static_cast<std::size_t>(2 * count), 0.0f);
    for (i64 i = 0; i < count; ++i) pairs[static_cast<std::size_t>(2 * i)] = static_cast<float>(value);
    const int s = cx.planned_constant(shape, std::move(pairs));
    cx.slot(s).complex = true;
    return cx.define(n.outputs[0], s);
  }
  if (code && !held_kind(*code))
    fail(ErrorCode::kUnsupported, cx.where(n) + ": a tensor of the scalar type " + std::to_string(*code));
  if (base == "arange") {
    const double start = cx.float_arg(n, "start").value_or(0), end = cx.float_arg(n, "end").value_or(0), step = cx.float_arg(n, "step").value_or(1);
    if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step) || (end - start) / step < 0)
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": arange from " + std::to_string(start) + " to " + std::to_string(end) + " by " + std::to_string(step));
    const double length = std::ceil((end - start) / step);
    if (length > 16777216.0) fail(ErrorCode::kLimitExceeded, cx.where(n) + ": arange of " + std::to_string(length) + " values (past 2^24, not exact as float32)");
    const i64 count = static_cast<i64>(length);
    std::vector<float> values(static_cast<std::size_t>(count));
    // Integer arguments give integers (torch's int64); their float32s are exact.
    for (i64 i = 0; i < count; ++i) values[static_cast<std::size_t>(i)] = static_cast<float>(start + static_cast<double>(i) * step);
    return cx.define(n.outputs[0], cx.planned_constant({count}, std::move(values)));
  }
  Shape shape;
  double value = 0;
  if (base == "scalar_tensor") {
    value = number_arg(cx, n, "s");
  } else {
    shape = size_arg(cx, n);
    value = base == "full" ? number_arg(cx, n, "fill_value") : base == "ones" ? 1.0 : 0.0;
  }
  if (code) {
    if (held_kind(*code) == Held::kBool) value = value != 0;
    else if (held_kind(*code) == Held::kInteger) value = std::trunc(value);
  }
  cx.within_budget(shape);
  cx.define(n.outputs[0], cx.planned_constant(shape, std::vector<float>(static_cast<std::size_t>(numel(shape)), static_cast<float>(value))));
}

void lower_random(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const auto code = cx.int_arg(n, "dtype");
  if (code && !held_kind(*code)) fail(ErrorCode::kUnsupported, cx.where(n) + ": a tensor of the scalar type " + std::to_string(*code));
  const bool integers = base == "randint" || base == "randint_like" || base == "randperm";
  if (code && !integers && held_kind(*code) != Held::kFloat)
    fail(ErrorCode::kInvalidArgument, cx.where(n) + ": " + base + " of an integer or bool dtype (torch refuses it too)");
  constexpr double kExact = 16777216.0;  // 2^24: integers past it are not exact as float32
  Shape shape;
  if (base == "randperm") {
    const i64 count = cx.int_arg(n, "n").value_or(-1);
    if (count < 0 || count > kExact) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": randperm of " + std::to_string(count) + " (0 to 2^24 here)");
    shape = {count};
  } else if (base.ends_with("_like")) {
    shape = cx.slot(cx.tensor_arg(n, "self", 0)).shape;
  } else {
    shape = size_arg(cx, n);
  }
  double low = 0, high = 1;
  if (base == "randint" || base == "randint_like") {
    low = static_cast<double>(cx.int_arg(n, "low").value_or(0));
    high = static_cast<double>(cx.int_arg(n, "high").value_or(0));
    if (!(low < high) || std::fabs(low) > kExact || std::fabs(high) > kExact)
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": randint from " + std::to_string(low) + " to " + std::to_string(high) +
                                            " (low below high, both within 2^24 here)");
  }
  const int out = cx.new_tensor(shape, false);
  const i64 count = numel(shape);
  // The node's stream: FNV-1a of its name, the same on every platform.
  std::uint64_t stream = 0xcbf29ce484222325ULL;
  for (unsigned char c : n.name) stream = (stream ^ c) * 0x100000001b3ULL;
  const auto runs = std::make_shared<std::uint64_t>(0);
  Step& step = cx.add_step({}, {out});
  if (base == "randperm") {
    step.run = [&cx, out, count, stream, runs] { portable::random_permutation(cx.ptr(out), count, stream + 0x9e3779b97f4a7c15ULL * ++*runs); };
  } else {
    const portable::Random kind = integers ? portable::Random::kInteger : base.starts_with("randn") ? portable::Random::kNormal : portable::Random::kUniform;
    step.run = [&cx, out, count, stream, runs, kind, low, high] {
      const std::uint64_t run_stream = stream + 0x9e3779b97f4a7c15ULL * ++*runs;
      float* y = cx.ptr(out);
      cx.parallel_slices(count, [&](i64 first, i64 n) { portable::random_values(kind, y + first, first, n, run_stream, low, high); }, kSliceFloats);
    };
  }
  cx.define(n.outputs[0], out);
}

void lower_gather(Context& cx, const Node& n, NodeState&) {
  // gather(self, dim, index), and embedding(weight, indices) as a gather of rows.
  const bool embedding = base_op(n.op) == "embedding";
  const int x = cx.as_layout(cx.tensor_arg(n, embedding ? "weight" : "self", 0), false);
  const Shape xs = cx.slot(x).shape;
  auto v = input_for_arg(n, embedding ? "indices" : "index", embedding ? 1 : 2);
  if (!v) fail(ErrorCode::kSchema, cx.where(n) + ": missing the indices");
  int index = cx.as_layout(cx.held_tensor_slot(n, *v), false);
  Shape is = cx.slot(index).shape;
  Shape out_shape = is;
  std::size_t dim = 0;
  if (embedding) {
    if (xs.size() != 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": weight " + shape_str(xs) + " (2 dims)");
    // Each index picks a row: index [..., 1] broadcast to [..., D] gathers along dim -2 of weight's rows.
    Shape ones = is;
    ones.push_back(1);
    index = cx.alias(index, ones, false);
    out_shape.push_back(xs[1]);
    index = broadcast_to(cx, index, out_shape);
    is = out_shape;
  } else {
    dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), std::max<std::size_t>(xs.size(), 1), cx.where(n)));
    if (is.size() != xs.size()) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": index " + shape_str(is) + " for self " + shape_str(xs) + " (one rank)");
    for (std::size_t d = 0; d < is.size(); ++d)
      if (d != dim && is[d] > xs[d]) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": index " + shape_str(is) + " larger than self " + shape_str(xs) + " in dim " + std::to_string(d));
  }
  const int out = cx.new_tensor(out_shape, false);
  Step& step = cx.add_step({x, index}, {out});
  step.run = [&cx, &n, x, index, out, xs, is, dim, embedding] {
    double bad = 0;
    bool ok = true;
    if (embedding) {
      // The rows: [rows, D] gathered by index [..., D] along dim 0 of a [rows, D] tensor read as rank 2.
      const i64 d = xs[1], count = numel(is) / std::max<i64>(d, 1);
      ok = portable::gather(cx.ptr(x), cx.ptr(index), cx.ptr(out), xs, {count, d}, 0, &bad);
    } else {
      ok = portable::gather(cx.ptr(x), cx.ptr(index), cx.ptr(out), xs, is, dim, &bad);
    }
    if (!ok) fail(ErrorCode::kOutOfRange, cx.where(n) + ": index " + std::to_string(bad) + " is out of range for " + shape_str(xs));
  };
  cx.define(n.outputs[0], out);
}

void lower_pixel_shuffle(Context& cx, const Node& n, NodeState&) {
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Shape xs = cx.slot(x).shape;
  const i64 r = cx.int_arg(n, "upscale_factor").value_or(1);
  if (xs.size() < 3 || r <= 0 || xs[xs.size() - 3] % (r * r))
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " with an upscale factor of " + std::to_string(r));
  const std::size_t k = xs.size();
  const i64 c = xs[k - 3] / (r * r), h = xs[k - 2], w = xs[k - 1], planes = prod(xs, 0, k - 3);
  Shape out_shape(xs.begin(), xs.end() - 3);
  out_shape.insert(out_shape.end(), {c, h * r, w * r});
  const int out = cx.new_tensor(out_shape, false);
  cx.portable_map(x, out, [planes, c, h, w, r](const float* a, float* b) { portable::pixel_shuffle(a, b, planes, c, h, w, r); });
  cx.define(n.outputs[0], out);
}

void lower_unshuffle(Context& cx, const Node& n, NodeState&) {
  // Both are a strided read of a contiguous input, in the output's order.
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape xs = cx.slot(x).shape;
  std::vector<i64> size, stride;
  Shape out_shape;
  if (base_op(n.op) == "pixel_unshuffle") {
    // [..., C, H * r, W * r] -> [..., C * r * r, H, W]: out[c, i, j, h, w] = x[c, h * r + i, w * r + j].
    const i64 r = cx.int_arg(n, "downscale_factor").value_or(1);
    const std::size_t k = xs.size();
    if (k < 3 || r <= 0 || xs[k - 2] % r || xs[k - 1] % r)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " with a downscale factor of " + std::to_string(r));
    const i64 planes = prod(xs, 0, k - 2), rows = xs[k - 2], cols = xs[k - 1];
    size = {planes, r, r, rows / r, cols / r};
    stride = {rows * cols, cols, 1, r * cols, r};
    out_shape.assign(xs.begin(), xs.end() - 3);
    out_shape.insert(out_shape.end(), {xs[k - 3] * r * r, rows / r, cols / r});
  } else {
    // channel_shuffle: [N, C, ...] viewed [N, g, C / g, ...], the two swapped.
    const i64 g = cx.int_arg(n, "groups").value_or(1);
    if (xs.size() < 2 || g <= 0 || xs[1] % g)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " in " + std::to_string(g) + " groups");
    const i64 rest = prod(xs, 2, xs.size()), per = xs[1] / g;
    size = {xs[0], per, g, rest};
    stride = {xs[1] * rest, rest, per * rest, 1};
    out_shape = xs;
  }
  const int out = cx.new_tensor(out_shape, false);
  cx.portable_map(x, out, [size, stride](const float* a, float* b) { portable::as_strided(a, b, size, stride, 0); });
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
