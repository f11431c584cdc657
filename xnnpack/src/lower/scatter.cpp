// Writes by index: scatter, scatter_add and scatter_reduce; index_add,
// index_copy and index_fill along a dim; index_put at advanced indices or
// under a boolean mask. Each writes a copy of self (the readers rewrite the
// in-place spellings to these, inplace_to_functional); indices are held as
// floats (index.cpp), and one out of range stops the run naming the node.
#include "lower/scatter.h"
#include "lower/arguments.h"
#include "lower/broadcast.h"
#include "lower/index.h"

namespace tracegraph::xnnpack {
namespace {

// A step that copies self into `out` and then runs `write` on out's data.
void copy_then(Context& cx, const Node& n, int self, int out, std::vector<int> reads, std::function<bool(double*)> write) {
  reads.insert(reads.begin(), self);
  Step& step = cx.add_step(reads, {out});
  const i64 count = numel(cx.slot(out).shape);
  step.run = [&cx, &n, self, out, count, write = std::move(write)] {
    std::copy_n(cx.ptr(self), count, cx.ptr(out));
    double bad = 0;
    if (!write(&bad)) fail(ErrorCode::kOutOfRange, cx.where(n) + ": index " + std::to_string(bad) + " is out of range");
  };
}

portable::ScatterReduce reduce_named(const Context& cx, const Node& n, const std::string& name) {
  static const std::map<std::string, portable::ScatterReduce, std::less<>> kNames = {
      {"add", portable::ScatterReduce::kSum},   {"sum", portable::ScatterReduce::kSum},   {"multiply", portable::ScatterReduce::kProd},
      {"prod", portable::ScatterReduce::kProd}, {"mean", portable::ScatterReduce::kMean}, {"amax", portable::ScatterReduce::kAmax},
      {"amin", portable::ScatterReduce::kAmin}};
  auto it = kNames.find(name);
  if (it == kNames.end()) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": reduce '" + name + "'");
  return it->second;
}

// A tensor argument in torch layout (a one-element index constant included), or -1 when it is absent.
int tensor_or_none(Context& cx, const Node& n, std::string_view name, std::size_t position) {
  auto v = input_for_arg(n, name, position);
  if (!v) return -1;
  return cx.as_layout(cx.held_tensor_slot(n, *v), false);
}

// A 0-dim tensor read as [1] (torch scatters into one as into [1]).
Shape at_least_1d(Shape s) { return s.empty() ? Shape{1} : s; }

}  // namespace

void lower_scatter(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Shape shape = cx.slot(x).shape, xs = at_least_1d(shape);
  const std::size_t dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), xs.size(), cx.where(n)));
  const int index = tensor_or_none(cx, n, "index", 2);
  if (index < 0) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'index'");
  const Shape is = at_least_1d(cx.slot(index).shape);
  const int src = tensor_or_none(cx, n, "src", 3);
  const Shape ss = src >= 0 ? at_least_1d(cx.slot(src).shape) : is;
  const float value = src >= 0 ? 0.0f : static_cast<float>(number_arg(cx, n, "value"));
  portable::ScatterReduce reduce = portable::ScatterReduce::kNone;
  bool include_self = true;
  if (base == "scatter_add") reduce = portable::ScatterReduce::kSum;
  else if (auto name = n.attributes.get_string("reduce")) reduce = reduce_named(cx, n, *name);
  if (base == "scatter_reduce") include_self = cx.int_arg(n, "include_self").value_or(1) != 0;
  if (is.size() != xs.size() || ss.size() != xs.size())
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": index " + shape_str(is) + " and src " + shape_str(ss) + " for self " + shape_str(shape) + " (one rank)");
  for (std::size_t d = 0; d < is.size(); ++d)
    if (is[d] > ss[d] || (d != dim && is[d] > xs[d]))
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": index " + shape_str(is) + " larger than src " + shape_str(ss) + " or self " + shape_str(shape) + " in dim " + std::to_string(d));
  // torch's mean of integers rounds down (the values stay integers).
  const std::optional<DType> dtype = cx.graph().value(n.outputs[0]).dtype;
  const bool floor_mean = reduce == portable::ScatterReduce::kMean && dtype && !is_floating(*dtype);
  const int out = cx.new_tensor(shape, false);
  std::vector<int> reads{index};
  if (src >= 0) reads.push_back(src);
  copy_then(cx, n, x, out, reads, [&cx, out, xs, index, is, src, ss, value, dim, reduce, include_self, floor_mean](double* bad) {
    if (!portable::scatter(cx.ptr(out), xs, cx.ptr(index), is, src >= 0 ? cx.ptr(src) : nullptr, ss, value, dim, reduce, include_self, bad)) return false;
    if (floor_mean) portable::unary(portable::Unary::kFloor, cx.ptr(out), cx.ptr(out), numel(xs));
    return true;
  });
  cx.define(n.outputs[0], out);
}

