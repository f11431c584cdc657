// What several portable kernels share. Private to kernels/portable; the
// bodies are in util.cpp.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/portable/portable.h"

namespace tracegraph::xnnpack::portable {

// The product of v[from, to).
std::int64_t product(const std::vector<std::int64_t>& v, std::size_t from, std::size_t to);

// An average pooling over up to 3 spatial dims, the missing leading ones of
// size 1, with torch's window along each axis for each output index: its end
// clipped to the padded input (what count_include_pad counts), then both ends
// to the input. The windows are made once (util.cpp); the kernels' loops only
// read them.
struct AvgPool3 {
  struct Span {
    std::int64_t lo, hi;  // [lo, hi) in the input
    std::int64_t counted;  // the extent the divisor counts: hi - lo, or with count_include_pad the padded one
  };
  explicit AvgPool3(const AvgPool& p);
  // The divisor of the window spanning d, h and w.
  std::int64_t divisor(const Span& d, const Span& h, const Span& w) const { return divisor_override ? divisor_override : d.counted * h.counted * w.counted; }

  std::int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  std::vector<Span> spans[3];  // spans[a][o]: output o's window along axis a
  std::int64_t divisor_override;
};

// Walks the elements of `shape` in row-major order with an offset that moves
// by stride[d] along dim d: any strides (a view's, a broadcast's zeros, an
// output's for a reduction, negative for a flip). `shape` must outlive it.
class StridedWalk {
 public:
  StridedWalk(const std::vector<std::int64_t>& shape, std::vector<std::int64_t> stride, std::int64_t start = 0);
  std::int64_t offset() const { return offset_; }
  // To the next element in row-major order: along the last dim here (the
  // kernels' inner loops call it per element), across the others in carry().
  void next() { if (++inner_ < inner_size_) offset_ += inner_stride_; else carry(); }

 private:
  void carry();

  const std::vector<std::int64_t>& shape_;
  std::vector<std::int64_t> stride_, index_;  // index_ of the dims before the last
  std::int64_t offset_, inner_ = 0, inner_size_ = 1, inner_stride_ = 0;  // the last dim's index, size and stride (1 and 0 at rank 0)
};

}  // namespace tracegraph::xnnpack::portable
