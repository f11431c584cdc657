#include "tracegraph/activation.h"

#include <algorithm>
#include <sstream>

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

// An op after the activation that computes new values from old ones without
// leaving their range: a resize, a pooling, a mean. Which activations it keeps
// depends on how it combines the values.
struct Resampling {
  enum class How { kCopy, kConvex, kMax } how = How::kCopy;
  bool spatial = true;          // acts on dims 2.. (resize, pool); false: mean over `dims`
  bool mixes_in_zero = false;   // an average that counts zero padding
  std::vector<std::int64_t> dims;  // mean's dims (normalized); empty: all
  bool keepdim = false;
  std::string op;               // the node's op without its namespace: "upsample_bilinear2d"
};

std::optional<Resampling> resampling(const Graph& g, const Node& n, const CanonicalOp& c) {
  Resampling r;
  r.op = std::string(op_base(n.op));
  const std::string& op = c.name;
  if (op == "upsample") {
    std::string mode = c.attributes.get_string("mode").value_or("");
    if (mode.empty()) mode = r.op;  // upsample_nearest2d, upsample_bilinear2d, ...
    if (mode.find("nearest") != std::string::npos) r.how = Resampling::How::kCopy;
    else if (mode.find("linear") != std::string::npos || mode.find("area") != std::string::npos) r.how = Resampling::How::kConvex;
    else return std::nullopt;  // bicubic overshoots
    return r;
  }
  if (op == "max_pool" || op == "adaptive_max_pool") {
    r.how = Resampling::How::kMax;
    return r;
  }
  if (op == "avg_pool" || op == "adaptive_avg_pool") {
    if (arg_int(n, "divisor_override")) return std::nullopt;
    r.how = Resampling::How::kConvex;
    if (op == "avg_pool" && arg_bool(n, "count_include_pad").value_or(true)) {
      for (auto p : arg_ints(n, "padding").value_or(std::vector<std::int64_t>{})) r.mixes_in_zero = r.mixes_in_zero || p != 0;
    }
    return r;
  }
  if (op == "mean") {
    r.how = Resampling::How::kConvex;
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
  return std::nullopt;
}

// Whether values with activation kind `kind` (and softmax dim `dim`) keep it
// through `r`; a kept softmax dim may move (a mean without keepdim).
bool keeps(const Resampling& r, ActivationKind kind, std::optional<std::int64_t>& dim, std::optional<double> min,
           std::optional<double> max) {
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
      return r.how == Resampling::How::kCopy && r.spatial && dim && *dim < 2;
    case ActivationKind::kSoftmax: {
      if (r.how == Resampling::How::kMax || r.mixes_in_zero || !dim) return false;
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

Activation through(Activation a, const Resampling& r) {
  if (a.kind == ActivationKind::kPerChannel) {
    if (!r.spatial) {
      a.kind = ActivationKind::kUnknown;  // a mean over channels mixes the heads
      a.channels.clear();
      return a;
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
  if (a.kind != ActivationKind::kUnknown) a.after.push_back(r.op);
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

// The tensor a mul or div scales by a number (x * 2, 2 * x, x / 2, and not
// 2 / x): nullopt when both operands are tensors.
std::optional<ValueId> scaled_input(const Graph& g, const Node& n, bool divides) {
  const std::optional<ValueId> self = input_for_arg(n, "self", 0);
  const std::optional<ValueId> other = input_for_arg(n, "other", 1);
  if (!self) return std::nullopt;
  const bool other_is_number = other ? is_number(g, *other) : (arg_float(n, "other").has_value());
  if (other_is_number && !is_number(g, *self)) return self;
  if (!divides && other && is_number(g, *self) && !is_number(g, *other)) return other;
  return std::nullopt;
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

// A lerp of two values that end in one activation keeps it as a linear
// resize does (named "lerp"; the lerps of one decomposed resize, one per
// spatial dim, are named once). A softmax survives only weights that are one
// per position (no extent in dims 0 and 1), as in a resize.
Activation from_lerp(const Graph& g, const Node& n, const Lerp& lerp, ValueId out, int depth) {
  Activation p = classify(g, lerp.p, false, depth + 1);
  const Activation q = classify(g, lerp.q, false, depth + 1);
  if (!same(p, q) || p.after != q.after) {
    Activation unknown;
    unknown.node = n.name;
    unknown.op = n.op;
    return unknown;
  }
  Resampling r;
  r.how = Resampling::How::kConvex;
  r.op = "lerp";
  const auto& out_shape = g.value(out).shape;
  const auto& w_shape = g.value(lerp.weight).shape;
  r.spatial = out_shape && w_shape && w_shape->size() <= out_shape->size();
  for (std::size_t i = 0; r.spatial && i < w_shape->size(); ++i) {
    const std::size_t at = out_shape->size() - w_shape->size() + i;  // broadcast aligns the last dims
    if (at < 2 && !((*w_shape)[i].is_static() && (*w_shape)[i].size == 1)) r.spatial = false;
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

// The activation of what produced `v`, before any resampling after it.
Activation classify_producer(const Graph& g, ValueId& v, bool& keeps_channels, int depth, std::vector<Resampling>& resampled) {
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
    if (!c) {
      if (auto scattered = from_channel_scatter(g, n, v, keeps_channels, depth)) return *scattered;
      return a;
    }
    if (passes_values(g, n, *c, keeps_channels)) {
      v = n.inputs.at(0);
      continue;
    }
    if (auto r = resampling(g, n, *c)) {
      if (!r->spatial) {
        // Dim 1 still holds the same channels only when the mean keeps every dim and skips dim 1.
        const bool skips_channels = !r->dims.empty() && std::find(r->dims.begin(), r->dims.end(), 1) == r->dims.end();
        keeps_channels = keeps_channels && r->keepdim && skips_channels;
      }
      resampled.push_back(std::move(*r));
      v = n.inputs.at(0);
      continue;
    }
    const std::string& op = c->name;
    if (op == "sigmoid") a.kind = ActivationKind::kSigmoid;
    else if (op == "tanh") a.kind = ActivationKind::kTanh;
    else if (op == "relu") a.kind = ActivationKind::kRelu;
    else if (op == "softmax" || op == "log_softmax") {
      a.kind = op == "softmax" ? ActivationKind::kSoftmax : ActivationKind::kLogSoftmax;
      a.dim = c->attributes.get_int("dim");
      const auto& shape = g.value(v).shape;
      if (a.dim && *a.dim < 0 && shape) *a.dim += static_cast<std::int64_t>(shape->size());
    } else if (op == "clip") {
      a.kind = ActivationKind::kClip;
      a.min = c->attributes.get_float("min");
      a.max = c->attributes.get_float("max");
      if (!a.min && !a.max) a.kind = ActivationKind::kUnknown;  // bounds computed at run time
    } else if (op == "conv" || op == "conv_transpose" || op == "linear" || op == "matmul" || op == "batch_norm") {
      a.kind = ActivationKind::kNone;
    } else if (op == "add" || op == "sub") {
      if (op == "add") {
        if (auto lerp = lerp_of(g, n)) return from_lerp(g, n, *lerp, v, depth);
      }
      a.kind = sum_kind(g, n, keeps_channels, depth);
    } else if (op == "stack") {
      return from_stack(g, n, depth);
    } else if (op == "cat") {
      return from_cat(g, n, *c, v, keeps_channels, depth);
    } else if (op == "mul" || op == "div") {
      // Raw values scaled by a number stay raw: the mean of two heads,
      // (a + b) / 2, applies no activation. A scaled sigmoid is no longer one.
      if (auto scaled = scaled_input(g, n, op == "div")) {
        a.kind = classify(g, *scaled, keeps_channels, depth + 1).kind == ActivationKind::kNone ? ActivationKind::kNone
                                                                                             : ActivationKind::kUnknown;
      }
    }
    return a;
  }
}

Activation classify(const Graph& g, ValueId v, bool keeps_channels, int depth) {
  if (depth > 64) return {};  // deeply nested concatenations: do not guess
  std::vector<Resampling> resampled;  // found walking back: the last one first
  Activation a = classify_producer(g, v, keeps_channels, depth, resampled);
  for (auto r = resampled.rbegin(); r != resampled.rend(); ++r) a = through(std::move(a), *r);
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
