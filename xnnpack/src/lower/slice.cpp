// Slices: slice, narrow, select, split/chunk and unbind (an alias where a
// slice is the whole axis, else a copy in the input's layout), and
// slice_scatter and select_scatter, which write one.
#include "lower/slice.h"

namespace tracegraph::xnnpack {

namespace {

// x[start:end:step] along `dim` (PyTorch's clamping of start and end): an
// alias when it is the whole axis, else a copy in x's layout.
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

// x[..., index, ...] along dim, the dim dropped (an alias of a slice).
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

}  // namespace

void lower_slice(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  cx.define(n.outputs[0], slice_of(cx, n, x, cx.int_arg(n, "dim").value_or(0), cx.int_arg(n, "start").value_or(0),
                                cx.int_arg(n, "end").value_or(std::numeric_limits<i64>::max()), cx.int_arg(n, "step").value_or(1)));
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

}  // namespace tracegraph::xnnpack
