#include "tracegraph/activation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <sstream>
#include <utility>

#include "support/json_util.h"
#include "tracegraph/op_table.h"
#include "tracegraph/transforms/transforms.h"

namespace tracegraph {

std::string_view activation_kind_name(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::kNone: return "none";
    case ActivationKind::kSigmoid: return "sigmoid";
    case ActivationKind::kTanh: return "tanh";
    case ActivationKind::kSoftmax: return "softmax";
    case ActivationKind::kLogSoftmax: return "log_softmax";
    case ActivationKind::kRelu: return "relu";
    case ActivationKind::kClip: return "clip";
    case ActivationKind::kPerChannel: return "per_channel";
    case ActivationKind::kUnknown: return "unknown";
  }
  return "unknown";
}

namespace {

std::string number(double d) {
  std::ostringstream os;
  os << d;
  return os.str();
}

std::string params_str(ActivationKind kind, std::optional<std::int64_t> dim, std::optional<double> min, std::optional<double> max) {
  std::string s(activation_kind_name(kind));
  if (kind == ActivationKind::kClip) {
    s += "(";
    if (min) s += "min=" + number(*min);
    if (min && max) s += ", ";
    if (max) s += "max=" + number(*max);
    s += ")";
  }
  if (dim) s += "(dim=" + std::to_string(*dim) + ")";
  return s;
}

bool same(const Activation& a, const Activation& b) {
  return a.kind == b.kind && a.dim == b.dim && a.min == b.min && a.max == b.max && a.kind != ActivationKind::kPerChannel;
}

// Ops that move or copy values without changing them; `keeps_channels` is
// false for those after which dim 1 no longer means the same channels.
bool passes_values(const Graph& g, const Node& n, const CanonicalOp& c, bool& keeps_channels) {
  const std::string& op = c.name;
  if (op == "contiguous" || op == "clone" || op == "detach") return true;
  if (op == "view" || op == "reshape" || op == "flatten" || op == "permute" || op == "transpose" || op == "squeeze" ||
      op == "unsqueeze" || op == "expand") {
    keeps_channels = false;
    return true;
  }
  if (op == "gather" || op == "split") {  // x[:, idx], index_select, split, unbind: values picked, none changed
    keeps_channels = false;
    return true;
  }
  if (op == "slice" || op == "select") {
    if (c.attributes.get_int("dim").value_or(0) == 1 || op == "select") keeps_channels = false;
    return true;
  }
  if (op == "dropout") return !c.attributes.get_bool("train").value_or(true);
  if (op == "cast") {
    // Only casts to a floating dtype keep the values' meaning.
    if (auto name = c.attributes.get_string("dtype")) return *name == "float32" || *name == "float64" || *name == "float16";
    if (const AttributeValue* code = n.attributes.find("dtype"); code && std::holds_alternative<std::int64_t>(*code)) {
      const std::int64_t t = std::get<std::int64_t>(*code);
      return t == 5 || t == 6 || t == 7 || t == 15;  // torch's half, float, double, bfloat16
    }
    const Value& out = g.value(n.outputs.at(0));
    return out.dtype && is_floating(*out.dtype);
  }
  return false;
}

Activation classify(const Graph& g, ValueId v, bool keeps_channels, int depth);

constexpr double kInf = std::numeric_limits<double>::infinity();

// The interval a value lies in; (-inf, inf) when nothing bounds it.
struct Interval {
  double lo = -kInf, hi = kInf;
};

// A bound times a bound, where 0 * inf is 0: a factor of exactly zero zeroes every finite value.
double times(double x, double y) { return x == 0 || y == 0 ? 0 : x * y; }

Interval operator*(Interval a, Interval b) {
  const double p[] = {times(a.lo, b.lo), times(a.lo, b.hi), times(a.hi, b.lo), times(a.hi, b.hi)};
  return {*std::min_element(std::begin(p), std::end(p)), *std::max_element(std::begin(p), std::end(p))};
}

Interval operator+(Interval a, Interval b) { return {a.lo + b.lo, a.hi + b.hi}; }

bool inside(Interval a, Interval b) { return a.lo >= b.lo && a.hi <= b.hi; }

// The interval an activation bounds its values to. Raw values and unknown
// ones have none; neither have the softmaxes, whose values also sum to one
// (or their exponentials do), which no map of the values keeps.
std::optional<Interval> bounds(ActivationKind kind, std::optional<double> min, std::optional<double> max) {
  switch (kind) {
    case ActivationKind::kSigmoid: return Interval{0, 1};
    case ActivationKind::kTanh: return Interval{-1, 1};
    case ActivationKind::kRelu: return Interval{0, kInf};
    case ActivationKind::kClip: return Interval{min.value_or(-kInf), max.value_or(kInf)};
    default: return std::nullopt;
  }
}

// What an op does to the range of its input's values. One row per op, by its
// canonical name (the op table's), or for the ATen ops the table does not
// read (norms, elementwise and reduced maxima) by their base name.
enum class Rule {
  kSets,   // sets a range: an activation, or raw values (a linear op, a norm)
  kKeeps,  // keeps its input's range: a resize, a pooling, a mean or maximum over dims
  kMaps,   // an affine map by constants (mul, div, add, sub, neg), or else arithmetic of tensors
  kJoins,  // combines values of several tensors: each part's range (cat, stack, maximum)
};
struct OpRule {
  std::string_view op;
  Rule rule;
  ActivationKind sets = ActivationKind::kUnknown;  // kSets: the range it sets
};
constexpr std::array kOpRules = {
    OpRule{"sigmoid", Rule::kSets, ActivationKind::kSigmoid}, OpRule{"tanh", Rule::kSets, ActivationKind::kTanh},
    OpRule{"relu", Rule::kSets, ActivationKind::kRelu}, OpRule{"clip", Rule::kSets, ActivationKind::kClip},
    OpRule{"softmax", Rule::kSets, ActivationKind::kSoftmax}, OpRule{"log_softmax", Rule::kSets, ActivationKind::kLogSoftmax},
    OpRule{"conv", Rule::kSets, ActivationKind::kNone}, OpRule{"conv_transpose", Rule::kSets, ActivationKind::kNone},
    OpRule{"linear", Rule::kSets, ActivationKind::kNone}, OpRule{"matmul", Rule::kSets, ActivationKind::kNone},
    // A norm is an affine map of normalised values: raw, however its input ended.
    OpRule{"batch_norm", Rule::kSets, ActivationKind::kNone}, OpRule{"layer_norm", Rule::kSets, ActivationKind::kNone},
    OpRule{"native_layer_norm", Rule::kSets, ActivationKind::kNone}, OpRule{"group_norm", Rule::kSets, ActivationKind::kNone},
    OpRule{"native_group_norm", Rule::kSets, ActivationKind::kNone}, OpRule{"instance_norm", Rule::kSets, ActivationKind::kNone},
    OpRule{"upsample", Rule::kKeeps}, OpRule{"max_pool", Rule::kKeeps}, OpRule{"adaptive_max_pool", Rule::kKeeps},
    OpRule{"avg_pool", Rule::kKeeps}, OpRule{"adaptive_avg_pool", Rule::kKeeps}, OpRule{"mean", Rule::kKeeps},
    OpRule{"amax", Rule::kKeeps}, OpRule{"amin", Rule::kKeeps}, OpRule{"max", Rule::kKeeps}, OpRule{"min", Rule::kKeeps},
    OpRule{"mul", Rule::kMaps}, OpRule{"div", Rule::kMaps}, OpRule{"add", Rule::kMaps}, OpRule{"sub", Rule::kMaps},
    OpRule{"rsub", Rule::kMaps}, OpRule{"neg", Rule::kMaps},
    OpRule{"cat", Rule::kJoins}, OpRule{"stack", Rule::kJoins}, OpRule{"slice_scatter", Rule::kJoins},
    OpRule{"maximum", Rule::kJoins}, OpRule{"minimum", Rule::kJoins},
};

const OpRule* rule_of(std::string_view name) {
  for (const OpRule& r : kOpRules) {
    if (r.op == name) return &r;
  }
  return nullptr;
}

// The node's op as the rules name it: the canonical name, else an ATen op's
// base name without its in-place '_' ("layer_norm"); "" for other ops.
std::string op_name(const Node& n, const std::optional<CanonicalOp>& c) {
  if (c) return c->name;
  const std::optional<OpName> parsed = parse_op_name(n.op);
  if (!parsed || parsed->qualified.rfind("aten::", 0) != 0) return "";
  return std::string(op_base(functional_op_name(parsed->qualified)));
}

const Node* producer(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  return value.producer ? &g.node(*value.producer) : nullptr;
}

// An op after the activation that computes new values from old ones: a
// resize, a pooling, a reduction, an affine map by constants. Which
// activations it keeps depends on how it combines the values.
struct Step {
  enum class How { kCopy, kConvex, kMax, kAffine } how = How::kCopy;
  bool spatial = true;          // acts on dims 2.. (resize, pool); false: reduces `dims`
  bool mixes_in_zero = false;   // an average that counts zero padding
  std::vector<std::int64_t> dims;  // a reduction's dims (normalized); empty: all
  bool keepdim = false;
  Interval scale{1, 1}, shift{0, 0};  // kAffine: x * scale + shift, each coefficient somewhere in its interval
  std::string op;               // the node's op without its namespace: "upsample_bilinear2d", "mul"
  std::string node, node_op;    // the node, and its op as the format names it
  ValueId input{};              // the values it reads
};

Step step_at(const Node& n, Step::How how) {
  Step s;
  s.how = how;
  s.op = std::string(op_base(n.op));
  s.node = n.name;
  s.node_op = n.op;
  if (!n.inputs.empty()) s.input = n.inputs[0];
  return s;
}

// A mean, or a maximum or minimum over dims (amax, max.dim: its values, not its indices).
std::optional<Step> reduction(const Graph& g, const Node& n, Step::How how) {
  Step r = step_at(n, how);
  r.spatial = false;
  r.keepdim = arg_bool(n, "keepdim").value_or(false);
  const auto& shape = g.value(n.inputs.at(0)).shape;
  if (auto d = arg_ints(n, "dim")) {
    std::vector<std::int64_t> dims = *d;
    for (auto& x : dims) {
      if (x < 0) {
        if (!shape) return std::nullopt;
        x += static_cast<std::int64_t>(shape->size());
      }
    }
    r.dims = std::move(dims);
  }
  return r;
}

// A step that keeps its input's range (Rule::kKeeps), read from output `out`.
std::optional<Step> keeping_step(const Graph& g, const Node& n, const std::string& op, ValueId out) {
  if (n.inputs.empty() || out != n.outputs.at(0)) return std::nullopt;  // max_pool's or max.dim's indices
  if (op == "upsample") {
    std::string mode = n.attributes.get_string("mode").value_or("");
    if (mode.empty()) mode = std::string(op_base(n.op));  // upsample_nearest2d, upsample_bilinear2d, ...
    if (mode.find("nearest") != std::string::npos) return step_at(n, Step::How::kCopy);
    if (mode.find("linear") != std::string::npos || mode.find("area") != std::string::npos) return step_at(n, Step::How::kConvex);
    return std::nullopt;  // bicubic overshoots
  }
  if (op == "max_pool" || op == "adaptive_max_pool") return step_at(n, Step::How::kMax);
  if (op == "avg_pool" || op == "adaptive_avg_pool") {
    if (arg_int(n, "divisor_override")) return std::nullopt;
    Step r = step_at(n, Step::How::kConvex);
    if (op == "avg_pool" && arg_bool(n, "count_include_pad").value_or(true)) {
      for (auto p : arg_ints(n, "padding").value_or(std::vector<std::int64_t>{})) r.mixes_in_zero = r.mixes_in_zero || p != 0;
    }
    return r;
  }
  if (op == "mean") return reduction(g, n, Step::How::kConvex);
  if ((op == "max" || op == "min") && input_for_arg(n, "other", 1)) return std::nullopt;  // elementwise: a join
  return reduction(g, n, Step::How::kMax);  // amax, amin, max, min
}

// The values of a constant, seen through ops that pick or move values, as
// the interval they span: (-inf, inf) where they cannot be read. nullopt:
// not a constant.
std::optional<Interval> constant_values(const Graph& g, ValueId v) {
  for (int step = 0; step < 16; ++step) {
    const Value& value = g.value(v);
    if (value.is_constant()) {
      const Tensor& t = value.data;
      Interval span{kInf, -kInf};
      auto read = [&](const auto* data) {
        for (std::int64_t i = 0; i < t.numel(); ++i) {
          const double x = static_cast<double>(data[i]);
          if (std::isnan(x)) return Interval{};
          span = {std::min(span.lo, x), std::max(span.hi, x)};
        }
        return t.numel() > 0 ? span : Interval{};
      };
      switch (t.dtype()) {
        case DType::kFloat32: return read(t.data_as<float>());
        case DType::kFloat64: return read(t.data_as<double>());
        case DType::kInt64: return read(t.data_as<std::int64_t>());
        case DType::kInt32: return read(t.data_as<std::int32_t>());
        default: return Interval{};
      }
    }
    const Node* n = producer(g, v);
    bool keeps_channels = true;
    const std::optional<CanonicalOp> c = n ? canonical_op(*n) : std::nullopt;
    if (!c || n->inputs.empty() || !passes_values(g, *n, *c, keeps_channels)) return std::nullopt;
    v = n->inputs[0];
  }
  return std::nullopt;
}

// A number argument; nullopt for anything else (a symbolic size written as text), never an error.
std::optional<double> number_arg(const Node& n, std::string_view name) {
  const AttributeValue* a = n.attributes.find(name);
  if (!a) return std::nullopt;
  if (const double* d = std::get_if<double>(a)) return *d;
  if (const std::int64_t* i = std::get_if<std::int64_t>(a)) return static_cast<double>(*i);
  return std::nullopt;
}

// The constant operand `arg` of a binary op: a constant input or a number argument.
std::optional<Interval> constant_operand(const Graph& g, const Node& n, std::string_view arg, std::size_t index) {
  if (auto v = input_for_arg(n, arg, index)) return constant_values(g, *v);
  if (auto x = number_arg(n, arg)) return Interval{*x, *x};
  return std::nullopt;
}

// An affine map of one tensor by constants (Rule::kMaps): x * k, k * x, x / k
// (k of one sign), x + k, k - x, -x. nullopt for arithmetic of two tensors,
// of two constants, for k / x and for a division that rounds.
std::optional<Step> affine_step(const Graph& g, const Node& n, const std::string& op) {
  const std::optional<ValueId> self = input_for_arg(n, "self", 0);
  if (!self) return std::nullopt;
  Step s = step_at(n, Step::How::kAffine);
  s.input = *self;
  if (op == "neg") {
    s.scale = {-1, -1};
    return s;
  }
  const std::optional<Interval> self_k = constant_values(g, *self);
  const std::optional<Interval> other_k = constant_operand(g, n, "other", 1);
  const std::optional<ValueId> other = input_for_arg(n, "other", 1);
  if (self_k.has_value() == other_k.has_value() || (self_k && !other)) return std::nullopt;
  if (self_k) s.input = *other;
  const Interval k = self_k ? *self_k : *other_k;
  const std::optional<double> alpha_arg = n.attributes.contains("alpha") ? number_arg(n, "alpha") : 1.0;
  if (!alpha_arg) return std::nullopt;  // a scale only the run knows
  const double alpha = *alpha_arg;
  const bool negated = (op == "sub" && self_k) || (op == "rsub" && other_k);  // k - x
  if (op == "mul") {
    s.scale = k;
  } else if (op == "div") {
    const AttributeValue* rounding = n.attributes.find("rounding_mode");
    if (self_k || (rounding && std::holds_alternative<std::string>(*rounding)) || (k.lo <= 0 && k.hi >= 0)) return std::nullopt;
    s.scale = {1 / k.hi, 1 / k.lo};
  } else if (negated) {
    s.scale = {-alpha, -alpha};  // alpha scales `other`: here x
    s.shift = k;
  } else if (op == "add" || op == "sub") {
    s.shift = k * Interval{op == "add" ? alpha : -alpha, op == "add" ? alpha : -alpha};
  } else {
    return std::nullopt;  // rsub(k, x) is x - alpha * k: rare, left unread
  }
  return s;
}

// Whether values with activation kind `kind` (and softmax dim `dim`) keep it
// through `r`; a kept softmax dim may move (a mean without keepdim).
bool keeps(const Step& r, ActivationKind kind, std::optional<std::int64_t>& dim, std::optional<double> min,
           std::optional<double> max) {
  if (r.how == Step::How::kAffine) {
    // An affine map keeps an activation while the image of its interval stays in it
    // (relu * 2, sigmoid * 0.5, 1 - sigmoid); raw values stay raw (the caller names the map).
    if (kind == ActivationKind::kNone || kind == ActivationKind::kUnknown) return true;
    const std::optional<Interval> b = bounds(kind, min, max);
    return b && inside(*b * r.scale + r.shift, *b);
  }
  switch (kind) {
    case ActivationKind::kNone:
    case ActivationKind::kUnknown:
      return true;  // raw values stay raw; unknown stays unknown
    case ActivationKind::kSigmoid:
    case ActivationKind::kTanh:
    case ActivationKind::kRelu:
      return true;  // each range holds 0 and is closed under averages and maxima
    case ActivationKind::kClip:
      return !r.mixes_in_zero || ((!min || *min <= 0) && (!max || *max >= 0));
    case ActivationKind::kLogSoftmax:
      // An average of logs is not a log of an average; copies keep it when they repeat whole distributions.
      return r.how == Step::How::kCopy && r.spatial && dim && *dim < 2;
    case ActivationKind::kSoftmax: {
      if (r.how == Step::How::kMax || r.mixes_in_zero || !dim) return false;
      if (r.spatial) return *dim < 2;  // combines positions, never entries of one distribution
      if (r.dims.empty()) return false;
      std::int64_t shift = 0;
      for (auto d : r.dims) {
        if (d == *dim) return false;
        if (d < *dim && !r.keepdim) ++shift;
      }
      *dim -= shift;
      return true;
    }
    case ActivationKind::kPerChannel:
      return false;  // handled by the caller, channel by channel
  }
  return false;
}

// The activation after step `r`: kept and `r` named after it, or unknown
// naming `r`'s node, where the range was lost. An affine map of raw values
// is raw values made there (the mean of two heads, (a + b) / 2).
Activation through(Activation a, const Step& r) {
  const bool known = a.kind != ActivationKind::kUnknown;
  if (r.how == Step::How::kAffine && a.kind == ActivationKind::kNone) {
    a.after.clear();
  } else if (a.kind == ActivationKind::kPerChannel) {
    if (!r.spatial) {
      a.kind = ActivationKind::kUnknown;  // a reduction over channels mixes the heads
      a.channels.clear();
    }
    for (auto& ch : a.channels) {
      if (!keeps(r, ch.kind, ch.dim, ch.min, ch.max)) ch.kind = ActivationKind::kUnknown;
    }
  } else if (!keeps(r, a.kind, a.dim, a.min, a.max)) {
    a.kind = ActivationKind::kUnknown;
    a.dim.reset();
    a.min.reset();
    a.max.reset();
  }
  if (a.kind == ActivationKind::kNone && r.how == Step::How::kAffine) {
    a.node = r.node;
    a.op = r.node_op;
  } else if (a.kind != ActivationKind::kUnknown) {
    a.after.push_back(r.op);
  } else if (known) {
    a.node = r.node;
    a.op = r.node_op;
    a.after.clear();
  }
  return a;
}

Activation from_cat(const Graph& g, const Node& n, const CanonicalOp& c, ValueId out, bool keeps_channels, int depth) {
  std::vector<ValueId> parts = inputs_for_arg(n, "tensors");
  if (parts.empty()) parts = n.inputs;
  std::vector<Activation> heads;
  for (ValueId p : parts) heads.push_back(classify(g, p, true, depth + 1));
  bool all_same = !heads.empty();
  for (const auto& h : heads) all_same = all_same && same(h, heads.front());
  if (all_same) return heads.front();

  Activation result;
  result.node = n.name;
  result.op = n.op;
  std::int64_t dim = c.attributes.get_int("dim").value_or(0);
  const auto& shape = g.value(out).shape;
  if (dim < 0 && shape) dim += static_cast<std::int64_t>(shape->size());
  if (!keeps_channels || dim != 1) return result;  // kUnknown: mixed heads along another dim
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& s = g.value(parts[i]).shape;
    if (!s || s->size() < 2 || !(*s)[1].is_static()) return result;  // channel counts unknown
    const std::int64_t width = (*s)[1].size;
    if (heads[i].kind == ActivationKind::kPerChannel) {
      for (auto ch : heads[i].channels) {
        ch.begin += offset;
        ch.end += offset;
        result.channels.push_back(ch);
      }
    } else {
      result.channels.push_back({offset, offset + width, heads[i].kind, heads[i].dim, heads[i].min, heads[i].max});
    }
    offset += width;
  }
  result.kind = ActivationKind::kPerChannel;
  return result;
}

