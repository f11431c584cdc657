// The lowerings: each turns a node into steps on the planning context
// (plan/context.h), one file per op family (conv.cpp, conv_winograd.cpp,
// elementwise.cpp, index.cpp, matrix.cpp, norm.cpp, pool.cpp, resize.cpp,
// scatter.cpp, shape.cpp), each found by the node's op in table.cpp. Private
// to xnnpack/src.
#pragma once

#include "plan/context.h"

namespace tracegraph::xnnpack {

// Lowers one node: defines its outputs' slots and adds its steps.
using Lowering = void (*)(Context& cx, const Node& n, NodeState& st);

// ---- table.cpp --------------------------------------------------------

// The lowering that runs this node's op, or nullptr.
Lowering lowering_for(const Node& n);
// Every node without a lowering, judged by its op alone.
std::vector<UnsupportedNode> unsupported_nodes(const Graph& graph);
// The base names of the ops with a lowering, sorted (docs/ops.md).
std::vector<std::string> lowered_op_names();
// The engines an op's lowering may run it on (kNone: it may compute nothing
// at the run), or nullopt where it has no lowering.
std::optional<std::vector<Engine>> lowered_op_engines(std::string_view base);

// ---- matrix.cpp and conv.cpp: GEMM blocking and pixel folding -----------

// XNNPACK's GEMMs stream the whole packed weight matrix once per tile of
// rows (its microkernel's 1 to 8), so a matrix past the L2 cache,
// multiplied into many rows, comes from L3 or memory rows/8 times over.
// Split by output columns into blocks of about 512 KB, each block's
// weights stay in L2 across all rows (a GEMM's cache blocking).
// The width of the blocks for `rows` x `depth` times `depth` x `columns`,
// or 0: one operator.
i64 column_block_width(i64 rows, i64 depth, i64 columns);
// The node's operators number `index` over blocks of `width` output columns
// (0: one): `make(first, count, &op)` creates the one for columns
// [first, first + count). Made again when the width changes.
NodeState::ColumnBlocks& column_blocks(NodeState& st, std::size_t index, i64 width, i64 columns,
                                       const std::function<void(i64, i64, xnn_operator_t*)>& make);

// Pixel folding. XNNPACK computes output channels in tiles of
// gemm_tile_columns(); a convolution with fewer, or not a multiple, computes
// the rest of its last tile for nothing. `fold` neighbouring output pixels
// of a row computed as one pixel of fold x the channels, by a kernel
// (fold - 1) strides wider with fold x the stride, fill the tiles; in
// channels-last order that output is the same memory. The fold (2 to 16)
// that fills them best where it does at least kMinFoldGain x the useful
// work per multiply-add; else 1.
i64 pixel_fold(i64 channels, i64 kernel_w, i64 stride_w, i64 out_w);

// ---- elementwise.cpp -----------------------------------------------

// An elementwise XNNPACK op over a whole tensor, in place when in == out.
void unary_step(Context& cx, const Node& n, xnn_operator_t op, int in, int out);
xnn_operator_t make_unary(Context& cx, const Node& n, NodeState& st, std::size_t index, xnn_unary_operator type,
                          const xnn_unary_params* params);
void post_activation(Context& cx, const Node& n, NodeState& st, std::size_t index, const Fused& f, int out);
// A clamp after an op that has no output bounds of its own.
void post_clamp(Context& cx, const Node& n, NodeState& st, std::size_t index, const Fused& f, int out);
void lower_unary(Context& cx, const Node& n, NodeState& st);
// add/sub/mul/div: scalars are computed now; tensors with numpy
// broadcasting by XNNPACK, in the layout of the larger operand.
void lower_binary(Context& cx, const Node& n, NodeState& st);
// Elementwise ops, in whatever layout their input has (in place for x_ on a non-constant).
void lower_pointwise(Context& cx, const Node& n, NodeState&);
// An elementwise op of one number: ints stay ints where torch keeps them so
// (neg, abs, square, pow to a non-negative integer power).
int pointwise_number(Context& cx, const Node& n, const std::string& base, const Slot& num);
// A fused activation that XNNPACK has no operator for, in place after the op.
void portable_post(Context& cx, portable::Unary op, int out);
// eq/ne/lt/le/gt/ge of a tensor and a number or a tensor (broadcast): 1 or 0.
void lower_compare(Context& cx, const Node& n, NodeState&);
// maximum, minimum, logical_and/or/xor, atan2 of two tensors (broadcast), portable.
void lower_binary_portable(Context& cx, const Node& n, NodeState&);
// lerp(self, end, weight), addcmul/addcdiv(self, tensor1, tensor2, value): three operands broadcast.
void lower_ternary(Context& cx, const Node& n, NodeState&);
// glu(self, dim): the first half times the sigmoid of the second.
void lower_glu(Context& cx, const Node& n, NodeState&);
// bitwise_not/and/or/xor (and TorchScript's __and__, __or__, __xor__,
// __invert__) of masks and integers held as floats: the logical ops on a mask,
// the integer ones otherwise; a number operand too.
void lower_bitwise(Context& cx, const Node& n, NodeState&);
// op(a, b) of two tensors (or values held as floats), broadcast, on a portable kernel: its output slot.
int portable_binary(Context& cx, const Node& n, portable::Binary op, ValueId a, ValueId b);
// The same of two slots planning already holds.
int portable_binary(Context& cx, const Node& n, portable::Binary op, int x, int y);
// masked_fill(self, mask, value): value where the mask (broadcast to self) is set.
void lower_masked_fill(Context& cx, const Node& n, NodeState&);
// new_zeros/new_ones/new_full (of a size), zeros_like/ones_like/full_like
// and fill (of self's shape): one value everywhere, written on each run.
void lower_full(Context& cx, const Node& n, NodeState&);
// numpy broadcasting of two shapes.
Shape broadcast_shape(const Context& cx, const Node& n, const Shape& a, const Shape& b);
// Slot `s` in torch layout with shape `to` (broadcast by a step of ours when it differs).
int broadcast_to(Context& cx, int s, const Shape& to);
// The argument `name` where it is a tensor input whose values only the run
// knows (not an attribute, a number or a one-element constant), else nullopt.
std::optional<ValueId> run_time_tensor(const Context& cx, const Node& n, std::string_view name);
// A number argument: an attribute or an input known before the run.
// A one-element constant tensor (fill.Tensor's value) counts as a number.
double number_arg(const Context& cx, const Node& n, std::string_view name);

// ---- conv.cpp ------------------------------------------------------

void lower_conv(Context& cx, const Node& n, NodeState& st);
// A transposed convolution whose kernel equals its stride (no groups,
// padding, dilation or output padding): XNNPACK's fully connected op gives
// each input pixel its taps, kernels::taps_to_space puts them in place.
void lower_conv_transpose_as_gemm(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const Fused& fused);
// A 1D convolution ([N, C, L], weight [O, C/groups, K]).
void lower_conv1d(Context& cx, const Node& n, NodeState& st);
// conv_winograd.cpp: a 3x3 (3x3x3) stride-1 convolution without groups as
// Winograd F(2,3) where Options::conv_algorithm asks for it or it measures
// faster; false to run it directly. `direct` runs the direct convolution
// once (input, output: channels-last, scratch for a 3D one's unfolding) on
// the geometry given, for the measurement.
using DirectRun = std::function<void(const float* x, float* y, i64 batch, const i64* in_sizes)>;
bool lower_winograd(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const std::vector<i64>& padding,
                    const Fused& fused, const DirectRun& direct);
// conv.cpp: a 3x3 depthwise convolution (2D, stride 1 or 2, not
// dilated) on our kernel (winograd::Kernels::depthwise) where it measures faster
// than XNNPACK's on this shape (`direct`; remembered for the process), under
// ConvAlgorithm::kFastest only; false: XNNPACK's runs it.
bool lower_depthwise(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const std::vector<i64>& stride,
                     const std::vector<i64>& padding, const Fused& fused, const DirectRun& direct);
// conv.cpp: a 1x1 convolution (2D or 3D, stride 1, no padding or
// groups) on our GEMM (winograd::Kernels::pointwise) where it measures
// faster than XNNPACK's on this shape, as lower_depthwise() decides.
bool lower_pointwise_conv(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const Fused& fused, const DirectRun& direct);
// conv.cpp: a convolution without groups whose output pixels each
// read few inputs (winograd::Unfolded, up to kMaxUnfoldedRow) as our GEMM
// over its unfolded input, where that measures faster than XNNPACK's.
bool lower_unfolded(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const std::vector<i64>& stride,
                    const std::vector<i64>& padding, const std::vector<i64>& dilation, const Fused& fused, const DirectRun& direct);

// ---- norm.cpp ------------------------------------------------------

// Batch norm with running statistics folded into a scale and shift; in
// training mode, the batch's own (lower_norm).
void lower_batch_norm(Context& cx, const Node& n, NodeState& st);
// group_norm, instance_norm (statistics of the input), layer_norm, batch
// norm in training mode.
void lower_norm(Context& cx, const Node& n, NodeState&);
// rms_norm(input, normalized_shape, weight, eps): eps by default float32's epsilon, as torch's.
void lower_rms_norm(Context& cx, const Node& n, NodeState&);
void lower_softmax(Context& cx, const Node& n, NodeState& st);
void lower_prelu(Context& cx, const Node& n, NodeState& st);

// ---- pool.cpp ------------------------------------------------------

// torch's pooling output size, with ceil_mode.
i64 pooled(i64 in, i64 k, i64 s, i64 p, i64 d, bool ceil_mode);
void lower_max_pool(Context& cx, const Node& n, NodeState& st);
// Max pooling over 1 to 3 spatial dims on the portable kernel, with the
// maxima's positions where the graph reads them (*_with_indices), with or
// without a batch dim.
void lower_max_pool_portable(Context& cx, const Node& n, NodeState&);
void lower_avg_pool(Context& cx, const Node& n, NodeState& st);
void avg_pool_step(Context& cx, const Node& n, NodeState& st, int x, const Shape& xs, const std::vector<i64>& kernel,
                   const std::vector<i64>& stride, const std::vector<i64>& padding, bool ceil_mode);
// Adaptive pooling: the identity, a global mean, a plain average pooling
// when the output divides the input (XNNPACK), else portable kernels.
void lower_adaptive_pool(Context& cx, const Node& n, NodeState& st);
void lower_mean(Context& cx, const Node& n, NodeState&);
// A mean (or sum) over `dims`, adjacent in storage.
void reduce_step(Context& cx, const Node& n, int x0, std::vector<i64> dims, bool keepdim, bool mean = true);
// pooled() with its arguments checked (validate.cpp has already, for a graph through finalize()).
i64 pooled_length(const Context& cx, const Node& n, i64 in, i64 kernel, i64 stride, i64 pad, i64 dilation, bool ceil_mode);
// 1D pooling over the last dim of [N, C, L] (or [C, L]).
void lower_pool1d(Context& cx, const Node& n, NodeState&);
// `shape` less the dims marked in `reduced` (1s in their place with keepdim).
Shape reduced_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdim);
// linalg_vector_norm, amax, amin over any dims (portable::reduce).
void lower_reduce(Context& cx, const Node& n, NodeState&);
void lower_cumsum(Context& cx, const Node& n, NodeState&);
// cummax/cummin along a dim: the running extreme and its position.
void lower_cum_extreme(Context& cx, const Node& n, NodeState&);
// aminmax (of all elements, or along a dim): the min and the max.
void lower_aminmax(Context& cx, const Node& n, NodeState&);
// max/min: of all elements (a 0-d tensor), along a dim (values and indices),
// or of two tensors (maximum/minimum).
void lower_max_min(Context& cx, const Node& n, NodeState&);
// sort and topk along a dim: values and indices (portable::sort).
void lower_sort(Context& cx, const Node& n, NodeState&);
// im2col / col2im (F.unfold / F.fold), batched or not.
void lower_fold(Context& cx, const Node& n, NodeState&);
// avg_pool3d (XNNPACK has no 3D average pooling), portable.
void lower_avg_pool_portable(Context& cx, const Node& n, NodeState&);

