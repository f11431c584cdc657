// Shapes and data movement: views, permutes, concatenation, slices and scatters, padding, rolls, and the ints and lists that planning knows.
#include "lower/lowerings.h"

namespace tracegraph::xnnpack {

void lower_permute(Context& cx, const Node& n, NodeState&) {
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Shape xs = cx.slot(x).shape;
  const std::size_t rank = xs.size();
  std::vector<i64> dims(rank);
  for (std::size_t i = 0; i < rank; ++i) dims[i] = static_cast<i64>(i);
  const std::string base = base_op(n.op);
  if (base.rfind("permute", 0) == 0) {
    auto given = cx.ints_arg(n, "dims");
    if (!given || given->size() != rank) fail(ErrorCode::kSchema, cx.where(n) + ": 'dims' must list " + std::to_string(rank) + " dims");
    dims = *given;
  } else if (base == "movedim") {
    // movedim(source, destination): the moved dims at their places, the others in order.
    auto src = cx.ints_arg(n, "source"), dst = cx.ints_arg(n, "destination");
    if (!src || !dst || src->size() != dst->size()) fail(ErrorCode::kSchema, cx.where(n) + ": source and destination of one length");
    std::vector<i64> order(rank, -1);
    std::vector<bool> moved(rank, false);
    for (std::size_t k = 0; k < src->size(); ++k) {
      const auto to = static_cast<std::size_t>(normalize_dim((*dst)[k], rank, cx.where(n)));
      const i64 from = normalize_dim((*src)[k], rank, cx.where(n));
      if (order[to] >= 0 || moved[static_cast<std::size_t>(from)]) fail(ErrorCode::kSchema, cx.where(n) + ": a dim moved twice");
      order[to] = from;
      moved[static_cast<std::size_t>(from)] = true;
    }
    std::size_t next = 0;
    for (i64& o : order) {
      if (o >= 0) continue;
      while (moved[next]) ++next;
      o = static_cast<i64>(next++);
    }
    dims = order;
  } else if (base == "t") {
    if (rank > 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": t() of a rank-" + std::to_string(rank) + " tensor");
    if (rank == 2) std::swap(dims[0], dims[1]);
  } else {
    const i64 a = normalize_dim(cx.int_arg(n, "dim0").value_or(0), rank, cx.where(n));
    const i64 b = normalize_dim(cx.int_arg(n, "dim1").value_or(0), rank, cx.where(n));
    std::swap(dims[static_cast<std::size_t>(a)], dims[static_cast<std::size_t>(b)]);
  }
  std::vector<std::size_t> in_shape, perm;
  std::vector<bool> seen(rank, false);
  Shape out_shape;
  for (i64 d : dims) {
    const auto p = static_cast<std::size_t>(normalize_dim(d, rank, cx.where(n)));
    if (seen[p]) fail(ErrorCode::kSchema, cx.where(n) + ": dim " + std::to_string(d) + " appears twice in the permutation");
    seen[p] = true;
    perm.push_back(p);
    out_shape.push_back(xs[p]);
  }
  for (i64 d : xs) in_shape.push_back(static_cast<std::size_t>(d));
  cx.define(n.outputs[0], rank < 2 ? x : cx.transposed(x, in_shape, perm, out_shape, false));
}

namespace {

// The tensors of a list argument ("tensors" of cat and stack), at least one.
std::vector<int> tensor_list(Context& cx, const Node& n) {
  std::vector<ValueId> parts = n.attributes.contains(kArgNamesAttribute) ? inputs_for_arg(n, "tensors") : n.inputs;
  if (parts.empty()) fail(ErrorCode::kSchema, cx.where(n) + ": no tensors");
  std::vector<int> in;
  for (ValueId v : parts) in.push_back(cx.tensor_slot(n, v));
  return in;
}

}  // namespace

void lower_cat(Context& cx, const Node& n, NodeState&) {
  const std::vector<int> in = tensor_list(cx, n);
  cx.define(n.outputs[0], concat(cx, n, in, cx.int_arg(n, "dim").value_or(0)));
}

void lower_stack(Context& cx, const Node& n, NodeState&) {
  std::vector<int> in = tensor_list(cx, n);
  const Shape first = cx.slot(in[0]).shape;
  const i64 dim = normalize_dim(cx.int_arg(n, "dim").value_or(0), first.size() + 1, cx.where(n));
  for (int& s : in) {
    const Shape shape = cx.slot(s).shape;
    if (shape != first) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": cannot stack " + shape_str(first) + " and " + shape_str(shape));
    Shape one = shape;
    one.insert(one.begin() + dim, 1);
    s = cx.alias(cx.as_layout(s, false), one, false);
  }
  cx.define(n.outputs[0], concat(cx, n, in, dim));
}

int concat(Context& cx, const Node& n, std::vector<int> in, i64 dim_arg) {
  bool channels_last = false;
  for (int s : in) channels_last = channels_last || cx.slot(s).channels_last;
  const Shape first = cx.slot(in[0]).shape;
  const std::size_t rank = first.size();
  const i64 dim = normalize_dim(dim_arg, rank, cx.where(n));
  Shape out_shape = first;
  out_shape[static_cast<std::size_t>(dim)] = 0;
  for (int& s : in) {
    s = cx.as_layout(s, channels_last);
    const Shape& shape = cx.slot(s).shape;
    for (std::size_t i = 0; i < rank; ++i)
      if (shape.size() != rank || (i != static_cast<std::size_t>(dim) && shape[i] != first[i]))
        fail(ErrorCode::kShapeMismatch, cx.where(n) + ": cannot concatenate " + shape_str(first) + " and " + shape_str(shape) + " along dim " + std::to_string(dim));
    out_shape[static_cast<std::size_t>(dim)] += shape[static_cast<std::size_t>(dim)];
  }
  const int out = cx.new_tensor(out_shape, channels_last);
  const Shape phys = physical(out_shape, channels_last && spatial_rank(rank));
  const std::size_t axis = physical_axis(static_cast<std::size_t>(dim), rank, channels_last && spatial_rank(rank));
  const i64 outer = prod(phys, 0, axis), inner = prod(phys, axis + 1, rank), out_axis = phys[axis];
  std::vector<std::pair<int, i64>> pieces;  // (slot, its extent along the axis)
  for (int s : in) pieces.emplace_back(s, cx.slot(s).shape[static_cast<std::size_t>(dim)]);
  Step& step = cx.add_step(in, {out});
  // Threads split the outer blocks, kSliceFloats or so each.
  const i64 tile = std::max<i64>(1, kSliceFloats / std::max<i64>(out_axis * inner, 1));
  step.run = [&cx, pieces, out, outer, inner, out_axis, tile] {
    float* dst = cx.ptr(out);
    cx.parallel_slices(outer, [&](i64 first, i64 count) {
      i64 offset = 0;
      for (const auto& [s, extent] : pieces) {
        kernels::copy_blocks(cx.ptr(s) + first * extent * inner, dst + first * out_axis * inner + offset * inner, count, extent * inner, extent * inner,
                             out_axis * inner);
        offset += extent;
      }
    }, tile);
  };
  return out;
}