// x[:, a:b] = f(...) written in place, read back as a scatter along the
// channel dim: channels [a, b) end in f, the others in what x ended in.
std::optional<Activation> from_channel_scatter(const Graph& g, const Node& n, ValueId out, bool keeps_channels, int depth) {
  if (op_base(n.op) != "slice_scatter" || n.inputs.size() != 2 || arg_int(n, "step").value_or(1) != 1) return std::nullopt;
  const auto& shape = g.value(out).shape;
  std::int64_t dim = arg_int(n, "dim").value_or(0);
  if (!shape || dim < -static_cast<std::int64_t>(shape->size()) || dim >= static_cast<std::int64_t>(shape->size())) return std::nullopt;
  if (dim < 0) dim += static_cast<std::int64_t>(shape->size());
  const Dim& extent = (*shape)[static_cast<std::size_t>(dim)];
  if (!extent.is_static()) return std::nullopt;
  const std::int64_t size = extent.size;
  std::int64_t begin = arg_int(n, "start").value_or(0);
  std::int64_t end = arg_int(n, "end").value_or(size);
  if (begin < 0) begin += size;
  if (end < 0) end += size;
  begin = std::clamp<std::int64_t>(begin, 0, size);
  end = std::clamp<std::int64_t>(end, begin, size);
  if (begin == 0 && end == size) return classify(g, n.inputs[1], keeps_channels, depth + 1);  // all of it is the source
  if (dim != 1 || !keeps_channels) return std::nullopt;
  const Activation base = classify(g, n.inputs[0], true, depth + 1);
  const Activation src = classify(g, n.inputs[1], true, depth + 1);
  if (base.kind == ActivationKind::kPerChannel || src.kind == ActivationKind::kPerChannel) return std::nullopt;
  if (same(base, src)) return base;
  Activation a;
  a.node = n.name;
  a.op = n.op;
  a.kind = ActivationKind::kPerChannel;
  auto range = [](std::int64_t b, std::int64_t e, const Activation& h) {
    return ChannelActivation{b, e, h.kind, h.dim, h.min, h.max};
  };
  if (begin > 0) a.channels.push_back(range(0, begin, base));
  a.channels.push_back(range(begin, end, src));
  if (end < size) a.channels.push_back(range(end, size, base));
  return a;
}

