// Permutations: of dims (permute, transpose, t, movedim) on XNNPACK's
// transpose, of elements (flip, roll) on portable kernels.
#include "lower/permute.h"

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

int permuted(Context& cx, int x, const std::vector<std::size_t>& perm) {
  x = cx.as_layout(x, false);
  const Shape xs = cx.slot(x).shape;
  bool in_order = true;
  for (std::size_t i = 0; i < perm.size(); ++i) in_order = in_order && perm[i] == i;
  if (in_order || xs.size() < 2) return x;
  std::vector<std::size_t> in_shape(xs.begin(), xs.end());
  Shape out_shape;
  for (std::size_t p : perm) out_shape.push_back(xs[p]);
  return cx.transposed(x, in_shape, perm, out_shape, false);
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

}  // namespace tracegraph::xnnpack