// ---- matrix.cpp ----------------------------------------------------

void lower_linear(Context& cx, const Node& n, NodeState& st);
// outer(self, vec2); baddbmm(self, batch1, batch2, beta, alpha), portable.
void lower_outer(Context& cx, const Node& n, NodeState&);
void lower_baddbmm(Context& cx, const Node& n, NodeState&);
// cdist (x1, x2 with broadcast batch dims) and pdist: p-norm distances of rows.
void lower_distance(Context& cx, const Node& n, NodeState&);
// pairwise_distance(x1, x2, p, eps, keepdim) over the last dim and
// cosine_similarity(x1, x2, dim, eps), the operands broadcast.
void lower_pairwise_distance(Context& cx, const Node& n, NodeState&);
void lower_cosine_similarity(Context& cx, const Node& n, NodeState&);
// y = x @ w^T + b over x's last dim ([..., in] -> [..., out]): XNNPACK's
// fully connected op, the node's operator number `index` (weights packed
// once, on the first plan).
int fully_connected(Context& cx, const Node& n, NodeState& st, std::size_t index, int x, const float* w, const float* b, i64 in_features,
                    i64 out_features, float out_min = -kInf, float out_max = kInf);
// out[rows, columns] = x[rows, depth] times a weight matrix, on XNNPACK's
// fully connected operators number `index` (column_blocks(): `make`
// creates the one for some output columns, out's row stride `columns`).
void gemm_step(Context& cx, const Node& n, NodeState& st, std::size_t index, int x, int out, i64 rows, i64 depth, i64 columns,
               const std::function<void(i64, i64, xnn_operator_t*)>& make);
