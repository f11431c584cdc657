#include "tracegraph/geometry.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "support/json_util.h"
#include "tracegraph/op_table.h"
#include "tracegraph/shape_rules.h"

namespace tracegraph {

// ---- Rational ----------------------------------------------------------------

Rational Rational::of(std::int64_t num, std::int64_t den) {
  if (den == 0) fail(ErrorCode::kInternal, "geometry: a fraction with denominator 0");
  if (den < 0) num = -num, den = -den;
  const std::int64_t g = std::gcd(num, den);
  return g > 1 ? Rational{num / g, den / g} : Rational{num, den};
}

std::string Rational::str() const {
  return den == 1 ? std::to_string(num) : std::to_string(num) + "/" + std::to_string(den);
}

namespace {

using i64 = std::int64_t;
__extension__ typedef __int128 wide;

Rational operator+(Rational a, Rational b) { return Rational::of(a.num * b.den + b.num * a.den, a.den * b.den); }
Rational operator-(Rational a, Rational b) { return Rational::of(a.num * b.den - b.num * a.den, a.den * b.den); }
Rational operator*(Rational a, Rational b) { return Rational::of(a.num * b.num, a.den * b.den); }
Rational operator/(Rational a, Rational b) { return Rational::of(a.num * b.den, a.den * b.num); }

// Past this the analysis says "unknown" rather than risk an overflow: no
// network's strides multiply to this along one axis.
constexpr i64 kMaxPeriod = i64{1} << 12;
constexpr i64 kMaxEvaluated = i64{1} << 20;
constexpr i64 kSliceToEnd = i64{1} << 62;  // a slice end at or past this is "to the end"

}  // namespace

// ---- AxisGeometry ----------------------------------------------------------------

std::optional<std::int64_t> AxisGeometry::output_size(std::int64_t n) const {
  if (!known() || n < 1) return std::nullopt;
  const i64 table = static_cast<i64>(output_sizes.size());
  if (n <= table) {
    const i64 m = output_sizes[static_cast<std::size_t>(n - 1)];
    return m > 0 ? std::optional<i64>(m) : std::nullopt;
  }
  if (finite || period <= 0) return std::nullopt;
  // n = periodic_from + r + k * period, with r in [0, period).
  const i64 k = (n - periodic_from) / period, r = (n - periodic_from) % period;
  const i64 m = output_sizes[static_cast<std::size_t>(periodic_from + r - 1)];
  if (m <= 0) return std::nullopt;
  return m + k * growth;
}

std::optional<std::int64_t> AxisGeometry::smallest() const {
  if (!known()) return std::nullopt;
  for (std::size_t i = 0; i < output_sizes.size(); ++i) {
    if (output_sizes[i] > 0) return static_cast<i64>(i) + 1;
  }
  return std::nullopt;
}

std::int64_t AxisGeometry::halo() const {
  if (!edge_effects) return 0;
  const Rational extra = reach - context_before();
  if (extra.num <= 0) return 0;
  return (extra.num + extra.den - 1) / extra.den;
}

Rational AxisGeometry::context_before() const { return offset + (Rational::of(1) - stride) / Rational::of(2); }

std::optional<Rational> AxisGeometry::context_after(std::int64_t n) const {
  const auto m = output_size(n);
  if (!m) return std::nullopt;
  return Rational::of(n) - offset - stride * Rational::of(*m) + (stride - Rational::of(1)) / Rational::of(2);
}

std::string AxisGeometry::valid_sizes_str() const {
  if (!known()) return "unknown";
  if (lattice) {
    const auto [first, step] = *lattice;
    if (step == 1) return "n >= " + std::to_string(first);
    if (first == step) return std::to_string(step) + "k, k >= 1";
    return std::to_string(first) + " + " + std::to_string(step) + "k";
  }
  std::vector<i64> sizes;
  for (std::size_t i = 0; i < output_sizes.size(); ++i) {
    if (output_sizes[i] > 0) sizes.push_back(static_cast<i64>(i) + 1);
  }
  if (sizes.empty()) return "none";
  if (finite) {
    std::string s;
    for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? (i + 1 == sizes.size() ? " or " : ", ") : "") + std::to_string(sizes[i]);
    return s;
  }
  // A union of residue classes: the smallest of each.
  std::string s = "n mod " + std::to_string(period) + " in {";
  std::vector<i64> firsts;
  for (i64 r = 0; r < period; ++r) {
    const i64 n = periodic_from + r;
    if (output_sizes[static_cast<std::size_t>(n - 1)] <= 0) continue;
    i64 first = n;
    while (first - period >= 1 && output_sizes[static_cast<std::size_t>(first - period - 1)] > 0) first -= period;
    firsts.push_back(first);
  }
  std::sort(firsts.begin(), firsts.end());
  for (std::size_t i = 0; i < firsts.size(); ++i) s += (i ? ", " : "") + std::to_string(firsts[i] % period);
  s += "}, from " + std::to_string(firsts.empty() ? 0 : firsts.front());
  return s;
}

std::string AxisGeometry::str() const {
  if (!known()) return "unknown at '" + unknown_node + "' (" + unknown_op + "): " + unknown_reason;
  std::string s = "sizes " + valid_sizes_str() + ", offset " + offset.str() + ", stride " + stride.str();
  if (halo() > 0) s += ", halo " + std::to_string(halo()) + " (edge effects within " + reach.str() + ")";
  if (!nonlocal.empty()) {
    s += ", nonlocal:";
    for (const auto& n : nonlocal) s += " " + n;
  }
  return s;
}

