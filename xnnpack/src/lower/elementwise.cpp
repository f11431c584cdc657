// Elementwise ops: unary activations, binary arithmetic with broadcasting, numbers known before the run, comparisons, masks and fills.
#include "lower/elementwise.h"
#include "lower/arguments.h"
#include "lower/broadcast.h"
#include "lower/complex.h"
#include "lower/fused_activation.h"

#include <set>

namespace tracegraph::xnnpack {

void lower_unary(Context& cx, const Node& n, NodeState& st) {
  std::string base = base_op(n.op);
  const bool inplace_op = base.back() == '_';
  if (inplace_op) base.pop_back();
  if (base == "clip") base = "clamp";  // numpy's name, the same op
  if (base == "clamp" || base == "clamp_min" || base == "clamp_max") {
    // Bounds that are tensors (clamp.Tensor): maximum with min, then minimum with max, broadcast.
    auto bound = [&](const char* name) -> std::optional<ValueId> {
      auto v = input_for_arg(n, name, std::numeric_limits<std::size_t>::max());
      return v && cx.slot_of(*v).kind == Kind::kTensor ? v : std::nullopt;
    };
    const auto lo = bound("min"), hi = bound("max");
    if (lo || hi) {
      if ((lo && hi) || (lo && base != "clamp_max") || (hi && base != "clamp_min")) {
        auto self = input_for_arg(n, "self", 0);
        if (!self) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'self'");
        // The other bound, if a number, is a one-element constant: min(max(x, lo), hi) on tensors alone.
        if ((lo && !hi && cx.float_arg(n, "max")) || (hi && !lo && cx.float_arg(n, "min")))
          fail(ErrorCode::kUnsupported, cx.where(n) + ": a clamp with one tensor bound and one number");
        int out = lo ? portable_binary(cx, n, portable::Binary::kMaximum, *self, *lo) : -1;
        if (hi) {
          if (out < 0) out = portable_binary(cx, n, portable::Binary::kMinimum, *self, *hi);
          else {
            // Through the value of the first step: a slot, not a graph value; a second kernel in place.
            const int h = broadcast_to(cx, cx.held_tensor_slot(n, *hi), cx.slot(out).shape);
            if (cx.slot(h).shape != cx.slot(out).shape)
              fail(ErrorCode::kShapeMismatch, cx.where(n) + ": max " + shape_str(cx.slot(h).shape) + " does not broadcast to " + shape_str(cx.slot(out).shape));
            const i64 count = numel(cx.slot(out).shape);
            Step& step = cx.add_step({out, h}, {out});
            step.run = [&cx, out, h, count] { portable::binary(portable::Binary::kMinimum, cx.ptr(out), cx.ptr(h), cx.ptr(out), count); };
          }
        }
        return cx.define(n.outputs[0], out);
      }
    }
  }
  const int x = cx.tensor_arg(n, "self", 0);
  const bool inplace = inplace_op && !cx.slot(x).constant;  // never write into weights
  xnn_unary_params params{};
  xnn_unary_operator type = xnn_unary_invalid;
  const xnn_unary_params* p = nullptr;
  auto clamp = [&](double lo, double hi) {
    type = xnn_unary_clamp;
    params.clamp.min = static_cast<float>(lo);
    params.clamp.max = static_cast<float>(hi);
    p = &params;
  };
  if (base == "relu") clamp(0, kInf);
  else if (base == "relu6") clamp(0, 6);
  else if (base == "hardtanh") clamp(cx.float_arg(n, "min_val").value_or(-1), cx.float_arg(n, "max_val").value_or(1));
  else if (base == "clamp") clamp(cx.float_arg(n, "min").value_or(-kInf), cx.float_arg(n, "max").value_or(kInf));
  else if (base == "clamp_min") clamp(cx.float_arg(n, "min").value_or(-kInf), kInf);
  else if (base == "clamp_max") clamp(-kInf, cx.float_arg(n, "max").value_or(kInf));
  else if (base == "sigmoid") type = xnn_unary_sigmoid;
  else if (base == "tanh") type = xnn_unary_tanh;
  else if (base == "hardswish") type = xnn_unary_hardswish;
  else if (base == "leaky_relu") {
    type = xnn_unary_leaky_relu;
    params.leaky_relu.negative_slope = static_cast<float>(cx.float_arg(n, "negative_slope").value_or(0.01));
    p = &params;
  } else if (base == "gelu") {
    const std::string approximate = n.attributes.get_string("approximate").value_or("none");
    if (approximate == "tanh") {
      const Slot xs = cx.slot(x);  // a copy: new_tensor may move the slots
      const int out = inplace ? x : cx.new_tensor(xs.shape, xs.channels_last);
      const i64 count = numel(xs.shape);
      Step& step = cx.add_step({x}, {out});
      step.run = [&cx, x, out, count] { portable::unary(portable::Unary::kGeluTanh, cx.ptr(x), cx.ptr(out), count); };
      return cx.define(n.outputs[0], out);
    }
    if (approximate != "none") fail(ErrorCode::kSchema, cx.where(n) + ": gelu approximate='" + approximate + "'");
    type = xnn_unary_gelu;
  } else if (base == "elu") {
    if (cx.float_arg(n, "scale").value_or(1) != 1 || cx.float_arg(n, "input_scale").value_or(1) != 1) fail(ErrorCode::kUnsupported, cx.where(n) + ": elu with scale");
    type = xnn_unary_elu;
    params.elu.alpha = static_cast<float>(cx.float_arg(n, "alpha").value_or(1));
    p = &params;
  } else {
    fail(ErrorCode::kUnsupported, cx.where(n) + ": op not supported by the XNNPACK backend");
  }
  const Slot& xs = cx.slot(x);
  const int out = inplace ? x : cx.new_tensor(xs.shape, xs.channels_last);
  unary_step(cx, n, make_unary(cx, n, st, 0, type, p), x, out);
  cx.define(n.outputs[0], out);
}

namespace {

// A number first (torch.export writes sub.Tensor(1.0, x)): s + alpha * t,
// s - alpha * t, s * t on a tensor `b`; false where `self` is not a number.
bool lower_number_first(Context& cx, const Node& n, const std::string& base, ValueId b, double alpha) {
  const AttributeValue* attr = n.attributes.find("self");
  const double* d = attr ? std::get_if<double>(attr) : nullptr;
  const std::int64_t* i = attr ? std::get_if<std::int64_t>(attr) : nullptr;
  if (!d && !i) return false;
  const float number = static_cast<float>(d ? *d : static_cast<double>(*i));
  const float scale = static_cast<float>(base == "mul" ? number : base == "sub" ? -alpha : alpha), shift = base == "mul" ? 0.0f : number;
  const int t = cx.slot_index(b);
  const Shape shape = cx.slot(t).shape;
  const int out = cx.new_tensor(shape, false);
  const i64 count = numel(shape);
  cx.portable_map(t, out, [count, scale, shift](const float* x, float* y) {
    for (i64 k = 0; k < count; ++k) y[k] = shift + scale * x[k];
  });
  cx.define(n.outputs[0], out);
  return true;
}

// div(self, other, rounding_mode="floor" | "trunc") of two values (a number
// other is a one-element constant tensor's): numbers while planning, tensors
// by a portable kernel.
void lower_rounding_div(Context& cx, const Node& n, const std::string& mode, ValueId a, ValueId b) {
  if (mode != "floor" && mode != "trunc") fail(ErrorCode::kSchema, cx.where(n) + ": rounding_mode '" + mode + "'");
  const Slot &sa = cx.slot_of(a), &sb = cx.slot_of(b);
  if ((sa.kind == Kind::kInt || sa.kind == Kind::kFloat) && (sb.kind == Kind::kInt || sb.kind == Kind::kFloat)) {  // shape arithmetic
    const double p = sa.kind == Kind::kInt ? static_cast<double>(sa.i) : sa.f, q = sb.kind == Kind::kInt ? static_cast<double>(sb.i) : sb.f;
    if (q == 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": division by zero");
    const double r = mode == "floor" ? std::floor(p / q) : std::trunc(p / q);
    if (sa.kind == Kind::kInt && sb.kind == Kind::kInt) return cx.define(n.outputs[0], cx.int_slot(static_cast<i64>(r)));
    return cx.define(n.outputs[0], cx.float_slot(r));
  }
  cx.define(n.outputs[0], portable_binary(cx, n, mode == "floor" ? portable::Binary::kFloorDivide : portable::Binary::kDivTrunc, a, b));
}

// A binary op's second operand where it is a number planning knows: a value
// (int or float slot) or a scalar attribute ("other" or "b").
struct SecondNumber {
  std::optional<double> value;  // nullopt: a tensor
  bool is_int = false;
};

SecondNumber second_number(Context& cx, const Node& n, std::optional<ValueId> b) {
  SecondNumber s;
  if (b) {
    const Slot& sb = cx.slot_of(*b);
    if (sb.kind == Kind::kInt) s.value = static_cast<double>(sb.i), s.is_int = true;
    else if (sb.kind == Kind::kFloat) s.value = sb.f;
    return s;
  }
  const AttributeValue* attr = n.attributes.find("other");
  if (!attr) attr = n.attributes.find("b");
  if (!attr) fail(ErrorCode::kSchema, cx.where(n) + ": missing its second operand");
  if (auto i = std::get_if<std::int64_t>(attr)) s.value = static_cast<double>(*i), s.is_int = true;
  else if (auto d = std::get_if<double>(attr)) s.value = *d;
  else fail(ErrorCode::kUnsupported, cx.where(n) + ": second operand of kind " + std::string(attribute_kind(*attr)));
  return s;
}

// Two numbers planning knows (shape arithmetic): an int where both are ints
// (Python's // and % for floor_divide and remainder, C's for fmod), else a float.
void lower_number_arithmetic(Context& cx, const Node& n, const std::string& base, const Slot& sa, const SecondNumber& b, double alpha) {
  if (!b.value) fail(ErrorCode::kUnsupported, cx.where(n) + ": a number and a tensor in that order");
  const bool ints = sa.kind == Kind::kInt && b.is_int;
  const double x = sa.kind == Kind::kInt ? static_cast<double>(sa.i) : sa.f, y = *b.value;
  auto int_result = [&](i64 v) { cx.define(n.outputs[0], cx.int_slot(v)); };
  if (base == "add" || base == "sub") {
    const double sign = base == "add" ? 1.0 : -1.0;
    if (ints && alpha == 1) int_result(sa.i + static_cast<i64>(sign) * static_cast<i64>(y));
    else cx.define(n.outputs[0], cx.float_slot(x + sign * alpha * y));
  } else if (base == "mul") {
    if (ints) int_result(sa.i * static_cast<i64>(y));
    else cx.define(n.outputs[0], cx.float_slot(x * y));
  } else if (base == "div") {
    if (y == 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": division by zero");
    cx.define(n.outputs[0], cx.float_slot(x / y));
  } else if (base == "remainder" || base == "fmod") {  // Python's modulo (remainder) or C's (fmod)
    if (y == 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": modulo by zero");
    if (ints && base == "remainder") {
      int_result(*shape_rules::remainder(sa.i, static_cast<i64>(y)));
    } else if (ints) {
      int_result(static_cast<i64>(y) == -1 ? 0 : sa.i % static_cast<i64>(y));
    } else {
      const double r = std::fmod(x, y);
      cx.define(n.outputs[0], cx.float_slot(base == "remainder" && r != 0 && ((r < 0) != (y < 0)) ? r + y : r));
    }
  } else {  // floor_divide, floordiv
    if (y == 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": division by zero");
    if (ints) {
      const auto q = shape_rules::floor_divide(sa.i, static_cast<i64>(y));
      if (!q) fail(ErrorCode::kOutOfRange, cx.where(n) + ": " + std::to_string(sa.i) + " // " + std::to_string(static_cast<i64>(y)) + " overflows int64");
      int_result(*q);
    } else {
      cx.define(n.outputs[0], cx.float_slot(std::floor(x / y)));
    }
  }
}

// floor_divide, remainder and fmod of a tensor (index arithmetic on values
// held as floats): by a number, or element by element.
void lower_tensor_modulo(Context& cx, const Node& n, const std::string& base, ValueId a, std::optional<ValueId> b, const SecondNumber& number) {
  if (!number.value) {
    const portable::Binary op = base == "fmod" ? portable::Binary::kFmod : base == "remainder" ? portable::Binary::kRemainder : portable::Binary::kFloorDivide;
    return cx.define(n.outputs[0], portable_binary(cx, n, op, a, *b));
  }
  const double d = *number.value;
  if (d == 0 && (number.is_int || base == "floor_divide" || base == "floordiv")) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": division by zero");
  const int t = cx.slot_index(a);
  const Shape shape = cx.slot(t).shape;
  const int out = cx.new_tensor(shape, false);
  const i64 count = numel(shape);
  const int mode = base == "fmod" ? 0 : base == "remainder" ? 1 : 2;
  cx.portable_map(t, out, [count, d, mode](const float* x, float* y) {
    for (i64 k = 0; k < count; ++k) {
      const double v = x[k];
      if (mode == 2) y[k] = static_cast<float>(std::floor(v / d));
      else {
        const double r = std::fmod(v, d);
        y[k] = static_cast<float>(mode == 1 && r != 0 && ((r < 0) != (d < 0)) ? r + d : r);
      }
    }
  });
  cx.define(n.outputs[0], out);
}

// add, sub, mul, div of a float32 tensor and a tensor or a number (kept as a
// one-element constant), broadcast in the output's layout: XNNPACK's binary
// operator, or our add with its clamp in one pass (a residual add that
// activation_fusion gave a clamp).
void lower_tensor_arithmetic(Context& cx, const Node& n, NodeState& st, const std::string& base, bool inplace, ValueId a, std::optional<ValueId> b,
                             const SecondNumber& number, double alpha) {
  const int x = cx.slot_index(a);
  if (cx.slot(x).constant) inplace = false;  // never write into weights
  int y;
  if (number.value) {
    Slot c;
    c.kind = Kind::kTensor;
    c.constant = cx.node_numbers(st, 0, {static_cast<float>(*number.value * (base == "add" || base == "sub" ? alpha : 1.0))});
    y = cx.new_slot(std::move(c));
  } else {
    y = cx.tensor_slot(n, *b);
    if (alpha != 1) fail(ErrorCode::kUnsupported, cx.where(n) + ": alpha " + std::to_string(alpha) + " with a tensor operand");
  }
  // Broadcast logical shapes, then put both in the output's layout.
  const Shape ax = cx.slot(x).shape, by = cx.slot(y).shape;
  const Shape out_shape = broadcast_shape(cx, n, ax, by);
  const std::size_t rank = out_shape.size();
  if (inplace && out_shape != ax) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": in-place result " + shape_str(out_shape) + " does not fit " + shape_str(ax));
  const bool channels_last = spatial_rank(rank) && (cx.slot(x).channels_last || cx.slot(y).channels_last);
  auto operand = [&](int s) {
    const Shape shape = cx.slot(s).shape;
    if (numel(shape) == 1) return std::make_pair(s, Shape{1});
    if (!channels_last) return std::make_pair(cx.as_layout(s, false), shape);
    Shape full(rank - shape.size(), 1);
    full.insert(full.end(), shape.begin(), shape.end());
    const int expanded = shape.size() == rank ? s : cx.alias(cx.as_layout(s, false), full, false);
    return std::make_pair(cx.as_layout(expanded, true), physical(full, true));
  };
  const auto x_operand = operand(x), y_operand = operand(y);
  const int xa = cx.padded(x_operand.first), yb = cx.padded(y_operand.first);
  const Shape& xshape = x_operand.second;
  const Shape& yshape = y_operand.second;
  if (inplace && xa != x) fail(ErrorCode::kUnsupported, cx.where(n) + ": in-place op on a tensor whose layout must change");
  const int out = inplace ? x : cx.new_tensor(out_shape, channels_last);
  const Fused fused = cx.fused_of(n);  // activation_fusion's clamp on a residual add
  if (base == "add" && xshape == yshape && (fused.min != -kInf || fused.max != kInf)) {
    // Same shapes and layout: the add and its clamp in one pass of ours.
    const i64 count = numel(xshape);
    const float min = fused.min, max = fused.max;
    Step& step = cx.add_step({xa, yb}, {out});
    step.run = [&cx, xa, yb, out, count, min, max] {
      const float *a = cx.ptr(xa), *b = cx.ptr(yb);
      float* y = cx.ptr(out);
      cx.parallel_slices(count, [&](i64 first, i64 n) { kernels::add_clamp(a, b, y, first, n, min, max); }, kSliceFloats);
    };
    post_activation(cx, n, st, 1, fused, out);
    cx.define(n.outputs[0], out);
    return;
  }
  if (st.ops.empty()) {
    st.ops.emplace_back();
    const xnn_binary_operator type = base == "add" ? xnn_binary_add : base == "sub" ? xnn_binary_subtract : base == "mul" ? xnn_binary_multiply : xnn_binary_divide;
    cx.check(xnn_create_binary_elementwise_nd(type, xnn_datatype_fp32, nullptr, nullptr, nullptr, 0, &st.ops[0].op), n, "creating an elementwise op");
  }
  xnn_operator_t op = st.ops[0].op;
  std::vector<std::size_t> s1(xshape.begin(), xshape.end()), s2(yshape.begin(), yshape.end());
  if (s1.size() > XNN_MAX_TENSOR_DIMS || s2.size() > XNN_MAX_TENSOR_DIMS) fail(ErrorCode::kUnsupported, cx.where(n) + ": more than 6 dims");
  cx.check(xnn_reshape_binary_elementwise_nd(op, s1.size(), s1.data(), s2.size(), s2.data(), cx.pool()), n, "reshaping an elementwise op");
  Step& step = cx.add_step({xa, yb}, {out});
  step.setup = [&cx, op, xa, yb, out, &n] { cx.check(xnn_setup_binary_elementwise_nd(op, cx.ptr(xa), cx.ptr(yb), cx.ptr(out)), n, "setting up an elementwise op"); };
  step.xnnpack = true;
  step.run = [&cx, op, &n] { cx.check(xnn_run_operator(op, cx.pool()), n, "running an elementwise op"); };
  post_clamp(cx, n, st, 1, fused, out);
  post_activation(cx, n, st, 2, fused, out);
  cx.define(n.outputs[0], out);
}

}  // namespace