// addmm(self, mat1, mat2, beta, alpha): beta * self + alpha * (mat1 @ mat2).
// With mat2 a weight [K, N], self its bias and both factors 1 (torch.export's
// linear: addmm(bias, x, permute(weight))) one fully connected operator, the
// weights packed once; else a batch matrix multiply and a step of ours.
void lower_addmm(Context& cx, const Node& n, NodeState& st);
// matmul / mm / bmm on XNNPACK's batch matrix multiply: [..., m, k] @
// [..., k, n], batch dims broadcast (numpy rules), 1-D operands as torch
// treats them (a row or a column, dropped from the result).
void lower_matmul(Context& cx, const Node& n, NodeState& st);
// C = A @ B on XNNPACK: A [a_batch..., m, k], B [b_batch..., k, n] (batch
// dims of equal count, broadcast), C of `out_shape` (c's elements in
// [batch..., m, n] order). The node's first XNNPACK operator is the one.
int batch_matmul(Context& cx, const Node& n, NodeState& st, int a, int b, const Shape& a_batch, const Shape& b_batch, i64 m, i64 k, i64 nn,
                 const Shape& out_shape);
// A torch-layout tensor with its dims in the order `perm` (XNNPACK's transpose; none when in order).
int permuted(Context& cx, int x, const std::vector<std::size_t>& perm);
// einsum of two operands as one batch matrix multiply: the letters in both
// operands and the output are batch dims, those in both operands only are
// summed over, the others are rows (first operand) and columns (second).
// Each operand is permuted to [batch, rows or columns, summed] order once.
void lower_einsum(Context& cx, const Node& n, NodeState& st);
// torch.nn.MultiheadAttention's fused eval path (torchvision's ViT), without a mask.
void lower_attention(Context& cx, const Node& n, NodeState& st);
// scaled_dot_product_attention (query, key, value with the same batch dims;
// an additive or boolean mask broadcast; causal; scale): XNNPACK's fused
// attention, or a portable kernel where the mask would be too large.
void lower_sdpa(Context& cx, const Node& n, NodeState& st);