// A number: a constant of one element.
bool is_number(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  return value.is_constant() && value.data.numel() == 1;
}

// A sum with raw values in it is raw: a residual add (x + f(x)), a bias. A
// sum of bounded values is bounded some other way (sigmoid + sigmoid lies in
// (0, 2)): unknown, never the activation of either side (a lerp, which is a
// sum too, is read before this: from_lerp).
ActivationKind sum_kind(const Graph& g, const Node& n, bool keeps_channels, int depth) {
  const std::optional<ValueId> self = input_for_arg(n, "self", 0);
  const std::optional<ValueId> other = input_for_arg(n, "other", 1);
  std::vector<ValueId> tensors;
  for (const auto& v : {self, other}) {
    if (v && !is_number(g, *v)) tensors.push_back(*v);
  }
  if (tensors.empty()) return ActivationKind::kUnknown;
  for (ValueId v : tensors) {
    if (classify(g, v, keeps_channels, depth + 1).kind == ActivationKind::kNone) return ActivationKind::kNone;
  }
  return ActivationKind::kUnknown;
}

// Whether `v` is known to lie in [0, 1]: a clamp to bounds inside it, seen
// through ops that move values without changing them.
bool in_unit_interval(const Graph& g, ValueId v) {
  for (int step = 0; step < 16; ++step) {
    const Value& value = g.value(v);
    if (!value.producer) return false;
    const Node& n = g.node(*value.producer);
    const std::optional<CanonicalOp> c = canonical_op(n);
    if (!c || n.inputs.empty()) return false;
    bool keeps_channels = true;
    if (passes_values(g, n, *c, keeps_channels)) {
      v = n.inputs[0];
      continue;
    }
    const auto lo = c->attributes.get_float("min");
    const auto hi = c->attributes.get_float("max");
    return c->name == "clip" && lo && hi && *lo >= 0.0 && *hi <= 1.0;
  }
  return false;
}

