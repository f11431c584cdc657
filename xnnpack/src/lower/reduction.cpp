// Reductions: mean and sum (a kernel of ours over dims adjacent in
// storage), and on portable::reduce the norms, amax, amin, prod, var, std,
// logsumexp, argmax, argmin, max/min, aminmax, any and all.
#include "lower/reduction.h"
#include "lower/elementwise.h"
#include "lower/permute.h"

namespace tracegraph::xnnpack {

// mean and sum over dims (all of them when none are given).
void lower_mean(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const std::size_t rank = cx.slot(x).shape.size();
  const std::string base = base_op(n.op);
  if (n.attributes.get_int("dtype")) fail(ErrorCode::kUnsupported, cx.where(n) + ": " + base + " with a dtype");
  auto dims = cx.ints_arg(n, "dim").value_or(std::vector<i64>{});
  if (dims.empty())
    for (std::size_t i = 0; i < rank; ++i) dims.push_back(static_cast<i64>(i));
  for (i64& d : dims) d = normalize_dim(d, rank, cx.where(n));
  if (rank == 0) return cx.define(n.outputs[0], x);  // the mean or sum of one number is that number
  reduce_step(cx, n, x, dims, cx.int_arg(n, "keepdim").value_or(0) != 0, base == "mean");
}

void reduce_step(Context& cx, const Node& n, int x0, std::vector<i64> dims, bool keepdim, bool mean) {
  const Slot& xs0 = cx.slot(x0);
  const Shape shape = xs0.shape;
  const std::size_t rank = shape.size();
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  auto reduced = [&](std::size_t i) { return std::binary_search(dims.begin(), dims.end(), static_cast<i64>(i)); };
  bool all_spatial = true;
  for (std::size_t i = 2; i < rank; ++i) all_spatial = all_spatial && reduced(i);
  // Without keepdim the result is plain; channels-last storage only gives
  // its order when the channel or every spatial dim is reduced.
  bool channels_last = xs0.channels_last;
  if (!keepdim && channels_last && !(reduced(1) || all_spatial)) channels_last = false;
  const int x = cx.as_layout(x0, channels_last);
  Shape out_shape;
  for (std::size_t i = 0; i < rank; ++i) {
    if (!reduced(i)) out_shape.push_back(shape[i]);
    else if (keepdim) out_shape.push_back(1);
  }
  std::vector<std::size_t> axes;
  for (i64 d : dims) axes.push_back(physical_axis(static_cast<std::size_t>(d), rank, channels_last));
  std::sort(axes.begin(), axes.end());
  if (axes.empty()) return cx.define(n.outputs[0], cx.alias(x, out_shape, channels_last));
  if (axes.back() - axes.front() + 1 != axes.size()) {
    // Dims apart in storage: the reduced ones moved last (one transpose), then reduced as one block.
    std::vector<std::size_t> perm;
    for (std::size_t i = 0; i < rank; ++i)
      if (!reduced(i)) perm.push_back(i);
    for (std::size_t i = 0; i < rank; ++i)
      if (reduced(i)) perm.push_back(i);
    const int moved = permuted(cx, x0, perm);
    i64 span = 1;
    for (i64 d : dims) span *= shape[static_cast<std::size_t>(d)];
    const i64 kept = numel(shape) / std::max<i64>(span, 1);
    const int out = cx.new_tensor(out_shape, false);
    Step& step = cx.add_step({moved}, {out});
    step.run = [&cx, moved, out, kept, span, mean] { kernels::reduce_middle(cx.ptr(moved), cx.ptr(out), kept, span, 1, mean); };
    return cx.define(n.outputs[0], out);
  }
  const Shape phys = physical(shape, channels_last);
  const i64 outer = prod(phys, 0, axes.front()), span = prod(phys, axes.front(), axes.back() + 1),
            inner = prod(phys, axes.back() + 1, rank);
  const int out = cx.new_tensor(out_shape, keepdim && channels_last);
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, outer, span, inner, mean] { kernels::reduce_middle(cx.ptr(x), cx.ptr(out), outer, span, inner, mean); };
  cx.define(n.outputs[0], out);
}