// ---- shape.cpp -----------------------------------------------------

// permute(self, dims), transpose(self, dim0, dim1), t(self): in the standard layout.
void lower_permute(Context& cx, const Node& n, NodeState&);
void lower_cat(Context& cx, const Node& n, NodeState&);
// stack(tensors, dim): each with a dim of 1 inserted at dim, concatenated.
void lower_stack(Context& cx, const Node& n, NodeState&);
// The tensors `in` concatenated along dim (in the layout of any that is channels-last).
int concat(Context& cx, const Node& n, std::vector<int> in, i64 dim_arg);
void lower_slice(Context& cx, const Node& n, NodeState&);
// x[start:end:step] along `dim` (PyTorch's clamping of start and end): an
// alias when it is the whole axis, else a copy in x's layout.
int slice_of(Context& cx, const Node& n, int x, i64 dim_arg, i64 start, i64 end, i64 step_by);
// flatten, view, reshape: plain storage read with another shape.
void lower_view(Context& cx, const Node& n, NodeState&);
void lower_narrow(Context& cx, const Node& n, NodeState&);
// chunk(x, chunks, dim), split(x, split_size, dim) with one size or a list,
// split_with_sizes: one slice per output.
void lower_chunk(Context& cx, const Node& n, NodeState&);
void lower_select(Context& cx, const Node& n, NodeState&);
// unbind(self, dim): one select per index.
void lower_unbind(Context& cx, const Node& n, NodeState&);
// x[..., index, ...] along dim, the dim dropped (an alias of a slice).
int select_of(Context& cx, const Node& n, int x, i64 dim_arg, i64 index);
// unsqueeze, squeeze: the same bytes in torch's layout with another shape.
void lower_reshape_dims(Context& cx, const Node& n, NodeState&);
void lower_expand(Context& cx, const Node& n, NodeState&);
// repeat(self, repeats): tiled (portable::repeat).
void lower_repeat(Context& cx, const Node& n, NodeState&);
// repeat_interleave(self, repeats, dim): each slice along dim (of the
// flattened tensor without one) repeated in place; repeats a number, or a
// tensor of one per slice, constant or computed (the output's size then only
// the run knows: Context::read_by_run()). repeat_interleave(repeats): each
// index that many times.
void lower_repeat_interleave(Context& cx, const Node& n, NodeState&);
void lower_flip(Context& cx, const Node& n, NodeState&);
// tril, triu of the last two dims.
void lower_triangle(Context& cx, const Node& n, NodeState&);
// A list of integers known before the run (a shape for view, pad, resize).
void lower_list(Context& cx, const Node& n, NodeState&);
// pad / constant_pad_nd / reflection_padNd / replication_padNd.
void lower_pad(Context& cx, const Node& n, NodeState& st);
void lower_slice_scatter(Context& cx, const Node& n, NodeState&);
// select_scatter(self, src, dim, index): src written at one index of dim.
void lower_select_scatter(Context& cx, const Node& n, NodeState&);
// diagonal(self, offset, dim1, dim2): the diagonal as the last dim (a strided read).
void lower_diagonal(Context& cx, const Node& n, NodeState&);
// torch.roll: each (shift, dim) pair, or with no dims over the flattened tensor.
void lower_roll(Context& cx, const Node& n, NodeState&);
void lower_identity(Context& cx, const Node& n, NodeState&);
// native_dropout in eval (train false): the input and a mask of ones.
void lower_native_dropout(Context& cx, const Node& n, NodeState&);
// Runs `lower` on a node whose input `arg` has no batch dim (torch's unbatched
// convolutions and poolings) as on a batch of one: the input read as [1, ...],
// each tensor output read back without its leading 1. The same bytes: no copy.
void lower_as_batch_of_one(Context& cx, const Node& n, NodeState& st, Lowering lower, std::string_view arg, std::size_t position);
// copy(self, src): src broadcast to self's shape.
void lower_copy(Context& cx, const Node& n, NodeState&);
// as_strided over the input's contiguous storage (portable::as_strided).
void lower_as_strided(Context& cx, const Node& n, NodeState&);
void lower_unfold(Context& cx, const Node& n, NodeState&);
// resize_(self, size) / resize_as_(self, the_template): the input's contiguous
// storage read as `size`; elements past the input's own (memory torch leaves
// uninitialized) are zeros here.
void lower_resize_storage(Context& cx, const Node& n, NodeState&);
void lower_size(Context& cx, const Node& n, NodeState&);
void lower_getitem(Context& cx, const Node& n, NodeState&);
void lower_scalar_identity(Context& cx, const Node& n, NodeState&);