void lower_slice(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  cx.define(n.outputs[0], slice_of(cx, n, x, cx.int_arg(n, "dim").value_or(0), cx.int_arg(n, "start").value_or(0),
                                cx.int_arg(n, "end").value_or(std::numeric_limits<i64>::max()), cx.int_arg(n, "step").value_or(1)));
}

int slice_of(Context& cx, const Node& n, int x, i64 dim_arg, i64 start, i64 end, i64 step_by) {
  const Slot& xs = cx.slot(x);
  const Shape shape = xs.shape;
  const bool channels_last = xs.channels_last;
  const std::size_t rank = shape.size();
  if (rank == 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": slicing a 0-d tensor");
  const std::size_t dim = static_cast<std::size_t>(normalize_dim(dim_arg, rank, cx.where(n)));
  const i64 size = shape[dim];
  const auto bounds = shape_rules::slice(size, start, end, step_by);
  if (!bounds) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": slice step must be positive");
  start = bounds->start;
  const i64 length = bounds->length;
  Shape out_shape = shape;
  out_shape[dim] = length;
  if (length == size) return cx.alias(x, out_shape, channels_last);  // the whole axis: no copy
  const Shape phys = physical(shape, channels_last);
  const std::size_t axis = physical_axis(dim, rank, channels_last);
  const i64 outer = prod(phys, 0, axis), inner = prod(phys, axis + 1, rank);
  const int out = cx.new_tensor(out_shape, channels_last);
  Step& step = cx.add_step({x}, {out});
  if (step_by == 1) {
    step.run = [&cx, x, out, outer, inner, start, length, size] {
      cx.parallel_copy_blocks(cx.ptr(x) + start * inner, cx.ptr(out), outer, length * inner, size * inner, length * inner);
    };
  } else {
    step.run = [&cx, x, out, outer, inner, start, length, size, step_by] {
      kernels::copy_strided_axis(cx.ptr(x), cx.ptr(out), outer, size, length, start, step_by, inner);
    };
  }
  return out;
}

void lower_view(Context& cx, const Node& n, NodeState&) {
  const int x0 = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x0).shape;
  const i64 count = numel(shape);
  Shape out_shape;
  if (base_op(n.op) == "unflatten") {
    const std::size_t rank = std::max<std::size_t>(shape.size(), 1);
    const auto dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), rank, cx.where(n)));
    const auto sizes = cx.ints_arg(n, "sizes");
    const auto split = sizes ? shape_rules::view(shape.empty() ? 1 : shape[dim], *sizes) : std::nullopt;
    if (!split) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": cannot unflatten dim " + std::to_string(dim) + " of " + shape_str(shape) + " into " +
                                              (sizes ? shape_str(*sizes) : std::string("(no sizes)")));
    out_shape.assign(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(std::min(dim, shape.size())));
    out_shape.insert(out_shape.end(), split->begin(), split->end());
    if (dim + 1 < shape.size()) out_shape.insert(out_shape.end(), shape.begin() + static_cast<std::ptrdiff_t>(dim + 1), shape.end());
  } else if (base_op(n.op) == "flatten") {
    const std::size_t rank = std::max<std::size_t>(shape.size(), 1);
    const i64 start = normalize_dim(cx.int_arg(n, "start_dim").value_or(0), rank, cx.where(n));
    const i64 end = normalize_dim(cx.int_arg(n, "end_dim").value_or(-1), rank, cx.where(n));
    if (shape.empty()) out_shape = {1};
    else {
      for (i64 i = 0; i < start; ++i) out_shape.push_back(shape[static_cast<std::size_t>(i)]);
      out_shape.push_back(prod(shape, static_cast<std::size_t>(start), static_cast<std::size_t>(end + 1)));
      for (std::size_t i = static_cast<std::size_t>(end + 1); i < shape.size(); ++i) out_shape.push_back(shape[i]);
    }
  } else {
    std::optional<std::vector<i64>> wanted;
    const std::string base = base_op(n.op);
    if (base == "view_as" || base == "reshape_as") wanted = cx.slot(cx.tensor_arg(n, "other", 1)).shape;
    if (!wanted) wanted = cx.ints_arg(n, "size");
    if (!wanted) wanted = cx.ints_arg(n, "shape");
    if (!wanted) fail(ErrorCode::kSchema, cx.where(n) + ": no target shape");
    const auto viewed = shape_rules::view(count, *wanted);
    if (!viewed)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": cannot view " + shape_str(shape) + " as " + shape_str(*wanted) +
                                          " (at most one -1, other dims not negative, as many elements)");
    out_shape = *viewed;
  }
  if (numel(out_shape) != count) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": cannot view " + shape_str(shape) + " as " + shape_str(out_shape));
  cx.define(n.outputs[0], cx.alias(cx.as_layout(x0, false), out_shape, false));
}

void lower_narrow(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const i64 start = cx.int_arg(n, "start").value_or(0), length = cx.int_arg(n, "length").value_or(0);
  const std::size_t rank = cx.slot(x).shape.size();
  const i64 dim = normalize_dim(cx.int_arg(n, "dim").value_or(0), rank, cx.where(n));
  const i64 size = cx.slot(x).shape[static_cast<std::size_t>(dim)];
  const i64 begin = start < 0 ? start + size : start;
  if (begin < 0 || length < 0 || begin + length > size)
    fail(ErrorCode::kOutOfRange, cx.where(n) + ": narrow(" + std::to_string(start) + ", " + std::to_string(length) + ") of a dim of " + std::to_string(size));
  cx.define(n.outputs[0], slice_of(cx, n, x, dim, begin, begin + length, 1));
}

