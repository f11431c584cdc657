// The planning context's argument reader: a node's attributes and inputs
// read against its schema (numbers, lists, tensors, constant weights, the fused activation).
#include "plan/context.h"

namespace tracegraph::xnnpack {

std::optional<double> Context::constant_number(const Slot& s) {
  if (s.kind == Kind::kTensor && s.constant && checked_numel(s.shape) == 1) return s.constant[0];
  return std::nullopt;
}

std::optional<i64> Context::int_arg(const Node& n, std::string_view name) const {
  if (n.attributes.contains(name)) return tracegraph::arg_int(n, name);
  if (auto v = input_for_arg(n, name, std::numeric_limits<std::size_t>::max())) {
    const Slot& s = slot_of(*v);
    if (s.kind == Kind::kInt) return s.i;
    if (auto c = constant_number(s)) return static_cast<i64>(*c);
    fail(ErrorCode::kUnsupported, where(n) + ": argument '" + std::string(name) + "' is not an integer known before the run");
  }
  return std::nullopt;
}

std::optional<double> Context::float_arg(const Node& n, std::string_view name) const {
  if (n.attributes.contains(name)) return tracegraph::arg_float(n, name);
  if (auto v = input_for_arg(n, name, std::numeric_limits<std::size_t>::max())) {
    const Slot& s = slot_of(*v);
    if (s.kind == Kind::kInt) return static_cast<double>(s.i);
    if (s.kind == Kind::kFloat) return s.f;
    if (auto c = constant_number(s)) return *c;
    fail(ErrorCode::kUnsupported, where(n) + ": argument '" + std::string(name) + "' is not a number known before the run");
  }
  return std::nullopt;
}

std::optional<std::vector<i64>> Context::ints_arg(const Node& n, std::string_view name) const {
  if (n.attributes.contains(name)) return tracegraph::arg_ints(n, name);  // int[N] may be written as one int
  if (auto v = input_for_arg(n, name, std::numeric_limits<std::size_t>::max())) {
    const Slot& s = slot_of(*v);
    if (s.kind == Kind::kInts) return s.ints;
    if (s.kind == Kind::kInt) return std::vector<i64>{s.i};
    fail(ErrorCode::kUnsupported, where(n) + ": argument '" + std::string(name) + "' is not a list of integers known before the run");
  }
  return std::nullopt;
}

std::optional<std::vector<double>> Context::floats_arg(const Node& n, std::string_view name) const {
  if (const AttributeValue* a = n.attributes.find(name)) {
    if (auto d = std::get_if<std::vector<double>>(a)) return *d;
    if (auto d = std::get_if<std::vector<std::int64_t>>(a)) return std::vector<double>(d->begin(), d->end());
    if (auto d = std::get_if<double>(a)) return std::vector<double>{*d};
  }
  return std::nullopt;
}

std::vector<i64> Context::spatial_arg(const Node& n, std::string_view name, std::size_t rank, i64 fallback) const {
  auto v = ints_arg(n, name).value_or(std::vector<i64>{});
  if (v.empty()) v.assign(rank, fallback);
  if (v.size() == 1) v.assign(rank, v[0]);
  if (v.size() != rank)
    fail(ErrorCode::kSchema, where(n) + ": '" + std::string(name) + "' has " + std::to_string(v.size()) + " entries for " + std::to_string(rank) + " spatial dims");
  return v;
}

int Context::tensor_arg(const Node& n, std::string_view name, std::size_t position) {
  auto v = input_for_arg(n, name, position);
  if (!v) fail(ErrorCode::kSchema, where(n) + ": missing tensor argument '" + std::string(name) + "'");
  return tensor_slot(n, *v);
}

int Context::tensor_slot(const Node& n, ValueId v) {
  const int s = slot_index(v);
  if (slots_[static_cast<std::size_t>(s)].kind == Kind::kTensor) return s;
  // An integer or bool constant the op reads as a tensor (int64 operands,
  // which planning knows as numbers or a list): held as floats, exact to 2^24.
  if (graph_.value(v).is_constant())
    if (auto h = held_as_floats(v)) return *h;
  fail(ErrorCode::kUnsupported, where(n) + ": input '" + graph_.value(v).name + "' is not a float32 tensor");
}

const Tensor& Context::constant_arg(const Node& n, std::string_view name, std::size_t position, bool required) {
  static const Tensor none;
  auto v = input_for_arg(n, name, position);
  if (!v) {
    if (required) fail(ErrorCode::kSchema, where(n) + ": missing argument '" + std::string(name) + "'");
    return none;
  }
  const Value& value = graph_.value(*v);
  if (!value.is_constant())
    fail(ErrorCode::kUnsupported, where(n) + ": '" + std::string(name) + "' must be a constant (weights are packed once, at finalize)");
  if (value.data.dtype() != DType::kFloat32)
    fail(ErrorCode::kUnsupported, where(n) + ": '" + std::string(name) + "' is " + std::string(dtype_name(value.data.dtype())) + ", expected float32");
  return value.data;
}

Fused Context::fused_of(const Node& n) const {
  Fused f;
  const auto kind = n.attributes.get_string(kFusedActivation);
  if (!kind) return f;
  if (*kind == "relu") f.min = 0;
  else if (*kind == "clip") {
    f.min = static_cast<float>(n.attributes.get_float(kFusedMin).value_or(-kInf));
    f.max = static_cast<float>(n.attributes.get_float(kFusedMax).value_or(kInf));
  } else if (*kind == "sigmoid") f.post = xnn_unary_sigmoid;
  else if (*kind == "tanh") f.post = xnn_unary_tanh;
  else if (*kind == "hardswish") f.post = xnn_unary_hardswish;
  else if (*kind == "silu") f.portable_post = portable::Unary::kSilu;
  else fail(ErrorCode::kUnsupported, where(n) + ": fused activation '" + *kind + "' is not one this backend runs");
  return f;
}

const float* Context::weight_or_null(const Node& n, std::string_view name, std::size_t position, i64 expected) {
  const Tensor& t = constant_arg(n, name, position, false);
  if (!t.defined()) return nullptr;
  if (t.numel() != expected)
    fail(ErrorCode::kShapeMismatch, where(n) + ": '" + std::string(name) + "' has " + std::to_string(t.numel()) + " elements, expected " + std::to_string(expected));
  return t.data_as<float>();
}

}  // namespace tracegraph::xnnpack