// ---- index.cpp ---------------------------------------------------------

// Whether value `v` is a boolean mask: its dtype, or where the reader left it
// untyped, the op that made it (a comparison, a cast to bool, a view of a mask).
bool is_mask(const Graph& g, ValueId v, int depth = 0);
// The number of nonzero elements of slot `x`, which only the run knows: a
// step reads it and checks it against the count planned for
// (Context::read_by_run()). nullopt where no run has read it yet: the plan stops.
std::optional<i64> nonzero_count(Context& cx, int x);
// masked_select(self, mask): the elements under the mask (both broadcast), [count].
void lower_masked_select(Context& cx, const Node& n, NodeState&);
// index.Tensor (Tensor?[] indices, Nones kept whole; a boolean mask as its
// nonzero() coordinates, counted by the run), index_select.
void lower_index(Context& cx, const Node& n, NodeState&);
// nonzero / argwhere: [count, rank] coordinates, the count read by the run
// (Context::read_by_run()); nonzero_numpy (as_tuple): one [count] per dim;
// nonzero_static: [size, rank], the rest fill_value.
void lower_nonzero(Context& cx, const Node& n, NodeState&);
// item / _local_scalar_dense: the one element as a number the rest of the
// plan knows, read by the run (Context::read_by_run()).
void lower_item(Context& cx, const Node& n, NodeState&);
void lower_index_select(Context& cx, const Node& n, NodeState&);
// gather(self, dim, index); embedding(weight, indices) as a gather of rows.
void lower_gather(Context& cx, const Node& n, NodeState&);
void lower_pixel_shuffle(Context& cx, const Node& n, NodeState&);
// pixel_unshuffle and channel_shuffle: strided reads.
void lower_unshuffle(Context& cx, const Node& n, NodeState&);
// where(condition, self, other), broadcast.
void lower_where(Context& cx, const Node& n, NodeState&);
// any and all, over dims or everything.
void lower_any_all(Context& cx, const Node& n, NodeState&);
// _to_copy, to, type_as: a cast of the values held as floats.
void lower_cast(Context& cx, const Node& n, NodeState&);
// arange, full, scalar_tensor, zeros, ones: constants made while planning;
// empty, empty_strided, new_empty as zeros (torch leaves their values unset).
void lower_factory(Context& cx, const Node& n, NodeState&);
// rand, randn, randint (and their _like forms) and randperm: new values at
// every run from a generator of ours (not torch's: the same distributions,
// other draws), its stream from the node's name and the run's number.
void lower_random(Context& cx, const Node& n, NodeState&);