void lower_binary(Context& cx, const Node& n, NodeState& st) {
  std::string base = base_op(n.op);
  bool inplace = base.back() == '_';
  if (inplace) base.pop_back();
  if (lower_complex_binary(cx, n, base)) return;
  std::optional<ValueId> a = input_for_arg(n, "self", 0);
  if (!a) a = input_for_arg(n, "a", 0);
  std::optional<ValueId> b = input_for_arg(n, "other", 1);
  if (!b) b = input_for_arg(n, "b", 1);
  const double alpha = cx.float_arg(n, "alpha").value_or(1.0);
  if (!a && b && (base == "add" || base == "sub" || base == "mul") && cx.slot_of(*b).kind == Kind::kTensor &&
      lower_number_first(cx, n, base, *b, alpha))
    return;
  if (!a) fail(ErrorCode::kSchema, cx.where(n) + ": missing its first operand");
  const auto mode = n.attributes.get_string("rounding_mode");
  if (mode && b) return lower_rounding_div(cx, n, *mode, *a, *b);
  if (mode) fail(ErrorCode::kUnsupported, cx.where(n) + ": div of a number with a rounding mode");
  const Slot& sa = cx.slot_of(*a);
  const SecondNumber number = second_number(cx, n, b);
  if (sa.kind == Kind::kInt || sa.kind == Kind::kFloat) return lower_number_arithmetic(cx, n, base, sa, number, alpha);
  if (sa.kind != Kind::kTensor) fail(ErrorCode::kUnsupported, cx.where(n) + ": operand is not a float32 tensor");
  if (base == "floor_divide" || base == "floordiv" || base == "remainder" || base == "fmod") return lower_tensor_modulo(cx, n, base, *a, b, number);
  lower_tensor_arithmetic(cx, n, st, base, inplace, *a, b, number, alpha);
}