void lower_chunk(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  const i64 dim = normalize_dim(cx.int_arg(n, "dim").value_or(0), shape.size(), cx.where(n));
  const i64 size = shape[static_cast<std::size_t>(dim)];
  const std::string base = base_op(n.op);
  // split_with_sizes, and split's overload with a list of sizes.
  std::optional<std::vector<i64>> sizes;
  if (base == "split_with_sizes") sizes = cx.ints_arg(n, "split_sizes");
  else if (base != "chunk" && n.attributes.contains("split_size") && std::holds_alternative<std::vector<std::int64_t>>(*n.attributes.find("split_size")))
    sizes = cx.ints_arg(n, "split_size");
  if (sizes) {
    i64 total = 0;
    for (i64 k : *sizes) {
      if (k < 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": split sizes " + shape_str(*sizes) + " must not be negative");
      total += k;
    }
    if (total != size || sizes->size() != n.outputs.size())
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": split sizes " + shape_str(*sizes) + " for a dim of " + std::to_string(size) + " and " +
                                          std::to_string(n.outputs.size()) + " outputs");
    i64 begin = 0;
    for (std::size_t k = 0; k < sizes->size(); ++k) {
      cx.define(n.outputs[k], slice_of(cx, n, x, dim, begin, begin + (*sizes)[k], 1));
      begin += (*sizes)[k];
    }
    return;
  }
  i64 piece;
  if (base == "chunk") {
    const i64 chunks = cx.int_arg(n, "chunks").value_or(1);
    if (chunks <= 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": chunks must be positive");
    piece = (size + chunks - 1) / chunks;
  } else {
    piece = cx.int_arg(n, "split_size").value_or(size);
    if (piece <= 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": split_size must be positive");
  }
  const i64 pieces = piece ? (size + piece - 1) / piece : 1;
  if (static_cast<std::size_t>(pieces) != n.outputs.size())
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + std::to_string(pieces) + " pieces for " + std::to_string(n.outputs.size()) + " outputs");
  for (std::size_t k = 0; k < n.outputs.size(); ++k) {
    const i64 begin = static_cast<i64>(k) * piece;
    cx.define(n.outputs[k], slice_of(cx, n, x, dim, begin, std::min(begin + piece, size), 1));
  }
}

void lower_select(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  cx.define(n.outputs[0], select_of(cx, n, x, cx.int_arg(n, "dim").value_or(0), cx.int_arg(n, "index").value_or(0)));
}

void lower_unbind(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  const i64 dim = normalize_dim(cx.int_arg(n, "dim").value_or(0), shape.size(), cx.where(n));
  if (static_cast<std::size_t>(shape[static_cast<std::size_t>(dim)]) != n.outputs.size())
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": a dim of " + std::to_string(shape[static_cast<std::size_t>(dim)]) + " unbound into " +
                                        std::to_string(n.outputs.size()) + " outputs");
  for (std::size_t k = 0; k < n.outputs.size(); ++k) cx.define(n.outputs[k], select_of(cx, n, x, dim, static_cast<i64>(k)));
}

int select_of(Context& cx, const Node& n, int x, i64 dim_arg, i64 index) {
  const Shape shape = cx.slot(x).shape;
  const i64 dim = normalize_dim(dim_arg, shape.size(), cx.where(n));
  const i64 size = shape[static_cast<std::size_t>(dim)];
  if (index < -size || index >= size) fail(ErrorCode::kOutOfRange, cx.where(n) + ": index " + std::to_string(index) + " of a dim of " + std::to_string(size));
  if (index < 0) index += size;
  const int one = cx.as_layout(slice_of(cx, n, x, dim, index, index + 1, 1), false);
  Shape out_shape = shape;
  out_shape.erase(out_shape.begin() + dim);
  return cx.alias(one, out_shape, false);
}

void lower_reshape_dims(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  Shape shape = cx.slot(x).shape;
  if (base_op(n.op) == "unsqueeze") {
    const i64 dim = normalize_dim(cx.int_arg(n, "dim").value_or(0), shape.size() + 1, cx.where(n));
    shape.insert(shape.begin() + dim, 1);
  } else {
    // squeeze(self) drops every dim of 1; squeeze.dim(s) only those named
    // (an empty list: none).
    std::optional<std::vector<i64>> dims = cx.ints_arg(n, "dim");
    if (!dims) dims = cx.ints_arg(n, "dims");
    std::set<i64> drop;
    if (dims)
      for (i64 d : *dims) drop.insert(normalize_dim(d, shape.size(), cx.where(n)));
    Shape kept;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      const bool squeeze = shape[i] == 1 && (!dims || drop.count(static_cast<i64>(i)));
      if (!squeeze) kept.push_back(shape[i]);
    }
    shape = kept;
  }
  cx.define(n.outputs[0], cx.alias(cx.as_layout(x, false), shape, false));
}

void lower_expand(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape in = cx.slot(x).shape;
  Shape target;
  if (base_op(n.op) == "expand_as") {
    auto other = input_for_arg(n, "other", 1);
    if (!other) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'other'");
    target = cx.slot_of(*other).shape;
  } else {
    auto size = cx.ints_arg(n, "size");
    if (!size) fail(ErrorCode::kSchema, cx.where(n) + ": no size");
    target = *size;
  }
  if (target.size() < in.size()) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": cannot expand " + shape_str(in) + " to " + shape_str(target));
  const std::size_t lead = target.size() - in.size();
  for (std::size_t i = 0; i < target.size(); ++i) {
    const i64 have = i >= lead ? in[i - lead] : 1;
    if (target[i] == -1 && i >= lead) target[i] = have;
    if (target[i] < 0 || (have != 1 && have != target[i]))
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": cannot expand " + shape_str(in) + " to " + shape_str(target));
  }
  if (target == in) return cx.define(n.outputs[0], x);
  const int out = cx.new_tensor(target, false);
  cx.portable_map(x, out, [in, target](const float* a, float* y) { portable::broadcast(a, y, in, target); });
  cx.define(n.outputs[0], out);
}

