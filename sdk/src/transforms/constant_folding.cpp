#include <cmath>

#include "tracegraph/shape_rules.h"
#include "tracegraph/transforms/transforms.h"
#include "transforms/util.h"

namespace tracegraph {
namespace {

using transforms::canonical_name;

Tensor int_scalar(std::int64_t v) { return Tensor::from_vector<std::int64_t>({v}, {}); }

std::optional<std::int64_t> int_operand(const Graph& g, const Node& n, std::initializer_list<const char*> names, std::size_t fallback) {
  for (const char* name : names) {
    if (auto v = n.attributes.find(name); v && std::holds_alternative<std::int64_t>(*v)) return std::get<std::int64_t>(*v);
    if (auto in = input_for_arg(n, name, fallback)) {
      const Value& value = g.value(*in);
      if (value.is_constant() && value.data.dtype() == DType::kInt64 && value.data.numel() == 1) return *value.data.data_as<std::int64_t>();
      return std::nullopt;
    }
  }
  return std::nullopt;
}


// Integer shape arithmetic the core evaluates itself, so that it folds in
// every build (wasm included); nullopt for anything else.
std::optional<Tensor> fold_shape_arithmetic(const Graph& g, const Node& n) {
  const std::string& op = n.op;
  if (op == "aten::size" || op == "aten::dim") {
    const auto in = transforms::data_input(n);
    if (!in) return std::nullopt;
    const auto shape = transforms::static_shape(g.value(*in));
    if (!shape) return std::nullopt;
    if (op == "aten::dim") return int_scalar(static_cast<std::int64_t>(shape->size()));
    if (auto dim = arg_int(n, "dim")) {
      std::int64_t d = *dim < 0 ? *dim + static_cast<std::int64_t>(shape->size()) : *dim;
      if (d < 0 || d >= static_cast<std::int64_t>(shape->size())) return std::nullopt;
      return int_scalar((*shape)[static_cast<std::size_t>(d)]);
    }
    return Tensor::from_vector<std::int64_t>(*shape, {static_cast<std::int64_t>(shape->size())});
  }
  for (ValueId v : n.inputs) {
    const Value& value = g.value(v);
    if (!value.is_constant() || value.data.dtype() != DType::kInt64 || value.data.dim() > 1) return std::nullopt;
  }
  if (op == "prim::NumToTensor" || op == "aten::Int") {
    if (n.inputs.size() != 1 || g.value(n.inputs[0]).data.numel() != 1) return std::nullopt;
    return int_scalar(*g.value(n.inputs[0]).data.data_as<std::int64_t>());
  }
  if (op == "prim::ListConstruct") {
    std::vector<std::int64_t> items;
    for (ValueId v : n.inputs) {
      if (g.value(v).data.dim() != 0) return std::nullopt;
      items.push_back(*g.value(v).data.data_as<std::int64_t>());
    }
    return Tensor::from_vector<std::int64_t>(items, {static_cast<std::int64_t>(items.size())});
  }
  if (op == "aten::__getitem__" || op == "aten::len") {
    if (n.inputs.size() != 1 || g.value(n.inputs[0]).data.dim() != 1) return std::nullopt;
    const Tensor& list = g.value(n.inputs[0]).data;
    if (op == "aten::len") return int_scalar(list.numel());
    auto idx = arg_int(n, "idx");
    if (!idx) return std::nullopt;
    const std::int64_t i = *idx < 0 ? *idx + list.numel() : *idx;
    if (i < 0 || i >= list.numel()) return std::nullopt;
    return int_scalar(list.data_as<std::int64_t>()[i]);
  }
  const auto a = int_operand(g, n, {"self", "a"}, 0);
  const auto b = int_operand(g, n, {"other", "b"}, 1);
  if (!a || !b) return std::nullopt;
  const std::int64_t alpha = arg_int(n, "alpha").value_or(1);
  if (op == "aten::add") return int_scalar(*a + alpha * *b);
  if (op == "aten::sub") return int_scalar(*a - alpha * *b);
  if (op == "aten::mul") return int_scalar(*a * *b);
  if (op == "aten::floordiv" || op == "aten::floor_divide") {
    if (auto q = shape_rules::floor_divide(*a, *b)) return int_scalar(*q);
  }
  if (op == "aten::remainder") {
    if (auto r = shape_rules::remainder(*a, *b)) return int_scalar(*r);
  }
  return std::nullopt;
}

}  // namespace

std::size_t constant_folding(Graph& g, TransformContext& ctx) {
  std::size_t rewrites = 0;
  const std::vector<NodeId> order = g.nodes();
  for (NodeId id : order) {
    if (!g.is_live(id)) continue;
    const Node& n = g.node(id);
    if (n.outputs.empty() || is_inplace_op(n.op) || transforms::is_random(n)) continue;
    std::vector<Tensor> results;
    if (n.outputs.size() == 1) {
      if (auto folded = fold_shape_arithmetic(g, n)) results.push_back(std::move(*folded));
    }
    if (results.empty() && ctx.evaluator()) {
      bool all_constant = true;
      std::vector<Tensor> inputs;
      for (ValueId v : n.inputs) {
        all_constant = all_constant && g.value(v).is_constant();
        if (all_constant) inputs.push_back(g.value(v).data);
      }
      if (!all_constant) continue;
      // Check the size before computing, where the shapes are known.
      std::size_t expected = 0;
      bool known = true;
      for (ValueId o : n.outputs) {
        const auto shape = transforms::static_shape(g.value(o));
        known = known && shape && g.value(o).dtype;
        if (known) expected += checked_nbytes(*g.value(o).dtype, *shape);
      }
      if (known && expected > ctx.max_fold_bytes()) continue;
      auto evaluated = ctx.evaluator()->evaluate(n, inputs);
      if (!evaluated || evaluated->size() != n.outputs.size()) continue;
      results = std::move(*evaluated);
    }
    if (results.empty()) continue;
    std::size_t bytes = 0;
    for (const Tensor& t : results) bytes += t.nbytes();
    if (bytes > ctx.max_fold_bytes() || !ctx.take()) continue;
    std::vector<std::pair<ValueId, std::string>> made;
    for (std::size_t k = 0; k < results.size(); ++k) {
      const ValueId out = n.outputs[k];
      const ValueId c = g.add_constant(g.unique_value_name(g.value(out).name + ".folded"), std::move(results[k]));
      g.replace_all_uses(out, c);
      made.emplace_back(c, g.value(out).name);
    }
    g.erase_node(id);
    for (auto& [c, name] : made) g.rename_value(c, name);  // the folded value keeps its name
    ++rewrites;
  }
  return rewrites;
}

}  // namespace tracegraph