// The lerp a decomposed linear resize computes (torch's _upsample_linear
// writes p + (q - p) * w, its weights w clamped to [0, 1]): each output a
// convex combination of p and q.
struct Lerp {
  ValueId p, q, weight;
};
std::optional<Lerp> lerp_of(const Graph& g, const Node& add) {
  if (arg_float(add, "alpha").value_or(1.0) != 1.0) return std::nullopt;
  const std::optional<ValueId> self = input_for_arg(add, "self", 0);
  const std::optional<ValueId> other = input_for_arg(add, "other", 1);
  if (!self || !other) return std::nullopt;
  auto producer_named = [&](ValueId v, std::string_view name) -> const Node* {
    const Value& value = g.value(v);
    if (!value.producer) return nullptr;
    const Node& n = g.node(*value.producer);
    const std::optional<CanonicalOp> c = canonical_op(n);
    return c && c->name == name ? &n : nullptr;
  };
  for (const auto& [p, scaled] : {std::pair{*self, *other}, std::pair{*other, *self}}) {
    const Node* mul = producer_named(scaled, "mul");
    if (!mul) continue;
    const std::optional<ValueId> a = input_for_arg(*mul, "self", 0);
    const std::optional<ValueId> b = input_for_arg(*mul, "other", 1);
    if (!a || !b) continue;
    for (const auto& [difference, weight] : {std::pair{*a, *b}, std::pair{*b, *a}}) {
      const Node* sub = producer_named(difference, "sub");
      if (!sub || arg_float(*sub, "alpha").value_or(1.0) != 1.0 || !in_unit_interval(g, weight)) continue;
      const std::optional<ValueId> q = input_for_arg(*sub, "self", 0);
      const std::optional<ValueId> subtracted = input_for_arg(*sub, "other", 1);
      if (q && subtracted && *subtracted == p) return Lerp{p, *q, weight};
    }
  }
  return std::nullopt;
}