namespace {

// erfinv in double: a first guess refined by Newton's steps on erf.
double erfinv(double y) {
  if (!(y > -1 && y < 1)) return y == 1 ? INFINITY : y == -1 ? -INFINITY : NAN;
  const double w = -std::log((1 - y) * (1 + y));
  double x = y * (w < 5 ? 0.886 + w * (0.2 - w * 0.0015) : 1.4 + 0.2 * std::sqrt(w));  // within a few percent
  for (int step = 0; step < 4; ++step) x -= (std::erf(x) - y) / (1.1283791670955126 * std::exp(-x * x));
  return x;
}

// The elementwise functions with arguments (or none of XNNPACK's): f(x), in double.
std::optional<std::function<float(float)>> parametric_unary(const Context& cx, const Node& n, const std::string& base) {
  if (base == "erfinv") return [](float x) { return static_cast<float>(erfinv(x)); };
  if (base == "frac") return [](float x) { return x - std::trunc(x); };
  if (base == "logit") {
    const std::optional<double> eps = cx.float_arg(n, "eps");
    return [eps](float x) {
      double z = x;
      if (eps) z = std::clamp(z, *eps, 1 - *eps);
      return static_cast<float>(std::log(z / (1 - z)));
    };
  }
  if (base == "log_sigmoid" || base == "log_sigmoid_forward")
    return [](float x) { return static_cast<float>(std::min(static_cast<double>(x), 0.0) - std::log1p(std::exp(-std::fabs(static_cast<double>(x))))); };
  if (base == "selu") {
    return [](float x) {
      constexpr double kAlpha = 1.6732632423543772848170429916717, kScale = 1.0507009873554804934193349852946;
      return static_cast<float>(kScale * (x > 0 ? static_cast<double>(x) : kAlpha * std::expm1(static_cast<double>(x))));
    };
  }
  if (base == "celu") {
    const double alpha = cx.float_arg(n, "alpha").value_or(1.0);
    return [alpha](float x) { return static_cast<float>(x > 0 ? static_cast<double>(x) : alpha * std::expm1(x / alpha)); };
  }
  if (base == "hardshrink") {
    const double lambd = cx.float_arg(n, "lambd").value_or(0.5);
    return [lambd](float x) { return x >= -lambd && x <= lambd ? 0.0f : x; };
  }
  if (base == "softshrink") {
    const double lambd = cx.float_arg(n, "lambd").value_or(0.5);
    return [lambd](float x) { return static_cast<float>(x > lambd ? x - lambd : x < -lambd ? x + lambd : 0.0); };
  }
  return std::nullopt;
}

// An elementwise op of one number: ints stay ints where torch keeps them so
// (neg, abs, square, pow to a non-negative integer power).
int pointwise_number(Context& cx, const Node& n, const std::string& base, const Slot& num) {
  const bool is_int = num.kind == Kind::kInt;
  const double x = is_int ? static_cast<double>(num.i) : num.f;
  if (base == "pow") {
    const AttributeValue* e = n.attributes.find("exponent");
    if (!e) fail(ErrorCode::kUnsupported, cx.where(n) + ": pow with a tensor exponent");
    if (const auto* k = std::get_if<std::int64_t>(e); k && is_int && *k >= 0 && *k < 63) {
      i64 r = 1;
      for (i64 i = 0; i < *k; ++i) {
        if (__builtin_mul_overflow(r, num.i, &r)) fail(ErrorCode::kOutOfRange, cx.where(n) + ": " + std::to_string(num.i) + " ** " + std::to_string(*k) + " overflows int64");
      }
      return cx.int_slot(r);
    }
    return cx.float_slot(std::pow(x, *cx.float_arg(n, "exponent")));
  }
  if (is_int && (base == "neg" || base == "abs" || base == "square")) {
    if (num.i == std::numeric_limits<i64>::min() && base != "square") fail(ErrorCode::kOutOfRange, cx.where(n) + ": " + base + " of the smallest int64");
    i64 sq = 0;
    if (base == "square" && __builtin_mul_overflow(num.i, num.i, &sq)) fail(ErrorCode::kOutOfRange, cx.where(n) + ": the square of " + std::to_string(num.i) + " overflows int64");
    return cx.int_slot(base == "neg" ? -num.i : base == "abs" ? std::abs(num.i) : sq);
  }
  static const std::map<std::string, double (*)(double), std::less<>> kMath = {
      {"exp", [](double v) { return std::exp(v); }},   {"log", [](double v) { return std::log(v); }},
      {"sqrt", [](double v) { return std::sqrt(v); }}, {"rsqrt", [](double v) { return 1 / std::sqrt(v); }},
      {"neg", [](double v) { return -v; }},            {"abs", [](double v) { return std::fabs(v); }},
      {"square", [](double v) { return v * v; }},      {"erf", [](double v) { return std::erf(v); }}};
  const auto it = kMath.find(base);
  if (it == kMath.end()) fail(ErrorCode::kUnsupported, cx.where(n) + ": " + base + " of a number");
  return cx.float_slot(it->second(x));
}

}  // namespace