void lower_index_along(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Shape shape = cx.slot(x).shape, xs = at_least_1d(shape);
  const std::size_t dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), xs.size(), cx.where(n)));
  const int index = tensor_or_none(cx, n, "index", 2);
  if (index < 0) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'index'");
  if (cx.slot(index).shape.size() > 1) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": index " + shape_str(cx.slot(index).shape) + " must have at most one dim");
  const i64 count = numel(cx.slot(index).shape);
  const i64 outer = prod(xs, 0, dim), size = xs[dim], inner = prod(xs, dim + 1, xs.size());
  int source = -1, value_slot = -1;  // value_slot: index_fill's value, a one-element tensor computed in the graph
  float value = 0, alpha = 1;
  portable::ScatterReduce reduce = portable::ScatterReduce::kNone;
  if (base == "index_fill") {
    if (auto tensor = run_time_tensor(cx, n, "value")) {
      value_slot = cx.as_layout(cx.held_tensor_slot(n, *tensor), false);
      if (numel(cx.slot(value_slot).shape) != 1)
        fail(ErrorCode::kShapeMismatch, cx.where(n) + ": 'value' " + shape_str(cx.slot(value_slot).shape) + " must have one element");
    } else {
      value = static_cast<float>(number_arg(cx, n, "value"));
    }
  } else {
    source = tensor_or_none(cx, n, "source", 3);
    if (source < 0) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'source'");
    Shape want = xs;
    want[dim] = count;
    if (at_least_1d(cx.slot(source).shape) != want)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": source " + shape_str(cx.slot(source).shape) + " for " + std::to_string(count) + " indices into " + shape_str(shape) + " along dim " + std::to_string(dim));
    if (base == "index_add") {
      reduce = portable::ScatterReduce::kSum;
      alpha = static_cast<float>(cx.float_arg(n, "alpha").value_or(1));
    }
  }
  const int out = cx.new_tensor(shape, false);
  std::vector<int> reads{index};
  if (source >= 0) reads.push_back(source);
  if (value_slot >= 0) reads.push_back(value_slot);
  copy_then(cx, n, x, out, reads, [&cx, out, outer, size, inner, index, count, source, value, value_slot, alpha, reduce](double* bad) {
    const float fill = value_slot >= 0 ? cx.ptr(value_slot)[0] : value;
    return portable::index_along(cx.ptr(out), outer, size, inner, cx.ptr(index), count, source >= 0 ? cx.ptr(source) : nullptr, fill, alpha, reduce, bad);
  });
  cx.define(n.outputs[0], out);
}

