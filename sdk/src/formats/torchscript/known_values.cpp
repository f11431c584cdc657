#include "formats/torchscript/reader.h"

#include <cmath>
#include <string>
#include <variant>

#include "tracegraph/op_table.h"

namespace tracegraph::torchscript {

detail::Known Reader::known_of(ValueId v) const {
  detail::Known k;
  const Value& value = out_.graph.value(v);
  if (auto it = shapes_.find(v); it != shapes_.end()) k.shape = it->second;
  else if (value.is_constant()) k.shape = value.data.shape();
  std::vector<double> xs;
  if (auto it = numbers_.find(v); it != numbers_.end()) xs = it->second;
  else if (value.is_constant() && value.data.numel() <= 64) xs = constant_numbers(value.data);
  if (!xs.empty() || numbers_.count(v)) {
    std::vector<std::int64_t> ints;
    for (double x : xs) {
      if (x != std::floor(x)) return k;
      ints.push_back(static_cast<std::int64_t>(x));
    }
    k.ints = std::move(ints);
  }
  return k;
}

std::vector<double> Reader::constant_numbers(const Tensor& t) {
  std::vector<double> out;
  const auto n = static_cast<std::size_t>(t.numel());
  for (std::size_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
      case DType::kInt64: out.push_back(static_cast<double>(t.data_as<std::int64_t>()[i])); break;
      case DType::kInt32: out.push_back(t.data_as<std::int32_t>()[i]); break;
      case DType::kBool: out.push_back(t.data_as<bool>()[i] ? 1 : 0); break;
      case DType::kFloat64: out.push_back(t.data_as<double>()[i]); break;
      default: return {};
    }
  }
  return out;
}

std::optional<double> Reader::number_of(ValueId v) const {
  if (auto it = numbers_.find(v); it != numbers_.end()) return it->second.size() == 1 ? std::optional<double>(it->second[0]) : std::nullopt;
  const Value& value = out_.graph.value(v);
  if (value.is_constant() && value.data.numel() == 1) {
    const auto xs = constant_numbers(value.data);
    if (xs.size() == 1) return xs[0];
  }
  return std::nullopt;
}

void Reader::record(NodeId id) {
  const Node& n = graph().node(id);
  const detail::KnownOf known = [this](ValueId v) { return known_of(v); };
  for (std::size_t k = 0; k < n.outputs.size(); ++k) {
    if (auto sh = detail::infer_shape(n, k, known)) {
      shapes_[n.outputs[k]] = std::move(*sh);
    } else if (lost_shape_.empty() && !n.inputs.empty() && shapes_.count(n.inputs[0])) {
      lost_shape_ = n.name + " (" + n.op + ")";
    }
  }
  if (n.outputs.size() == 1) {
    if (auto xs = numbers_of(n)) numbers_[n.outputs[0]] = std::move(*xs);
  }
}

