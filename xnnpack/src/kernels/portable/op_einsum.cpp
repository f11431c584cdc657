// einsum in any form (lower/einsum.cpp runs the two-operand products as one
// batch matrix multiply): a plain loop over every letter.
#include "kernels/portable/portable.h"

namespace tracegraph::xnnpack::portable {

void einsum(const Einsum& e, const std::vector<const float*>& x, float* y) {
  const std::size_t letters = e.sizes.size(), ops = x.size();
  i64 outputs = 1, sums = 1;
  for (std::size_t l = 0; l < letters; ++l) (l < e.out_letters ? outputs : sums) *= e.sizes[l];
  std::vector<i64> at(letters, 0), offset(ops, 0);
  for (i64 o = 0; o < outputs; ++o) {
    // The output letters' part of each operand's offset.
    std::vector<i64> base(ops, 0);
    for (std::size_t k = 0; k < ops; ++k)
      for (std::size_t l = 0; l < e.out_letters; ++l) base[k] += at[l] * e.strides[k][l];
    double sum = 0;
    for (std::size_t l = e.out_letters; l < letters; ++l) at[l] = 0;
    offset = base;
    for (i64 s = 0; s < sums; ++s) {
      double p = 1;
      for (std::size_t k = 0; k < ops; ++k) p *= static_cast<double>(x[k][offset[k]]);
      sum += p;
      // The next combination of the summed letters.
      for (std::size_t l = letters; l-- > e.out_letters;) {
        for (std::size_t k = 0; k < ops; ++k) offset[k] += e.strides[k][l];
        if (++at[l] < e.sizes[l]) break;
        for (std::size_t k = 0; k < ops; ++k) offset[k] -= e.strides[k][l] * e.sizes[l];
        at[l] = 0;
      }
    }
    y[o] = static_cast<float>(sum);
    for (std::size_t l = e.out_letters; l-- > 0;) {
      if (++at[l] < e.sizes[l]) break;
      at[l] = 0;
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