void lower_pointwise(Context& cx, const Node& n, NodeState&) {
  std::string base = base_op(n.op);
  const bool inplace_op = base.back() == '_';
  if (inplace_op) base.pop_back();
  if (auto self = input_for_arg(n, "self", 0); self && base == "abs" && cx.slot_of(*self).complex)  // a spectrum's magnitudes
    return cx.define(n.outputs[0], complex_abs(cx, cx.slot_index(*self)));
  if (auto self = input_for_arg(n, "self", 0); self && base == "rsub") {
    // Shape arithmetic (other - alpha * self on numbers known before the run).
    const Slot& num = cx.slot_of(*self);
    if (num.kind == Kind::kInt || num.kind == Kind::kFloat) {
      const double other = cx.float_arg(n, "other").value_or(0), alpha = cx.float_arg(n, "alpha").value_or(1);
      const AttributeValue* o = n.attributes.find("other");
      const bool ints = num.kind == Kind::kInt && alpha == 1 && (!o || std::holds_alternative<std::int64_t>(*o)) &&
                        (o || cx.slot_of(*input_for_arg(n, "other", 1)).kind == Kind::kInt);
      if (ints) return cx.define(n.outputs[0], cx.int_slot(static_cast<i64>(other) - num.i));
      return cx.define(n.outputs[0], cx.float_slot(other - alpha * (num.kind == Kind::kInt ? static_cast<double>(num.i) : num.f)));
    }
  }
  if (auto self = input_for_arg(n, "self", 0)) {
    // Shape arithmetic on a number known before the run (traced models scale
    // attention by size ** -0.5).
    const Slot& num = cx.slot_of(*self);
    if (num.kind == Kind::kInt || num.kind == Kind::kFloat) return cx.define(n.outputs[0], pointwise_number(cx, n, base, num));
  }
  const int x = cx.tensor_arg(n, "self", 0);
  const Slot xs = cx.slot(x);  // a copy: new_tensor may move the slots
  if (auto tensor = base == "rsub" ? run_time_tensor(cx, n, "other") : std::nullopt) {
    // rsub of two tensors: other - alpha * self, broadcast.
    const int y = broadcast_to(cx, cx.held_tensor_slot(n, *tensor), broadcast_shape(cx, n, xs.shape, cx.slot_of(*tensor).shape));
    const Shape shape = cx.slot(y).shape;
    const int xb = broadcast_to(cx, x, shape), r = cx.new_tensor(shape, false);
    const auto alpha = static_cast<float>(cx.float_arg(n, "alpha").value_or(1));
    const i64 total = numel(shape);
    Step& step = cx.add_step({xb, y}, {r});
    step.run = [&cx, xb, y, r, alpha, total] {
      const float* a = cx.ptr(xb);
      const float* b = cx.ptr(y);
      float* c = cx.ptr(r);
      for (i64 k = 0; k < total; ++k) c[k] = b[k] - alpha * a[k];
    };
    return cx.define(n.outputs[0], r);
  }
  const int out = inplace_op && !xs.constant ? x : cx.new_tensor(xs.shape, xs.channels_last);
  const i64 count = numel(xs.shape);
  std::function<void(const float*, float*)> f;
  static const std::map<std::string, portable::Unary, std::less<>> kUnary = {
      {"hardsigmoid", portable::Unary::kHardsigmoid}, {"silu", portable::Unary::kSilu}, {"mish", portable::Unary::kMish},
      {"exp", portable::Unary::kExp},   {"log", portable::Unary::kLog},   {"sqrt", portable::Unary::kSqrt},
      {"rsqrt", portable::Unary::kRsqrt}, {"neg", portable::Unary::kNeg}, {"abs", portable::Unary::kAbs},
      {"square", portable::Unary::kSquare}, {"erf", portable::Unary::kErf}, {"sin", portable::Unary::kSin},
      {"cos", portable::Unary::kCos},   {"tan", portable::Unary::kTan},   {"floor", portable::Unary::kFloor},
      {"ceil", portable::Unary::kCeil}, {"round", portable::Unary::kRound}, {"trunc", portable::Unary::kTrunc},
      {"fix", portable::Unary::kTrunc}, {"reciprocal", portable::Unary::kReciprocal}, {"sign", portable::Unary::kSign},
      {"log1p", portable::Unary::kLog1p}, {"expm1", portable::Unary::kExpm1}, {"log2", portable::Unary::kLog2},
      {"log10", portable::Unary::kLog10}, {"logical_not", portable::Unary::kLogicalNot}, {"acos", portable::Unary::kAcos},
      {"arccos", portable::Unary::kAcos}, {"asin", portable::Unary::kAsin}, {"arcsin", portable::Unary::kAsin},
      {"atan", portable::Unary::kAtan}, {"arctan", portable::Unary::kAtan}, {"cosh", portable::Unary::kCosh},
      {"sinh", portable::Unary::kSinh}, {"acosh", portable::Unary::kAcosh}, {"arccosh", portable::Unary::kAcosh},
      {"asinh", portable::Unary::kAsinh}, {"arcsinh", portable::Unary::kAsinh}, {"atanh", portable::Unary::kAtanh},
      {"arctanh", portable::Unary::kAtanh}, {"isinf", portable::Unary::kIsinf}, {"isnan", portable::Unary::kIsnan},
      {"isfinite", portable::Unary::kIsfinite}};
  if (base == "softplus" && (cx.float_arg(n, "beta").value_or(1) != 1 || cx.float_arg(n, "threshold").value_or(20) != 20)) {
    const auto beta = static_cast<float>(cx.float_arg(n, "beta").value_or(1)), threshold = static_cast<float>(cx.float_arg(n, "threshold").value_or(20));
    f = [count, beta, threshold](const float* a, float* b) {
      for (i64 k = 0; k < count; ++k) b[k] = a[k] * beta > threshold ? a[k] : std::log1p(std::exp(a[k] * beta)) / beta;
    };
  } else if (base == "softplus") {
    f = [count](const float* a, float* b) { portable::unary(portable::Unary::kSoftplus, a, b, count); };
  } else if (base == "nan_to_num") {
    constexpr float kMax = std::numeric_limits<float>::max();
    const auto nan = static_cast<float>(cx.float_arg(n, "nan").value_or(0));
    const auto pos = static_cast<float>(cx.float_arg(n, "posinf").value_or(kMax)), neg = static_cast<float>(cx.float_arg(n, "neginf").value_or(-kMax));
    f = [count, nan, pos, neg](const float* a, float* b) { portable::nan_to_num(a, b, count, nan, pos, neg); };
  } else if (const i64 decimals = cx.int_arg(n, "decimals").value_or(0); base == "round" && decimals != 0) {
    // torch.round(x, decimals=d): round(x * 10^d) / 10^d, half to even (as torch computes it).
    const double scale = std::pow(10.0, static_cast<double>(decimals));
    const auto up = static_cast<float>(decimals > 0 ? scale : 1.0), down = static_cast<float>(decimals > 0 ? 1.0 : 1.0 / scale);
    f = [count, up, down, neg = decimals < 0](const float* a, float* b) {
      for (i64 k = 0; k < count; ++k) b[k] = neg ? std::nearbyint(a[k] / down) * down : std::nearbyint(a[k] * up) / up;
    };
  } else if (auto g = parametric_unary(cx, n, base)) {
    f = [g = *g, count](const float* a, float* b) {
      for (i64 k = 0; k < count; ++k) b[k] = g(a[k]);
    };
  } else if (auto it = kUnary.find(base); it != kUnary.end()) {
    const portable::Unary op = it->second;
    f = [&cx, op, count](const float* a, float* b) {
      cx.parallel_slices(count, [&](i64 first, i64 n) { portable::unary(op, a + first, b + first, n); }, kSliceFloats);
    };
  } else if (auto e = input_for_arg(n, "exponent", std::numeric_limits<std::size_t>::max());
             base == "pow" && e && cx.slot_of(*e).kind == Kind::kTensor) {
    return cx.define(n.outputs[0], portable_binary(cx, n, portable::Binary::kPow, *input_for_arg(n, "self", 0), *e));
  } else if (base == "pow") {
    auto e = cx.float_arg(n, "exponent");
    if (!e) fail(ErrorCode::kUnsupported, cx.where(n) + ": pow with a tensor exponent");
    const double exponent = *e;
    f = [exponent, count](const float* a, float* b) { portable::pow_scalar(a, b, count, exponent); };
  } else if (base == "rsub") {
    auto other = cx.float_arg(n, "other");
    if (!other) fail(ErrorCode::kSchema, cx.where(n) + ": rsub without 'other'");
    const double o = *other, alpha = cx.float_arg(n, "alpha").value_or(1);
    f = [o, alpha, count](const float* a, float* b) { portable::rsub_scalar(a, b, count, o, alpha); };
  } else {
    fail(ErrorCode::kUnsupported, cx.where(n) + ": op not supported by the XNNPACK backend");
  }
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, f, x, out] { f(cx.ptr(x), cx.ptr(out)); };
  cx.define(n.outputs[0], out);
}