// The step a lerp is: convex, named "lerp" (the lerps of one decomposed
// resize, one per spatial dim, are named once). A softmax survives only
// weights that are one per position (no extent in dims 0 and 1), as in a resize.
Step lerp_step(const Graph& g, const Node& n, const Lerp& lerp, ValueId out) {
  Step r = step_at(n, Step::How::kConvex);
  r.op = "lerp";
  const auto& out_shape = g.value(out).shape;
  const auto& w_shape = g.value(lerp.weight).shape;
  r.spatial = out_shape && w_shape && w_shape->size() <= out_shape->size();
  for (std::size_t i = 0; r.spatial && i < w_shape->size(); ++i) {
    const std::size_t at = out_shape->size() - w_shape->size() + i;  // broadcast aligns the last dims
    if (at < 2 && !((*w_shape)[i].is_static() && (*w_shape)[i].size == 1)) r.spatial = false;
  }
  return r;
}

// Values combined from two (`p`, `q`) that end in one activation, by step
// `r` that keeps it (a lerp, an elementwise maximum): that activation, then
// `r`, named once where it repeats (a maximum of maxima). Where one side
// went through more range-keeping ops than the other, the longer list is named.
Activation from_pair(const Graph& g, const Node& n, ValueId p_value, ValueId q_value, const Step& r, int depth) {
  Activation p = classify(g, p_value, false, depth + 1);
  Activation q = classify(g, q_value, false, depth + 1);
  if (p.after.size() < q.after.size()) std::swap(p, q);
  if (!same(p, q) || !std::equal(q.after.begin(), q.after.end(), p.after.begin())) {
    Activation unknown;
    unknown.node = n.name;
    unknown.op = n.op;
    return unknown;
  }
  const bool named = !p.after.empty() && p.after.back() == r.op;
  p = through(std::move(p), r);
  if (named && p.after.size() >= 2) p.after.pop_back();
  return p;
}

