// A convolution without groups as our GEMM over its unfolded input
// (im2col): each output pixel's K = KD*KH*KW*C inputs in the order
// [kz][ky][kx][c]. Pixels whose taps all fall inside the input are read in
// place (conv::Kernels::direct, unfolded_kernels.h); the others, where taps
// fall in the padding, are unfolded into rows with zeros there, a chunk at a
// time in a thread's scratch, and multiplied by conv::Kernels::pointwise with
// K input channels. For convolutions with few inputs per pixel (a network's
// first layer: 3 channels by 3x3 or 7x7), where XNNPACK's indirect GEMM runs
// at a fraction of its speed. x [N][D][H][W][C] and y [N][OD][OH][OW][O],
// channels-last; 2D is D = KD = 1. unfolded.cpp has the geometry, the
// weights' packing, the unfolding and the rows handed to threads.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/conv/pointwise.h"
#include "platform/thread_pool.h"

namespace tracegraph::xnnpack::unfolded {

using i64 = std::int64_t;

// The convolution's geometry.
struct Conv {
  i64 batch = 1, channels = 1;
  i64 in[3] = {1, 1, 1}, out[3] = {1, 1, 1};  // D, H, W
  i64 kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  // The output sizes from the rest; false where the output would be empty.
  bool make_output();
  i64 taps() const { return kernel[0] * kernel[1] * kernel[2]; }
  i64 row() const { return taps() * channels; }  // K
  i64 pixels() const { return batch * out[0] * out[1] * out[2]; }
};
// Torch's weight [O][C][KD][KH][KW] (or [O][C][KH][KW]) and the bias (or
// null), packed as pointwise::pack() packs a 1x1 weight of K input channels.
std::vector<float> pack(const Conv& u, const float* weight, const float* bias, i64 out_channels, int panel);
// Output pixels unfolded at a time, and so the floats of scratch a thread
// needs: chunk_pixels() * row().
i64 chunk_pixels(const Conv& u);
// Output pixels [first, first + count) unfolded into rows [count][K].
void unfold(const Conv& u, const float* x, float* rows, i64 first, i64 count);
// The whole convolution on the pool's threads (inline without one), an
// output row a task; p says K input channels, O output channels and the
// clamp; scratch holds chunk_pixels() * row() floats for each of the pool's
// threads.
void run(const conv::Kernels& k, const Conv& u, const pointwise::Conv& p, const float* packed, const float* x, float* y, float* scratch,
         pthreadpool_t pool);

}  // namespace tracegraph::xnnpack::unfolded