void lower_list(Context& cx, const Node& n, NodeState&) {
  std::vector<i64> items;
  for (ValueId v : n.inputs) {
    const Slot& s = cx.slot_of(v);
    if (s.kind != Kind::kInt) fail(ErrorCode::kUnsupported, cx.where(n) + ": a list of something other than integers known before the run");
    items.push_back(s.i);
  }
  cx.define(n.outputs[0], cx.ints_slot(std::move(items)));
}

void lower_pad(Context& cx, const Node& n, NodeState& st) {
  const std::string base = base_op(n.op);
  const int x = cx.tensor_arg(n, input_for_arg(n, "self", 0) ? "self" : "input", 0);
  const Shape in = cx.slot(x).shape;
  auto pads = cx.ints_arg(n, "pad");
  if (!pads) pads = cx.ints_arg(n, "padding");
  if (!pads || pads->size() % 2 || pads->size() / 2 > in.size())
    fail(ErrorCode::kSchema, cx.where(n) + ": padding " + (pads ? shape_str(*pads) : std::string("missing")) + " for a tensor of rank " + std::to_string(in.size()));
  portable::PadMode mode = portable::PadMode::kConstant;
  std::string mode_name = n.attributes.get_string("mode").value_or("constant");
  if (base.rfind("reflection_pad", 0) == 0) mode_name = "reflect";
  if (base.rfind("replication_pad", 0) == 0) mode_name = "replicate";
  if (mode_name == "reflect") mode = portable::PadMode::kReflect;
  else if (mode_name == "replicate") mode = portable::PadMode::kReplicate;
  else if (mode_name == "circular") mode = portable::PadMode::kCircular;
  else if (mode_name != "constant") fail(ErrorCode::kUnsupported, cx.where(n) + ": padding mode '" + mode_name + "'");
  const float value = static_cast<float>(cx.float_arg(n, "value").value_or(0));
  std::vector<i64> before(in.size(), 0), after(in.size(), 0);
  Shape out_shape = in;
  for (std::size_t k = 0; k < pads->size() / 2; ++k) {
    const std::size_t d = in.size() - 1 - k;
    before[d] = (*pads)[2 * k];
    after[d] = (*pads)[2 * k + 1];
    // Negative padding crops (constant and replicate mode, as torch allows).
    if ((mode == portable::PadMode::kReflect || mode == portable::PadMode::kCircular) && (before[d] < 0 || after[d] < 0))
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": negative padding in " + mode_name + " mode");
    if (mode == portable::PadMode::kReflect && (before[d] >= in[d] || after[d] >= in[d]))
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": reflect padding " + std::to_string(std::max(before[d], after[d])) + " must be less than the dim's size " + std::to_string(in[d]));
    if ((mode == portable::PadMode::kReplicate || mode == portable::PadMode::kCircular) && in[d] == 0)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": padding an empty dim in " + mode_name + " mode");
    out_shape[d] = in[d] + before[d] + after[d];
    if (out_shape[d] < 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": padding makes dim " + std::to_string(d) + " negative");
  }
  // Constant padding that only adds (XNNPACK's padding is unsigned), in x's own layout.
  bool grows = mode == portable::PadMode::kConstant && in.size() <= XNN_MAX_TENSOR_DIMS && numel(in) > 0;
  for (std::size_t d = 0; d < in.size() && grows; ++d) grows = before[d] >= 0 && after[d] >= 0;
  if (grows) {
    const bool channels_last = cx.slot(x).channels_last;
    const std::size_t rank = in.size();
    std::vector<std::size_t> shape, pre(rank), post(rank);
    for (i64 d : physical(in, channels_last)) shape.push_back(static_cast<std::size_t>(d));
    for (std::size_t d = 0; d < rank; ++d) {
      const std::size_t p = physical_axis(d, rank, channels_last);
      pre[p] = static_cast<std::size_t>(before[d]);
      post[p] = static_cast<std::size_t>(after[d]);
    }
    XnnOp& made = cx.plan_op();
    cx.check(xnn_create_constant_pad_nd_x32(cx.node_numbers(st, 0, {value}), 0, &made.op), n, "creating a constant pad");
    xnn_operator_t op = made.op;
    cx.check(xnn_reshape_constant_pad_nd_x32(op, rank, shape.data(), pre.data(), post.data(), cx.pool()), n, "reshaping a constant pad");
    const int out = cx.new_tensor(out_shape, channels_last);
    Step& step = cx.add_step({x}, {out});
    step.setup = [&cx, op, x, out, &n] { cx.check(xnn_setup_constant_pad_nd_x32(op, cx.ptr(x), cx.ptr(out)), n, "setting up a constant pad"); };
    step.xnnpack = true;
    step.run = [&cx, op, &n] { cx.check(xnn_run_operator(op, cx.pool()), n, "running a constant pad"); };
    return cx.define(n.outputs[0], out);
  }
  const int out = cx.new_tensor(out_shape, false);
  cx.portable_map(x, out, [in, before, after, mode, value](const float* a, float* y) { portable::pad(a, y, in, before, after, mode, value); });
  cx.define(n.outputs[0], out);
}

void lower_slice_scatter(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const int src = cx.tensor_arg(n, "src", 1);
  const Shape shape = cx.slot(x).shape;
  const Shape src_shape = cx.slot(src).shape;
  if (shape.empty()) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": scattering into a 0-d tensor");
  const std::size_t dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), shape.size(), cx.where(n)));
  const i64 size = shape[dim];
  const i64 step_by = cx.int_arg(n, "step").value_or(1);
  const auto bounds = shape_rules::slice(size, cx.int_arg(n, "start").value_or(0), cx.int_arg(n, "end").value_or(std::numeric_limits<i64>::max()), step_by);
  if (!bounds) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": slice step must be positive");
  const i64 start = bounds->start, length = bounds->length;
  Shape want = shape;
  want[dim] = length;
  if (src_shape != want) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": src " + shape_str(src_shape) + " for a slice of shape " + shape_str(want));
  const i64 outer = prod(shape, 0, dim), inner = prod(shape, dim + 1, shape.size());
  const int out = cx.new_tensor(shape, false);
  std::vector<int> ins{x, src};
  Step& step = cx.portable_step(ins, {out});
  const int xi = ins[0], si = ins[1];
  step.run = [&cx, xi, si, out, outer, size, inner, start, step_by, length] {
    portable::slice_scatter(cx.ptr(xi), cx.ptr(si), cx.ptr(out), outer, size, inner, start, step_by, length);
  };
  cx.define(n.outputs[0], out);
}