// A stack of parts that all end in one activation ends in it.
Activation from_stack(const Graph& g, const Node& n, int depth) {
  std::vector<ValueId> parts = inputs_for_arg(n, "tensors");
  if (parts.empty()) parts = n.inputs;
  Activation result;
  result.node = n.name;
  result.op = n.op;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    Activation a = classify(g, parts[i], false, depth + 1);
    if (i == 0) {
      if (a.kind == ActivationKind::kPerChannel) return result;
      result.kind = a.kind;
      result.dim = a.dim;
      result.min = a.min;
      result.max = a.max;
    } else if (!same(a, result)) {
      result.kind = ActivationKind::kUnknown;
      result.dim.reset();
      result.min.reset();
      result.max.reset();
      return result;
    }
  }
  if (result.kind == ActivationKind::kSoftmax || result.kind == ActivationKind::kLogSoftmax) {
    result.kind = ActivationKind::kUnknown;  // stacking moves the dims a softmax ran over
    result.dim.reset();
  }
  return result;
}

// Whether `v` is a statistic of spread over some dims: a mean (of squares),
// a variance or a standard deviation, with positive numbers added, under
// `root` ("sqrt" for a divisor, "rsqrt" for a factor) where it is a variance.
bool is_spread(const Graph& g, ValueId v, std::string_view root) {
  bool rooted = false;
  for (int step = 0; step < 16; ++step) {
    const Node* n = producer(g, v);
    if (!n || n->inputs.empty()) return false;
    const std::optional<CanonicalOp> c = canonical_op(*n);
    const std::string op = op_name(*n, c);
    bool keeps_channels = true;
    if (op == "mean" || op == "var") return rooted;
    if (op == "std") return !rooted && root == "sqrt";
    if (op == root && !rooted) {
      rooted = true;
      v = n->inputs[0];
    } else if (c && passes_values(g, *n, *c, keeps_channels)) {
      v = n->inputs[0];
    } else if (auto eps = op == "add" ? affine_step(g, *n, op) : std::nullopt; eps && eps->shift.lo > 0) {
      v = eps->input;
    } else {
      return false;
    }
  }
  return false;
}

