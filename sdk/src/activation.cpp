#include "tracegraph/activation.h"

#include <sstream>

#include "json_util.h"
#include "tracegraph/op_table.h"

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

Activation classify(const Graph& g, ValueId v, bool keeps_channels, int depth) {
  Activation a;
  if (depth > 64) return a;  // deeply nested concatenations: do not guess
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
    if (auto fused = n.attributes.get_string("fused_activation")) {
      c = CanonicalOp{*fused, {}};
      if (auto lo = n.attributes.get_float("fused_min")) c->attributes.set("min", *lo);
      if (auto hi = n.attributes.get_float("fused_max")) c->attributes.set("max", *hi);
    }
    if (!c) return a;
    if (passes_values(g, n, *c, keeps_channels)) {
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
    } else if (op == "conv" || op == "conv_transpose" || op == "linear" || op == "matmul" || op == "batch_norm" ||
               op == "add" || op == "sub") {
      a.kind = ActivationKind::kNone;
    } else if (op == "cat") {
      return from_cat(g, n, *c, v, keeps_channels, depth);
    }
    return a;
  }
}

}  // namespace

std::string Activation::str() const {
  if (kind != ActivationKind::kPerChannel) return params_str(kind, dim, min, max);
  std::string s = "per_channel(";
  for (std::size_t i = 0; i < channels.size(); ++i) {
    const auto& c = channels[i];
    s += (i ? ", [" : "[") + std::to_string(c.begin) + ", " + std::to_string(c.end) + "): " + params_str(c.kind, c.dim, c.min, c.max);
  }
  return s + ")";
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
    if (!a.node.empty()) j["node"] = a.node;
    if (!a.op.empty()) j["op"] = a.op;
    list.push_back(std::move(j));
  }
  return list.dump(indent);
}

}  // namespace tracegraph