void lower_select_scatter(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const int src = cx.tensor_arg(n, "src", 1);
  const Shape shape = cx.slot(x).shape;
  if (shape.empty()) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": scattering into a 0-d tensor");
  const std::size_t dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), shape.size(), cx.where(n)));
  const i64 size = shape[dim];
  i64 index = cx.int_arg(n, "index").value_or(0);
  if (index < -size || index >= size)
    fail(ErrorCode::kOutOfRange, cx.where(n) + ": index " + std::to_string(index) + " for a dim of " + std::to_string(size));
  if (index < 0) index += size;
  Shape want = shape;
  want.erase(want.begin() + static_cast<std::ptrdiff_t>(dim));
  if (cx.slot(src).shape != want)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": src " + shape_str(cx.slot(src).shape) + " for a selection of shape " + shape_str(want));
  // src is the slice [index, index + 1) of dim, without that dim: the same elements in the same order.
  const i64 outer = prod(shape, 0, dim), inner = prod(shape, dim + 1, shape.size());
  const int out = cx.new_tensor(shape, false);
  std::vector<int> ins{x, src};
  Step& step = cx.portable_step(ins, {out});
  step.run = [&cx, xi = ins[0], si = ins[1], out, outer, size, inner, index] {
    portable::slice_scatter(cx.ptr(xi), cx.ptr(si), cx.ptr(out), outer, size, inner, index, 1, 1);
  };
  cx.define(n.outputs[0], out);
}

void lower_diagonal(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape in = cx.slot(x).shape;
  if (in.size() < 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": the diagonal of " + shape_str(in) + " (2 dims or more)");
  const auto d1 = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim1").value_or(0), in.size(), cx.where(n)));
  const auto d2 = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim2").value_or(1), in.size(), cx.where(n)));
  if (d1 == d2) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": dim1 and dim2 are both " + std::to_string(d1));
  const i64 offset = cx.int_arg(n, "offset").value_or(0);
  std::vector<i64> stride(in.size(), 1);
  for (std::size_t i = in.size() - 1; i > 0; --i) stride[i - 1] = stride[i] * in[i];
  // Entries (i, i + offset) of the two dims, the others kept in order before them.
  const i64 length = std::max<i64>(0, offset >= 0 ? std::min(in[d1], in[d2] - offset) : std::min(in[d1] + offset, in[d2]));
  const i64 start = length == 0 ? 0 : offset >= 0 ? offset * stride[d2] : -offset * stride[d1];
  std::vector<i64> size, steps;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (i == d1 || i == d2) continue;
    size.push_back(in[i]);
    steps.push_back(stride[i]);
  }
  size.push_back(length);
  steps.push_back(stride[d1] + stride[d2]);
  const int out = cx.new_tensor(size, false);
  cx.portable_map(x, out, [size, steps, start](const float* a, float* b) { portable::as_strided(a, b, size, steps, start); });
  cx.define(n.outputs[0], out);
}

void lower_roll(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  const auto shifts = cx.ints_arg(n, "shifts");
  const auto dims = cx.ints_arg(n, "dims").value_or(std::vector<i64>{});
  if (!shifts || shifts->empty()) fail(ErrorCode::kSchema, cx.where(n) + ": no shifts");
  Shape rolled = shape;  // the shape the kernel sees: flattened when no dims are given
  std::vector<i64> per_dim;
  auto add = [](i64 have, i64 shift, i64 size) { return size == 0 ? 0 : ((have + shift % size) % size + size) % size; };
  if (dims.empty()) {
    if (shifts->size() != 1) fail(ErrorCode::kSchema, cx.where(n) + ": " + std::to_string(shifts->size()) + " shifts and no dims");
    rolled = {numel(shape)};
    per_dim = {add(0, (*shifts)[0], rolled[0])};
  } else {
    if (dims.size() != shifts->size())
      fail(ErrorCode::kSchema, cx.where(n) + ": " + std::to_string(shifts->size()) + " shifts for " + std::to_string(dims.size()) + " dims");
    per_dim.assign(shape.size(), 0);
    for (std::size_t i = 0; i < dims.size(); ++i) {
      const auto d = static_cast<std::size_t>(normalize_dim(dims[i], shape.size(), cx.where(n)));
      per_dim[d] = add(per_dim[d], (*shifts)[i], shape[d]);
    }
  }
  const int out = cx.new_tensor(shape, false);
  cx.portable_map(x, out, [rolled, per_dim](const float* a, float* y) { portable::roll(a, y, rolled, per_dim); });
  cx.define(n.outputs[0], out);
}

void lower_as_batch_of_one(Context& cx, const Node& n, NodeState& st, Lowering lower, std::string_view arg, std::size_t position) {
  auto v = input_for_arg(n, arg, position);
  if (!v) fail(ErrorCode::kSchema, cx.where(n) + ": missing tensor argument '" + std::string(arg) + "'");
  const int unbatched = cx.tensor_slot(n, *v), x = cx.as_layout(unbatched, false);
  Shape batched = cx.slot(x).shape;
  batched.insert(batched.begin(), 1);
  cx.define(*v, cx.alias(x, batched, false));
  lower(cx, n, st);
  cx.define(*v, unbatched);
  for (ValueId o : n.outputs) {
    if (!cx.defined(o) || cx.slot_of(o).kind != Kind::kTensor) continue;
    const int y = cx.as_layout(cx.slot_index(o), false);
    Shape shape = cx.slot(y).shape;
    if (shape.empty() || shape[0] != 1) fail(ErrorCode::kInternal, cx.where(n) + ": output " + shape_str(shape) + " of a batch of one");
    shape.erase(shape.begin());
    cx.define(o, cx.alias(y, shape, false));
  }
}