// Whether `v` is centred: x - mean(x), however x ended.
bool is_centred(const Graph& g, ValueId v) {
  const Node* sub = producer(g, v);
  if (!sub || op_name(*sub, canonical_op(*sub)) != "sub" || arg_float(*sub, "alpha").value_or(1.0) != 1.0) return false;
  const std::optional<ValueId> x = input_for_arg(*sub, "self", 0);
  const std::optional<ValueId> m = input_for_arg(*sub, "other", 1);
  const Node* mean = m ? producer(g, *m) : nullptr;
  return x && mean && op_name(*mean, canonical_op(*mean)) == "mean" && mean->inputs.at(0) == *x;
}

// Whether div or mul node `n` standardises: centred or raw values divided by
// their spread (a layer norm or an RMS norm written by hand:
// (x - u) / sqrt(var + eps), x * rsqrt(mean(x * x) + eps)). Normalised
// values are raw values, as a norm op's are. A divisor that is no statistic
// over dims is not read so: x / (1 + |x|) is softsign, bounded.
bool standardises(const Graph& g, const Node& n, const std::string& op, bool keeps_channels, int depth) {
  const std::optional<ValueId> self = input_for_arg(n, "self", 0);
  const std::optional<ValueId> other = input_for_arg(n, "other", 1);
  if (!self || !other) return false;
  for (const auto& [x, spread] : {std::pair{*self, *other}, std::pair{*other, *self}}) {
    if (!is_spread(g, spread, op == "div" ? "sqrt" : "rsqrt")) {
      if (op == "div") return false;  // the divisor is `other`
      continue;
    }
    return is_centred(g, x) || classify(g, x, keeps_channels, depth + 1).kind == ActivationKind::kNone;
  }
  return false;
}

// The range a Rule::kSets op sets, read from its output `out` (a norm's
// statistics, outputs 1 and 2, are not raw values: unknown).
Activation set_by(const Graph& g, const Node& n, const CanonicalOp* c, ActivationKind kind, ValueId out, Activation a) {
  const bool reads_arguments = kind == ActivationKind::kClip || kind == ActivationKind::kSoftmax || kind == ActivationKind::kLogSoftmax;
  if (out != n.outputs.at(0) || (reads_arguments && !c)) return a;
  a.kind = kind;
  if (kind == ActivationKind::kSoftmax || kind == ActivationKind::kLogSoftmax) {
    a.dim = c->attributes.get_int("dim");
    const auto& shape = g.value(out).shape;
    if (a.dim && *a.dim < 0 && shape) *a.dim += static_cast<std::int64_t>(shape->size());
  } else if (kind == ActivationKind::kClip) {
    a.min = c->attributes.get_float("min");
    a.max = c->attributes.get_float("max");
    if (!a.min && !a.max) a.kind = ActivationKind::kUnknown;  // bounds computed at run time
  }
  return a;
}

// The activation of a node whose op is not a step to walk back over: one
// that sets a range, joins parts, or does arithmetic of tensors. `a` names
// the node, kind unknown.
Activation from_op(const Graph& g, const Node& n, const CanonicalOp* c, const std::string& op, ValueId out,
                   bool keeps_channels, int depth, Activation a) {
  const OpRule* rule = rule_of(op);
  if (!rule) return a;
  const std::optional<ValueId> self = input_for_arg(n, "self", 0);
  const std::optional<ValueId> other = input_for_arg(n, "other", 1);
  switch (rule->rule) {
    case Rule::kSets:
      return set_by(g, n, c, rule->sets, out, std::move(a));
    case Rule::kJoins:
      if (op == "cat") return from_cat(g, n, *c, out, keeps_channels, depth);
      if (op == "stack") return from_stack(g, n, depth);
      if (op == "slice_scatter") return from_channel_scatter(g, n, out, keeps_channels, depth).value_or(std::move(a));
      [[fallthrough]];
    case Rule::kKeeps:  // what keeping_step() did not take: an elementwise maximum or minimum
      if ((op == "maximum" || op == "minimum" || op == "max" || op == "min") && self && other && out == n.outputs.at(0)) {
        return from_pair(g, n, *self, *other, step_at(n, Step::How::kMax), depth);
      }
      return a;
    case Rule::kMaps:
      if (op == "add") {
        if (auto lerp = lerp_of(g, n)) return from_pair(g, n, lerp->p, lerp->q, lerp_step(g, n, *lerp, out), depth);
      }
      if ((op == "mul" || op == "div") && standardises(g, n, op, keeps_channels, depth)) a.kind = ActivationKind::kNone;
      if (op == "add" || op == "sub") a.kind = sum_kind(g, n, keeps_channels, depth);
      return a;
  }
  return a;
}

