// The lowering table: which lowering runs each op, and which ops of a graph none runs.
#include "backend_impl.h"

namespace tracegraph::xnnpack {

std::vector<UnsupportedNode> XnnpackBackend::Impl::unsupported(const Graph& graph) {
  std::vector<UnsupportedNode> out;
  for (NodeId id : graph.nodes()) {
    const Node& n = graph.node(id);
    if (!lowering_for(n)) out.push_back({n.name, n.op, "no XNNPACK lowering for this op"});
  }
  return out;
}

std::vector<std::string> XnnpackBackend::Impl::lowered_op_names() {
  std::vector<std::string> out;
  for (const auto& entry : lowering_table()) out.push_back(entry.first);
  std::sort(out.begin(), out.end());
  return out;
}

const std::unordered_map<std::string, XnnpackBackend::Impl::Lowering>& XnnpackBackend::Impl::lowering_table() {
  // Each lowering and the ops it runs, by their base names ("relu" for
  // "aten::relu" and torch.export's "aten.relu.default").
  struct Entry {
    Lowering lowering;
    std::vector<std::string_view> ops;
  };
  static const Entry kEntries[] = {
      {&Impl::lower_conv,
       {"_convolution", "conv2d", "conv3d", "conv_transpose2d", "conv_transpose3d", "convolution"}},
      {&Impl::lower_batch_norm,
       {"batch_norm", "_native_batch_norm_legit_no_training", "native_batch_norm"}},
      {&Impl::lower_unary,
       {"relu", "sigmoid", "tanh", "hardtanh", "relu6", "clamp", "hardswish", "leaky_relu", "gelu", "elu"}},
      {&Impl::lower_binary,
       {"add", "sub", "mul", "div", "floor_divide", "floordiv", "remainder", "fmod"}},
      {&Impl::lower_max_pool,
       {"max_pool2d", "max_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices"}},
      {&Impl::lower_avg_pool,
       {"avg_pool2d"}},
      {&Impl::lower_adaptive_pool,
       {"adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool2d", "adaptive_max_pool3d"}},
      {&Impl::lower_mean,
       {"mean", "sum"}},
      {&Impl::lower_linear,
       {"linear"}},
      {&Impl::lower_cat,
       {"cat", "concat"}},
      {&Impl::lower_slice,
       {"slice", "slice_copy"}},
      {&Impl::lower_resize,
       {"upsample_nearest2d", "upsample_nearest3d"}},
      {&Impl::lower_softmax,
       {"softmax", "_softmax", "log_softmax", "_log_softmax"}},
      {&Impl::lower_view,
       {"flatten", "view", "reshape", "view_copy"}},
      {&Impl::lower_identity,
       {"dropout", "feature_dropout", "contiguous", "detach", "alias"}},
      {&Impl::lower_size,
       {"size", "sym_size", "dim"}},
      {&Impl::lower_getitem,
       {"__getitem__"}},
      {&Impl::lower_scalar_identity,
       {"NumToTensor", "Int", "Float", "ScalarImplicit"}},
      {&Impl::lower_permute,
       {"permute", "permute_copy", "transpose", "t"}},
      {&Impl::lower_addmm,
       {"addmm"}},
      {&Impl::lower_pointwise,
       {"hardsigmoid", "silu", "mish", "exp", "log", "sqrt", "rsqrt", "neg", "abs", "square", "erf", "pow", "rsub"}},
      {&Impl::lower_narrow,
       {"narrow"}},
      {&Impl::lower_chunk,
       {"chunk", "split"}},
      {&Impl::lower_select,
       {"select"}},
      {&Impl::lower_reshape_dims,
       {"unsqueeze", "squeeze"}},
      {&Impl::lower_expand,
       {"expand", "expand_as"}},
      {&Impl::lower_list,
       {"ListConstruct"}},
      {&Impl::lower_pad,
       {"pad", "constant_pad_nd", "reflection_pad1d", "reflection_pad2d", "reflection_pad3d", "replication_pad1d",
        "replication_pad2d", "replication_pad3d"}},
      {&Impl::lower_resize_portable,
       {"upsample_bilinear2d", "upsample_trilinear3d", "upsample_linear1d", "upsample_nearest1d",
        "upsample_bicubic2d"}},
      {&Impl::lower_norm,
       {"group_norm", "instance_norm", "layer_norm"}},
      {&Impl::lower_conv1d,
       {"conv1d"}},
      {&Impl::lower_pool1d,
       {"max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d"}},
      {&Impl::lower_prelu,
       {"prelu"}},
      {&Impl::lower_slice_scatter,
       {"slice_scatter"}},
      {&Impl::lower_matmul,
       {"matmul", "mm", "bmm"}},
      {&Impl::lower_attention,
       {"_native_multi_head_attention"}},
      {&Impl::lower_roll,
       {"roll"}},
      {&Impl::lower_masked_fill,
       {"masked_fill"}},
      {&Impl::lower_einsum,
       {"einsum"}},
      {&Impl::lower_full,
       {"new_zeros", "new_ones", "new_full", "zeros_like", "ones_like", "full_like", "fill"}},
      {&Impl::lower_compare,
       {"eq", "ne", "lt", "le", "gt", "ge"}},
  };
  // Ops whose in-place spelling ("relu_") the same lowering runs: it writes
  // into its input unless that is a constant.
  static const std::string_view kInPlaceToo[] = {
      "relu", "sigmoid", "tanh", "hardtanh", "relu6", "clamp", "hardswish", "leaky_relu", "add", "sub", "mul", "div",
      "hardsigmoid", "silu"};
  static const std::unordered_map<std::string, Lowering> table = [] {
    std::unordered_map<std::string, Lowering> t;
    for (const Entry& e : kEntries) {
      for (std::string_view op : e.ops) t.emplace(op, e.lowering);
    }
    for (std::string_view op : kInPlaceToo) t.emplace(std::string(op) + "_", t.at(std::string(op)));
    return t;
  }();
  return table;
}

XnnpackBackend::Impl::Lowering XnnpackBackend::Impl::lowering_for(const Node& n) {
  const auto& table = lowering_table();
  const auto name = parse_op_name(n.op);
  if (!name || (name->qualified.rfind("aten::", 0) != 0 && name->qualified.rfind("prim::", 0) != 0)) return nullptr;
  auto it = table.find(base_op(n.op));
  return it == table.end() ? nullptr : it->second;
}

}  // namespace tracegraph::xnnpack