// ---- backward.cpp --------------------------------------------------

// The core opset's backward ops (training graphs): max_pool2d_with_indices_
// backward, avg_pool2d_backward, _adaptive_avg_pool2d_backward,
// embedding_dense_backward, native_layer_norm_backward,
// native_group_norm_backward, convolution_backward.
void lower_backward(Context& cx, const Node& n, NodeState&);

// ---- scatter.cpp ---------------------------------------------------

// scatter (src or value, with reduce), scatter_add, scatter_reduce (sum, prod,
// mean, amax, amin; include_self).
void lower_scatter(Context& cx, const Node& n, NodeState&);
// index_add (alpha), index_copy, index_fill along a dim, by a 1-D index.
void lower_index_along(Context& cx, const Node& n, NodeState&);
// index_put(self, indices, values, accumulate): at advanced indices (Nones
// kept whole), or under a boolean mask over the leading dims.
void lower_index_put(Context& cx, const Node& n, NodeState&);
// masked_scatter(self, mask, source): source's elements, in order, where the mask is set.
void lower_masked_scatter(Context& cx, const Node& n, NodeState&);
// embedding_bag (and _embedding_bag): bags of rows summed, averaged or maxed; output 0 only.
void lower_embedding_bag(Context& cx, const Node& n, NodeState&);

