// The shape rules PyTorch applies, in one place: the tracer, the attribute
// validation, constant folding and the XNNPACK backend's planning all call
// these, so that a shape is computed (and refused) the same way everywhere.
// Each returns nullopt where PyTorch would refuse; the caller words the error
// with the node or call it has.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tracegraph/tensor.h"

namespace tracegraph::shape_rules {

// numpy broadcasting: shapes aligned at their last dims, a 1 repeats.
std::optional<Shape> broadcast(const Shape& a, const Shape& b);

// The output length of a sliding window (convolution, pooling) over `in`
// elements: floor((in + 2p - d(k-1) - 1) / s) + 1; with ceil_mode, rounded up
// as PyTorch's pooling does (a last window must start inside the input or its
// left padding). nullopt when the dilated window is larger than the padded
// input, or for a stride or dilation that is not positive.
std::optional<std::int64_t> window_output(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                                          std::int64_t dilation, bool ceil_mode = false);

// PyTorch's rule for a pooling's padding: at most half of the kernel, for
// max and average pooling alike, dilated or not (torch's pool shape checks
// refuse a padding past half the kernel even where the dilated window is
// wider). False for a negative padding or a kernel that is not positive.
bool pool_padding_fits(std::int64_t kernel, std::int64_t padding);

// A transposed convolution's output length: (in-1)s - 2p + d(k-1) + output_padding + 1
// (may be 0 or negative: the caller refuses those).
std::int64_t transposed_output(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                               std::int64_t dilation, std::int64_t output_padding);

// view/reshape of `numel` elements to `sizes`, one of which may be -1 (inferred).
// nullopt for two -1s, another negative size, or sizes that do not hold numel.
std::optional<Shape> view(std::int64_t numel, const std::vector<std::int64_t>& sizes);

// x[start:end:step] along a dim of `size`, as torch clamps it: negative
// start/end count from the end, both clamped into [0, size]. The first index
// and the count taken; nullopt for a step that is not positive.
struct Slice {
  std::int64_t start = 0;
  std::int64_t length = 0;
};
std::optional<Slice> slice(std::int64_t size, std::int64_t start, std::int64_t end, std::int64_t step);

// Python's integer // and % (rounding toward negative infinity; the remainder
// has the divisor's sign); nullopt for a zero divisor or an overflow.
std::optional<std::int64_t> floor_divide(std::int64_t a, std::int64_t b);
std::optional<std::int64_t> remainder(std::int64_t a, std::int64_t b);

}  // namespace tracegraph::shape_rules
