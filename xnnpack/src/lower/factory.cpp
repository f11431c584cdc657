// Factories: arange, full, scalar_tensor, zeros and ones, constants made
// while planning; empty, empty_strided and new_empty as zeros.
#include "lower/factory.h"
#include "lower/arguments.h"
#include "lower/held_type.h"

namespace tracegraph::xnnpack {

// A factory's 'size' (zeros, full, rand, ...): a shape of no negative dim.
Shape size_arg(const Context& cx, const Node& n) {
  const auto size = cx.ints_arg(n, "size");
  if (!size) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'size'");
  for (i64 d : *size)
    if (d < 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": size " + shape_str(*size));
  return *size;
}

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

}  // namespace tracegraph::xnnpack