void lower_full(Context& cx, const Node& n, NodeState&) {
  std::string base = base_op(n.op);
  if (base.back() == '_') base.pop_back();
  Shape shape;
  if (base.rfind("new_", 0) == 0) {
    const auto size = cx.ints_arg(n, "size");
    if (!size) fail(ErrorCode::kSchema, cx.where(n) + ": no size");
    shape = *size;
    for (i64 d : shape)
      if (d < 0) fail(ErrorCode::kBadShape, cx.where(n) + ": size " + shape_str(shape) + " has a negative dim");
    checked_nbytes(DType::kFloat32, shape);
  } else {
    shape = cx.slot(cx.tensor_arg(n, "self", 0)).shape;
  }
  const float value = static_cast<float>(base == "new_zeros" || base == "zeros_like" ? 0.0
                                         : base == "new_ones" || base == "ones_like" ? 1.0
                                         : number_arg(cx, n, base == "fill" ? "value" : "fill_value"));
  const int out = cx.new_tensor(shape, false);
  const i64 count = numel(shape);
  Step& step = cx.add_step({}, {out});
  step.run = [&cx, out, value, count] { portable::fill(cx.ptr(out), value, count); };
  cx.define(n.outputs[0], out);
}

void lower_compare(Context& cx, const Node& n, NodeState&) {
  static const std::map<std::string, portable::Compare, std::less<>> kOps = {
      {"eq", portable::Compare::kEq}, {"ne", portable::Compare::kNe}, {"lt", portable::Compare::kLt},
      {"le", portable::Compare::kLe}, {"gt", portable::Compare::kGt}, {"ge", portable::Compare::kGe}};
  const portable::Compare op = kOps.at(base_op(n.op));
  // Numbers planning knows (sizes, item()'s value; torch.export's checks of them): a number.
  if (const auto first = input_for_arg(n, "a", 0); first && !input_for_arg(n, "self", 0)) {
    const Slot& sa = cx.slot_of(*first);
    if (sa.kind == Kind::kInt || sa.kind == Kind::kFloat) {
      const double p = sa.kind == Kind::kInt ? static_cast<double>(sa.i) : sa.f, q = number_arg(cx, n, "b");
      const bool r = op == portable::Compare::kEq ? p == q : op == portable::Compare::kNe ? p != q : op == portable::Compare::kLt ? p < q
                   : op == portable::Compare::kLe ? p <= q : op == portable::Compare::kGt ? p > q : p >= q;
      return cx.define(n.outputs[0], cx.int_slot(r ? 1 : 0));
    }
  }
  const int a = cx.tensor_arg(n, "self", 0);
  const auto other = input_for_arg(n, "other", 1);
  if (!other || cx.slot_of(*other).kind != Kind::kTensor) {
    const float b = static_cast<float>(number_arg(cx, n, "other"));
    const Shape shape = cx.slot(a).shape;
    std::vector<int> ins{a};
    const int out = cx.new_tensor(shape, false);
    Step& step = cx.portable_step(ins, {out});
    const int ai = ins[0];
    const i64 count = numel(shape);
    step.run = [&cx, op, ai, b, out, count] { portable::compare(op, cx.ptr(ai), &b, cx.ptr(out), count, 0); };
    return cx.define(n.outputs[0], out);
  }
  const int b = cx.tensor_slot(n, *other);
  const Shape shape = broadcast_shape(cx, n, cx.slot(a).shape, cx.slot(b).shape);
  const int ai = broadcast_to(cx, a, shape), bi = broadcast_to(cx, b, shape);
  const int out = cx.new_tensor(shape, false);
  const i64 count = numel(shape);
  Step& step = cx.add_step({ai, bi}, {out});
  step.run = [&cx, op, ai, bi, out, count] { portable::compare(op, cx.ptr(ai), cx.ptr(bi), cx.ptr(out), count, 1); };
  cx.define(n.outputs[0], out);
}

