// A 1D convolution (groups, stride, padding, dilation).
#include "kernels/portable/portable.h"

namespace tracegraph::xnnpack::portable {

void conv1d(const Conv1d& c, const float* x, const float* w, const float* b, float* y) {
  const i64 in_per_group = c.in_channels / c.groups, out_per_group = c.out_channels / c.groups;
  for (i64 n = 0; n < c.batch; ++n) {
    for (i64 oc = 0; oc < c.out_channels; ++oc) {
      const i64 g = oc / out_per_group;
      float* yr = y + (n * c.out_channels + oc) * c.out_length;
      const float bias = b ? b[oc] : 0.0f;
      for (i64 o = 0; o < c.out_length; ++o) yr[o] = bias;
      for (i64 ic = 0; ic < in_per_group; ++ic) {
        const float* xr = x + (n * c.in_channels + g * in_per_group + ic) * c.in_length;
        const float* wr = w + (oc * in_per_group + ic) * c.kernel;
        for (i64 k = 0; k < c.kernel; ++k) {
          const float wk = wr[k];
          const i64 shift = k * c.dilation - c.padding;
          // Outputs whose input index o*stride + shift lies inside [0, in_length).
          i64 first = shift >= 0 ? 0 : (-shift + c.stride - 1) / c.stride;
          i64 last = c.in_length - 1 - shift < 0 ? -1 : (c.in_length - 1 - shift) / c.stride;
          last = std::min(last, c.out_length - 1);
          for (i64 o = first; o <= last; ++o) yr[o] += wk * xr[o * c.stride + shift];
        }
      }
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
