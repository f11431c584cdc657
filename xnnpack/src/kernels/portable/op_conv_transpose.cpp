// Transposed convolution over 1 to 3 spatial dims, for the geometries
// XNNPACK's deconvolution refuses: each input pixel's taps added in place.
#include "kernels/portable/portable.h"

#include <algorithm>

namespace tracegraph::xnnpack::portable {

void conv_transpose(const ConvTranspose& c, const float* x, const float* w, const float* b, float* y) {
  const std::size_t k = c.in.size();
  // Up to 3 spatial dims, the missing leading ones of size 1.
  i64 in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t a = 3 - k + i;
    in[a] = c.in[i], out[a] = c.out[i], kernel[a] = c.kernel[i], stride[a] = c.stride[i], pad[a] = c.padding[i], dil[a] = c.dilation[i];
  }
  const i64 in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2], taps = kernel[0] * kernel[1] * kernel[2];
  const i64 cg = c.in_channels / c.groups, cog = c.out_channels / c.groups;
  for (i64 n = 0; n < c.batch; ++n) {
    float* yn = y + n * c.out_channels * out_plane;
    for (i64 o = 0; o < c.out_channels; ++o) std::fill_n(yn + o * out_plane, out_plane, b ? b[o] : 0.0f);
    for (i64 ic = 0; ic < c.in_channels; ++ic) {
      const float* xp = x + (n * c.in_channels + ic) * in_plane;
      const i64 g = ic / cg;
      for (i64 d = 0; d < in[0]; ++d)
        for (i64 h = 0; h < in[1]; ++h)
          for (i64 v = 0; v < in[2]; ++v) {
            const float value = xp[(d * in[1] + h) * in[2] + v];
            for (i64 kd = 0; kd < kernel[0]; ++kd) {
              const i64 od = d * stride[0] - pad[0] + kd * dil[0];
              if (od < 0 || od >= out[0]) continue;
              for (i64 kh = 0; kh < kernel[1]; ++kh) {
                const i64 oh = h * stride[1] - pad[1] + kh * dil[1];
                if (oh < 0 || oh >= out[1]) continue;
                for (i64 kw = 0; kw < kernel[2]; ++kw) {
                  const i64 ow = v * stride[2] - pad[2] + kw * dil[2];
                  if (ow < 0 || ow >= out[2]) continue;
                  const i64 at = (od * out[1] + oh) * out[2] + ow, tap = (kd * kernel[1] + kh) * kernel[2] + kw;
                  for (i64 oc = 0; oc < cog; ++oc) yn[(g * cog + oc) * out_plane + at] += value * w[(ic * cog + oc) * taps + tap];
                }
              }
            }
          }
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
