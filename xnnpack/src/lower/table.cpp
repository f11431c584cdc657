// The lowering table: which lowering runs each op, and which ops of a graph none runs.
#include "lower/lowerings.h"

namespace tracegraph::xnnpack {
namespace {
const std::unordered_map<std::string, Lowering>& lowering_table();
}  // namespace

std::vector<UnsupportedNode> unsupported_nodes(const Graph& graph) {
  std::vector<UnsupportedNode> out;
  for (NodeId id : graph.nodes()) {
    const Node& n = graph.node(id);
    if (!lowering_for(n)) out.push_back({n.name, n.op, "no XNNPACK lowering for this op"});
  }
  return out;
}

std::vector<std::string> lowered_op_names() {
  std::vector<std::string> out;
  for (const auto& entry : lowering_table()) out.push_back(entry.first);
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
const std::unordered_map<std::string, Lowering>& lowering_table() {
  // Each lowering and the ops it runs, by their base names ("relu" for
  // "aten::relu" and torch.export's "aten.relu.default").
  // `in_place`: the lowering also runs each op's in-place spelling ("relu_"),
  // writing into its input unless that is a constant.
  struct Entry {
    Lowering lowering;
    std::vector<std::string_view> ops;
    bool in_place = false;
  };
  static const Entry kEntries[] = {
      {&lower_conv,
       {"_convolution", "conv2d", "conv3d", "conv_transpose2d", "conv_transpose3d", "convolution"}},
      {&lower_batch_norm,
       {"batch_norm", "_native_batch_norm_legit_no_training", "native_batch_norm"}},
      {&lower_unary,
       {"relu", "sigmoid", "tanh", "hardtanh", "relu6", "clamp", "clamp_min", "clamp_max", "hardswish", "leaky_relu", "gelu", "elu"},
       true},
      {&lower_binary,
       {"add", "sub", "mul", "div", "floor_divide", "floordiv", "remainder", "fmod"}, true},
      {&lower_max_pool,
       {"max_pool2d", "max_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices"}},
      {&lower_avg_pool,
       {"avg_pool2d"}},
      {&lower_adaptive_pool,
       {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d",
        "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"}},
      {&lower_mean,
       {"mean", "sum"}},
      {&lower_reduce,
       {"linalg_vector_norm", "amax", "amin", "prod", "var", "std", "logsumexp", "argmax", "argmin"}},
      {&lower_cumsum,
       {"cumsum", "cumprod"}},
      {&lower_max_min,
       {"max", "min"}},
      {&lower_cum_extreme,
       {"cummax", "cummin"}},
      {&lower_aminmax,
       {"aminmax"}},
      {&lower_pairwise_distance,
       {"pairwise_distance"}},
      {&lower_cosine_similarity,
       {"cosine_similarity"}},
      {&lower_rms_norm,
       {"rms_norm"}},
      {&lower_sort,
       {"sort", "topk"}},
      {&lower_fold,
       {"im2col", "col2im"}},
      {&lower_distance,
       {"cdist", "_cdist_forward", "pdist", "_pdist_forward"}},
      {&lower_masked_scatter,
       {"masked_scatter"}},
      {&lower_embedding_bag,
       {"embedding_bag", "_embedding_bag", "_embedding_bag_forward_only"}},
      {&lower_avg_pool_portable,
       {"avg_pool3d"}},
      {&lower_max_pool_portable,
       {"max_pool1d_with_indices"}},
      {&lower_repeat,
       {"repeat", "tile"}},
      {&lower_repeat_interleave,
       {"repeat_interleave"}},
      {&lower_flip,
       {"flip"}},
      {&lower_triangle,
       {"tril", "triu"}},
      {&lower_binary_portable,
       {"maximum", "minimum", "logical_and", "logical_or", "logical_xor", "atan2", "arctan2", "hypot"}},
      {&lower_ternary,
       {"lerp", "addcmul", "addcdiv"}},
      {&lower_glu,
       {"glu"}},
      {&lower_outer,
       {"outer", "ger"}},
      {&lower_baddbmm,
       {"baddbmm"}},
      {&lower_unshuffle,
       {"pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"}},
      {&lower_bitwise,
       {"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "__and__", "__or__", "__xor__", "__invert__"}},
      {&lower_index,
       {"index", "_unsafe_index"}},
      {&lower_scatter,
       {"scatter", "scatter_add", "scatter_reduce"}},
      {&lower_index_along,
       {"index_add", "index_copy", "index_fill"}},
      {&lower_index_put,
       {"index_put", "_unsafe_index_put"}},
      {&lower_index_select,
       {"index_select"}},
      {&lower_gather,
       {"gather", "embedding"}},
      {&lower_pixel_shuffle,
       {"pixel_shuffle"}},
      {&lower_where,
       {"where"}},
      {&lower_any_all,
       {"any", "all"}},
      {&lower_cast,
       {"_to_copy", "to", "type_as", "_to_dim_order_copy"}},
      {&lower_factory,
       {"arange", "full", "scalar_tensor", "zeros", "ones", "empty", "empty_strided", "new_empty"}},
      {&lower_linear,
       {"linear"}},
      {&lower_cat,
       {"cat", "concat"}},
      {&lower_stack,
       {"stack"}},
      {&lower_slice,
       {"slice", "slice_copy"}},
      {&lower_resize,
       {"upsample_nearest2d", "upsample_nearest3d"}},
      {&lower_grid_sample,
       {"grid_sampler_2d", "grid_sampler"}},
      {&lower_softmax,
       {"softmax", "_softmax", "log_softmax", "_log_softmax"}},
      {&lower_view,
       {"flatten", "unflatten", "view", "reshape", "view_copy", "view_as", "reshape_as", "_unsafe_view"}},
      {&lower_identity,
       {"dropout", "feature_dropout", "contiguous", "detach", "alias", "clone", "lift_fresh_copy", "alias_copy", "detach_copy"}},
      {&lower_copy,
       {"copy"}},
      {&lower_as_strided,
       {"as_strided", "as_strided_copy"}},
      {&lower_size,
       {"size", "sym_size", "dim", "sym_numel", "sym_stride", "sym_storage_offset", "sym_is_contiguous"}},
      {&lower_getitem,
       {"__getitem__"}},
      {&lower_scalar_identity,
       {"NumToTensor", "Int", "Float", "ScalarImplicit"}},
      {&lower_permute,
       {"permute", "permute_copy", "transpose", "t", "movedim"}},
      {&lower_addmm,
       {"addmm"}},
      {&lower_pointwise,
       {"hardsigmoid", "silu", "mish", "exp", "log", "sqrt", "rsqrt", "neg", "abs", "square", "erf", "pow", "rsub", "sin", "cos", "tan",
        "floor", "ceil", "round", "trunc", "fix", "reciprocal", "sign", "log1p", "expm1", "log2", "log10", "logical_not", "acos", "arccos",
        "asin", "arcsin", "atan", "arctan", "cosh", "sinh", "softplus", "nan_to_num", "acosh", "arccosh", "asinh", "arcsinh", "atanh",
        "arctanh", "isinf", "isnan", "isfinite", "erfinv", "frac", "logit", "log_sigmoid", "log_sigmoid_forward", "selu", "celu",
        "hardshrink", "softshrink"},
       true},
      {&lower_narrow,
       {"narrow"}},
      {&lower_chunk,
       {"chunk", "split", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes"}},
      {&lower_select,
       {"select"}},
      {&lower_unbind,
       {"unbind"}},
      {&lower_reshape_dims,
       {"unsqueeze", "squeeze"}},
      {&lower_expand,
       {"expand", "expand_as"}},
      {&lower_list,
       {"ListConstruct"}},
      {&lower_pad,
       {"pad", "constant_pad_nd", "reflection_pad1d", "reflection_pad2d", "reflection_pad3d", "replication_pad1d",
        "replication_pad2d", "replication_pad3d"}},
      {&lower_resize_portable,
       {"upsample_bilinear2d", "upsample_trilinear3d", "upsample_linear1d", "upsample_nearest1d",
        "upsample_bicubic2d", "_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d"}},
      {&lower_norm,
       {"group_norm", "instance_norm", "layer_norm", "native_layer_norm", "native_group_norm", "_native_batch_norm_legit"}},
      {&lower_conv1d,
       {"conv1d"}},
      {&lower_pool1d,
       {"max_pool1d", "avg_pool1d"}},
      {&lower_prelu,
       {"prelu"}},
      {&lower_slice_scatter,
       {"slice_scatter"}},
      {&lower_select_scatter,
       {"select_scatter"}},
      {&lower_diagonal,
       {"diagonal", "diagonal_copy"}},
      {&lower_native_dropout,
       {"native_dropout"}},
      {&lower_matmul,
       {"matmul", "mm", "bmm"}},
      {&lower_attention,
       {"_native_multi_head_attention"}},
      {&lower_sdpa,
       {"scaled_dot_product_attention"}},
      {&lower_roll,
       {"roll"}},
      {&lower_masked_fill,
       {"masked_fill"}},
      {&lower_einsum,
       {"einsum"}},
      {&lower_full,
       {"new_zeros", "new_ones", "new_full", "zeros_like", "ones_like", "full_like", "fill"}},
      {&lower_compare,
       {"eq", "ne", "lt", "le", "gt", "ge"}},
  };
  static const std::unordered_map<std::string, Lowering> table = [] {
    std::unordered_map<std::string, Lowering> t;
    for (const Entry& e : kEntries) {
      for (std::string_view op : e.ops) {
        t.emplace(op, e.lowering);
        if (e.in_place) t.emplace(std::string(op) + "_", e.lowering);
      }
    }
    return t;
  }();
  return table;
}
}  // namespace

Lowering lowering_for(const Node& n) {
  const auto& table = lowering_table();
  const auto name = parse_op_name(n.op);
  if (!name || (name->qualified.rfind("aten::", 0) != 0 && name->qualified.rfind("prim::", 0) != 0)) return nullptr;
  auto it = table.find(base_op(n.op));
  return it == table.end() ? nullptr : it->second;
}

}  // namespace tracegraph::xnnpack