namespace {

// ---- the analysis of one axis --------------------------------------------------

// What the analysis knows of a value along the axis.
struct AxisValue {
  // kNumber: a number computed from the axis' sizes (x.size(2), (a - b) // 2),
  // kSizes: a tensor's whole size list whose tensor is kSpatial.
  enum class State { kFixed, kSpatial, kNumber, kSizes, kUnknown } state = State::kFixed;
  // kSpatial: where its voxels lie, its slot in the sizes evaluated, and its
  // size's period and growth (size(n + period) = size(n) + growth).
  // kNumber: its slot, period and growth alike (numbers may shrink: growth < 0).
  Rational offset, stride = Rational::of(1);
  // kSpatial: the half-extent of the input voxels each voxel depends on,
  // around its centre, in input voxels (its receptive field's radius, an
  // upper bound); and whether any op on its way pads or clamps at an edge,
  // so that voxels near its edge differ from a run on a larger input.
  Rational reach;
  bool edge_effects = false;
  int slot = -1;
  i64 period = 1, growth = 1;
  std::int64_t rank = 0;
  // kFixed: its value when it is a number the analysis knows; kNumber: its
  // value at the graph's example size (nullopt when a shape is not static).
  std::optional<i64> number;
  // kSizes, or kFixed from aten::size without a dim: whose sizes.
  std::optional<ValueId> sizes_of;
  // kUnknown: where and why.
  std::string node, op, reason;
  // Nodes before it whose values depend on the whole axis.
  std::vector<std::string> nonlocal;
};
using State = AxisValue::State;

// One size computation of the evaluation, in graph order.
struct Step {
  enum class Kind { kWindow, kTransposed, kScale, kSlice, kPad, kJoin, kNumber } kind = Kind::kWindow;
  int in = -1, out = -1;
  std::vector<int> others;  // kJoin: the other operands, whose sizes must equal `in`'s
  std::vector<bool> same_rate;  // kJoin: per other operand, whether it grows as `in` does
  std::vector<int> rate_sign;   // kJoin: sign of (in's rate - other's rate)
  i64 kernel = 1, stride = 1, padding = 0, dilation = 1, output_padding = 0;
  bool ceil_mode = false;
  i64 scale_num = 1, scale_den = 1;
  i64 start = 0, end = kSliceToEnd, step = 1;
  i64 before = 0, after = 0;
  // kSlice: a start or end the graph computes (a slot; -1: the constant
  // above), the start the voxel map assumes (its value at the example size),
  // and the node, named when an accepted size starts elsewhere.
  int start_slot = -1, end_slot = -1;
  i64 expected_start = 0;
  std::string node, op;
  // kNumber: out = ka * A + kb * B + k0 (kLinear), floor(A / c), trunc(A / c)
  // or A mod c (Python's, c > 0); A, B a slot, or absent (-1).
  enum class Arith { kLinear, kFloorDiv, kTruncDiv, kRemainder } arith = Arith::kLinear;
  int a = -1, b = -1;
  i64 ka = 0, kb = 0, k0 = 0, c = 1;
  int a_sign = 0;  // kTruncDiv: the sign of A's growth, which A's sign takes for good
  bool start_moves = false;  // kSlice: the computed start grows or shrinks with the input
};

// The op as the analysis reads it: the canonical name, else an ATen op's base
// name without its in-place '_' (the norms and elementwise ops the table does
// not read), as the activation analysis does.
std::string op_name(const Node& n, const std::optional<CanonicalOp>& c) {
  if (c) return c->name;
  const std::optional<OpName> parsed = parse_op_name(n.op);
  if (!parsed || parsed->qualified.rfind("aten::", 0) != 0) return "";
  return std::string(op_base(functional_op_name(parsed->qualified)));
}

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Same size and voxels as the input (the first spatial operand).
bool is_pointwise(std::string_view op) {
  return one_of(op, {"relu", "sigmoid", "tanh", "hardswish", "hardsigmoid", "silu", "gelu", "elu", "leaky_relu", "clip",
                     "dropout", "cast", "contiguous", "clone", "detach", "batch_norm", "neg", "exp", "log", "abs", "sqrt",
                     "prelu", "mish", "softplus", "selu", "celu", "rsqrt", "reciprocal", "square", "erf", "sign", "floor",
                     "ceil", "round", "nan_to_num", "softsign", "logsigmoid", "hardshrink", "threshold", "log1p", "expm1",
                     "sin", "cos", "bitwise_not", "logical_not"});
}
// Same sizes, but each value depends on the whole spatial extent.
bool is_nonlocal_norm(std::string_view op) {
  return one_of(op, {"instance_norm", "group_norm", "native_group_norm", "layer_norm", "native_layer_norm"});
}
// Elementwise over several tensors: the spatial ones must match.
bool is_elementwise(std::string_view op) {
  return one_of(op, {"add", "sub", "rsub", "mul", "div", "maximum", "minimum", "pow", "where", "lerp", "fmod", "remainder",
                     "atan2", "true_divide", "floor_divide", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                     "addcmul", "addcdiv"});
}

i64 floor_div(i64 a, i64 b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// A resize's scale as an exact fraction: PyTorch floors size * scale in
// doubles, which is the exact fraction's floor only when the double is one
// (a power-of-two denominator).
std::optional<std::pair<i64, i64>> exact_scale(double scale) {
  if (!(scale > 0) || !std::isfinite(scale)) return std::nullopt;
  for (i64 den = 1; den <= 1024; den *= 2) {
    const double num = scale * static_cast<double>(den);
    if (num == std::floor(num) && num < 1e9) {
      const i64 n = static_cast<i64>(num), g = std::gcd(n, den);
      return std::pair{n / g, den / g};
    }
  }
  return std::nullopt;
}

class AxisAnalysis {
 public:
  AxisAnalysis(const Graph& g, ValueId input, std::int64_t dim) : g_(g), input_(input), dim_(dim) {}

  AxisGeometry run(ValueId output);
  void propagate();

 private:
  const AxisValue& at(ValueId v) const { return values_[v.index]; }
  void set(ValueId v, AxisValue a) { values_[v.index] = std::move(a); }
  AxisValue unknown(const Node& n, std::string reason) const {
    AxisValue a;
    a.state = State::kUnknown;
    a.node = n.name;
    a.op = n.op;
    a.reason = std::move(reason);
    return a;
  }
  void visit(const Node& n);
  // A new spatial value from `in` through a size step whose voxel map is
  // (local_offset, local_stride) and whose size has the given period and growth.
  // `local_reach`: how far (in `in`'s voxels) from an output voxel's centre
  // the input voxels it reads lie; `edge`: the op pads or clamps at an edge.
  AxisValue derive(const AxisValue& in, Step step, Rational local_offset, Rational local_stride, i64 period,
                   i64 growth, const Node& n, Rational local_reach = {}, bool edge = false);
  // The period and growth after a division by `s` of a size with (period, growth).
  static std::pair<i64, i64> divided(i64 period, i64 growth, i64 s) {
    const i64 j = growth == 0 ? 1 : s / std::gcd(growth, s);
    return {period * j, growth * j / s};
  }

  std::optional<AxisValue> window(const Node& n, const AxisValue& x, std::string_view op);
  std::optional<AxisValue> resize(const Node& n, const AxisValue& x);

  // ---- numbers computed from sizes ----
  static bool is_number(const AxisValue& a) { return a.state == State::kNumber || (a.state == State::kFixed && a.number); }
  // A value read as a number: what the analysis knows of it, or a constant of one element.
  AxisValue number_of(ValueId v) const;
  // The argument `name` (a graph input by its schema name, else the input at
  // `fallback` when the node names none, else an attribute); nullopt when absent.
  std::optional<AxisValue> number_arg(const Node& n, std::initializer_list<std::string_view> names, std::size_t fallback) const;
  // A tensor's size along `d` (negative from the end): kNumber along the
  // axis when the tensor grows with it, else its static size.
  AxisValue size_of(const Node& n, ValueId tensor, i64 d) const;
  // ka * a + kb * b + k0; a number that does not vary is computed here.
  AxisValue linear(const Node& n, const AxisValue& a, i64 ka, const AxisValue* b, i64 kb, i64 k0);
  AxisValue divide(const Node& n, const AxisValue& a, const AxisValue& c, Step::Arith arith);
  AxisValue varying_number(const Node& n, AxisValue out, Step step, i64 period, i64 growth);
  // Reads a number op (aten::size, prim::NumToTensor, aten::Int, the
  // arithmetic); false when `op` is none.
  bool visit_number(const Node& n, std::string_view op);
  std::optional<AxisValue> slice(const Node& n, const AxisValue& x);

  const Graph& g_;
  ValueId input_;
  std::int64_t dim_;
  std::vector<AxisValue> values_;
  std::vector<Step> steps_;
  int slots_ = 0;
  friend struct Evaluation;
};

AxisValue AxisAnalysis::derive(const AxisValue& in, Step step, Rational local_offset, Rational local_stride, i64 period,
                               i64 growth, const Node& n, Rational local_reach, bool edge) {
  if (period > kMaxPeriod || in.stride.den > kMaxPeriod || in.stride.num > kMaxPeriod) {
    return unknown(n, "the sizes repeat with a period past " + std::to_string(kMaxPeriod));
  }
  AxisValue out = in;
  out.offset = in.offset + in.stride * local_offset;
  out.stride = in.stride * local_stride;
  out.reach = in.reach + in.stride * local_reach;
  out.edge_effects = in.edge_effects || edge;
  out.period = period;
  out.growth = growth;
  out.slot = slots_++;
  step.in = in.slot;
  step.out = out.slot;
  steps_.push_back(std::move(step));
  return out;
}

// An int[] argument spread over `spatial` dims; `fallback` when absent;
// nullopt when the graph computes it (an input) or it has the wrong length.
std::optional<std::vector<i64>> spatial_ints(const Node& n, std::string_view name, std::size_t spatial,
                                             std::vector<i64> fallback) {
  if (!inputs_for_arg(n, name).empty()) return std::nullopt;
  std::optional<std::vector<i64>> v;
  const AttributeValue* a = n.attributes.find(name);
  if (a && !std::holds_alternative<std::string>(*a)) v = arg_ints(n, name);
  if (!v || v->empty()) v = std::move(fallback);
  if (v->size() == 1) v = std::vector<i64>(spatial, v->front());
  if (v->size() != spatial) return std::nullopt;
  return v;
}

std::optional<AxisValue> AxisAnalysis::window(const Node& n, const AxisValue& x, std::string_view op) {
  // The op's spatial dims are the last `spatial` of its input.
  std::size_t spatial = 0;
  std::optional<Shape> weight;
  const bool conv = op == "conv" || op == "conv_transpose";
  if (conv) {
    const auto w = input_for_arg(n, "weight", 1);
    if (!w) return unknown(n, "a convolution without a weight");
    const Value& wv = g_.value(*w);
    if (!wv.shape || wv.shape->size() < 3) return unknown(n, "the weight's shape is not known");
    Shape s;
    for (const Dim& d : *wv.shape) {
      if (!d.is_static()) return unknown(n, "the weight's shape is not static");
      s.push_back(d.size);
    }
    spatial = s.size() - 2;
    weight = std::move(s);
  } else {
    spatial = named_spatial_rank(n.op).value_or(0);
    if (spatial == 0) {
      if (const auto k = arg_ints(n, "kernel_size")) spatial = k->size();
    }
  }
  if (spatial == 0 || static_cast<i64>(spatial) > x.rank) return unknown(n, "its spatial rank is not known");
  const i64 j = dim_ - (x.rank - static_cast<i64>(spatial));
  if (j < 0) return x;  // the op's window does not reach this axis
  const auto idx = static_cast<std::size_t>(j);

  Step step;
  const auto stride = spatial_ints(n, "stride", spatial, {1});
  const auto dilation = spatial_ints(n, "dilation", spatial, {1});
  if (!stride || !dilation) return unknown(n, "its stride or dilation is computed or malformed");
  step.stride = (*stride)[idx];
  step.dilation = (*dilation)[idx];
  if (conv) {
    step.kernel = (*weight)[2 + idx];
  } else {
    const auto kernel = spatial_ints(n, "kernel_size", spatial, {});
    if (!kernel) return unknown(n, "its kernel size is computed or malformed");
    step.kernel = (*kernel)[idx];
    // A pooling's stride defaults to (and an empty one is) the kernel.
    const auto s = spatial_ints(n, "stride", spatial, *kernel);
    if (!s) return unknown(n, "its stride is computed or malformed");
    step.stride = (*s)[idx];
    step.ceil_mode = arg_bool(n, "ceil_mode").value_or(false);
  }
  if (step.stride <= 0 || step.dilation <= 0 || step.kernel <= 0) return unknown(n, "a window that is not positive");
  const i64 reach = step.dilation * (step.kernel - 1);

  // Padding: numbers, or "valid" / "same" (conv2d's padding overload).
  std::optional<std::string> mode;
  if (const AttributeValue* p = n.attributes.find("padding")) {
    if (const auto* s = std::get_if<std::string>(p)) mode = *s;
  }
  if (op == "conv_transpose") {
    const auto padding = spatial_ints(n, "padding", spatial, {0});
    const auto out_pad = spatial_ints(n, "output_padding", spatial, {0});
    if (!padding || !out_pad || mode) return unknown(n, "its padding is computed or malformed");
    step.kind = Step::Kind::kTransposed;
    step.padding = (*padding)[idx];
    step.output_padding = (*out_pad)[idx];
    // Input voxel j reaches outputs j*s - p + t*d, centred on j*s + reach/2 - p;
    // an output reads the inputs within reach/(2s) of its centre. Where the
    // windows overlap (reach >= s), an output near an edge that the padding
    // does not cut gets fewer of them.
    const bool edge = reach >= step.stride && step.padding < reach;
    return derive(x, step, Rational::of(2 * step.padding - reach, 2 * step.stride), Rational::of(1, step.stride),
                  x.period, x.growth * step.stride, n, Rational::of(reach, 2 * step.stride), edge);
  }
  step.kind = Step::Kind::kWindow;
  Rational local = Rational::of(reach, 2);
  if (mode == "same") {
    if (step.stride != 1) return unknown(n, "padding 'same' with a stride");
    // PyTorch pads reach/2 before and the rest after: the size is kept.
    step.padding = 0;
    step.kind = Step::Kind::kPad;
    step.before = step.after = 0;
    return derive(x, step, Rational::of(reach - 2 * (reach / 2), 2), Rational::of(1), x.period, x.growth, n,
                  Rational::of(reach, 2), reach > 0);
  }
  if (mode && mode != "valid") return unknown(n, "padding '" + *mode + "'");
  if (!mode) {
    const auto padding = spatial_ints(n, "padding", spatial, {0});
    if (!padding) return unknown(n, "its padding is computed or malformed");
    step.padding = (*padding)[idx];
  }
  local = local - Rational::of(step.padding);
  const auto [period, growth] = divided(x.period, x.growth, step.stride);
  return derive(x, step, local, Rational::of(step.stride), period, growth, n, Rational::of(reach, 2),
                step.padding > 0 || step.ceil_mode);
}

std::optional<AxisValue> AxisAnalysis::resize(const Node& n, const AxisValue& x) {
  const std::string_view base = op_base(n.op);
  if (base.find("bicubic") != std::string_view::npos || base.find("_aa") != std::string_view::npos) {
    return unknown(n, "a resize the analysis does not read");
  }
  if (arg_bool(n, "align_corners").value_or(false)) {
    return unknown(n, "align_corners: the output's grid depends on the input size");
  }
  for (std::string_view name : {"output_size", "size"}) {
    const AttributeValue* a = n.attributes.find(name);
    if (!inputs_for_arg(n, name).empty() || (a && !std::holds_alternative<std::string>(*a) &&
                                               !(std::holds_alternative<std::vector<std::int64_t>>(*a) &&
                                                 std::get<std::vector<std::int64_t>>(*a).empty()))) {
      return unknown(n, "a resize to a fixed size: it does not grow with the input");
    }
  }
  std::vector<double> scales;
  for (std::string_view name : {"scale_factors", "scale_factor"}) {
    if (const AttributeValue* a = n.attributes.find(name)) {
      if (const auto* v = std::get_if<std::vector<double>>(a)) scales = *v;
      else if (const auto* d = std::get_if<double>(a)) scales = {*d};
      else if (const auto* i = std::get_if<std::int64_t>(a)) scales = {static_cast<double>(*i)};
    }
  }
  if (scales.empty()) {
    // The .default overloads: scales_d, scales_h, scales_w.
    for (std::string_view name : {"scales_d", "scales_h", "scales_w", "scales"}) {
      if (const auto* a = n.attributes.find(name)) {
        if (const auto* d = std::get_if<double>(a)) scales.push_back(*d);
      }
    }
  }
  if (scales.empty()) return unknown(n, "a resize without a scale factor");
  const std::size_t spatial = named_spatial_rank(n.op).value_or(scales.size() == 1 ? static_cast<std::size_t>(x.rank - 2) : scales.size());
  if (scales.size() == 1) scales.assign(spatial, scales.front());
  if (scales.size() != spatial || static_cast<i64>(spatial) > x.rank) return unknown(n, "its scales do not match its rank");
  const i64 j = dim_ - (x.rank - static_cast<i64>(spatial));
  if (j < 0) return x;
  const auto frac = exact_scale(scales[static_cast<std::size_t>(j)]);
  if (!frac) return unknown(n, "a scale factor that is not an exact binary fraction");
  Step step;
  step.kind = Step::Kind::kScale;
  step.scale_num = frac->first;
  step.scale_den = frac->second;
  const Rational scale = Rational::of(frac->first, frac->second);
  // floor(size * a / q): the period grows until the growth times a divides by q.
  const auto [period, growth_times_q] = divided(x.period, x.growth * frac->first, frac->second);
  // Nearest reads the input voxel within 1/2 of an output's centre; linear
  // modes the two within 1, clamped at the edges (an edge effect).
  const bool nearest = base.find("nearest") != std::string_view::npos;
  return derive(x, step, (Rational::of(1) / scale - Rational::of(1)) / Rational::of(2), Rational::of(1) / scale, period,
                growth_times_q, n, nearest ? Rational::of(1, 2) : Rational::of(1), !nearest);
}

// ---- numbers computed from sizes -------------------------------------------------
//
// A crop computed at run time (traced: x.size(2) through prim::NumToTensor,
// tensor arithmetic and aten::Int; exported with dynamic shapes:
// aten.sym_size.int and Python's operator module) is read as numbers
// evaluated at each n with the sizes. A number made of sizes by +, -, a
// constant factor, // and % by a positive constant is quasi-affine in n
// like the sizes (// c multiplies the period as a stride-c pooling does),
// so the evaluation's periodicity argument covers it unchanged.

// The number ops by one name: ATen's base name (op_name), prim's, and Python's
// operator module's ("_operator.floordiv"), which the pt2 reader turns into
// aten::floordiv but a graph written by other tools may keep.
std::string number_op_name(const Node& n, const std::string& op) {
  std::string_view name = n.op;
  for (std::string_view prefix : {"_operator.", "operator."}) {
    if (!name.starts_with(prefix)) continue;
    name.remove_prefix(prefix.size());
    if (name == "mod") return "remainder";
    if (name == "truediv") return "div";
    if (name == "getitem") return "__getitem__";
    return std::string(name);
  }
  if (name == "prim::NumToTensor") return "NumToTensor";
  if (name == "prim::ListUnpack") return "ListUnpack";
  return op;
}

AxisValue AxisAnalysis::number_of(ValueId v) const {
  const AxisValue& a = at(v);
  if (a.state != State::kFixed || a.number || a.sizes_of) return a;
  const Value& value = g_.value(v);
  if (!value.is_constant() || value.data.numel() != 1) return a;
  AxisValue out = a;
  const Tensor& t = value.data;
  auto integral = [&](double d) {
    if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 1e15) out.number = static_cast<i64>(d);
  };
  switch (t.dtype()) {
    case DType::kInt64: out.number = *t.data_as<std::int64_t>(); break;
    case DType::kInt32: out.number = *t.data_as<std::int32_t>(); break;
    case DType::kFloat64: integral(*t.data_as<double>()); break;
    case DType::kFloat32: integral(*t.data_as<float>()); break;
    default: break;
  }
  return out;
}

std::optional<AxisValue> AxisAnalysis::number_arg(const Node& n, std::initializer_list<std::string_view> names,
                                                  std::size_t fallback) const {
  const bool named = n.attributes.contains(kArgNamesAttribute);
  for (std::string_view name : names) {
    if (named) {
      if (const auto in = inputs_for_arg(n, name); !in.empty()) return number_of(in.front());
    }
    if (const AttributeValue* a = n.attributes.find(name)) {
      AxisValue out;
      if (const auto* i = std::get_if<std::int64_t>(a)) out.number = *i;
      else if (const auto* b = std::get_if<bool>(a)) out.number = *b ? 1 : 0;
      else if (const auto* d = std::get_if<double>(a); d && *d == std::floor(*d) && std::abs(*d) < 1e15) out.number = static_cast<i64>(*d);
      else if (const auto* v = std::get_if<std::vector<std::int64_t>>(a); v && v->size() == 1) out.number = v->front();
      return out;
    }
  }
  if (!named && fallback < n.inputs.size()) return number_of(n.inputs[fallback]);
  return std::nullopt;
}

AxisValue AxisAnalysis::size_of(const Node& n, ValueId tensor, i64 d) const {
  const AxisValue& t = at(tensor);
  const Value& v = g_.value(tensor);
  const i64 rank = t.state == State::kSpatial ? t.rank : v.shape ? static_cast<i64>(v.shape->size()) : -1;
  AxisValue out;
  if (rank < 0) return out;  // a fixed value of unknown rank: a number no one knows
  if (d < 0) d += rank;
  if (d < 0 || d >= rank) return unknown(n, "the size of a dim the tensor does not have");
  if (v.shape && static_cast<i64>(v.shape->size()) == rank && (*v.shape)[static_cast<std::size_t>(d)].is_static()) {
    out.number = (*v.shape)[static_cast<std::size_t>(d)].size;
  }
  if (t.state == State::kSpatial && d == dim_) {
    // The size slot itself: its evaluated value is the number.
    out.state = State::kNumber;
    out.slot = t.slot;
    out.period = t.period;
    out.growth = t.growth;
  }
  return out;
}

// A number that varies with n, made by `step` from its operands' slots: a
// slot of its own, with its period and growth (unknown past kMaxPeriod).
AxisValue AxisAnalysis::varying_number(const Node& n, AxisValue out, Step step, i64 period, i64 growth) {
  if (period > kMaxPeriod) return unknown(n, "the sizes repeat with a period past " + std::to_string(kMaxPeriod));
  out.state = State::kNumber;
  out.period = period;
  out.growth = growth;
  out.slot = slots_++;
  step.out = out.slot;
  steps_.push_back(std::move(step));
  return out;
}

AxisValue AxisAnalysis::linear(const Node& n, const AxisValue& a, i64 ka, const AxisValue* b, i64 kb, i64 k0) {
  const bool varies = a.state == State::kNumber || (b && b->state == State::kNumber);
  if (!is_number(a) || (b && !is_number(*b))) {
    if (varies) return unknown(n, "arithmetic on a number computed from sizes and one the analysis does not know");
    return AxisValue{};  // fixed, its value not known
  }
  AxisValue out;
  const auto example = [&]() -> std::optional<i64> {
    if (!a.number || (b && !b->number)) return std::nullopt;
    return ka * *a.number + (b ? kb * *b->number : 0) + k0;
  }();
  out.number = example;
  if (!varies) return out;
  if (ka == 1 && !b && k0 == 0) return a;
  Step step;
  step.kind = Step::Kind::kNumber;
  step.arith = Step::Arith::kLinear;
  step.k0 = k0;
  i64 period = 1;
  for (const AxisValue* x : {&a, b}) {
    if (x && x->state == State::kNumber) period = std::lcm(period, x->period);
  }
  i64 growth = 0;
  for (auto [x, k] : {std::pair{&a, ka}, std::pair{b, kb}}) {
    if (!x) continue;
    if (x->state != State::kNumber) {
      step.k0 += k * *x->number;
      continue;
    }
    growth += k * x->growth * (period / x->period);
    if (step.a < 0) step.a = x->slot, step.ka = k;
    else step.b = x->slot, step.kb = k;
  }
  return varying_number(n, std::move(out), std::move(step), period, growth);
}

AxisValue AxisAnalysis::divide(const Node& n, const AxisValue& a, const AxisValue& c, Step::Arith arith) {
  if (c.state != State::kFixed || !c.number || *c.number <= 0) {
    if (a.state == State::kNumber || c.state == State::kNumber) {
      return unknown(n, "a division of a number computed from sizes by one that is not a positive constant");
    }
    return AxisValue{};
  }
  const i64 d = *c.number;
  auto apply = [&](i64 x) {
    switch (arith) {
      case Step::Arith::kFloorDiv: return floor_div(x, d);
      case Step::Arith::kTruncDiv: return x / d;
      default: return x - floor_div(x, d) * d;
    }
  };
  AxisValue out;
  if (a.number) out.number = apply(*a.number);
  if (a.state != State::kNumber) return out;
  Step step;
  step.kind = Step::Kind::kNumber;
  step.arith = arith;
  step.a = a.slot;
  step.c = d;
  step.a_sign = a.growth > 0 ? 1 : a.growth < 0 ? -1 : 0;
  auto [period, growth] = divided(a.period, a.growth, d);
  if (arith == Step::Arith::kRemainder) growth = 0;
  return varying_number(n, std::move(out), std::move(step), period, growth);
}

bool AxisAnalysis::visit_number(const Node& n, std::string_view op) {
  auto set_all = [&](const AxisValue& a) {
    for (ValueId out : n.outputs) set(out, a);
  };
  if (op == "size" || op == "sym_size") {
    const auto self = input_for_arg(n, "self", 0);
    if (!self) return false;
    const auto dim = number_arg(n, {"dim"}, 1);
    if (!dim) {
      AxisValue list;
      list.sizes_of = *self;
      if (at(*self).state == State::kSpatial) list.state = State::kSizes;
      set_all(list);
    } else if (dim->state != State::kFixed || !dim->number) {
      set_all(unknown(n, "a size along a computed dim"));
    } else {
      set_all(size_of(n, *self, *dim->number));
    }
    return true;
  }
  if (op == "__getitem__" || op == "select" || op == "ListUnpack") {
    if (n.inputs.empty() || !at(n.inputs.front()).sizes_of) return false;  // not a size list
    const ValueId tensor = *at(n.inputs.front()).sizes_of;
    if (op == "ListUnpack") {
      for (std::size_t i = 0; i < n.outputs.size(); ++i) set(n.outputs[i], size_of(n, tensor, static_cast<i64>(i)));
      return true;
    }
    const auto idx = number_arg(n, {"idx", "index"}, 1);
    if (!idx || idx->state != State::kFixed || !idx->number) set_all(unknown(n, "a size at a computed index"));
    else set_all(size_of(n, tensor, *idx->number));
    return true;
  }
  if (!one_of(op, {"NumToTensor", "Int", "ScalarImplicit", "Float", "add", "sub", "rsub", "mul", "floor_divide", "floordiv",
                   "div", "neg", "remainder"})) {
    return false;
  }
  for (ValueId v : n.inputs) {
    if (at(v).state == State::kSpatial) return false;  // a tensor op
  }
  const auto a = number_arg(n, {"self", "a", "input"}, 0);
  if (!a || !is_number(*a)) {
    if (a && a->state == State::kNumber) return false;  // cannot happen: a kNumber is a number
    return false;
  }
  if (one_of(op, {"NumToTensor", "Int", "ScalarImplicit", "Float"})) {
    // Every number read here is an integer: the conversions keep it.
    set_all(*a);
    return true;
  }
  if (op == "neg") {
    set_all(linear(n, *a, -1, nullptr, 0, 0));
    return true;
  }
  const auto b = number_arg(n, {"other", "b"}, 1);
  if (!b || !is_number(*b)) {
    if (a->state == State::kNumber || (b && b->state == State::kNumber)) {
      set_all(unknown(n, "arithmetic on a number computed from sizes and a value that is not a number"));
      return true;
    }
    return false;
  }
  const auto alpha = number_arg(n, {"alpha"}, std::numeric_limits<std::size_t>::max());
  if (alpha && (alpha->state != State::kFixed || !alpha->number)) {
    set_all(unknown(n, "an alpha the analysis does not know"));
    return true;
  }
  const i64 k = alpha ? *alpha->number : 1;
  if (op == "add") {
    set_all(linear(n, *a, 1, &*b, k, 0));
  } else if (op == "sub") {
    set_all(linear(n, *a, 1, &*b, -k, 0));
  } else if (op == "rsub") {
    set_all(linear(n, *b, 1, &*a, -k, 0));
  } else if (op == "mul") {
    if (a->state == State::kNumber && b->state == State::kNumber) {
      set_all(unknown(n, "a product of two numbers that vary with the input size"));
    } else if (b->state == State::kNumber) {
      set_all(linear(n, *b, *a->number, nullptr, 0, 0));
    } else {
      set_all(linear(n, *a, *b->number, nullptr, 0, 0));
    }
  } else if (op == "floor_divide" || op == "floordiv") {
    set_all(divide(n, *a, *b, Step::Arith::kFloorDiv));
  } else if (op == "remainder") {
    set_all(divide(n, *a, *b, Step::Arith::kRemainder));
  } else {  // div
    const std::optional<std::string> mode = n.attributes.get_string("rounding_mode");
    if (mode == "floor") {
      set_all(divide(n, *a, *b, Step::Arith::kFloorDiv));
    } else if (mode == "trunc") {
      set_all(divide(n, *a, *b, Step::Arith::kTruncDiv));
    } else if (a->state == State::kNumber || b->state == State::kNumber) {
      set_all(unknown(n, "a true division of a number computed from sizes: not an integer"));
    } else {
      AxisValue q;
      if (*b->number != 0 && *a->number % *b->number == 0) q.number = *a->number / *b->number;
      set_all(q);
    }
  }
  return true;
}

// A slice or narrow along the axis, by constant or computed bounds.
std::optional<AxisValue> AxisAnalysis::slice(const Node& n, const AxisValue& x) {
  i64 dim = 0;
  if (const auto d = number_arg(n, {"dim"}, 1)) {
    if (d->state != State::kFixed || !d->number) return unknown(n, "a slice along a computed dim");
    dim = *d->number;
  }
  if (dim < 0) dim += x.rank;
  if (dim != dim_) return x;
  const bool narrow = op_base(n.op).starts_with("narrow");
  AxisValue zero, to_end;
  zero.number = 0;
  to_end.number = kSliceToEnd;
  const AxisValue start = number_arg(n, {"start"}, 2).value_or(zero);
  const auto step_v = number_arg(n, {"step"}, 4);
  if (step_v && (step_v->state != State::kFixed || !step_v->number)) return unknown(n, "a slice by a computed step");
  AxisValue end = to_end;
  if (narrow) {
    const auto length = number_arg(n, {"length"}, 3);
    if (!length) return unknown(n, "a narrow without a length");
    end = linear(n, start, 1, &*length, 1, 0);
  } else if (const auto e = number_arg(n, {"end"}, 3)) {
    end = *e;
  }
  if (start.state == State::kUnknown) return start;
  if (end.state == State::kUnknown) return end;
  if (!is_number(start) || !is_number(end)) return unknown(n, "a crop by an amount the analysis does not know");

  Step step;
  step.kind = Step::Kind::kSlice;
  step.node = n.name;
  step.op = n.op;
  step.step = step_v ? *step_v->number : 1;
  if (step.step <= 0) return unknown(n, "a crop the analysis does not read");
  if (start.state == State::kFixed && end.state == State::kFixed) {
    step.start = *start.number;
    step.end = *end.number;
    if (step.start < 0) return unknown(n, "a crop from the end: where it starts depends on the input size");
    if (narrow && *end.number < *start.number) return unknown(n, "a crop the analysis does not read");
    // A fixed end stops the growth; a negative end keeps it.
    const bool fixed_end = step.end >= 0 && step.end < kSliceToEnd;
    auto [period, growth] = divided(x.period, x.growth, step.step);
    if (fixed_end) growth = 0;
    return derive(x, step, Rational::of(step.start), Rational::of(step.step), period, growth, n);
  }
  // Computed bounds. The voxel map takes the start at the example size; the
  // evaluation checks every accepted size starts there.
  if (!start.number) return unknown(n, "a crop from a computed start whose value at the example size is not known");
  step.expected_start = *start.number;
  if (step.expected_start < 0) return unknown(n, "a crop from the end: where it starts depends on the input size");
  // The length, end - start once both lie in [0, size], is quasi-affine:
  // its period and growth from the terms'.
  i64 end_period = 1, end_growth = 0;
  if (end.state == State::kNumber) {
    step.end_slot = end.slot;
    end_period = end.period, end_growth = end.growth;
  } else {
    step.end = *end.number;
    if (step.end < 0 || step.end >= kSliceToEnd) end_period = x.period, end_growth = x.growth;
  }
  i64 start_period = 1, start_growth = 0;
  if (start.state == State::kNumber) {
    step.start_slot = start.slot;
    start_period = start.period, start_growth = start.growth;
    step.start_moves = start.growth != 0;
  } else {
    step.start = *start.number;
  }
  const i64 period = std::lcm(end_period, start_period);
  if (period > kMaxPeriod) return unknown(n, "the sizes repeat with a period past " + std::to_string(kMaxPeriod));
  const i64 length_growth = end_growth * (period / end_period) - start_growth * (period / start_period);
  if (length_growth < 0) return unknown(n, "a crop that shrinks as the input grows");
  const auto [p, g] = divided(period, length_growth, step.step);
  return derive(x, step, Rational::of(step.expected_start), Rational::of(step.step), p, g, n);
}

void AxisAnalysis::visit(const Node& n) {
  const std::optional<CanonicalOp> c = canonical_op(n);
  const std::string op = op_name(n, c);
  // The spatial and unknown operands; fixed ones (weights, constants,
  // values computed without the input) do not move.
  std::vector<ValueId> spatial;
  std::vector<std::string> nonlocal;
  const AxisValue* lost = nullptr;
  for (ValueId v : n.inputs) {
    const AxisValue& a = at(v);
    if (a.state == State::kUnknown && !lost) lost = &a;
    if (a.state == State::kSpatial) spatial.push_back(v);
    for (const auto& name : a.nonlocal) {
      if (std::find(nonlocal.begin(), nonlocal.end(), name) == nonlocal.end()) nonlocal.push_back(name);
    }
  }
  auto set_all = [&](const AxisValue& a) {
    for (ValueId out : n.outputs) {
      AxisValue copy = a;
      copy.nonlocal = nonlocal;
      set(out, std::move(copy));
    }
  };
  if (lost) return set_all(*lost);
  if (visit_number(n, number_op_name(n, op))) return;
  // A number computed from sizes is read nowhere else but in a slice's bounds.
  for (ValueId v : n.inputs) {
    const State st = at(v).state;
    if ((st == State::kNumber || st == State::kSizes) && !(op == "slice" && !spatial.empty())) {
      return set_all(unknown(n, "the analysis does not read '" + (op.empty() ? n.op : op) +
                                    "' on a number computed from sizes"));
    }
  }
  if (spatial.empty()) {
    // Not on a spatial path: values of a fixed size along the axis.
    AxisValue fixed;
    return set_all(fixed);
  }
  const AxisValue x = at(spatial.front());
  // Only the first operand is read as the one the op moves (conv's input,
  // a pooling's self); a spatial value elsewhere is a join, below.
  const bool first_is_data = !n.inputs.empty() && n.inputs.front() == spatial.front();

  std::optional<AxisValue> out;
  if (is_pointwise(op) && first_is_data && spatial.size() == 1) {
    out = x;
  } else if (is_nonlocal_norm(op) && first_is_data && spatial.size() == 1) {
    out = x;
    nonlocal.push_back(n.name);
  } else if ((op == "softmax" || op == "log_softmax") && spatial.size() == 1) {
    out = x;
    const i64 dim = c ? c->attributes.get_int("dim").value_or(1) : 1;
    const i64 d = dim < 0 ? dim + x.rank : dim;
    if (d >= 2) nonlocal.push_back(n.name);
  } else if ((op == "conv" || op == "conv_transpose" || op == "max_pool" || op == "avg_pool") && first_is_data &&
             spatial.size() == 1) {
    out = window(n, x, op);
  } else if (op == "upsample" && first_is_data && spatial.size() == 1) {
    out = resize(n, x);
  } else if ((op == "adaptive_avg_pool" || op == "adaptive_max_pool") && first_is_data && spatial.size() == 1) {
    const auto size = arg_ints(n, "output_size");
    const std::size_t k = named_spatial_rank(n.op).value_or(size ? size->size() : 0);
    const i64 j = dim_ - (x.rank - static_cast<i64>(k));
    if (j < 0) {
      out = x;
    } else if (size && (size->size() == 1 || size->size() == k) && (*size)[size->size() == 1 ? 0 : j] == 1) {
      // A global pooling: one voxel that broadcasts, made of the whole axis.
      out = AxisValue{};
      nonlocal.push_back(n.name);
    } else {
      out = unknown(n, "an adaptive pooling to a fixed size");
    }
  } else if ((op == "mean" || op == "sum" || op == "amax" || op == "amin") && first_is_data && spatial.size() == 1) {
    const auto dims = arg_ints(n, "dim");
    bool reduces = !dims || dims->empty();
    for (i64 d : dims.value_or(std::vector<i64>{})) reduces = reduces || d == dim_ || d + x.rank == dim_;
    if (!arg_bool(n, "keepdim").value_or(false)) {
      out = unknown(n, "a reduction that drops dims");
    } else if (reduces) {
      out = AxisValue{};
      nonlocal.push_back(n.name);
    } else {
      out = x;
    }
  } else if (op == "pad" || op.starts_with("reflection_pad") || op.starts_with("replication_pad")) {
    if (!first_is_data || spatial.size() != 1) {
      out = unknown(n, "a padding by a computed amount");
    } else {
      const char* name = op == "pad" ? "pad" : "padding";
      const auto pad = inputs_for_arg(n, name).empty() ? arg_ints(n, name) : std::nullopt;
      if (!pad || pad->size() % 2) {
        out = unknown(n, "a padding by a computed amount");
      } else {
        // Pairs from the last dim backwards.
        const auto q = static_cast<std::size_t>(x.rank - 1 - dim_);
        Step step;
        step.kind = Step::Kind::kPad;
        if (2 * q + 1 < pad->size()) step.before = (*pad)[2 * q], step.after = (*pad)[2 * q + 1];
        out = step.before == 0 && step.after == 0
                  ? x
                  : derive(x, step, Rational::of(-step.before), Rational::of(1), x.period, x.growth, n, {},
                           step.before > 0 || step.after > 0);
      }
    }
  } else if (op == "slice" && first_is_data && spatial.size() == 1) {
    out = slice(n, x);
  } else if (op == "cat" && spatial.size() >= 1) {
    i64 dim = c ? c->attributes.get_int("dim").value_or(0) : 0;
    if (dim < 0) dim += x.rank;
    if (dim == dim_) {
      out = unknown(n, "a concatenation along the axis");
    } else {
      out = std::nullopt;  // a join, below
    }
  } else if (is_elementwise(op)) {
    out = std::nullopt;  // a join, below
  } else {
    out = unknown(n, "the analysis does not read '" + (op.empty() ? n.op : op) + "' on a spatial path");
  }

  const bool join = !out && (op == "cat" || is_elementwise(op));
  if (join) {
    // Fixed operands broadcast when they are 1 (or absent) along the axis.
    for (ValueId v : n.inputs) {
      if (at(v).state != State::kFixed) continue;
      const Value& value = g_.value(v);
      if (op == "cat") {
        out = unknown(n, "concatenates a tensor of a fixed size along the axis");
        break;
      }
      if (!value.shape) {
        if (value.is_constant()) continue;
        out = unknown(n, "an operand of unknown shape");
        break;
      }
      const i64 rank = static_cast<i64>(value.shape->size());
      const i64 d = dim_ - (x.rank - rank);
      if (d < 0) continue;
      const Dim& size = (*value.shape)[static_cast<std::size_t>(d)];
      if (!size.is_static() || size.size != 1) {
        out = unknown(n, "joins a tensor of a fixed size along the axis");
        break;
      }
    }
    if (!out) {
      Step step;
      step.kind = Step::Kind::kJoin;
      AxisValue joined = x;
      for (std::size_t i = 1; i < spatial.size(); ++i) {
        const AxisValue& y = at(spatial[i]);
        if (y.offset != x.offset || y.stride != x.stride) {
          out = unknown(n, "its operands' voxels do not line up (offsets " + x.offset.str() + " and " +
                               y.offset.str() + ", strides " + x.stride.str() + " and " + y.stride.str() + ")");
          break;
        }
        step.others.push_back(y.slot);
        if ((y.reach - joined.reach).num > 0) joined.reach = y.reach;
        joined.edge_effects = joined.edge_effects || y.edge_effects;
        // Rates growth/period compared exactly.
        const wide lhs = static_cast<wide>(x.growth) * y.period, rhs = static_cast<wide>(y.growth) * x.period;
        step.same_rate.push_back(lhs == rhs);
        step.rate_sign.push_back(lhs > rhs ? 1 : lhs < rhs ? -1 : 0);
        joined.period = std::lcm(joined.period, y.period);
      }
      if (!out) {
        if (step.others.empty()) {
          out = x;
        } else if (joined.period > kMaxPeriod) {
          out = unknown(n, "the sizes repeat with a period past " + std::to_string(kMaxPeriod));
        } else {
          // The join's size is its first operand's.
          joined.growth = x.growth * (joined.period / x.period);
          joined.slot = slots_++;
          step.in = x.slot;
          step.out = joined.slot;
          steps_.push_back(std::move(step));
          out = joined;
        }
      }
    }
  }
  AxisValue result = std::move(*out);
  if (result.state == State::kSpatial && n.outputs.size() > 1 && op == "batch_norm") {
    // native_batch_norm's statistics are per channel.
    for (std::size_t i = 1; i < n.outputs.size(); ++i) set(n.outputs[i], AxisValue{});
    result.nonlocal = nonlocal;
    set(n.outputs[0], std::move(result));
    return;
  }
  set_all(result);
}

void AxisAnalysis::propagate() {
  i64 max_index = 0;
  for (ValueId v : g_.values()) max_index = std::max<i64>(max_index, v.index + 1);
  values_.assign(static_cast<std::size_t>(max_index), AxisValue{});
  const auto& shape = *g_.value(input_).shape;
  const i64 rank = static_cast<i64>(shape.size());
  const Dim& size = shape[static_cast<std::size_t>(dim_)];
  const int slot = slots_++;
  for (ValueId in : g_.inputs()) {
    const Value& v = g_.value(in);
    // Inputs of the same rank and static size grow with the one read.
    bool moves = in == input_;
    if (!moves && v.shape && static_cast<i64>(v.shape->size()) == rank) {
      const Dim& d = (*v.shape)[static_cast<std::size_t>(dim_)];
      moves = d == size && d.is_static();
    }
    if (!moves) continue;
    AxisValue a;
    a.state = State::kSpatial;
    a.slot = slot;
    a.rank = rank;
    set(in, a);
  }
  for (NodeId id : g_.nodes()) visit(g_.node(id));
}

// The numeric part: every size of the axis for one input size n.
struct Evaluation {
  const std::vector<Step>& steps;
  std::vector<i64> sizes;
  explicit Evaluation(const AxisAnalysis& a) : steps(a.steps_), sizes(static_cast<std::size_t>(a.slots_), 0) {}

