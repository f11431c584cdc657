#include <cmath>

#include "tracegraph/op_table.h"
#include "tracegraph/transforms/transforms.h"
#include "transforms/util.h"

namespace tracegraph {
namespace {

const Tensor* float_constant(const Graph& g, std::optional<ValueId> v) {
  if (!v) return nullptr;
  const Value& value = g.value(*v);
  return value.is_constant() && value.data.dtype() == DType::kFloat32 && value.data.device().type == DeviceType::kCPU ? &value.data
                                                                                                                      : nullptr;
}

}  // namespace

std::size_t batch_norm_folding(Graph& g, TransformContext& ctx) {
  std::size_t rewrites = 0;
  const std::vector<NodeId> order = g.nodes();
  for (NodeId bn_id : order) {
    if (!g.is_live(bn_id)) continue;
    const Node& bn = g.node(bn_id);
    const auto canonical = canonical_op(bn);
    if (!canonical || canonical->name != "batch_norm" || canonical->attributes.get_bool("training").value_or(true)) continue;
    const auto x = input_for_arg(bn, "input", 0);
    if (!x || !g.value(*x).producer) continue;
    const NodeId op_id = *g.value(*x).producer;
    const Node& op = g.node(op_id);
    const std::string kind = transforms::canonical_name(op);
    if (kind != "conv" && kind != "linear") continue;  // a transposed conv's weight is laid out [in, out]: not folded
    if (op.op == "aten::addmm") continue;
    if (g.value(*x).users.size() != 1 || transforms::is_graph_output(g, *x) || op.attributes.contains(kFusedActivation)) continue;
    const Tensor* w = float_constant(g, input_for_arg(op, "weight", 1));
    const auto bias_in = input_for_arg(op, "bias", 2);
    const Tensor* b = float_constant(g, bias_in);
    if (!w || (bias_in && !b) || w->dim() < 2) continue;
    const std::int64_t out_channels = w->shape()[0];
    const Tensor* gamma = float_constant(g, input_for_arg(bn, "weight", 1));
    const Tensor* beta = float_constant(g, input_for_arg(bn, "bias", 2));
    const Tensor* mean = float_constant(g, input_for_arg(bn, "running_mean", 3));
    const Tensor* var = float_constant(g, input_for_arg(bn, "running_var", 4));
    if (!mean || !var || mean->numel() != out_channels || var->numel() != out_channels) continue;
    if ((gamma && gamma->numel() != out_channels) || (beta && beta->numel() != out_channels)) continue;
    if (!ctx.take()) break;
    const double eps = bn.attributes.get_float("eps").value_or(1e-5);
    // y = gamma * (conv(x) + b - mean) / sqrt(var + eps) + beta
    Tensor new_w = w->clone();
    Tensor new_b = Tensor::zeros(DType::kFloat32, {out_channels});
    const std::int64_t per_channel = w->numel() / out_channels;
    float* wd = new_w.data_as<float>();
    for (std::int64_t c = 0; c < out_channels; ++c) {
      const double scale = (gamma ? gamma->data_as<float>()[c] : 1.0) / std::sqrt(static_cast<double>(var->data_as<float>()[c]) + eps);
      for (std::int64_t i = 0; i < per_channel; ++i) wd[c * per_channel + i] = static_cast<float>(wd[c * per_channel + i] * scale);
      const double bias = b ? b->data_as<float>()[c] : 0.0;
      new_b.data_as<float>()[c] =
          static_cast<float>((bias - mean->data_as<float>()[c]) * scale + (beta ? beta->data_as<float>()[c] : 0.0));
    }
    const ValueId w_in = *input_for_arg(op, "weight", 1);
    const ValueId w_new = g.add_constant(g.unique_value_name(g.value(w_in).name + ".bn_folded"), std::move(new_w));
    const ValueId b_new = g.add_constant(g.unique_value_name(g.value(w_in).name + ".bn_folded_bias"), std::move(new_b));
    for (std::size_t i = 0; i < op.inputs.size(); ++i) {
      if (op.inputs[i] == w_in) g.set_node_input(op_id, i, w_new);
    }
    if (bias_in) {
      for (std::size_t i = 0; i < g.node(op_id).inputs.size(); ++i) {
        if (g.node(op_id).inputs[i] == *bias_in) g.set_node_input(op_id, i, b_new);
      }
    } else {
      g.append_node_input(op_id, b_new);
      if (const AttributeValue* names = g.node(op_id).attributes.find(kArgNamesAttribute)) {
        auto list = std::get<std::vector<std::string>>(*names);
        list.push_back("bias");
        g.set_attribute(op_id, std::string(kArgNamesAttribute), list);
      }
    }
    const ValueId bn_out = bn.outputs[0];
    g.replace_all_uses(bn_out, *x);
    g.erase_node(bn_id);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace tracegraph
