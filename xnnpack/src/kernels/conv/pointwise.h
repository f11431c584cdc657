// A 1x1 convolution (2D or 3D, stride 1, no padding, no groups) on our GEMM
// (conv::Kernels::pointwise, pointwise_kernels.h) over channels-last pixels:
// y [pixels][O] = clamp(x [pixels][C] W + bias, min, max), W from pack().
// pointwise.cpp packs the weights and hands out pixels and panels to threads.
#pragma once

#include <cstdint>
#include <vector>

#include "platform/thread_pool.h"

namespace tracegraph::xnnpack::conv {
struct Kernels;
}  // namespace tracegraph::xnnpack::conv

namespace tracegraph::xnnpack::pointwise {

using i64 = std::int64_t;

// The convolution's channels and clamp; also the GEMM of an unfolded
// convolution (unfolded.h), with its K inputs per pixel as the in_channels.
struct Conv {
  i64 in_channels = 1, out_channels = 1;
  float min = -__builtin_huge_valf(), max = __builtin_huge_valf();
};

// Torch's 1x1 weight [O][C] (and the bias, or null) for conv::Kernels::pointwise
// with panels of `panel` output channels: [O / panel][C][panel], then the
// bias, all zero past O.
std::vector<float> pack(const float* weight, const float* bias, i64 in_channels, i64 out_channels, int panel);
inline i64 panel_count(i64 out_channels, int panel) { return (out_channels + panel - 1) / panel; }
// A whole 1x1 convolution of `pixels` on the pool's threads (inline without
// one): slabs of pixels whose input stays in cache, and where there are too
// few slabs to go round, the panels split too.
void run(const conv::Kernels& k, const Conv& p, const float* packed, const float* x, float* y, i64 pixels, pthreadpool_t pool);

}  // namespace tracegraph::xnnpack::pointwise