void lower_index_put(Context& cx, const Node& n, NodeState&) {
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Shape xs = cx.slot(x).shape;
  const bool accumulate = cx.int_arg(n, "accumulate").value_or(0) != 0;
  // indices: Tensor?[]; the `indices` attribute marks the Nones (as index.Tensor's).
  std::vector<ValueId> given = inputs_for_arg(n, "indices");
  std::vector<bool> present(given.size(), true);
  if (const AttributeValue* mask = n.attributes.find("indices"))
    if (const auto* p = std::get_if<std::vector<bool>>(mask)) present = *p;
  if (static_cast<std::size_t>(std::count(present.begin(), present.end(), true)) != given.size() || given.empty())
    fail(ErrorCode::kSchema, cx.where(n) + ": " + std::to_string(given.size()) + " index tensors for the entries that are not None");
  if (present.size() > xs.size()) fail(ErrorCode::kOutOfRange, cx.where(n) + ": " + std::to_string(present.size()) + " indices for a tensor of rank " + std::to_string(xs.size()));
  const int values0 = tensor_or_none(cx, n, "values", 2);
  if (values0 < 0) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'values'");
  // values broadcast to `to` (leading 1s dropped first: torch's broadcast goes both ways there).
  auto values_as = [&](const Shape& to) {
    Shape vs = cx.slot(values0).shape;
    while (vs.size() > to.size() && vs.front() == 1) vs.erase(vs.begin());
    const auto fits = shape_rules::broadcast(vs, to);
    if (!fits || *fits != to)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": values " + shape_str(cx.slot(values0).shape) + " do not broadcast to " + shape_str(to));
    return broadcast_to(cx, cx.alias(values0, vs, false), to);
  };
  const int out = cx.new_tensor(xs, false);
  if (is_mask(cx.graph(), given[0])) {
    // x[mask] = values: a mask over the leading dims, one block of values for
    // every position set, or one block per position (x[mask] = y[mask]: the
    // count only the run knows).
    const int mask = cx.as_layout(tensor_or_none(cx, n, "indices", 1), false);
    const Shape ms = cx.slot(mask).shape;
    const bool leading = given.size() == 1 && present[0] && ms.size() <= xs.size() && std::equal(ms.begin(), ms.end(), xs.begin());
    if (!leading) fail(ErrorCode::kUnsupported, cx.where(n) + ": a boolean mask " + shape_str(ms) + " that is not over the leading dims of " + shape_str(xs));
    const Shape block(xs.begin() + static_cast<std::ptrdiff_t>(ms.size()), xs.end());
    Shape vs = cx.slot(values0).shape;
    while (vs.size() > block.size() && vs.front() == 1) vs.erase(vs.begin());
    const bool per_position = vs.size() == block.size() + 1;
    Shape to = block;
    if (per_position) {
      const std::optional<i64> count = nonzero_count(cx, mask);
      if (!count) return;
      to.insert(to.begin(), *count);
    }
    const int values = values_as(to);
    const i64 positions = numel(ms), inner = numel(block);
    copy_then(cx, n, x, out, {mask, values}, [&cx, out, mask, values, positions, inner, accumulate, per_position](double*) {
      portable::mask_put(cx.ptr(out), cx.ptr(mask), positions, inner, cx.ptr(values), accumulate, per_position);
      return true;
    });
    return cx.define(n.outputs[0], out);
  }
  std::vector<int> idx;
  std::optional<Shape> index_shape;
  for (ValueId v : given) {
    if (is_mask(cx.graph(), v)) fail(ErrorCode::kUnsupported, cx.where(n) + ": a boolean mask among integer indices");
    idx.push_back(cx.as_layout(cx.held_tensor_slot(n, v), false));
    const Shape s = cx.slot(idx.back()).shape;
    index_shape = index_shape ? shape_rules::broadcast(*index_shape, s) : s;
    if (!index_shape) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": the indices do not broadcast together");
  }
  for (int& s : idx) s = broadcast_to(cx, s, *index_shape);
  // The indexed result's shape (lower_index's rule), which values broadcast to.
  std::vector<std::size_t> indexed;
  for (std::size_t d = 0; d < present.size(); ++d)
    if (present[d]) indexed.push_back(d);
  Shape result;
  if (indexed.back() - indexed.front() + 1 == indexed.size()) {
    result.assign(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(indexed.front()));
    result.insert(result.end(), index_shape->begin(), index_shape->end());
    result.insert(result.end(), xs.begin() + static_cast<std::ptrdiff_t>(indexed.back() + 1), xs.end());
  } else {
    result = *index_shape;
    for (std::size_t d = 0; d < xs.size(); ++d)
      if (d >= present.size() || !present[d]) result.push_back(xs[d]);
  }
  const int values = values_as(result);
  std::vector<int> reads = idx;
  reads.push_back(values);
  copy_then(cx, n, x, out, reads, [&cx, out, xs, idx, present, shape = *index_shape, values, accumulate](double* bad) {
    std::vector<const float*> pointers(present.size(), nullptr);
    std::size_t k = 0;
    for (std::size_t d = 0; d < present.size(); ++d)
      if (present[d]) pointers[d] = cx.ptr(idx[k++]);
    return portable::index_put(cx.ptr(out), xs, pointers, shape, cx.ptr(values), accumulate, bad);
  });
  cx.define(n.outputs[0], out);
}

