// The data-movement kernels of the XNNPACK backend: what XNNPACK has no
// operator for. Tensors are channels-last ([N, D, H, W, C]); every inner loop
// runs over contiguous channels or rows, so the compiler vectorizes it (wasm
// SIMD in the browser build) and memcpy does the long copies.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tracegraph::xnnpack::kernels {

// Geometry of one spatial axis of a sliding window.
struct Window {
  std::int64_t kernel = 1, stride = 1, padding = 0, dilation = 1;
};

// 3D convolution as a 2D one: gathers, for each output depth od, the KD input
// slices it reads into the channels of one 2D image:
//   u[n*Do + od, p, g*KD*cg + kd*cg + c] = x[n, od*stride - padding + kd*dilation, p, g*cg + c]
// (zero where that depth is outside the input). p runs over H*W pixels. Only
// the output planes n*Do + od in [first, first + count) (threads split them).
void unfold_depth(const float* x, float* u, std::int64_t n, std::int64_t depth, std::int64_t out_depth,
                  std::int64_t pixels, std::int64_t groups, std::int64_t group_channels, const Window& w,
                  std::int64_t first, std::int64_t count);

// Transposed 3D convolution from a 2D one whose output channels stack the
// depth taps: out starts as the bias (or zero) and receives
//   out[n, id*stride - padding + kd*dilation, p, g*cog + o] += y[n*Din + id, p, g*KD*cog + kd*cog + o].
// Only the output planes n*oD + od in [first, first + count) (threads split
// them), each gathered from its taps in the order of id.
void scatter_depth(const float* y, float* out, const float* bias, std::int64_t n, std::int64_t in_depth,
                   std::int64_t out_depth, std::int64_t pixels, std::int64_t groups, std::int64_t group_channels,
                   const Window& w, std::int64_t first, std::int64_t count);

// A transposed convolution whose kernel equals its stride (no padding,
// dilation or output padding) is a GEMM, y = x W, giving each input pixel its
// K = kd*kh*kw taps of C channels, y [N, D, H, W, kd, kh, kw, C]; this puts
// them in place, out [N, D*kd, H*kh, W*kw, C] (D = kd = 1 in 2D). Only the
// output rows (n*oD + od)*oH + oh in [first, first + count).
void taps_to_space(const float* y, float* out, std::int64_t n, const std::int64_t in[3], const std::int64_t kernel[3], std::int64_t channels,
                   std::int64_t first, std::int64_t count);

// out[n, od] = max over the window of p[n, id] (planes of `plane` floats): the
// depth half of a 3D max pooling whose H and W half XNNPACK did.
void max_over_depth(const float* p, float* out, std::int64_t n, std::int64_t in_depth, std::int64_t out_depth,
                    std::int64_t plane, const Window& w);

// y = x * scale[c] + shift[c] with channels innermost ([pixels, C]).
void affine_channels_last(const float* x, float* y, const float* scale, const float* shift, std::int64_t pixels,
                          std::int64_t channels);
// The same with channels outside a contiguous run ([outer, C, inner]).
void affine_channels_first(const float* x, float* y, const float* scale, const float* shift, std::int64_t outer,
                           std::int64_t channels, std::int64_t inner);

// out[o, i] = mean (or sum) over r of x[o, r, i], for [outer, reduced, inner]
// (a reduction over contiguous axes: global pooling of channels-last tensors);
// the mean of nothing is NaN and the sum 0, as in torch.
void reduce_middle(const float* x, float* out, std::int64_t outer, std::int64_t reduced, std::int64_t inner, bool mean);

// y[i] = x[i] * sigmoid(x[i]) (SiLU, swish) for i in [0, count), four at a
// time: exp by range reduction and a degree-6 polynomial, sigmoid from
// exp(-|x|) (no overflow); within 3 ulp of torch's. Inputs below -87.3 give
// -0 (NaN for -inf, as torch's x * sigmoid(x)), NaN stays NaN.
void silu(const float* x, float* y, std::int64_t count);

// out[i] = clamp(a[i] + b[i], min, max) for i in [first, first + count): a
// residual add and its ReLU in one pass (out may be a or b).
void add_clamp(const float* a, const float* b, float* out, std::int64_t first, std::int64_t count, float min, float max);

// `count` blocks of `block` floats, from src every `src_stride` floats to dst
// every `dst_stride` floats (concatenation and unit-step slicing).
void copy_blocks(const float* src, float* dst, std::int64_t count, std::int64_t block, std::int64_t src_stride,
                 std::int64_t dst_stride);

// Slicing with a step > 1 along one axis of [outer, axis, inner].
void copy_strided_axis(const float* src, float* dst, std::int64_t outer, std::int64_t in_axis, std::int64_t out_axis,
                       std::int64_t start, std::int64_t step, std::int64_t inner);

// Nearest-neighbour resize of [N, D, H, W, C] (D = 1 for 2D) to [N, oD, oH, oW, C];
// the source index of output index o is min(floor(o * scale), in - 1), torch's rule.
// Only the output rows (n*oD + od)*oH + oh in [first, first + count).
void resize_nearest(const float* x, float* y, std::int64_t n, const std::int64_t in[3], const std::int64_t out[3],
                    const double scale[3], std::int64_t channels, std::int64_t first, std::int64_t count);

}  // namespace tracegraph::xnnpack::kernels