namespace {
// Whether a later op writes value v in place (add_, copy_, ...), directly or
// through a view of it (a slice, a select).
bool written_in_place(const Graph& g, ValueId v) {
  std::vector<ValueId> todo{v};
  while (!todo.empty()) {
    const ValueId w = todo.back();
    todo.pop_back();
    for (const Use& use : g.value(w).users) {
      const Node& u = g.node(use.node);
      if (is_inplace_op(u.op) && use.input_index == 0) return true;
      if (is_view_op(u.op))
        for (ValueId o : u.outputs) todo.push_back(o);
    }
  }
  return false;
}
}  // namespace

void lower_identity(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  if (base.find("dropout") != std::string::npos && cx.int_arg(n, "train").value_or(0))
    fail(ErrorCode::kUnsupported, cx.where(n) + ": dropout in training mode");
  if (n.inputs.empty()) fail(ErrorCode::kSchema, cx.where(n) + ": no input");
  const int x = cx.tensor_slot(n, n.inputs[0]);
  // The same values, the same storage; but a clone that a later op updates in
  // place is a copy, so that the update leaves its source as it was.
  if ((base != "clone" && base != "lift_fresh_copy") || !written_in_place(cx.graph(), n.outputs[0])) return cx.define(n.outputs[0], x);
  const Slot s = cx.slot(x);  // a copy: new_tensor() may move the slots
  const int out = cx.new_tensor(s.shape, s.channels_last);
  cx.slot(out).complex = s.complex;
  const i64 count = numel(s.shape);
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, count] { cx.parallel_copy_blocks(cx.ptr(x), cx.ptr(out), 1, count, 0, 0); };
  cx.define(n.outputs[0], out);
}

void lower_native_dropout(Context& cx, const Node& n, NodeState&) {
  // train is optional: None (absent) means the module's mode, which an inference graph is not in.
  if (cx.int_arg(n, "train").value_or(0) && cx.float_arg(n, "p").value_or(0) != 0)
    fail(ErrorCode::kUnsupported, cx.where(n) + ": native_dropout in training mode (random)");
  const int x = cx.tensor_arg(n, "input", 0);
  cx.define(n.outputs[0], x);
  if (n.outputs.size() > 1) {
    const Shape shape = cx.slot(x).shape;
    cx.define(n.outputs[1], cx.planned_constant(shape, std::vector<float>(static_cast<std::size_t>(numel(shape)), 1.0f)));
  }
}

void lower_size(Context& cx, const Node& n, NodeState&) {
  auto self = input_for_arg(n, "self", 0);
  if (!self) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'self'");
  const Slot& s = cx.slot_of(*self);
  if (s.kind != Kind::kTensor) fail(ErrorCode::kUnsupported, cx.where(n) + ": size of a non-tensor");
  const std::string base = base_op(n.op);
  if (base == "dim") return cx.define(n.outputs[0], cx.int_slot(static_cast<i64>(s.shape.size())));
  // The numbers of a tensor's layout as torch sees it (contiguous, no offset): known while planning.
  if (base == "sym_numel") return cx.define(n.outputs[0], cx.int_slot(numel(s.shape)));
  if (base == "sym_storage_offset") return cx.define(n.outputs[0], cx.int_slot(0));
  if (base == "sym_is_contiguous") return cx.define(n.outputs[0], cx.int_slot(1));
  if (base == "sym_stride") {
    const auto d = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), s.shape.size(), cx.where(n)));
    return cx.define(n.outputs[0], cx.int_slot(s.shape.empty() ? 1 : prod(s.shape, d + 1, s.shape.size())));
  }
  if (auto dim = cx.int_arg(n, "dim")) {
    const i64 d = normalize_dim(*dim, s.shape.size(), cx.where(n));
    return cx.define(n.outputs[0], cx.int_slot(s.shape[static_cast<std::size_t>(d)]));
  }
  cx.define(n.outputs[0], cx.ints_slot(s.shape));
}

void lower_getitem(Context& cx, const Node& n, NodeState&) {
  auto list = input_for_arg(n, "list", 0);
  if (!list) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'list'");
  const Slot& s = cx.slot_of(*list);
  if (s.kind != Kind::kInts) fail(ErrorCode::kUnsupported, cx.where(n) + ": indexing something other than a list of integers");
  const i64 size = static_cast<i64>(s.ints.size());
  i64 idx = cx.int_arg(n, "idx").value_or(0);
  if (idx < 0) idx += size;
  if (idx < 0 || idx >= size) fail(ErrorCode::kOutOfRange, cx.where(n) + ": index " + std::to_string(idx) + " of a list of " + std::to_string(size));
  cx.define(n.outputs[0], cx.int_slot(s.ints[static_cast<std::size_t>(idx)]));
}

void lower_scalar_identity(Context& cx, const Node& n, NodeState&) {
  if (n.inputs.empty()) fail(ErrorCode::kSchema, cx.where(n) + ": no input");
  const Slot& s = cx.slot_of(n.inputs[0]);
  if (s.kind == Kind::kInt) return cx.define(n.outputs[0], base_op(n.op) == "Float" ? cx.float_slot(static_cast<double>(s.i)) : cx.int_slot(s.i));
  if (s.kind == Kind::kFloat) return cx.define(n.outputs[0], base_op(n.op) == "Int" ? cx.int_slot(static_cast<i64>(s.f)) : cx.float_slot(s.f));
  fail(ErrorCode::kUnsupported, cx.where(n) + ": a value computed at run time where a number known before the run is needed");
}

void lower_repeat(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  Shape in = cx.slot(x).shape;
  auto repeats = cx.ints_arg(n, base_op(n.op) == "tile" ? "dims" : "repeats");
  if (repeats && base_op(n.op) == "tile" && repeats->size() < in.size()) repeats->insert(repeats->begin(), in.size() - repeats->size(), 1);
  if (!repeats || repeats->size() < in.size())
    fail(ErrorCode::kSchema, cx.where(n) + ": repeats " + (repeats ? shape_str(*repeats) : std::string("(none)")) + " for a tensor of rank " +
                                 std::to_string(in.size()) + " (one per dim at least)");
  in.insert(in.begin(), static_cast<std::ptrdiff_t>(repeats->size() - in.size()), 1);
  Shape out_shape;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if ((*repeats)[d] < 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": repeats " + shape_str(*repeats) + " must not be negative");
    out_shape.push_back(in[d] * (*repeats)[d]);
  }
  const int out = cx.new_tensor(out_shape, false);
  cx.portable_map(x, out, [in, r = *repeats](const float* a, float* b) { portable::repeat(a, b, in, r); });
  cx.define(n.outputs[0], out);
}