void lower_masked_scatter(Context& cx, const Node& n, NodeState&) {
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Shape shape = cx.slot(x).shape;
  int mask = tensor_or_none(cx, n, "mask", 1);
  const int source = tensor_or_none(cx, n, "source", 2);
  if (mask < 0 || source < 0) fail(ErrorCode::kSchema, cx.where(n) + ": missing the mask or the source");
  if (!shape_rules::broadcast(cx.slot(mask).shape, shape) || *shape_rules::broadcast(cx.slot(mask).shape, shape) != shape)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": mask " + shape_str(cx.slot(mask).shape) + " for self " + shape_str(shape));
  mask = broadcast_to(cx, mask, shape);
  const int out = cx.new_tensor(shape, false);
  const i64 count = numel(shape), source_count = numel(cx.slot(source).shape);
  Step& step = cx.add_step({x, mask, source}, {out});
  step.run = [&cx, &n, x, mask, source, out, count, source_count] {
    i64 needed = 0;
    if (!portable::masked_scatter(cx.ptr(x), cx.ptr(mask), cx.ptr(source), cx.ptr(out), count, source_count, &needed))
      fail(ErrorCode::kOutOfRange, cx.where(n) + ": the mask selects " + std::to_string(needed) + " elements, the source has " + std::to_string(source_count));
  };
  cx.define(n.outputs[0], out);
}

void lower_embedding_bag(Context& cx, const Node& n, NodeState&) {
  const int weight = cx.as_layout(cx.tensor_arg(n, "weight", 0), false);
  const Shape ws = cx.slot(weight).shape;
  const int indices = tensor_or_none(cx, n, "indices", 1);
  const int offsets = tensor_or_none(cx, n, "offsets", 2);
  if (ws.size() != 2 || indices < 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": weight " + shape_str(ws) + " (2 dims) and indices");
  const i64 mode = cx.int_arg(n, "mode").value_or(0);
  if (mode < 0 || mode > 2) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": mode " + std::to_string(mode) + " (0 sum, 1 mean, 2 max)");
  const int weights = tensor_or_none(cx, n, "per_sample_weights", 6);
  if (weights >= 0 && mode != 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": per_sample_weights with a mode other than sum");
  const bool include_last = cx.int_arg(n, "include_last_offset").value_or(0) != 0;
  const i64 padding_idx = cx.int_arg(n, "padding_idx").value_or(-1);
  const Shape is = cx.slot(indices).shape;
  // F.embedding_bag flattens bags of one size: the op sees 1-dim indices and offsets.
  if (is.size() != 1 || offsets < 0 || cx.slot(offsets).shape.size() != 1)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": indices " + shape_str(is) + " and offsets of 1 dim");
  const i64 bags = cx.slot(offsets).shape[0] - (include_last ? 1 : 0);
  if (bags < 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": no offsets");
  const i64 num = ws[0], dim = ws[1], count = numel(is);
  const int out = cx.new_tensor({bags, dim}, false);
  std::vector<int> reads{weight, indices, offsets};
  if (weights >= 0) reads.push_back(weights);
  Step& step = cx.add_step(reads, {out});
  step.run = [&cx, &n, weight, indices, offsets, weights, out, num, dim, count, bags, mode, padding_idx] {
    double bad = 0;
    if (!portable::embedding_bag(cx.ptr(weight), num, dim, cx.ptr(indices), count, cx.ptr(offsets), bags, weights >= 0 ? cx.ptr(weights) : nullptr,
                                 static_cast<int>(mode), padding_idx, cx.ptr(out), &bad))
      fail(ErrorCode::kOutOfRange, cx.where(n) + ": index " + std::to_string(bad) + " is out of range for " + std::to_string(num) + " rows");
  };
  // The other outputs (offset2bag, bag sizes, max indices) are for the backward pass; a read of one names it.
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
