// Convolutions (conv.cpp): lower_conv (2D, 3D, transposed, grouped, dilated)
// and the paths it chooses between, 1D convolutions.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// conv2d, conv3d, conv_transpose2d/3d, convolution: XNNPACK's operators, our
// kernels where they measure faster (lower_winograd, lower_depthwise,
// lower_pointwise_conv, lower_unfolded), or portable kernels.
void lower_conv(Context& cx, const Node& n, NodeState& st);
// A transposed convolution whose kernel equals its stride (no groups,
// padding, dilation or output padding): XNNPACK's fully connected op gives
// each input pixel its taps, kernels::taps_to_space puts them in place.
void lower_conv_transpose_as_gemm(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const Fused& fused);
// A 1D convolution ([N, C, L], weight [O, C/groups, K]).
void lower_conv1d(Context& cx, const Node& n, NodeState& st);
// The direct convolution run once (input, output: channels-last, scratch for
// a 3D one's unfolding) on the geometry given: what lower_winograd(),
// lower_depthwise(), lower_pointwise_conv() and lower_unfolded() measure
// their kernels against.
using DirectRun = std::function<void(const float* x, float* y, i64 batch, const i64* in_sizes)>;
// A 3x3 depthwise convolution (2D, stride 1 or 2, not dilated) on our kernel
// (conv::Kernels::depthwise) where it measures faster than XNNPACK's on this shape (`direct`; remembered for the process), under
// ConvAlgorithm::kFastest only; false: XNNPACK's runs it.
bool lower_depthwise(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const std::vector<i64>& stride,
                     const std::vector<i64>& padding, const Fused& fused, const DirectRun& direct);
// A 1x1 convolution (2D or 3D, stride 1, no padding or groups) on our GEMM
// (pointwise::run) where it measures faster than XNNPACK's on this shape, as lower_depthwise() decides.
bool lower_pointwise_conv(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const Fused& fused, const DirectRun& direct);
// A convolution without groups whose output pixels each read few inputs
// (unfolded::Conv, up to kMaxUnfoldedRow) as our GEMM
// over its unfolded input, where that measures faster than XNNPACK's.
bool lower_unfolded(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const std::vector<i64>& stride,
                    const std::vector<i64>& padding, const std::vector<i64>& dilation, const Fused& fused, const DirectRun& direct);

}  // namespace tracegraph::xnnpack
