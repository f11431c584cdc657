// A 3x3 depthwise convolution (one filter per channel) on our kernel
// (conv::Kernels::depthwise, depthwise_kernels.h), channels-last: x [N, H,
// W, C] to y [N, OH, OW, C], stride 1 or 2 per axis, any padding, the result
// clamped to [min, max]; weights [9][padded_channels()], tap ky * 3 + kx.
#pragma once

#include <cstdint>

namespace tracegraph::xnnpack::depthwise {

using i64 = std::int64_t;

// The convolution's geometry.
struct Conv {
  i64 batch = 1, in_h = 1, in_w = 1, channels = 1, out_h = 1, out_w = 1;
  i64 stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
};

// Channels rounded up to a multiple of `lanes`: the weights' rows.
inline i64 padded_channels(i64 channels, int lanes) { return (channels + lanes - 1) / lanes * lanes; }

}  // namespace tracegraph::xnnpack::depthwise