std::optional<std::vector<double>> Reader::numbers_of(const Node& n) const {
  std::vector<std::string> names;
  if (const auto* a = n.attributes.find(kArgNamesAttribute)) {
    if (const auto* v = std::get_if<std::vector<std::string>>(a)) names = *v;
  }
  const auto input = [&](std::string_view arg) -> std::optional<ValueId> {
    for (std::size_t i = 0; i < names.size() && i < n.inputs.size(); ++i) {
      if (names[i] == arg) return n.inputs[i];
    }
    return std::nullopt;
  };
  const auto number = [&](std::string_view arg) -> std::optional<double> {
    if (const AttributeValue* a = n.attributes.find(arg)) {
      if (const auto* i = std::get_if<std::int64_t>(a)) return static_cast<double>(*i);
      if (const auto* d = std::get_if<double>(a)) return *d;
      if (const auto* b = std::get_if<bool>(a)) return *b ? 1.0 : 0.0;
      return std::nullopt;
    }
    const auto v = input(arg);
    return v ? number_of(*v) : std::nullopt;
  };
  const std::string op = n.op.rfind("aten::", 0) == 0 ? n.op.substr(6) : n.op;
  if (op == "size" || op == "dim" || op == "numel" || op == "sym_size" || op == "sym_numel") {
    const auto self = input("self");
    const auto shape = self ? known_of(*self).shape : std::nullopt;
    if (!shape) return std::nullopt;
    if (op == "dim") return std::vector<double>{static_cast<double>(shape->size())};
    if (op == "numel" || op == "sym_numel") {
      double total = 1;
      for (auto d : *shape) total *= static_cast<double>(d);
      return std::vector<double>{total};
    }
    if (const auto dim = number("dim")) {
      auto d = static_cast<std::int64_t>(*dim);
      const auto rank = static_cast<std::int64_t>(shape->size());
      if (d < 0) d += rank;
      if (d < 0 || d >= rank) return std::nullopt;
      return std::vector<double>{static_cast<double>((*shape)[static_cast<std::size_t>(d)])};
    }
    return std::vector<double>(shape->begin(), shape->end());
  }
  if (op == "len") {
    const auto list = input("a");
    if (!list) return std::nullopt;
    auto it = numbers_.find(*list);
    return it == numbers_.end() ? std::nullopt : std::optional<std::vector<double>>(std::vector<double>{static_cast<double>(it->second.size())});
  }
  const auto one = [](double x) { return std::optional<std::vector<double>>(std::vector<double>{x}); };
  // A traced shape computation: sizes as 0-dim tensors (prim::NumToTensor),
  // their arithmetic on tensors (the crop offset (a - b) // 2 of a skip
  // connection), read back by aten::Int.
  if (n.op == "prim::NumToTensor") {
    const auto a = number("a");
    return a ? one(*a) : std::nullopt;
  }
  if (const auto self = input("self")) {
    const auto x = number_of(*self);
    const auto y = number("other");
    if (!x || !y || (known_of(*self).shape && !known_of(*self).shape->empty())) return std::nullopt;
    const double alpha = number("alpha").value_or(1);
    if (op == "add") return one(*x + alpha * *y);
    if (op == "sub") return one(*x - alpha * *y);
    if (op == "mul") return one(*x * *y);
    if (op == "div") return *y == 0 ? std::nullopt : one(*x / *y);
    if (op == "floor_divide") return *y == 0 ? std::nullopt : one(std::floor(*x / *y));
    return std::nullopt;
  }
  if (input("input")) return std::nullopt;  // a tensor op
  const auto a = number("a");
  if (!a) return std::nullopt;
  if (op == "neg") return one(-*a);
  if (op == "floor") return one(std::floor(*a));
  if (op == "Int") return one(std::trunc(*a));
  if (op == "ceil") return one(std::ceil(*a));
  if (op == "Float" || op == "Bool") return one(op == "Bool" ? (*a != 0) : *a);
  const auto b = number("b");
  if (!b) return std::nullopt;
  if (op == "add") return one(*a + *b);
  if (op == "sub") return one(*a - *b);
  if (op == "mul") return one(*a * *b);
  if (op == "div") return *b == 0 ? std::nullopt : one(*a / *b);
  if (op == "floordiv") return *b == 0 ? std::nullopt : one(std::floor(*a / *b));
  if (op == "remainder") return *b == 0 ? std::nullopt : one(*a - std::floor(*a / *b) * *b);
  if (op == "min") return one(std::min(*a, *b));
  if (op == "max") return one(std::max(*a, *b));
  if (op == "eq") return one(*a == *b);
  if (op == "ne") return one(*a != *b);
  if (op == "lt") return one(*a < *b);
  if (op == "le") return one(*a <= *b);
  if (op == "gt") return one(*a > *b);
  if (op == "ge") return one(*a >= *b);
  return std::nullopt;
}

}  // namespace tracegraph::torchscript
