// Views: view, reshape, flatten, unflatten, squeeze and unsqueeze (the same
// bytes with another shape), expand, as_strided and Tensor.unfold (strided
// reads), resize_, and an unbatched input run as a batch of one.
#include "lower/view.h"

namespace tracegraph::xnnpack {

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

}  // namespace tracegraph::xnnpack