  struct Result {
    bool positive = true;  // every size at least 1: holds from some n on
    bool equal = true;     // every join's sizes equal
    bool settled = true;   // fixed slice ends reached, and joins of sizes growing apart apart for good
    int misplaced = -1;    // the first slice whose computed start is not the one the voxel map takes
  };
  Result at(i64 n) {
    Result r;
    sizes[0] = n;
    for (std::size_t index = 0; index < steps.size(); ++index) {
      const Step& s = steps[index];
      i64& out = sizes[static_cast<std::size_t>(s.out)];
      if (s.kind == Step::Kind::kNumber) {
        // A number may be below 1: not a size.
        const i64 a = s.a >= 0 ? sizes[static_cast<std::size_t>(s.a)] : 0;
        const i64 b = s.b >= 0 ? sizes[static_cast<std::size_t>(s.b)] : 0;
        switch (s.arith) {
          case Step::Arith::kLinear: out = s.ka * a + s.kb * b + s.k0; break;
          case Step::Arith::kFloorDiv: out = floor_div(a, s.c); break;
          case Step::Arith::kTruncDiv:
            out = a / s.c;
            // Periodic once a keeps the sign its growth gives it.
            if (s.a_sign * a < 0) r.settled = false;
            break;
          case Step::Arith::kRemainder: out = a - floor_div(a, s.c) * s.c; break;
        }
        continue;
      }
      const i64 in = sizes[static_cast<std::size_t>(s.in)];
      switch (s.kind) {
        case Step::Kind::kWindow: {
          const auto o = shape_rules::window_output(in, s.kernel, s.stride, s.padding, s.dilation, s.ceil_mode);
          if (!o) r.positive = false;
          out = o.value_or(0);
          break;
        }
        case Step::Kind::kTransposed:
          out = in >= 1 ? shape_rules::transposed_output(in, s.kernel, s.stride, s.padding, s.dilation, s.output_padding) : 0;
          break;
        case Step::Kind::kScale:
          out = floor_div(in * s.scale_num, s.scale_den);
          break;
        case Step::Kind::kSlice: {
          const i64 start = s.start_slot >= 0 ? sizes[static_cast<std::size_t>(s.start_slot)] : s.start;
          const i64 end = s.end_slot >= 0 ? sizes[static_cast<std::size_t>(s.end_slot)] : s.end;
          const auto taken = shape_rules::slice(in, start, end, s.step);
          out = taken ? taken->length : 0;
          if (s.end_slot < 0 && end >= 0 && end < kSliceToEnd && in < end) r.settled = false;
          if (s.start_slot >= 0 || s.end_slot >= 0) {
            // Computed bounds are quasi-affine once they lie in [0, size] in
            // order: no counting from the end, no clamping.
            const i64 e = s.end_slot >= 0 ? end : end >= kSliceToEnd ? in : end < 0 ? in + end : end;
            if (start < 0 || start > e || e > in) r.settled = false;
            if ((taken ? taken->start : start) != s.expected_start && r.misplaced < 0) r.misplaced = static_cast<int>(index);
          }
          break;
        }
        case Step::Kind::kPad:
          out = in + s.before + s.after;
          break;
        case Step::Kind::kNumber:
          break;
        case Step::Kind::kJoin:
          out = in;
          for (std::size_t i = 0; i < s.others.size(); ++i) {
            const i64 other = sizes[static_cast<std::size_t>(s.others[i])];
            if (other != in) r.equal = false;
            if (!s.same_rate[i]) {
              const int sign = in > other ? 1 : in < other ? -1 : 0;
              if (sign != s.rate_sign[i]) r.settled = false;
            }
          }
          break;
      }
      if (out < 1) r.positive = false;
    }
    return r;
  }
};

AxisGeometry AxisAnalysis::run(ValueId output) {
  AxisGeometry geo;
  geo.dim = dim_;
  const AxisValue& o = at(output);
  if (o.state == State::kUnknown) {
    geo.unknown_node = o.node;
    geo.unknown_op = o.op;
    geo.unknown_reason = o.reason;
    return geo;
  }
  if (o.state != State::kSpatial || o.rank != static_cast<i64>(g_.value(input_).shape->size())) {
    const Value& v = g_.value(output);
    geo.unknown_node = v.producer ? g_.node(*v.producer).name : v.name;
    geo.unknown_op = v.producer ? g_.node(*v.producer).op : "";
    geo.unknown_reason = "the output does not grow with the input along this axis";
    return geo;
  }
  geo.offset = o.offset;
  geo.stride = o.stride;
  geo.reach = o.reach;
  geo.edge_effects = o.edge_effects;
  geo.nonlocal = o.nonlocal;
  // The period of everything evaluated: each size's, so that joins and the output repeat.
  i64 period = 1;
  for (const AxisValue& a : values_) {
    if (a.state == State::kSpatial || a.state == State::kNumber) period = std::lcm(period, a.period);
    if (period > kMaxPeriod) {
      geo.unknown_node = g_.value(output).name;
      geo.unknown_reason = "the sizes repeat with a period past " + std::to_string(kMaxPeriod);
      return geo;
    }
  }
  // Growth of the output per `period`.
  geo.growth = o.growth * (period / o.period);
  geo.period = period;

  Evaluation eval(*this);
  std::vector<i64> sizes;
  i64 stable_since = -1;
  for (i64 n = 1;; ++n) {
    if (n > kMaxEvaluated) {
      geo.unknown_node = g_.value(output).name;
      geo.unknown_reason = "the sizes did not settle by input size " + std::to_string(kMaxEvaluated);
      return geo;
    }
    const auto r = eval.at(n);
    if (r.positive && r.equal && r.misplaced >= 0) {
      // An accepted size whose crop starts elsewhere than the voxel map says.
      const Step& s = steps_[static_cast<std::size_t>(r.misplaced)];
      const i64 start = s.start_slot >= 0 ? eval.sizes[static_cast<std::size_t>(s.start_slot)] : s.start;
      geo.unknown_node = s.node;
      geo.unknown_op = s.op;
      geo.unknown_reason = "the crop starts at " + std::to_string(start) + " for input size " + std::to_string(n) +
                           " but at " + std::to_string(s.expected_start) +
                           " at the example size: where the output lies depends on the size";
      return geo;
    }
    sizes.push_back(r.positive && r.equal ? eval.sizes[static_cast<std::size_t>(o.slot)] : 0);
    if (r.positive && r.settled) {
      if (stable_since < 0) stable_since = n;
    } else {
      stable_since = -1;
    }
    // A whole period seen with everything settled: the rest repeats.
    if (stable_since > 0 && n - stable_since + 1 >= period) break;
  }
  geo.periodic_from = stable_since;
  geo.output_sizes = std::move(sizes);
  // Finitely many sizes when none in the last period is accepted (beyond
  // it, the accepted sizes repeat).
  const i64 table = static_cast<i64>(geo.output_sizes.size());
  auto valid = [&](i64 n) { return geo.output_sizes[static_cast<std::size_t>(n - 1)] > 0; };
  i64 step = period, first = 0;
  for (i64 n = stable_since; n <= table; ++n) {
    if (!valid(n)) continue;
    if (first == 0) first = n;
    step = std::gcd(step, n - first);
  }
  geo.finite = first == 0;
  if (!geo.finite) {
    // Infinitely many accepted sizes: a computed start that moves by a period
    // starts elsewhere at some of them.
    for (const Step& s : steps_) {
      if (s.kind != Step::Kind::kSlice || !s.start_moves) continue;
      geo.unknown_node = s.node;
      geo.unknown_op = s.op;
      geo.unknown_reason = "the crop's start grows with the input: where the output lies depends on the size";
      return geo;
    }
  }
  if (!geo.finite) {
    // The lattice: the smallest accepted size, and the step the last period
    // shows, if every size in the table agrees with it.
    for (i64 n = 1; n <= table; ++n) {
      if (valid(n)) {
        first = n;
        break;
      }
    }
    bool fits = true;
    for (i64 n = 1; n <= table && fits; ++n) fits = valid(n) == (n >= first && (n - first) % step == 0);
    if (fits) geo.lattice = AxisGeometry::Lattice{first, step};
  }
  return geo;
}

std::vector<ValueId> spatial_inputs(const Graph& g) {
  std::vector<ValueId> out;
  for (ValueId in : g.inputs()) {
    const Value& v = g.value(in);
    if (v.shape && v.shape->size() >= 3 && v.shape->size() <= 5) out.push_back(in);
  }
  return out;
}

}  // namespace

