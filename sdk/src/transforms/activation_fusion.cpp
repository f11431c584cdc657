#include "tracegraph/transforms/transforms.h"
#include "transforms/util.h"

namespace tracegraph {
namespace {

// add(Tensor self, Tensor other, alpha=1) of two computed tensors (not a number).
bool residual_add(const Graph& g, const Node& op) {
  const auto self = input_for_arg(op, "self", 0), other = input_for_arg(op, "other", 1);
  if (!self || !other || op.outputs.size() != 1) return false;
  for (ValueId v : {*self, *other}) {
    const Value& value = g.value(v);
    if (value.is_constant() || value.dtype != DType::kFloat32) return false;
  }
  if (auto alpha = op.attributes.get_float("alpha"); alpha && *alpha != 1.0) return false;
  return op.inputs.size() == 2;  // an alpha computed at run time is not known to be 1
}

}  // namespace

std::size_t activation_fusion(Graph& g, TransformContext& ctx) {
  std::size_t rewrites = 0;
  const std::vector<NodeId> order = g.nodes();
  for (NodeId act_id : order) {
    if (!g.is_live(act_id)) continue;
    const Node& act = g.node(act_id);
    auto c = canonical_op(act);
    if (!c) continue;
    const std::string& name = c->name;
    if (!is_fusible_activation(name)) continue;
    if (act.outputs.size() != 1) continue;
    const auto x = transforms::data_input(act);
    if (!x || !g.value(*x).producer) continue;
    // The activation must read only its input: a clamp with bounds computed at run time is not fused.
    if (act.inputs.size() != 1) continue;
    if (name == "clip" && !c->attributes.contains("min") && !c->attributes.contains("max")) continue;
    const NodeId op_id = *g.value(*x).producer;
    const Node& op = g.node(op_id);
    const std::string kind = transforms::canonical_name(op);
    // A residual add of two tensors takes a clamp (relu, relu6) into its own
    // pass: the backends add and clamp at once.
    const bool residual = kind == "add" && (name == "relu" || name == "clip") && residual_add(g, op);
    if (kind != "conv" && kind != "conv_transpose" && kind != "linear" && !residual) continue;
    if (op.attributes.contains(kFusedActivation) || op.outputs.size() != 1) continue;
    if (g.value(*x).users.size() != 1 || transforms::is_graph_output(g, *x)) continue;
    if (!ctx.take()) break;
    g.set_attribute(op_id, std::string(kFusedActivation), name);
    if (auto lo = c->attributes.get_float("min")) g.set_attribute(op_id, std::string(kFusedMin), *lo);
    if (auto hi = c->attributes.get_float("max")) g.set_attribute(op_id, std::string(kFusedMax), *hi);
    // The fused node now produces what the activation produced.
    const ValueId out = act.outputs[0];
    const Value& out_value = g.value(out);
    g.set_value_type(*x, out_value.dtype, out_value.shape);
    g.replace_all_uses(out, *x);
    g.erase_node(act_id);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace tracegraph