Shape reduced_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdim) {
  Shape out;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (!reduced[i]) out.push_back(shape[i]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

void lower_reduce(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  const std::size_t rank = shape.size();
  const std::string base = base_op(n.op);
  if (n.attributes.get_int("dtype")) fail(ErrorCode::kUnsupported, cx.where(n) + ": " + base + " with a dtype");
  static const std::map<std::string, portable::Reduce, std::less<>> kOps = {
      {"linalg_vector_norm", portable::Reduce::kNorm}, {"amax", portable::Reduce::kAmax}, {"amin", portable::Reduce::kAmin},
      {"prod", portable::Reduce::kProd}, {"var", portable::Reduce::kVar}, {"std", portable::Reduce::kVar},
      {"logsumexp", portable::Reduce::kLogSumExp}, {"argmax", portable::Reduce::kArgmax}, {"argmin", portable::Reduce::kArgmin}};
  const portable::Reduce op = kOps.at(base);
  // The order of a norm; var's and std's correction (unbiased: 1).
  double ord = 2;
  if (op == portable::Reduce::kNorm) ord = cx.float_arg(n, "ord").value_or(2);
  if (op == portable::Reduce::kVar) {
    const std::optional<double> correction = n.attributes.contains("correction") ? cx.float_arg(n, "correction") : std::nullopt;
    ord = correction ? *correction : (cx.int_arg(n, "unbiased").value_or(1) != 0 ? 1.0 : 0.0);
  }
  const bool sqrt_after = base == "std";
  auto dims = cx.ints_arg(n, "dim").value_or(std::vector<i64>{});
  std::vector<bool> reduced(rank, dims.empty());
  for (i64 d : dims) {
    const i64 k = normalize_dim(d, rank, cx.where(n));
    if (rank) reduced[static_cast<std::size_t>(k)] = true;  // a 0-d tensor reduces to itself
  }
  const bool keepdim = cx.int_arg(n, "keepdim").value_or(0) != 0;
  for (std::size_t i = 0; i < rank; ++i) {
    if (reduced[i] && shape[i] == 0 && op != portable::Reduce::kNorm && op != portable::Reduce::kProd && op != portable::Reduce::kVar &&
        op != portable::Reduce::kLogSumExp)
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": " + base + " over an empty dim of " + shape_str(shape));
  }
  const Shape out_shape = reduced_shape(shape, reduced, keepdim);
  const int out = cx.new_tensor(out_shape, false);
  const i64 count = numel(out_shape);
  cx.portable_map(x, out, [op, shape, reduced, ord, sqrt_after, count](const float* a, float* b) {
    portable::reduce(op, a, b, shape, reduced, ord);
    if (sqrt_after) portable::unary(portable::Unary::kSqrt, b, b, count);
  });
  cx.define(n.outputs[0], out);
}

void lower_aminmax(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  const std::size_t rank = shape.size();
  const std::optional<i64> dim = cx.int_arg(n, "dim");
  const bool keepdim = cx.int_arg(n, "keepdim").value_or(0) != 0;
  std::vector<bool> reduced(rank, !dim);
  if (dim) {
    const i64 d = normalize_dim(*dim, std::max<std::size_t>(rank, 1), cx.where(n));
    if (rank) reduced[static_cast<std::size_t>(d)] = true;
  }
  for (std::size_t i = 0; i < rank; ++i)
    if (reduced[i] && shape[i] == 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": aminmax over an empty dim of " + shape_str(shape));
  const Shape out_shape = reduced_shape(shape, reduced, keepdim);
  const int lo = cx.new_tensor(out_shape, false), hi = cx.new_tensor(out_shape, false);
  std::vector<int> ins{x};
  Step& step = cx.portable_step(ins, {lo, hi});
  step.run = [&cx, xi = ins[0], lo, hi, shape, reduced] {
    portable::reduce(portable::Reduce::kAmin, cx.ptr(xi), cx.ptr(lo), shape, reduced);
    portable::reduce(portable::Reduce::kAmax, cx.ptr(xi), cx.ptr(hi), shape, reduced);
  };
  cx.define(n.outputs[0], lo);
  if (n.outputs.size() > 1) cx.define(n.outputs[1], hi);
}

void lower_max_min(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const bool is_max = base == "max";
  const auto self = input_for_arg(n, "self", 0);
  if (!self) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'self'");
  if (auto other = input_for_arg(n, "other", 1)) {  // max.other: maximum of two tensors
    return cx.define(n.outputs[0], portable_binary(cx, n, is_max ? portable::Binary::kMaximum : portable::Binary::kMinimum, *self, *other));
  }
  const int x = cx.held_tensor_slot(n, *self);
  const Shape shape = cx.slot(x).shape;
  const std::size_t rank = shape.size();
  const std::optional<i64> dim = cx.int_arg(n, "dim");
  if (!dim) {  // of every element: a 0-d tensor
    if (numel(shape) == 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": " + base + " of an empty tensor " + shape_str(shape));
    const int out = cx.new_tensor({}, false);
    const std::vector<bool> reduced(rank, true);
    const portable::Reduce op = is_max ? portable::Reduce::kAmax : portable::Reduce::kAmin;
    cx.portable_map(x, out, [op, shape, reduced](const float* a, float* b) { portable::reduce(op, a, b, shape, reduced); });
    return cx.define(n.outputs[0], out);
  }
  // Along one dim: the values and the index of the first of them (NaN wins, as torch's).
  std::vector<bool> reduced(rank, false);
  const i64 d = normalize_dim(*dim, rank, cx.where(n));
  if (rank) {
    reduced[static_cast<std::size_t>(d)] = true;
    if (shape[static_cast<std::size_t>(d)] == 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": " + base + " over an empty dim of " + shape_str(shape));
  }
  const Shape out_shape = reduced_shape(shape, reduced, cx.int_arg(n, "keepdim").value_or(0) != 0);
  const int values = cx.new_tensor(out_shape, false), indices = cx.new_tensor(out_shape, false);
  std::vector<int> ins{x};
  Step& step = cx.portable_step(ins, {values, indices});
  const portable::Reduce value_op = is_max ? portable::Reduce::kAmax : portable::Reduce::kAmin;
  const portable::Reduce index_op = is_max ? portable::Reduce::kArgmax : portable::Reduce::kArgmin;
  step.run = [&cx, xi = ins[0], values, indices, value_op, index_op, shape, reduced] {
    portable::reduce(value_op, cx.ptr(xi), cx.ptr(values), shape, reduced);
    portable::reduce(index_op, cx.ptr(xi), cx.ptr(indices), shape, reduced);
  };
  cx.define(n.outputs[0], values);
  if (n.outputs.size() > 1) cx.define(n.outputs[1], indices);
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

}  // namespace tracegraph::xnnpack