namespace {

// A tensor of repeats computed in the graph, read by the run: each a whole
// number, not negative (else the run stops naming the node).
std::vector<i64> read_repeats(const Context& cx, const Node& n, const float* r, i64 count) {
  std::vector<i64> out(static_cast<std::size_t>(count));
  for (i64 i = 0; i < count; ++i) {
    if (!(r[i] >= 0) || !std::isfinite(r[i]) || r[i] != std::floor(r[i]))
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": repeats[" + std::to_string(i) + "] is " + std::to_string(r[i]) + " (a whole number, not negative)");
    out[static_cast<std::size_t>(i)] = static_cast<i64>(r[i]);
  }
  return out;
}

// Their sum, the output's size, which only the run knows
// (Context::read_by_run()); nullopt where no run has read it yet.
std::optional<i64> repeats_total(Context& cx, const Node& n, int r, i64 count) {
  const auto seen = cx.read_by_run(r, [&cx, &n, count](const float* p) {
    double total = 0;
    for (i64 k : read_repeats(cx, n, p, count)) total += static_cast<double>(k);
    return total;
  });
  if (!seen) return std::nullopt;
  if (*seen > static_cast<double>(i64{1} << 53)) fail(ErrorCode::kLimitExceeded, cx.where(n) + ": repeats add up to " + std::to_string(*seen));
  return static_cast<i64>(*seen);
}

}  // namespace

void lower_repeat_interleave(Context& cx, const Node& n, NodeState&) {
  auto v = input_for_arg(n, "repeats", std::numeric_limits<std::size_t>::max());
  const bool computed = v && !cx.graph().value(*v).is_constant() && cx.slot_of(*v).kind == Kind::kTensor;
  if (!input_for_arg(n, "self", 0)) {
    // repeat_interleave(repeats): each index i, repeats[i] times (torch.export's
    // form of x.repeat_interleave(r) before an index_select).
    if (!v) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'repeats'");
    const int r = cx.as_layout(cx.held_tensor_slot(n, *v), false);
    const Shape rs = cx.slot(r).shape;
    if (rs.size() != 1) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": repeats " + shape_str(rs) + " (one dim)");
    const i64 count = rs[0];
    const std::optional<i64> total = repeats_total(cx, n, r, count);
    if (!total) return;
    const int out = cx.new_tensor({*total}, false);
    Step& step = cx.add_step({r}, {out});
    step.run = [&cx, &n, r, out, count] {
      float* y = cx.ptr(out);
      const std::vector<i64> repeats = read_repeats(cx, n, cx.ptr(r), count);
      for (i64 i = 0; i < count; ++i) y = std::fill_n(y, repeats[static_cast<std::size_t>(i)], static_cast<float>(i));
    };
    return cx.define(n.outputs[0], out);
  }
  const int x = cx.tensor_arg(n, "self", 0);
  Shape shape = cx.slot(x).shape;
  // No dim: over the flattened tensor.
  const std::optional<i64> dim_arg = cx.int_arg(n, "dim");
  if (!dim_arg) shape = {numel(shape)};
  const std::size_t dim = static_cast<std::size_t>(normalize_dim(dim_arg.value_or(0), std::max<std::size_t>(shape.size(), 1), cx.where(n)));
  if (shape.empty()) shape = {1};
  const i64 size = shape[dim];
  const i64 outer = prod(shape, 0, dim), inner = prod(shape, dim + 1, shape.size());
  // repeats: one number for every slice, a tensor known before the run with
  // one per slice, or one computed in the graph (read by the run).
  std::vector<i64> repeats;
  if (computed) {
    const int r = cx.as_layout(cx.slot_index(*v), false);
    const i64 count = numel(cx.slot(r).shape);
    if (count != size && count != 1) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + std::to_string(count) + " repeats for a dim of " + std::to_string(size));
    const std::optional<i64> total = repeats_total(cx, n, r, count);
    if (!total) return;
    Shape out_shape = shape;
    out_shape[dim] = *total;
    if (count == 1 && __builtin_mul_overflow(*total, size, &out_shape[dim]))
      fail(ErrorCode::kLimitExceeded, cx.where(n) + ": repeats add up past int64");
    const int out = cx.new_tensor(out_shape, false);
    const int xi = cx.as_layout(x, false);
    Step& step = cx.add_step({xi, r}, {out});
    step.run = [&cx, &n, xi, r, out, count, size, outer, inner] {
      std::vector<i64> each = read_repeats(cx, n, cx.ptr(r), count);
      if (count == 1) each.assign(static_cast<std::size_t>(size), each[0]);
      portable::repeat_interleave(cx.ptr(xi), cx.ptr(out), outer, inner, each);
    };
    return cx.define(n.outputs[0], out);
  }
  if (v && cx.graph().value(*v).is_constant() && cx.graph().value(*v).data.dtype() == DType::kInt64) {
    const Tensor& data = cx.graph().value(*v).data;
    const auto* r = data.data_as<std::int64_t>();
    repeats.assign(r, r + data.numel());
    if (repeats.size() == 1) repeats.assign(static_cast<std::size_t>(size), repeats[0]);
  } else {
    auto r = cx.int_arg(n, "repeats");
    if (!r) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'repeats'");
    repeats.assign(static_cast<std::size_t>(size), *r);
  }
  if (static_cast<i64>(repeats.size()) != size)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + std::to_string(repeats.size()) + " repeats for a dim of " + std::to_string(size));
  i64 total = 0;
  for (i64 r : repeats) {
    if (r < 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": repeats must not be negative (given " + std::to_string(r) + ")");
    if (__builtin_add_overflow(total, r, &total)) fail(ErrorCode::kLimitExceeded, cx.where(n) + ": repeats add up past int64");
  }
  Shape out_shape = shape;
  out_shape[dim] = total;
  cx.within_budget(out_shape);
  const int out = cx.new_tensor(out_shape, false);
  cx.portable_map(x, out, [outer, inner, repeats](const float* a, float* b) { portable::repeat_interleave(a, b, outer, inner, repeats); });
  cx.define(n.outputs[0], out);
}