void lower_masked_fill(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const int mask = cx.tensor_arg(n, "mask", 1);
  const Shape shape = cx.slot(x).shape;
  if (broadcast_shape(cx, n, shape, cx.slot(mask).shape) != shape)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": a mask of shape " + shape_str(cx.slot(mask).shape) +
                                        " does not broadcast to " + shape_str(shape));
  const int xi = cx.as_layout(x, false), mi = broadcast_to(cx, mask, shape);
  const int out = cx.new_tensor(shape, false);
  const i64 count = numel(shape);
  if (auto tensor = run_time_tensor(cx, n, "value")) {
    // A 0-dim tensor computed in the graph: where(mask, value, self).
    const int v = cx.as_layout(cx.held_tensor_slot(n, *tensor), false);
    if (numel(cx.slot(v).shape) != 1)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": 'value' " + shape_str(cx.slot(v).shape) + " must have one element");
    Step& step = cx.add_step({xi, mi, v}, {out});
    step.run = [&cx, xi, mi, v, out, count] { portable::masked_fill(cx.ptr(xi), cx.ptr(mi), cx.ptr(v)[0], cx.ptr(out), count); };
    return cx.define(n.outputs[0], out);
  }
  const float value = static_cast<float>(number_arg(cx, n, "value"));
  Step& step = cx.add_step({xi, mi}, {out});
  step.run = [&cx, xi, mi, value, out, count] { portable::masked_fill(cx.ptr(xi), cx.ptr(mi), value, cx.ptr(out), count); };
  cx.define(n.outputs[0], out);
}

