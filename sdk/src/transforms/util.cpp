#include "transforms/util.h"

namespace tracegraph::transforms {

std::optional<double> scalar_constant(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  if (!value.is_constant() || value.data.numel() != 1) return std::nullopt;
  const Tensor& t = value.data;
  switch (t.dtype()) {
    case DType::kFloat32: return *t.data_as<float>();
    case DType::kFloat64: return *t.data_as<double>();
    case DType::kInt64: return static_cast<double>(*t.data_as<std::int64_t>());
    case DType::kInt32: return static_cast<double>(*t.data_as<std::int32_t>());
    case DType::kBool: return *t.data_as<bool>() ? 1.0 : 0.0;
    default: return std::nullopt;
  }
}

void bypass(Graph& g, NodeId node, ValueId replacement) {
  const ValueId out = g.node(node).outputs.at(0);
  g.replace_all_uses(out, replacement);
  bool read = false;
  for (ValueId o : g.node(node).outputs) read = read || !g.value(o).users.empty() || is_graph_output(g, o);
  if (!read) g.erase_node(node);
}

}  // namespace tracegraph::transforms