void lower_copy(Context& cx, const Node& n, NodeState&) {
  // copy(self, src): src broadcast to self's shape (functional copy_).
  const int self = cx.tensor_arg(n, "self", 0);
  const int src = cx.tensor_arg(n, "src", 1);
  const Shape to = cx.slot(self).shape, from = cx.slot(src).shape;
  const auto fits = shape_rules::broadcast(from, to);
  if (!fits || *fits != to) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": cannot copy " + shape_str(from) + " into " + shape_str(to));
  int out = broadcast_to(cx, src, to);
  if (out == cx.as_layout(src, false)) {  // the same shape: a copy of its own, never an alias of src
    const int copy = cx.new_tensor(to, false);
    const i64 count = numel(to);
    cx.portable_map(out, copy, [count](const float* a, float* b) { std::copy(a, a + count, b); });
    out = copy;
  }
  cx.define(n.outputs[0], out);
}

void lower_as_strided(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape in = cx.slot(x).shape;
  const auto size = cx.ints_arg(n, "size"), stride = cx.ints_arg(n, "stride");
  const i64 offset = cx.int_arg(n, "storage_offset").value_or(0);
  if (!size || !stride || size->size() != stride->size())
    fail(ErrorCode::kSchema, cx.where(n) + ": size and stride of one length");
  // The highest element read must be inside the input (its contiguous storage).
  i64 last = offset;
  for (std::size_t d = 0; d < size->size(); ++d) {
    if ((*size)[d] < 0 || (*stride)[d] < 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": size " + shape_str(*size) + ", stride " + shape_str(*stride));
    if ((*size)[d] == 0) last = -1;
    if (last >= 0) last += ((*size)[d] - 1) * (*stride)[d];
  }
  if (offset < 0 || last >= numel(in))
    fail(ErrorCode::kOutOfRange, cx.where(n) + ": size " + shape_str(*size) + ", stride " + shape_str(*stride) + " at offset " + std::to_string(offset) +
                                     " reads past the " + std::to_string(numel(in)) + " elements of " + shape_str(in));
  const int out = cx.new_tensor(*size, false);
  cx.portable_map(x, out, [s = *size, st = *stride, offset](const float* a, float* b) { portable::as_strided(a, b, s, st, offset); });
  cx.define(n.outputs[0], out);
}

// Tensor.unfold(dimension, size, step): the windows of `size` along a dim,
// `step` apart, as a new last dim (torch.stft's frames in core ATen).
void lower_unfold(Context& cx, const Node& n, NodeState&) {
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Shape in = cx.slot(x).shape;
  const std::size_t rank = in.size();
  const std::size_t d = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dimension").value_or(0), rank, cx.where(n)));
  const i64 size = cx.int_arg(n, "size").value_or(-1), step = cx.int_arg(n, "step").value_or(-1);
  const i64 length = rank ? in[d] : 1;
  if (size < 0 || step < 1 || size > length)
    fail(ErrorCode::kInvalidArgument, cx.where(n) + ": unfold of size " + std::to_string(size) + " by step " + std::to_string(step) + " along a dim of " + std::to_string(length));
  std::vector<i64> stride(rank, 1);
  for (std::size_t k = rank; k-- > 1;) stride[k - 1] = stride[k] * in[k];
  Shape out = in;
  std::vector<i64> strides = stride;
  if (rank) out[d] = (length - size) / step + 1, strides[d] = stride[d] * step;
  out.push_back(size);
  strides.push_back(rank ? stride[d] : 1);
  const int y = cx.new_tensor(out, false);
  cx.portable_map(x, y, [out, strides](const float* a, float* b) { portable::as_strided(a, b, out, strides, 0); });
  cx.define(n.outputs[0], y);
}

void lower_resize_storage(Context& cx, const Node& n, NodeState&) {
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const i64 have = numel(cx.slot(x).shape);
  std::optional<std::vector<i64>> size;
  if (base_op(n.op).rfind("resize_as", 0) == 0) size = cx.slot(cx.tensor_arg(n, "the_template", 1)).shape;
  else size = cx.ints_arg(n, "size");
  if (!size) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'size'");
  for (i64 d : *size)
    if (d < 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": size " + shape_str(*size) + " has a negative dim");
  cx.within_budget(*size);  // also: the product of the sizes is addressable
  const i64 want = numel(*size);
  if (want <= have) return cx.define(n.outputs[0], cx.alias(x, *size, false));  // the first elements of the same storage
  const int out = cx.new_tensor(*size, false);
  cx.portable_map(x, out, [have, want](const float* a, float* b) {
    std::copy(a, a + have, b);
    std::fill(b + have, b + want, 0.0f);
  });
  cx.define(n.outputs[0], out);
}

void lower_flip(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  std::vector<bool> flipped(shape.size(), false);
  for (i64 d : cx.ints_arg(n, "dims").value_or(std::vector<i64>{})) {
    const i64 k = normalize_dim(d, shape.size(), cx.where(n));
    if (!shape.empty()) flipped[static_cast<std::size_t>(k)] = true;
  }
  const int out = cx.new_tensor(shape, false);
  cx.portable_map(x, out, [shape, flipped](const float* a, float* b) { portable::flip(a, b, shape, flipped); });
  cx.define(n.outputs[0], out);
}

void lower_triangle(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  if (shape.size() < 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + base_op(n.op) + " of " + shape_str(shape) + " (2 dims or more)");
  const i64 diagonal = cx.int_arg(n, "diagonal").value_or(0);
  const bool lower = base_op(n.op).rfind("tril", 0) == 0;
  const i64 rows = shape[shape.size() - 2], cols = shape.back(), planes = numel(shape) / std::max<i64>(rows * cols, 1);
  const int out = cx.new_tensor(shape, false);
  cx.portable_map(x, out, [planes, rows, cols, diagonal, lower](const float* a, float* b) { portable::triangle(a, b, planes, rows, cols, diagonal, lower); });
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