// ---- resize.cpp ----------------------------------------------------

// grid_sampler_2d (grid_sampler): an input read at a grid of points, portable.
void lower_grid_sample(Context& cx, const Node& n, NodeState&);
void lower_resize(Context& cx, const Node& n, NodeState&);
// Linear, bilinear, trilinear, bicubic, 1D nearest and nearest-exact resizes, torch layout.
void lower_resize_portable(Context& cx, const Node& n, NodeState&);


// ---- complex.cpp ---------------------------------------------------

// The ops that take complex tensors (held as (real, imaginary) float pairs,
// Slot::complex); the runtime refuses a complex input to any other.
bool takes_complex(std::string_view base);
// The refusal's reason: which ops take them.
extern const std::string kComplexOps;
// _fft_r2c, _fft_c2r, _fft_c2c and torch.fft's fft/ifft/rfft/irfft (2, n) and hfft/ihfft.
void lower_fft(Context& cx, const Node& n, NodeState& st);
// stft of a real signal (1-D or 2-D): windowed frames, then one real-to-complex transform.
void lower_stft(Context& cx, const Node& n, NodeState& st);
// hann_window, hamming_window, blackman_window, bartlett_window.
void lower_window(Context& cx, const Node& n, NodeState&);
// view_as_real, view_as_complex, real, imag, complex, conj and resolve_conj.
void lower_complex(Context& cx, const Node& n, NodeState&);
// add/sub/mul/div where an operand is complex (the others: real tensors or
// numbers, broadcast); false where neither is.
bool lower_complex_binary(Context& cx, const Node& n, const std::string& base);
// The layout ops that also move complex and int64 values (view, permute,
// select, cat, ...): lower_layout_on_pairs runs the op's own lowering over
// their pairs of 32-bit words, its dims and sizes given for their rank.
bool layout_op_on_pairs(std::string_view base);
void lower_layout_on_pairs(Context& cx, const Node& n, NodeState& st, Lowering lower);
// The magnitudes of complex slot x (abs).
int complex_abs(Context& cx, int x);
// Slot x cast to a complex type ((x, 0) pairs), or a complex x to a real one (its real parts).
int complex_cast(Context& cx, const Node& n, int x, bool to_complex_type);

// ---- integer.cpp ---------------------------------------------------

// A node with an int64 input (Slot::int64): the layout ops over its pairs,
// the ops of computes_on_int64() exactly, any other on a float32 copy of it
// (refused at the run past 2^24 where that would not be torch's result).
// `rest`: the lowering of a node without int64 inputs.
void lower_with_int64(Context& cx, const Node& n, NodeState& st, Lowering lower, const std::function<void(const Node&)>& rest);
// The ops that compute on int64 tensors exactly (docs/design.md).
bool computes_on_int64(std::string_view base);

}  // namespace tracegraph::xnnpack