// Whether dim 1 still holds the same channels after step `s` from `out`.
bool keeps_channel_dim(const Graph& g, const Step& s, ValueId out) {
  if (s.how == Step::How::kAffine) return g.value(out).shape == g.value(s.input).shape;  // no broadcast into x
  if (s.spatial) return true;
  // A reduction keeps them only when it keeps every dim and skips dim 1.
  return s.keepdim && !s.dims.empty() && std::find(s.dims.begin(), s.dims.end(), 1) == s.dims.end();
}

// The activation of what produced `v`, before the steps after it (in
// `steps`, the last one first).
Activation classify_producer(const Graph& g, ValueId& v, bool& keeps_channels, int depth, std::vector<Step>& steps) {
  Activation a;
  for (;;) {
    const Value& value = g.value(v);
    if (!value.producer) {
      // A graph input returned as it is: nothing applied. A constant: nothing to read.
      a.kind = value.is_constant() ? ActivationKind::kUnknown : ActivationKind::kNone;
      return a;
    }
    const Node& n = g.node(*value.producer);
    a.node = n.name;
    a.op = n.op;
    // A node carrying a fused activation (activation_fusion) ends in that activation.
    std::optional<CanonicalOp> c = canonical_op(n);
    if (auto fused = n.attributes.get_string(kFusedActivation)) {
      c = CanonicalOp{*fused, {}};
      if (auto lo = n.attributes.get_float(kFusedMin)) c->attributes.set("min", *lo);
      if (auto hi = n.attributes.get_float(kFusedMax)) c->attributes.set("max", *hi);
    }
    if (c && passes_values(g, n, *c, keeps_channels)) {
      v = n.inputs.at(0);
      continue;
    }
    const std::string op = op_name(n, c);
    const OpRule* rule = rule_of(op);
    std::optional<Step> step;
    if (rule && rule->rule == Rule::kKeeps) step = keeping_step(g, n, op, v);
    if (rule && rule->rule == Rule::kMaps) step = affine_step(g, n, op);
    if (!step) return from_op(g, n, c ? &*c : nullptr, op, v, keeps_channels, depth, std::move(a));
    keeps_channels = keeps_channels && keeps_channel_dim(g, *step, v);
    v = step->input;
    steps.push_back(std::move(*step));
  }
}

Activation classify(const Graph& g, ValueId v, bool keeps_channels, int depth) {
  if (depth > 64) return {};  // deeply nested concatenations: do not guess
  std::vector<Step> steps;  // found walking back: the last one first
  Activation a = classify_producer(g, v, keeps_channels, depth, steps);
  for (auto s = steps.rbegin(); s != steps.rend(); ++s) a = through(std::move(a), *s);
  return a;
}

}  // namespace

std::string Activation::str() const {
  std::string s;
  if (kind != ActivationKind::kPerChannel) {
    s = params_str(kind, dim, min, max);
  } else {
    s = "per_channel(";
    for (std::size_t i = 0; i < channels.size(); ++i) {
      const auto& c = channels[i];
      s += (i ? ", [" : "[") + std::to_string(c.begin) + ", " + std::to_string(c.end) + "): " + params_str(c.kind, c.dim, c.min, c.max);
    }
    s += ")";
  }
  for (const auto& op : after) s += ", then " + op;
  return s;
}

std::vector<Activation> output_activation(const Graph& graph) {
  std::vector<Activation> out;
  for (ValueId v : graph.outputs()) out.push_back(classify(graph, v, true, 0));
  return out;
}

std::string output_activation_json(const std::vector<Activation>& activations, int indent) {
  auto params = [](detail::Json& j, ActivationKind kind, auto dim, auto min, auto max) {
    j["kind"] = std::string(activation_kind_name(kind));
    if (dim) j["dim"] = *dim;
    if (min) j["min"] = *min;
    if (max) j["max"] = *max;
  };
  detail::Json list = detail::Json::array();
  for (const auto& a : activations) {
    detail::Json j = detail::Json::object();
    params(j, a.kind, a.dim, a.min, a.max);
    if (a.kind == ActivationKind::kPerChannel) {
      detail::Json chans = detail::Json::array();
      for (const auto& c : a.channels) {
        detail::Json cj = detail::Json::object();
        cj["begin"] = c.begin;
        cj["end"] = c.end;
        params(cj, c.kind, c.dim, c.min, c.max);
        chans.push_back(std::move(cj));
      }
      j["channels"] = std::move(chans);
    }
    if (!a.after.empty()) j["after"] = a.after;
    if (!a.node.empty()) j["node"] = a.node;
    if (!a.op.empty()) j["op"] = a.op;
    list.push_back(std::move(j));
  }
  return list.dump(indent);
}

}  // namespace tracegraph