void lower_binary_portable(Context& cx, const Node& n, NodeState&) {
  static const std::map<std::string, portable::Binary, std::less<>> kOps = {
      {"maximum", portable::Binary::kMaximum}, {"minimum", portable::Binary::kMinimum}, {"logical_and", portable::Binary::kLogicalAnd},
      {"logical_or", portable::Binary::kLogicalOr}, {"logical_xor", portable::Binary::kLogicalXor}, {"atan2", portable::Binary::kAtan2},
      {"arctan2", portable::Binary::kAtan2}, {"hypot", portable::Binary::kHypot}};
  const auto it = kOps.find(base_op(n.op));
  auto a = input_for_arg(n, "self", 0), b = input_for_arg(n, "other", 1);
  if (it == kOps.end() || !a || !b) fail(ErrorCode::kSchema, cx.where(n) + ": two tensor operands");
  cx.define(n.outputs[0], portable_binary(cx, n, it->second, *a, *b));
}

namespace {

// The dtype of `v`: the graph's, or where the file gave none, bool for what a
// comparison or a logical op made.
std::optional<DType> dtype_of(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  if (value.dtype || !value.producer) return value.dtype;
  static const std::set<std::string, std::less<>> kMasks = {
      "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not", "isnan", "isinf", "isfinite"};
  const Node& p = g.node(*value.producer);
  const std::string base = base_op(p.op);
  if (kMasks.count(base)) return DType::kBool;
  if (p.op.find("bitwise_") != std::string::npos || base.rfind("__", 0) == 0) {
    if (auto self = input_for_arg(p, "self", 0)) return dtype_of(g, *self);  // a mask's bitwise op is a mask
  }
  return std::nullopt;
}

}  // namespace

