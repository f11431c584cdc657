// The lowering table: which lowering runs each op, and which ops of a graph none runs.
#include "lower/table.h"
#include "lower/attention.h"
#include "lower/backward.h"
#include "lower/cast.h"
#include "lower/complex.h"
#include "lower/concat.h"
#include "lower/conv.h"
#include "lower/copy.h"
#include "lower/cumulative.h"
#include "lower/diagonal.h"
#include "lower/distance.h"
#include "lower/einsum.h"
#include "lower/elementwise.h"
#include "lower/factory.h"
#include "lower/fold.h"
#include "lower/index.h"
#include "lower/matmul.h"
#include "lower/norm.h"
#include "lower/pad.h"
#include "lower/permute.h"
#include "lower/pool.h"
#include "lower/random.h"
#include "lower/reduction.h"
#include "lower/repeat.h"
#include "lower/resize.h"
#include "lower/scalar.h"
#include "lower/scatter.h"
#include "lower/shuffle.h"
#include "lower/slice.h"
#include "lower/sort.h"
#include "lower/view.h"

namespace tracegraph::xnnpack {
namespace {
// What runs an op's steps (docs/ops.md; the op sweep checks every run against it).
enum Engines : unsigned {
  kXnnpack = 1,   // XNNPACK's operators
  kOurs = 2,      // our convolution kernels (Winograd, depthwise, pointwise, unfolded)
  kPortable = 4,  // a portable kernel of ours in plain C++
  kPlanned = 8,   // nothing at the run: a view, a size or a constant known while planning
};
struct Lowered {
  Lowering lowering;
  unsigned engines;
};
const std::unordered_map<std::string, Lowered>& lowering_table();
// The name op `base` has in the table: itself, or for a view's copying form
// without an entry of its own, its view's.
std::string lowered_name(std::string base) {
  const auto& table = lowering_table();
  constexpr std::string_view kCopy = "_copy";
  if (!table.count(base) && base.size() > kCopy.size() && base.compare(base.size() - kCopy.size(), kCopy.size(), kCopy) == 0) {
    std::string view = base.substr(0, base.size() - kCopy.size());
    if (table.count(view)) return view;
  }
  return base;
}
}  // namespace

std::string detail::base_op(const std::string& op) { return lowered_name(std::string(op_base(op))); }

std::vector<UnsupportedNode> unsupported_nodes(const Graph& graph) {
  std::vector<UnsupportedNode> out;
  for (NodeId id : graph.nodes()) {
    const Node& n = graph.node(id);
    if (!lowering_for(n)) {
      out.push_back({n.name, n.op, "no XNNPACK lowering for this op"});
      continue;
    }
    for (ValueId v : n.inputs) {
      const Value& value = graph.value(v);
      if (value.dtype && is_complex(*value.dtype) && !takes_complex(base_op(n.op)) && !layout_op_on_pairs(base_op(n.op))) {
        out.push_back({n.name, n.op, "input '" + value.name + "' is complex; " + kComplexOps});
        break;
      }
    }
  }
  return out;
}

std::vector<std::string> lowered_op_names() {
  std::vector<std::string> out;
  for (const auto& entry : lowering_table()) out.push_back(entry.first);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::vector<Engine>> lowered_op_engines(std::string_view base) {
  const auto& table = lowering_table();
  auto it = table.find(lowered_name(std::string(base)));
  if (it == table.end()) return std::nullopt;
  std::vector<Engine> out;
  if (it->second.engines & kPlanned) out.push_back(Engine::kNone);
  if (it->second.engines & kXnnpack) out.push_back(Engine::kXnnpack);
  if (it->second.engines & kOurs) out.push_back(Engine::kWinograd);
  if (it->second.engines & kPortable) out.push_back(Engine::kPortable);
  return out;
}

namespace {
// Each lowering, the engines its steps may run on, and the ops it runs, by
// their base names ("relu" for "aten::relu" and torch.export's
// "aten.relu.default"). `in_place`: the lowering also runs each op's
// in-place spelling ("relu_"), writing into its input unless that is a constant.
struct Entry {
  Lowering lowering;
  unsigned engines;
  std::vector<std::string_view> ops;
  bool in_place = false;
};
// Data, not logic: one entry per lowering. Read only through
// lowering_table(), which runs after static initialization.
const Entry kEntries[] = {
    {&lower_conv, kXnnpack | kOurs | kPortable,
     {"_convolution", "conv2d", "conv3d", "conv_transpose2d", "conv_transpose3d", "convolution"}},
    {&lower_batch_norm, kPortable,
     {"batch_norm", "_native_batch_norm_legit_no_training", "native_batch_norm"}},
    {&lower_unary, kXnnpack | kPortable,
     {"relu", "sigmoid", "tanh", "hardtanh", "relu6", "clamp", "clip", "clamp_min", "clamp_max", "hardswish", "leaky_relu", "gelu", "elu"},
     true},
    {&lower_binary, kXnnpack | kPortable,
     {"add", "sub", "mul", "div", "floor_divide", "floordiv", "remainder", "fmod"}, true},
    {&lower_max_pool, kXnnpack | kPortable,
     {"max_pool2d", "max_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices"}},
    {&lower_avg_pool, kXnnpack | kPortable,
     {"avg_pool2d"}},
    {&lower_adaptive_pool, kXnnpack | kPortable,
     {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d",
      "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"}},
    {&lower_mean, kXnnpack | kPortable,
     {"mean", "sum"}},
    {&lower_reduce, kPortable,
     {"linalg_vector_norm", "amax", "amin", "prod", "var", "std", "logsumexp", "argmax", "argmin"}},
    {&lower_cumsum, kPortable,
     {"cumsum", "cumprod"}},
    {&lower_max_min, kPortable,
     {"max", "min"}},
    {&lower_cum_extreme, kPortable,
     {"cummax", "cummin"}},
    {&lower_aminmax, kPortable,
     {"aminmax"}},
    {&lower_pairwise_distance, kPortable,
     {"pairwise_distance"}},
    {&lower_cosine_similarity, kPortable,
     {"cosine_similarity"}},
    {&lower_rms_norm, kPortable,
     {"rms_norm"}},
    {&lower_sort, kPortable,
     {"sort", "topk"}},
    {&lower_fold, kPortable,
     {"im2col", "col2im"}},
    {&lower_distance, kPortable,
     {"cdist", "_cdist_forward", "pdist", "_pdist_forward"}},
    {&lower_masked_scatter, kPortable,
     {"masked_scatter"}},
    {&lower_embedding_bag, kPortable,
     {"embedding_bag", "_embedding_bag", "_embedding_bag_forward_only"}},
    {&lower_avg_pool_portable, kPortable,
     {"avg_pool3d"}},
    {&lower_max_pool_portable, kPortable,
     {"max_pool1d_with_indices"}},
    {&lower_repeat, kPortable,
     {"repeat", "tile"}},
    {&lower_repeat_interleave, kPortable,
     {"repeat_interleave"}},
    {&lower_flip, kPortable,
     {"flip"}},
    {&lower_triangle, kPortable,
     {"tril", "triu"}},
    {&lower_binary_portable, kPortable,
     {"maximum", "minimum", "logical_and", "logical_or", "logical_xor", "atan2", "arctan2", "hypot"}},
    {&lower_ternary, kPortable,
     {"lerp", "addcmul", "addcdiv"}},
    {&lower_glu, kPortable,
     {"glu"}},
    {&lower_outer, kPortable,
     {"outer", "ger"}},
    {&lower_baddbmm, kPortable,
     {"baddbmm"}},
    {&lower_unshuffle, kPortable,
     {"pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"}},
    {&lower_bitwise, kPortable,
     {"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "__and__", "__or__", "__xor__", "__invert__"}},
    {&lower_index, kPortable,
     {"index", "_unsafe_index"}},
    {&lower_nonzero, kPortable,
     {"nonzero", "argwhere", "nonzero_static", "nonzero_numpy"}},
    {&lower_masked_select, kPortable,
     {"masked_select"}},
    {&lower_item, kPlanned | kPortable,
     {"item", "_local_scalar_dense"}},
    {&lower_scatter, kPortable,
     {"scatter", "scatter_add", "scatter_reduce"}},
    {&lower_index_along, kPortable,
     {"index_add", "index_copy", "index_fill"}},
    {&lower_index_put, kPortable,
     {"index_put", "_unsafe_index_put"}},
    {&lower_index_select, kPortable,
     {"index_select"}},
    {&lower_gather, kPortable,
     {"gather", "embedding"}},
    {&lower_pixel_shuffle, kPortable,
     {"pixel_shuffle"}},
    {&lower_where, kPortable,
     {"where"}},
    {&lower_any_all, kPortable,
     {"any", "all"}},
    {&lower_cast, kPortable,
     {"_to_copy", "to", "type_as", "_to_dim_order_copy"}},
    {&lower_factory, kPlanned,
     {"arange", "full", "scalar_tensor", "zeros", "ones", "empty", "empty_strided", "new_empty"}},
    {&lower_backward, kPortable,
     {"max_pool2d_with_indices_backward", "max_pool3d_with_indices_backward", "avg_pool2d_backward", "avg_pool3d_backward",
      "_adaptive_avg_pool2d_backward", "embedding_dense_backward", "native_layer_norm_backward", "native_group_norm_backward",
      "convolution_backward"}},
    {&lower_random, kPortable,
     {"rand", "randn", "rand_like", "randn_like", "randint", "randint_like", "randperm"}},
    {&lower_linear, kXnnpack,
     {"linear"}},
    {&lower_cat, kPortable,
     {"cat", "concat", "concatenate"}},
    {&lower_stack, kPortable,
     {"stack"}},
    {&lower_slice, kPortable,
     {"slice", "slice_copy"}},
    {&lower_resize, kPortable,
     {"upsample_nearest2d", "upsample_nearest3d"}},
    {&lower_grid_sample, kPortable,
     {"grid_sampler_2d", "grid_sampler"}},
    {&lower_softmax, kXnnpack | kPortable,
     {"softmax", "_softmax", "log_softmax", "_log_softmax"}},
    {&lower_view, kPlanned,
     {"flatten", "unflatten", "view", "reshape", "view_copy", "view_as", "reshape_as", "_unsafe_view"}},
    {&lower_identity, kPlanned,
     {"dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout", "contiguous", "detach", "alias", "alias_copy", "detach_copy"}},
    // A copy only where a later op updates it in place.
    {&lower_identity, kPlanned | kPortable,
     {"clone", "lift_fresh_copy"}},
    {&lower_copy, kPortable,
     {"copy"}},
    {&lower_unfold, kPortable,
     {"unfold"}},
    {&lower_as_strided, kPortable,
     {"as_strided", "as_strided_copy"}},
    {&lower_resize_storage, kPlanned | kPortable,
     {"resize_", "resize", "resize_as_", "resize_as"}},
    {&lower_size, kPlanned,
     {"size", "sym_size", "dim", "sym_numel", "sym_stride", "sym_storage_offset", "sym_is_contiguous"}},
    {&lower_getitem, kPlanned,
     {"__getitem__"}},
    {&lower_scalar_identity, kPlanned,
     {"NumToTensor", "Int", "Float", "ScalarImplicit"}},
    {&lower_permute, kPlanned,
     {"permute", "permute_copy", "transpose", "t", "movedim"}},
    {&lower_addmm, kXnnpack,
     {"addmm"}},
    {&lower_pointwise, kPortable,
     {"hardsigmoid", "silu", "mish", "exp", "log", "sqrt", "rsqrt", "neg", "abs", "square", "erf", "pow", "rsub", "sin", "cos", "tan",
      "floor", "ceil", "round", "trunc", "fix", "reciprocal", "sign", "log1p", "expm1", "log2", "log10", "logical_not", "acos", "arccos",
      "asin", "arcsin", "atan", "arctan", "cosh", "sinh", "softplus", "nan_to_num", "acosh", "arccosh", "asinh", "arcsinh", "atanh",
      "arctanh", "isinf", "isnan", "isfinite", "erfinv", "frac", "logit", "log_sigmoid", "log_sigmoid_forward", "selu", "celu",
      "hardshrink", "softshrink"},
     true},
    {&lower_narrow, kPlanned | kPortable,
     {"narrow"}},
    {&lower_chunk, kPlanned | kPortable,
     {"chunk", "split", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes"}},
    {&lower_select, kPlanned | kPortable,
     {"select"}},
    {&lower_unbind, kPlanned | kPortable,
     {"unbind"}},
    {&lower_reshape_dims, kPlanned,
     {"unsqueeze", "squeeze"}},
    {&lower_expand, kPortable,
     {"expand", "expand_as"}},
    {&lower_list, kPlanned,
     {"ListConstruct"}},
    {&lower_pad, kXnnpack | kPortable,
     {"pad", "constant_pad_nd", "reflection_pad1d", "reflection_pad2d", "reflection_pad3d", "replication_pad1d",
      "replication_pad2d", "replication_pad3d"}},
    {&lower_resize_portable, kXnnpack | kPortable,
     {"upsample_bilinear2d", "upsample_trilinear3d", "upsample_linear1d", "upsample_nearest1d",
      "upsample_bicubic2d", "_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d"}},
    {&lower_norm, kPortable,
     {"group_norm", "instance_norm", "layer_norm", "native_layer_norm", "native_group_norm", "_native_batch_norm_legit"}},
    {&lower_conv1d, kXnnpack | kPortable,
     {"conv1d"}},
    {&lower_pool1d, kPortable,
     {"max_pool1d", "avg_pool1d"}},
    {&lower_prelu, kXnnpack | kPortable,
     {"prelu"}},
    {&lower_slice_scatter, kPortable,
     {"slice_scatter"}},
    {&lower_select_scatter, kPortable,
     {"select_scatter"}},
    {&lower_diagonal, kPortable,
     {"diagonal", "diagonal_copy"}},
    {&lower_native_dropout, kPlanned,
     {"native_dropout"}},
    {&lower_matmul, kXnnpack | kPortable,
     {"matmul", "mm", "bmm"}},
    {&lower_attention, kXnnpack | kPortable,
     {"_native_multi_head_attention"}},
    {&lower_sdpa, kXnnpack | kPortable,
     {"scaled_dot_product_attention"}},
    {&lower_roll, kPortable,
     {"roll"}},
    {&lower_masked_fill, kPortable,
     {"masked_fill"}},
    {&lower_einsum, kXnnpack | kPortable,
     {"einsum"}},
    {&lower_full, kPortable,
     {"new_zeros", "new_ones", "new_full", "zeros_like", "ones_like", "full_like", "fill"}},
    {&lower_compare, kPortable,
     {"eq", "ne", "lt", "le", "gt", "ge"}},
    {&lower_fft, kXnnpack | kPortable,
     {"_fft_r2c", "_fft_c2r", "_fft_c2c", "fft_fft", "fft_ifft", "fft_rfft", "fft_irfft", "fft_fft2", "fft_ifft2", "fft_rfft2",
      "fft_irfft2", "fft_fftn", "fft_ifftn", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft"}},
    {&lower_stft, kXnnpack | kPortable,
     {"stft"}},
    {&lower_window, kPlanned,
     {"hann_window", "hamming_window", "blackman_window", "bartlett_window"}},
    {&lower_complex, kPlanned | kPortable,
     {"view_as_real", "view_as_complex", "real", "imag", "complex", "_conj", "conj", "conj_physical", "resolve_conj"}},
};

const std::unordered_map<std::string, Lowered>& lowering_table() {
  static const std::unordered_map<std::string, Lowered> table = [] {
    std::unordered_map<std::string, Lowered> t;
    for (const Entry& e : kEntries) {
      for (std::string_view op : e.ops) {
        t.emplace(op, Lowered{e.lowering, e.engines});
        if (e.in_place) t.emplace(std::string(op) + "_", Lowered{e.lowering, e.engines});
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
  return it == table.end() ? nullptr : it->second.lowering;
}

}  // namespace tracegraph::xnnpack
