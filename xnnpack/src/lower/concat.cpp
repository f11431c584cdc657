// Joins: cat and stack along any dim, in the layout of any input that is
// channels-last.
#include "lower/concat.h"

namespace tracegraph::xnnpack {

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

}  // namespace tracegraph::xnnpack