std::vector<OutputGeometry> network_geometry(const Graph& graph) {
  std::vector<OutputGeometry> result;
  const std::vector<ValueId> inputs = spatial_inputs(graph);
  // One analysis per (input, axis), read for every output.
  std::vector<std::vector<AxisAnalysis>> analyses;
  for (ValueId in : inputs) {
    auto& per_axis = analyses.emplace_back();
    const auto rank = static_cast<i64>(graph.value(in).shape->size());
    for (i64 d = 2; d < rank; ++d) {
      per_axis.emplace_back(graph, in, d).propagate();
    }
  }
  // An input that grows with an earlier one on every axis counts once.
  auto grows_with = [&](std::size_t later, std::size_t earlier) {
    const auto& a = *graph.value(inputs[later]).shape;
    const auto& b = *graph.value(inputs[earlier]).shape;
    if (a.size() != b.size()) return false;
    for (std::size_t d = 2; d < a.size(); ++d) {
      if (!(a[d] == b[d] && a[d].is_static())) return false;
    }
    return true;
  };
  for (ValueId out : graph.outputs()) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      bool repeat = false;
      for (std::size_t e = 0; e < i; ++e) repeat = repeat || grows_with(i, e);
      if (repeat) continue;
      OutputGeometry geo;
      geo.output = graph.value(out).name;
      geo.input = graph.value(inputs[i]).name;
      for (auto& axis : analyses[i]) geo.axes.push_back(axis.run(out));
      result.push_back(std::move(geo));
    }
  }
  return result;
}

