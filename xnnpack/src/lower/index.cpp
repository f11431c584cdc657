// Reads by index: index.Tensor (boolean masks too), nonzero, masked_select,
// index_select, gather and embedding, where. Indices and masks are held as
// float32 (held_type.h), exact up to 2^24.
#include "lower/index.h"
#include "lower/broadcast.h"

namespace tracegraph::xnnpack {

namespace {

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

}  // namespace tracegraph::xnnpack
