// as_strided: a strided view of a tensor's storage, copied out.
#include "kernels/portable/portable.h"

namespace tracegraph::xnnpack::portable {

void as_strided(const float* x, float* y, const std::vector<i64>& size, const std::vector<i64>& stride, i64 offset) {
  const std::size_t rank = size.size();
  i64 count = 1;
  for (i64 s : size) count *= s;
  std::vector<i64> index(rank, 0);
  i64 at = offset;
  for (i64 e = 0; e < count; ++e) {
    y[e] = x[at];
    for (std::size_t d = rank; d-- > 0;) {
      at += stride[d];
      if (++index[d] < size[d]) break;
      at -= stride[d] * size[d];
      index[d] = 0;
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
