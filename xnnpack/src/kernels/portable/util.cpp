// What several portable kernels share (util.h).
#include "kernels/portable/util.h"

#include <algorithm>

namespace tracegraph::xnnpack::portable {

std::int64_t product(const std::vector<std::int64_t>& v, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

AvgPool3::AvgPool3(const AvgPool& p) : divisor_override(p.divisor_override) {
  const std::size_t k = p.in.size();
  std::int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t a = 3 - k + i;
    in[a] = p.in[i], out[a] = p.out[i], kernel[a] = p.kernel[i], stride[a] = p.stride[i], pad[a] = p.padding[i];
  }
  for (int a = 0; a < 3; ++a) {
    spans[a].resize(static_cast<std::size_t>(out[a]));
    for (std::int64_t o = 0; o < out[a]; ++o) {
      const std::int64_t lo = o * stride[a] - pad[a], hi = std::min(lo + kernel[a], in[a] + pad[a]);
      Span& s = spans[a][static_cast<std::size_t>(o)];
      s.lo = std::max<std::int64_t>(lo, 0), s.hi = std::min(hi, in[a]);
      s.counted = p.count_include_pad ? hi - lo : s.hi - s.lo;
    }
  }
}

StridedWalk::StridedWalk(const std::vector<std::int64_t>& shape, std::vector<std::int64_t> stride, std::int64_t start)
    : shape_(shape), stride_(std::move(stride)), index_(shape.empty() ? 0 : shape.size() - 1, 0), offset_(start) {
  if (!shape.empty()) inner_size_ = shape.back(), inner_stride_ = stride_.back();
}

void StridedWalk::carry() {
  // The last dim wrapped: back to its start, then the dims before it counted
  // as an odometer's wheels.
  offset_ -= inner_stride_ * (inner_size_ - 1);
  inner_ = 0;
  for (std::size_t d = index_.size(); d-- > 0;) {
    offset_ += stride_[d];
    if (++index_[d] < shape_[d]) return;
    offset_ -= stride_[d] * shape_[d];
    index_[d] = 0;
  }
}

}  // namespace tracegraph::xnnpack::portable
