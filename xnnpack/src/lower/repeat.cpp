// Tiling: repeat and tile, and repeat_interleave (repeats a number, a
// constant, or a tensor the run reads).
#include "lower/repeat.h"

namespace tracegraph::xnnpack {

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

}  // namespace tracegraph::xnnpack