void lower_bitwise(Context& cx, const Node& n, NodeState&) {
  std::string base = base_op(n.op);
  const auto self = input_for_arg(n, "self", 0);
  if (!self) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'self'");
  // A mask or an integer (a float has no bitwise ops): not differs between them.
  const std::optional<DType> dtype = dtype_of(cx.graph(), *self);
  if (!dtype || is_floating(*dtype))
    fail(ErrorCode::kUnsupported, cx.where(n) + ": " + base + " of a " + (dtype ? std::string(dtype_name(*dtype)) : std::string("tensor of unknown dtype")) +
                                      " (masks and integers only)");
  const bool mask = *dtype == DType::kBool;
  if (base == "bitwise_not" || base == "__invert__") {
    const int x = cx.held_tensor_slot(n, *self);
    const Slot xs = cx.slot(x);
    const int out = cx.new_tensor(xs.shape, xs.channels_last);
    const i64 count = numel(xs.shape);
    const portable::Unary op = mask ? portable::Unary::kLogicalNot : portable::Unary::kBitwiseNotInt;
    Step& step = cx.add_step({x}, {out});
    step.run = [&cx, op, x, out, count] { portable::unary(op, cx.ptr(x), cx.ptr(out), count); };
    return cx.define(n.outputs[0], out);
  }
  static const std::map<std::string, portable::Binary, std::less<>> kOps = {
      {"bitwise_and", portable::Binary::kBitwiseAnd}, {"bitwise_or", portable::Binary::kBitwiseOr}, {"bitwise_xor", portable::Binary::kBitwiseXor},
      {"__and__", portable::Binary::kBitwiseAnd},     {"__or__", portable::Binary::kBitwiseOr},     {"__xor__", portable::Binary::kBitwiseXor}};
  const portable::Binary op = kOps.at(base);
  const int x = cx.held_tensor_slot(n, *self);
  int y = -1;
  if (auto other = input_for_arg(n, "other", 1)) {
    y = cx.held_tensor_slot(n, *other);
  } else {
    // A number written in the node (bitwise_and.Scalar).
    const std::optional<double> value = cx.float_arg(n, "other");
    if (!value || *value != std::trunc(*value)) fail(ErrorCode::kSchema, cx.where(n) + ": 'other' is neither a tensor nor an integer");
    y = cx.planned_constant({}, {static_cast<float>(*value)});
  }
  cx.define(n.outputs[0], portable_binary(cx, n, op, x, y));
}

int portable_binary(Context& cx, const Node& n, portable::Binary op, ValueId a, ValueId b) {
  return portable_binary(cx, n, op, cx.held_tensor_slot(n, a), cx.held_tensor_slot(n, b));
}

int portable_binary(Context& cx, const Node& n, portable::Binary op, int x, int y) {
  const auto shape = shape_rules::broadcast(cx.slot(x).shape, cx.slot(y).shape);
  if (!shape) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + shape_str(cx.slot(x).shape) + " and " + shape_str(cx.slot(y).shape) + " do not broadcast");
  x = broadcast_to(cx, x, *shape);
  y = broadcast_to(cx, y, *shape);
  const int out = cx.new_tensor(*shape, false);
  const i64 count = numel(*shape);
  Step& step = cx.add_step({x, y}, {out});
  step.run = [&cx, op, x, y, out, count] { portable::binary(op, cx.ptr(x), cx.ptr(y), cx.ptr(out), count); };
  return out;
}

void lower_ternary(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const bool lerp = base == "lerp";
  // lerp(self, end, weight); addcmul/addcdiv(self, tensor1, tensor2, value): self + value * t1 op t2.
  const auto self = input_for_arg(n, "self", 0);
  const auto a = input_for_arg(n, lerp ? "end" : "tensor1", 1);
  const auto b = input_for_arg(n, lerp ? "weight" : "tensor2", 2);
  if (!self || !a) fail(ErrorCode::kSchema, cx.where(n) + ": missing an operand");
  std::vector<int> ins{cx.held_tensor_slot(n, *self), cx.held_tensor_slot(n, *a)};
  if (b) {
    ins.push_back(cx.held_tensor_slot(n, *b));
  } else {
    const std::optional<double> weight = lerp ? cx.float_arg(n, "weight") : std::nullopt;
    if (!weight) fail(ErrorCode::kSchema, cx.where(n) + ": missing an operand");
    ins.push_back(cx.planned_constant({}, {static_cast<float>(*weight)}));
  }
  std::optional<Shape> shape = cx.slot(ins[0]).shape;
  for (int s : ins) {
    if (shape) shape = shape_rules::broadcast(*shape, cx.slot(s).shape);
  }
  if (!shape) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": operands that do not broadcast");
  for (int& s : ins) s = cx.as_layout(broadcast_to(cx, s, *shape), false);
  const int out = cx.new_tensor(*shape, false);
  const i64 count = numel(*shape);
  const auto value = static_cast<float>(lerp ? 1.0 : cx.float_arg(n, "value").value_or(1.0));
  const int kind = lerp ? 0 : base == "addcmul" ? 1 : 2;
  Step& step = cx.add_step(ins, {out});
  step.run = [&cx, ins, out, count, value, kind] {
    const float* x = cx.ptr(ins[0]);
    const float* p = cx.ptr(ins[1]);
    const float* q = cx.ptr(ins[2]);
    float* y = cx.ptr(out);
    for (i64 k = 0; k < count; ++k) {
      if (kind == 0) {
        // torch's two-sided form: exact at both ends.
        const float w = q[k], d = p[k] - x[k];
        y[k] = std::fabs(w) < 0.5f ? x[k] + w * d : p[k] - d * (1 - w);
      } else {
        y[k] = x[k] + value * (kind == 1 ? p[k] * q[k] : p[k] / q[k]);
      }
    }
  };
  cx.define(n.outputs[0], out);
}

void lower_glu(Context& cx, const Node& n, NodeState&) {
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Shape xs = cx.slot(x).shape;
  if (xs.empty()) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": glu of a 0-d tensor");
  const auto dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(-1), xs.size(), cx.where(n)));
  if (xs[dim] % 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": dim " + std::to_string(dim) + " of " + shape_str(xs) + " is odd (glu halves it)");
  const i64 outer = prod(xs, 0, dim), half = xs[dim] / 2, inner = prod(xs, dim + 1, xs.size());
  Shape out_shape = xs;
  out_shape[dim] = half;
  const int out = cx.new_tensor(out_shape, false);
  cx.portable_map(x, out, [outer, half, inner](const float* a, float* y) {
    for (i64 o = 0; o < outer; ++o) {
      const float* first = a + o * 2 * half * inner;
      const float* gate = first + half * inner;
      for (i64 k = 0; k < half * inner; ++k) y[o * half * inner + k] = first[k] / (1.0f + std::exp(-gate[k]));
    }
  });
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
