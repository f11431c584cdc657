// What several portable kernels share. Private to kernels/portable.
#pragma once

#include <cstdint>
#include <vector>

namespace tracegraph::xnnpack::portable {

// The product of v[from, to).
inline std::int64_t product(const std::vector<std::int64_t>& v, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

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