std::string geometry_json(const std::vector<OutputGeometry>& geometry, int indent) {
  detail::Json list = detail::Json::array();
  for (const auto& o : geometry) {
    detail::Json j = detail::Json::object();
    j["output"] = o.output;
    j["input"] = o.input;
    detail::Json axes = detail::Json::array();
    for (const auto& a : o.axes) {
      detail::Json aj = detail::Json::object();
      aj["dim"] = a.dim;
      if (!a.known()) {
        detail::Json u = detail::Json::object();
        u["node"] = a.unknown_node;
        u["op"] = a.unknown_op;
        u["reason"] = a.unknown_reason;
        aj["unknown"] = std::move(u);
        axes.push_back(std::move(aj));
        continue;
      }
      aj["valid"] = a.valid_sizes_str();
      if (a.lattice) aj["lattice"] = {{"first", a.lattice->first}, {"step", a.lattice->step}};
      if (const auto n = a.smallest()) {
        aj["smallest"] = *n;
        aj["output_size"] = *a.output_size(*n);
        aj["context"] = {a.context_before().str(), a.context_after(*n)->str()};
      }
      aj["offset"] = a.offset.str();
      aj["reach"] = a.reach.str();
      aj["edge_effects"] = a.edge_effects;
      aj["halo"] = a.halo();
      aj["stride"] = a.stride.str();
      if (!a.nonlocal.empty()) aj["nonlocal"] = a.nonlocal;
      axes.push_back(std::move(aj));
    }
    j["axes"] = std::move(axes);
    list.push_back(std::move(j));
  }
  return list.dump(indent);
}

}  // namespace tracegraph
