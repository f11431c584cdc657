// Portable kernels: plain C++ for the ops XNNPACK has no operator for, on
// float32 tensors in torch's layout (contiguous, NCHW). The XNNPACK backend
// runs them as steps between its XNNPACK regions, converting the layout only
// at their borders. Each is a pure function of its pointers and sizes; the
// callers have checked the shapes (shape rules in the backend's lowerings).
#pragma once

#include <cstdint>
#include <vector>

namespace tracegraph::xnnpack::portable {

using i64 = std::int64_t;

enum class Unary {
  kHardsigmoid, kSilu, kGeluTanh, kMish, kExp, kLog, kSqrt, kRsqrt, kNeg, kAbs, kSquare, kErf,
  kSin, kCos, kTan, kFloor, kCeil, kRound, kTrunc, kReciprocal, kSign, kLog1p, kExpm1, kLog2, kLog10,
  kLogicalNot,  // a mask (1 where x is 0), held as float32
  kAcos, kAsin, kAtan, kCosh, kSinh, kSoftplus, kAcosh, kAsinh, kAtanh,
  kIsinf, kIsnan, kIsfinite,  // masks, held as float32
  kBitwiseNotInt,             // ~x of an integer held as float32 (-x - 1); of a mask it is kLogicalNot
};
// y = f(x) elementwise (in place when x == y).
void unary(Unary op, const float* x, float* y, i64 count);
// y = x ** exponent; y = other - alpha * x (rsub with a number).
void pow_scalar(const float* x, float* y, i64 count, double exponent);
void rsub_scalar(const float* x, float* y, i64 count, double other, double alpha);

enum class PadMode { kConstant, kReflect, kReplicate, kCircular };
// `before`/`after`: per dim of `in_shape` (may be negative for a crop with constant mode).
void pad(const float* x, float* y, const std::vector<i64>& in_shape, const std::vector<i64>& before,
         const std::vector<i64>& after, PadMode mode, float value);

// Linear (1 spatial dim), bilinear (2) or trilinear (3) resize of [N*C] planes,
// PyTorch's coordinates: `scale[i]` is the input step per output step as
// area_pixel_compute_scale gives it (ignored with align_corners).
void resize_linear(const float* x, float* y, i64 planes, const std::vector<i64>& in, const std::vector<i64>& out,
                   const std::vector<double>& scale, bool align_corners);
// Nearest resize of [N*C] planes over any number of spatial dims (floor(dst * scale);
// `exact`, torch's nearest-exact: floor((dst + 0.5) * scale)).
void resize_nearest(const float* x, float* y, i64 planes, const std::vector<i64>& in, const std::vector<i64>& out,
                    const std::vector<double>& scale, bool exact = false);
// grid_sampler_2d: y [N, C, out_h, out_w] = x [N, C, in_h, in_w] read at
// grid [N, out_h, out_w, 2]'s (x, y) in [-1, 1], bilinear, nearest or
// bicubic, outside the input as zeros, the border or its reflection; torch's
// modes and its arithmetic.
enum class GridMode { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum class GridPadding { kZeros = 0, kBorder = 1, kReflection = 2 };
struct GridSample {
  i64 batch = 0, channels = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  GridMode mode = GridMode::kBilinear;
  GridPadding padding = GridPadding::kZeros;
  bool align_corners = false;
};
void grid_sample(const GridSample& g, const float* x, const float* grid, float* y);
// Bicubic resize of [N*C] planes (A = -0.75, borders clamped), as PyTorch.
void resize_bicubic(const float* x, float* y, i64 planes, i64 in_h, i64 in_w, i64 out_h, i64 out_w, double scale_h,
                    double scale_w, bool align_corners);

// Normalizes each group of `group_size` contiguous elements (mean 0, variance 1,
// biased), then y = y * weight[c] + bias[c] with c = channel of the element:
// `channel_of(index within the sample)` is index / inner. weight/bias may be null.
// group norm: samples N, groups G, group_size C/G * inner; instance norm: G = C.
// mean_out, rstd_out (may be null): each group's mean and 1 / sqrt(var + eps), [N, G].
// Runs the (sample, group) pairs first .. first + count - 1 of batch * groups.
void group_norm(const float* x, float* y, i64 channels, i64 inner, i64 groups, const float* weight, const float* bias, double eps,
                float* mean_out, float* rstd_out, i64 first, i64 count);
// Normalizes each of `outer` rows of `inner` elements; weight/bias of `inner` (may be null);
// mean_out, rstd_out (may be null): each row's mean and 1 / sqrt(var + eps).
void layer_norm(const float* x, float* y, i64 outer, i64 inner, const float* weight, const float* bias, double eps,
                float* mean_out = nullptr, float* rstd_out = nullptr);
// RMS norm: each row of `inner` divided by sqrt(mean(x^2) + eps), times weight (of `inner`, may be null).
void rms_norm(const float* x, float* y, i64 outer, i64 inner, const float* weight, double eps);

// Random values (op_random.cpp) of elements first .. first + count - 1 of a
// tensor, from `stream`: uniform in [0, 1), standard normal, or whole numbers
// in [low, high).
enum class Random { kUniform, kNormal, kInteger };
void random_values(Random kind, float* y, i64 first, i64 count, std::uint64_t stream, double low = 0, double high = 1);
// A random permutation of 0 .. n - 1 (randperm).
void random_permutation(float* y, i64 n, std::uint64_t stream);

struct Conv1d {
  i64 batch, in_channels, in_length, out_channels, kernel, stride, padding, dilation, groups, out_length;
};
void conv1d(const Conv1d& c, const float* x, const float* w, const float* b, float* y);
// A transposed convolution over 1 to 3 spatial dims, torch's layout and
// weight [in_channels, out_channels / groups, k...]; the sizes torch gives
// (`out` includes the output padding). b may be null.
struct ConvTranspose {
  i64 batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  std::vector<i64> in, out, kernel, stride, padding, dilation;
};
void conv_transpose(const ConvTranspose& c, const float* x, const float* w, const float* b, float* y);

struct Pool1d {
  i64 planes, in_length, kernel, stride, padding, dilation, out_length;
  bool count_include_pad = true;
};
void max_pool1d(const Pool1d& p, const float* x, float* y);
void avg_pool1d(const Pool1d& p, const float* x, float* y);

// Adaptive average or max pooling of [planes, in...] to [planes, out...] over
// 1 to 3 spatial dims, with torch's windows: [floor(o*in/out), ceil((o+1)*in/out)).
// `indices` (max only, may be null): each maximum's flat position in its input plane.
void adaptive_pool(const float* x, float* y, i64 planes, const std::vector<i64>& in, const std::vector<i64>& out, bool max,
                   float* indices = nullptr);

// Max pooling of [planes, in...] over 1 to 3 spatial dims to out, with torch's
// windows (the padding never read, dilation); `indices` (may be null): each
// maximum's flat position in its input plane, as torch's *_with_indices give.
struct MaxPool {
  i64 planes = 0;
  std::vector<i64> in, out, kernel, stride, padding, dilation;
};
void max_pool(const MaxPool& p, const float* x, float* y, float* indices);

// y = x > 0 ? x : w[c] * x, c the channel (dim 1) of [batch, channels, inner]; one weight for all when weights == 1.
void prelu(const float* x, const float* w, float* y, i64 batch, i64 channels, i64 inner, i64 weights);

// y[out_shape] = x broadcast (numpy rules, x's shape right-aligned; 1s repeat).
void broadcast(const float* x, float* y, const std::vector<i64>& in_shape, const std::vector<i64>& out_shape);

// Discrete Fourier transforms along the last axis of `lines` lines, complex
// values held as (real, imaginary) float pairs. kR2C: a real line of `in_len`
// to `out_len` complex (n/2 + 1 one-sided, or n); kC2C: complex to complex;
// kC2R: complex to `out_len` = n real values, the Hermitian half read (the
// first n/2 + 1 entries; the imaginary parts of the zero and Nyquist
// frequencies ignored, as torch's pocketfft does). The line is cropped or
// zero-padded to the signal length `n` first (torch's `s`); `sign` is -1 for
// a forward transform, +1 for an inverse one; every output times `scale`.
enum class Dft { kR2C, kC2C, kC2R };
struct DftAxis {
  Dft kind = Dft::kC2C;
  i64 n = 0;        // the signal length
  i64 in_len = 0;   // entries per input line (complex ones for kC2C and kC2R)
  i64 out_len = 0;  // entries per output line
  int sign = -1;
  double scale = 1;
  i64 in_floats() const { return kind == Dft::kR2C ? in_len : 2 * in_len; }
  i64 out_floats() const { return kind == Dft::kC2R ? out_len : 2 * out_len; }
};
// The transform as a matrix for a GEMM: [out_floats()][in_floats()], row major.
std::vector<float> dft_matrix(const DftAxis& a);
// The transform of each line directly (O(n) per output entry, twiddles from a
// table of n), for lines too long for dft_matrix's weights.
void dft_lines(const DftAxis& a, const float* x, float* y, i64 lines);

// y [size] = x's storage read at offset + sum(index[d] * stride[d]) (as_strided).
void as_strided(const float* x, float* y, const std::vector<i64>& size, const std::vector<i64>& stride, i64 offset);

// Batch norm with the batch's statistics (training mode, no running stats:
// torch.export's instance norm, on [1, N*C, ...]): per channel c of [batch,
// channels, inner], the mean and biased variance over batch and inner.
// mean_out, rstd_out (may be null): each channel's batch mean and 1 / sqrt(var + eps).
// Runs channels first .. first + count - 1.
void batch_norm_batch_stats(const float* x, float* y, i64 batch, i64 channels, i64 inner, const float* weight, const float* bias, double eps,
                            float* mean_out, float* rstd_out, i64 first, i64 count);
// Batch norm with running statistics that may be computed in the graph (the
// XNNPACK path folds constant ones): y = (x - mean[c]) / sqrt(var[c] + eps) * w[c] + b[c].
void batch_norm_running_stats(const float* x, float* y, i64 batch, i64 channels, i64 inner, const float* running_mean, const float* running_var,
                              const float* weight, const float* bias, double eps);

// Advanced indexing, x[indices] (aten::index.Tensor): `indices` has one entry
// per leading dim of x, null for a dim taken whole (None), else an index
// tensor held as floats, all broadcast to `index_shape`. The indexed dims,
// adjacent, are replaced by index_shape where they stand; apart, it comes
// first (torch's rule). Negative indices count from the end. Returns false
// (y partly written) at the first index out of range, its value in *bad.
bool index(const float* x, float* y, const std::vector<i64>& x_shape, const std::vector<const float*>& indices,
           const std::vector<i64>& index_shape, double* bad);
// How many of x's `count` elements are not zero (NaN counts: it is not zero).
i64 count_nonzero(const float* x, i64 count);
// torch.nonzero: the coordinates in `shape` of x's nonzero elements, in
// order, as floats: element k's as row k of y [rows, rank] (by_dim false),
// or as column k of y [rank, rows] (by_dim: one index tensor per dim, the
// form a boolean mask indexes with). Writes at most `rows` of them
// (nonzero_static's size); rows past the last nonzero get `fill`.
void nonzero(const float* x, const std::vector<i64>& shape, float* y, i64 rows, bool by_dim, float fill = 0);
// torch.gather along `dim`: y [index_shape] with y[..., i, ...] = x[..., index[..., i, ...], ...]
// (index_shape no larger than x's but along dim). False at the first index out of range, its value in *bad.
bool gather(const float* x, const float* index, float* y, const std::vector<i64>& x_shape, const std::vector<i64>& index_shape,
            std::size_t dim, double* bad);
// einsum of any number of operands: letters of `sizes` (the output's first, in
// its order, then the summed ones); per operand, its stride along each letter
// (0 where it lacks the letter or broadcasts it; a letter it repeats has the
// strides added: its diagonal). y = the sum over the summed letters of the
// product of the operands, in double.
struct Einsum {
  std::vector<i64> sizes;
  std::size_t out_letters = 0;
  std::vector<std::vector<i64>> strides;
};
void einsum(const Einsum& e, const std::vector<const float*>& x, float* y);

// Writes by index into y, which holds self (the caller copied it). Each
// returns false at the first index out of range (y partly written), its
// value in *bad; negative indices count from the end.
enum class ScatterReduce { kNone, kSum, kProd, kMean, kAmax, kAmin };
// torch.scatter / scatter_add / scatter_reduce along `dim`: y[..., index[..., i, ...], ...]
// combined with src[..., i, ...] (or `value` where src is null), for every
// position of index (no larger than src, nor than y but along dim). Without
// include_self a position reached starts from the first value (mean: the
// values' mean; with self, of them and self). Duplicates in kNone: the last wins.
bool scatter(float* y, const std::vector<i64>& y_shape, const float* index, const std::vector<i64>& index_shape, const float* src,
             const std::vector<i64>& src_shape, float value, std::size_t dim, ScatterReduce reduce, bool include_self, double* bad);
// index_add / index_copy / index_fill: y [outer, size, inner]; slice index[k]
// of the middle dim combined with alpha * source's slice k (source [outer,
// count, inner]) or with `value` where source is null.
bool index_along(float* y, i64 outer, i64 size, i64 inner, const float* index, i64 count, const float* source, float value, float alpha,
                 ScatterReduce reduce, double* bad);
// index_put at advanced indices (as portable::index reads them): `values`
// already broadcast to the indexed result's shape; accumulate adds.
bool index_put(float* y, const std::vector<i64>& y_shape, const std::vector<const float*>& indices, const std::vector<i64>& index_shape,
               const float* values, bool accumulate, double* bad);
// index_put under a boolean mask over y's leading dims: y [positions, inner];
// each block whose mask is set gets `values` (one block, broadcast; with
// per_position, the next of one block per set position), or adds it.
void mask_put(float* y, const float* mask, i64 positions, i64 inner, const float* values, bool accumulate, bool per_position = false);
// torch.masked_select of x and mask of the same `count` elements: y gets x's
// elements where the mask is set, in order.
void masked_select(const float* x, const float* mask, float* y, i64 count);

// pixel_shuffle of [planes, C * r * r, H, W] to [planes, C, H * r, W * r].
void pixel_shuffle(const float* x, float* y, i64 planes, i64 channels, i64 h, i64 w, i64 r);
// y = c != 0 ? a : b elementwise (all of one shape).
void where(const float* c, const float* a, const float* b, float* y, i64 count);
// A cast to an integer type (toward zero, as torch) or to bool (x != 0), held as floats.
void cast_to_integer(const float* x, float* y, i64 count);
void cast_to_bool(const float* x, float* y, i64 count);

// y = x reversed along each dim marked in `flipped`.
void flip(const float* x, float* y, const std::vector<i64>& shape, const std::vector<bool>& flipped);
// tril / triu of each [rows, cols] plane: x where col - row <= diagonal (tril) or >= (triu), else 0.
void triangle(const float* x, float* y, i64 planes, i64 rows, i64 cols, i64 diagonal, bool lower);
// y = op(a, b) with a and b of y's shape: maximum and minimum (NaN wins), logical and/or/xor (masks held as floats),
// atan2, pow, fmod (C's), remainder (Python's), floor division and division rounded toward zero.
// The bitwise ops read integers and masks held as float32 (exact to 2^24) as
// int64; on masks (0 and 1) they are the logical ones.
enum class Binary {
  kMaximum, kMinimum, kLogicalAnd, kLogicalOr, kLogicalXor, kAtan2, kPow, kFmod, kRemainder, kFloorDivide, kDivTrunc,
  kBitwiseAnd, kBitwiseOr, kBitwiseXor, kHypot,
};
void binary(Binary op, const float* a, const float* b, float* y, i64 count);
// x with NaN as `nan`, +inf as `posinf`, -inf as `neginf`.
void nan_to_num(const float* x, float* y, i64 count, float nan, float posinf, float neginf);

// y = x tiled `repeats[d]` times along each dim d (in_shape already has as
// many dims as repeats, leading 1s added).
void repeat(const float* x, float* y, const std::vector<i64>& in_shape, const std::vector<i64>& repeats);
// y = x [outer, repeats.size(), inner] with slice i along the middle dim
// repeated repeats[i] times in place (torch.repeat_interleave).
void repeat_interleave(const float* x, float* y, i64 outer, i64 inner, const std::vector<i64>& repeats);

// A reduction over the dims marked in `reduced` of x [shape] into y (the
// kept dims in order), accumulated in double: the vector norm of order p
// (inf, -inf, 0 counts nonzeros), the max or the min (NaN wins, as torch's),
// any or all (1 where some or every value is nonzero, else 0), the product,
// the variance with `p` as its correction (n - p in the divisor), logsumexp,
// or the index of the first max or min over the reduced elements in their
// row-major order (argmax/argmin of one dim or of all).
enum class Reduce { kNorm, kAmax, kAmin, kAny, kAll, kProd, kVar, kLogSumExp, kArgmax, kArgmin };
void reduce(Reduce op, const float* x, float* y, const std::vector<i64>& shape, const std::vector<bool>& reduced, double p = 2);

// Each line of x [outer, size, inner] along its middle axis, ordered: its
// first `k` values (k <= size; all of them for sort) ascending or descending,
// and their indices in the line (held as float32). NaN orders above every
// number, as torch's does; equal values keep their order (stable).
void sort(const float* x, float* values, float* indices, i64 outer, i64 size, i64 inner, i64 k, bool descending);

// im2col / col2im (F.unfold / F.fold) of [batch, channels, h, w] images and
// their columns [batch, channels * kh * kw, blocks]: im2col copies each
// sliding window's pixels (0 in the padding); col2im adds each column back
// into its window (overlaps summed).
struct Fold {
  i64 batch = 0, channels = 0, height = 0, width = 0;  // the image
  i64 kernel[2] = {1, 1}, dilation[2] = {1, 1}, padding[2] = {0, 0}, stride[2] = {1, 1};
  i64 blocks_h = 0, blocks_w = 0;  // the windows along each dim
};
void im2col(const Fold& f, const float* image, float* columns);
void col2im(const Fold& f, const float* columns, float* image);

// The p-norm distances of rows: cdist of x1 [batch, P, M] and x2 [batch, R, M]
// to [batch, P, R]; pdist of x [N, M] to the N * (N - 1) / 2 pairs i < j in
// order. p = 0 counts the coordinates that differ, p = inf takes the largest.
void cdist(const float* x1, const float* x2, float* y, i64 batch, i64 rows1, i64 rows2, i64 cols, double p);
void pdist(const float* x, float* y, i64 rows, i64 cols, double p);
// pairwise_distance of a and b [rows, cols]: the p-norm of each row of a - b + eps (torch's), into y [rows].
void pairwise_distance(const float* a, const float* b, float* y, i64 rows, i64 cols, double p, double eps);
// cosine_similarity of a and b [outer, size, inner] along the middle axis into y [outer, inner]:
// the sum of (a / max(|a|, eps)) * (b / max(|b|, eps)), torch's order of operations.
void cosine_similarity(const float* a, const float* b, float* y, i64 outer, i64 size, i64 inner, double eps);

// embedding_bag: for each bag b, rows indices[offsets[b] .. offsets[b + 1])
// of weight [num, dim] (scaled by per_sample_weights when given; padding_idx
// rows left out) summed (mode 0), averaged (1) or maxed (2) into y [bags, dim];
// an empty bag is zeros. False, with *bad the index, for one past the table.
bool embedding_bag(const float* weight, i64 num, i64 dim, const float* indices, i64 count, const float* offsets, i64 bags,
                   const float* per_sample_weights, int mode, i64 padding_idx, float* y, double* bad);

// masked_scatter: y = x, with the positions where mask is set (row-major)
// taking source's elements in order; *needed is how many source elements the
// mask asked for, false when that is more than source_count (torch's error).
bool masked_scatter(const float* x, const float* mask, const float* source, float* y, i64 count, i64 source_count, i64* needed);

// y = the running sum (or product) of x [outer, size, inner] along its middle axis.
void cumsum(const float* x, float* y, i64 outer, i64 size, i64 inner, bool product = false);
// cummax (cummin) of x [outer, size, inner] along its middle axis: the running
// maximum and the position where it was last reached (torch's: a NaN takes
// over and stays), held as float32.
void cum_extreme(const float* x, float* values, float* indices, i64 outer, i64 size, i64 inner, bool max);

// Average pooling of [planes, in...] over 1 to 3 spatial dims to out, with
// torch's windows (padding counted or not, a divisor override if not 0).
struct AvgPool {
  i64 planes = 0;
  std::vector<i64> in, out, kernel, stride, padding;
  bool count_include_pad = true;
  i64 divisor_override = 0;
};
void avg_pool(const AvgPool& p, const float* x, float* y);

// The backward ops (op_backward.cpp). An index out of range stops the kernel:
// false, with the index in *bad.
// max_pool*_with_indices_backward: grad_in [planes, in_plane] = grad_out
// scattered (added) to each output's index within its plane.
bool max_pool_backward(const float* grad_out, const float* indices, float* grad_in, i64 planes, i64 in_plane, i64 out_plane, double* bad);
// avg_pool*_backward: each output's grad / its divisor added over its window.
void avg_pool_backward(const AvgPool& p, const float* grad_out, float* grad_in);
void adaptive_avg_pool2d_backward(const float* grad_out, float* grad_in, i64 planes, i64 in_h, i64 in_w, i64 out_h, i64 out_w);
// embedding_dense_backward: grad_weight [num_weights, dim] = the rows of
// grad_out [count, dim] added at their indices (padding_idx left out).
bool embedding_backward(const float* grad_out, const float* indices, float* grad_weight, i64 count, i64 dim, i64 num_weights, i64 padding_idx,
                        bool scale_grad_by_freq, double* bad);
// native_layer_norm_backward (batch = rows, channels = the normalized
// elements, inner = 1, groups = 1) and native_group_norm_backward: mean and
// rstd [batch, groups]; weight [channels] or null. Each of grad_in,
// grad_weight, grad_bias may be null (output_mask).
struct NormBackward {
  i64 batch = 0, channels = 0, inner = 1, groups = 1;
};
void norm_backward(const NormBackward& a, const float* grad_out, const float* x, const float* mean, const float* rstd, const float* weight,
                   float* grad_in, float* grad_weight, float* grad_bias);
// convolution_backward over 1 to 3 spatial dims: grad_in, grad_weight and
// grad_bias (each may be null), for a convolution or a transposed one.
struct ConvBackward {
  i64 batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  bool transposed = false;
  std::vector<i64> in, out, kernel, stride, padding, dilation;
};
void conv_backward(const ConvBackward& a, const float* grad_out, const float* x, const float* weight, float* grad_in, float* grad_weight,
                   float* grad_bias);

// y = x rolled along each dim: y[.., (i + shifts[d]) % shape[d], ..] = x[.., i, ..];
// shifts already in [0, shape[d]).
void roll(const float* x, float* y, const std::vector<i64>& shape, const std::vector<i64>& shifts);

// Tensors that torch holds as bool or small integers (attention masks made
// from shapes) are held as float32 here: false/true as 0/1, integers exactly
// up to 2^24.
enum class Compare { kEq, kNe, kLt, kLe, kGt, kGe };
// y = (a OP b) ? 1 : 0 elementwise; b_stride 0 compares every a with b[0].
void compare(Compare op, const float* a, const float* b, float* y, i64 count, i64 b_stride);
// y = mask != 0 ? value : x elementwise (in place when x == y).
void masked_fill(const float* x, const float* mask, float value, float* y, i64 count);
void fill(float* y, float value, i64 count);

// Copies `x` to `y` (same shape [outer, size, inner]), then writes `src`
// ([outer, length, inner]) into positions start, start+step, ... of the middle axis.
void slice_scatter(const float* x, const float* src, float* y, i64 outer, i64 size, i64 inner, i64 start, i64 step,
                   i64 length);

// PyTorch's _native_multi_head_attention without a mask, batch first:
// query [batch, L, E], key and value [batch, S, E]; qkv_weight [3E, E] (rows:
// q, k, v), proj_weight [E, E]; out [batch, L, E]; `weights` (may be null)
// [batch, L, S], the attention averaged over the heads when `average`, else
// [batch, heads, L, S].
struct Attention {
  i64 batch, query_length, key_length, embed, heads;
  bool average = true;
};
// y = x - max - log(sum(exp(x - max))) over each row of [rows, length]: a
// log_softmax that stays finite where the softmax underflows.
void log_softmax(const float* x, float* y, i64 rows, i64 length);

// Multi-head attention on projected q [batch, L, E], k and v [batch, S, E]:
// context [batch, L, E] = softmax(q_h k_h^T / sqrt(E / heads)) v_h per head h;
// `weights` (or null) gets the softmax, averaged over heads when a.average.
void attention(const Attention& a, const float* q, const float* k, const float* v, float* context, float* weights);

// torch's scaled_dot_product_attention (the math of its reference): per batch
// b (the flattened batch dims), out[b, i] = softmax(q[b, i] k[b]^T * scale +
// mask) v[b] for q [batch, L, E], k [batch, S, E], v [batch, S, Ev], out
// [batch, L, Ev]. `mask` (or null) is [batch, L, S]: added, or with
// `mask_keeps`, a mask whose zeros drop a key (torch's bool mask). `causal`
// drops key j > i. A row whose every key is dropped is NaN, as torch's.
// Rows b * L + i in [first, first + count), so that threads split them.
struct Sdpa {
  i64 batch, query_length, key_length, embed, value_embed;
  double scale;
  bool causal = false;
  bool mask_keeps = false;
};
void sdpa(const Sdpa& a, const float* q, const float* k, const float* v, const float* mask, float* out, i64 first, i64 count);

// int64 tensors (lower/integer.cpp): exact, wrapping around as torch's
// integers do. Broadcast operands have their shapes right-aligned to the
// output's.
enum class IntUnary { kAbs, kNeg, kSign, kBitwiseNot };
void int_unary(IntUnary op, const i64* x, i64* y, i64 count);
enum class IntBinary { kAdd, kSub, kMul, kFloorDivide, kDivTrunc, kRemainder, kFmod, kAnd, kOr, kXor, kMaximum, kMinimum };
// y = op(a, b) (add and sub: a +- alpha * b); y may be a. The divisions
// write nothing where some divisor is 0: the output element it is for, else -1.
i64 int_binary(IntBinary op, const i64* a, const std::vector<i64>& a_shape, const i64* b, const std::vector<i64>& b_shape, i64* y,
               const std::vector<i64>& out_shape, i64 alpha);
enum class IntCompare { kEq, kNe, kLt, kLe, kGt, kGe };
// A mask held as float32 (1 where op holds).
void int_compare(IntCompare op, const i64* a, const std::vector<i64>& a_shape, const i64* b, const std::vector<i64>& b_shape, float* y,
                 const std::vector<i64>& out_shape);
// y = cond (a mask held as float32) ? a : b.
void int_where(const float* cond, const std::vector<i64>& c_shape, const i64* a, const std::vector<i64>& a_shape, const i64* b,
               const std::vector<i64>& b_shape, i64* y, const std::vector<i64>& out_shape);
void int_clamp(const i64* x, i64* y, i64 count, i64 lo, i64 hi);
enum class IntReduce { kSum, kProd, kMax, kMin };
// Over the dims marked in `reduced` of x [shape] into y (the kept dims in order).
void int_reduce(IntReduce op, const i64* x, const std::vector<i64>& shape, const std::vector<bool>& reduced, i64* y);
// Running sums (or products) along the middle dim of [outer, length, inner].
void int_cumsum(const i64* x, i64* y, i64 outer, i64 length, i64 inner, bool product_of);
// A cast to a `bits`-wide integer type, as its values again in int64 (torch's wrap-around).
void int_narrow_type(const i64* x, i64* y, i64 count, int bits, bool is_unsigned);
// The float32 the other kernels read (rounded as torch's cast rounds). With
// `exact`, stops at the first value past 2^24, float32's last exact integer,
// and gives its index; else -1.
i64 int_to_float(const i64* x, float* y, i64 count, bool exact);
// Toward zero, as torch's cast (NaN as 0, past int64 saturated).
void float_to_int(const float* x, i64* y, i64 count);

}  // namespace tracegraph::xnnpack::portable
