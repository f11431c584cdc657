// What several portable kernels share. Private to kernels/portable.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/portable/portable.h"

namespace tracegraph::xnnpack::portable {

// The product of v[from, to).
inline std::int64_t product(const std::vector<std::int64_t>& v, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

// An average pooling over up to 3 spatial dims, the missing leading ones of
// size 1, and torch's window of one output: its end clipped to the padded
// input (what count_include_pad counts), then both ends to the input.
struct AvgPool3 {
  std::int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  explicit AvgPool3(const AvgPool& p) {
    const std::size_t k = p.in.size();
    for (std::size_t i = 0; i < k; ++i) {
      const std::size_t a = 3 - k + i;
      in[a] = p.in[i], out[a] = p.out[i], kernel[a] = p.kernel[i], stride[a] = p.stride[i], pad[a] = p.padding[i];
    }
  }
  struct Window {
    std::int64_t lo[3], hi[3], divisor;
  };
  Window window(const AvgPool& p, std::int64_t od, std::int64_t oh, std::int64_t ow) const {
    Window w{};
    std::int64_t padded = 1;
    const std::int64_t o[3] = {od, oh, ow};
    for (int a = 0; a < 3; ++a) {
      w.lo[a] = o[a] * stride[a] - pad[a];
      w.hi[a] = std::min(w.lo[a] + kernel[a], in[a] + pad[a]);
      padded *= w.hi[a] - w.lo[a];
      w.lo[a] = std::max<std::int64_t>(w.lo[a], 0);
      w.hi[a] = std::min(w.hi[a], in[a]);
    }
    const std::int64_t inside = (w.hi[0] - w.lo[0]) * (w.hi[1] - w.lo[1]) * (w.hi[2] - w.lo[2]);
    w.divisor = p.divisor_override ? p.divisor_override : p.count_include_pad ? padded : inside;
    return w;
  }
};

// Walks the elements of `shape` in row-major order with an offset that moves
// by stride[d] along dim d: any strides (a view's, a broadcast's zeros, an
// output's for a reduction, negative for a flip). `shape` must outlive it.
class StridedWalk {
 public:
  StridedWalk(const std::vector<std::int64_t>& shape, std::vector<std::int64_t> stride, std::int64_t start = 0)
      : shape_(shape), stride_(std::move(stride)), index_(shape.size(), 0), offset_(start) {}
  std::int64_t offset() const { return offset_; }
  void next() {
    for (std::size_t d = shape_.size(); d-- > 0;) {
      offset_ += stride_[d];
      if (++index_[d] < shape_[d]) return;
      offset_ -= stride_[d] * shape_[d];
      index_[d] = 0;
    }
  }

 private:
  const std::vector<std::int64_t>& shape_;
  std::vector<std::int64_t> stride_, index_;
  std::int64_t offset_;
};

}  // namespace tracegraph::xnnpack::portable
