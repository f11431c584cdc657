// Max pooling over 1 to 3 spatial dims with the maxima's positions (what
// XNNPACK's 2D one cannot: the indices of *_with_indices, 1D and 3D windows
// of any size, input without a batch dim).
#include "kernels/portable/portable.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tracegraph::xnnpack::portable {

void max_pool(const MaxPool& p, const float* x, float* y, float* indices) {
  const std::size_t k = p.in.size();
  // Up to 3 spatial dims, the missing leading ones of size 1.
  i64 in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t a = 3 - k + i;
    in[a] = p.in[i], out[a] = p.out[i], kernel[a] = p.kernel[i], stride[a] = p.stride[i], pad[a] = p.padding[i], dil[a] = p.dilation[i];
  }
  const i64 in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2];
  for (i64 c = 0; c < p.planes; ++c) {
    const float* xp = x + c * in_plane;
    for (i64 od = 0; od < out[0]; ++od)
      for (i64 oh = 0; oh < out[1]; ++oh)
        for (i64 ow = 0; ow < out[2]; ++ow) {
          // The window's first position inside the input along each dim (torch's
          // start: o * stride - pad, moved on by the dilation past the padding).
          const i64 o[3] = {od, oh, ow};
          i64 lo[3], hi[3];
          for (int a = 0; a < 3; ++a) {
            lo[a] = o[a] * stride[a] - pad[a];
            hi[a] = std::min(lo[a] + (kernel[a] - 1) * dil[a] + 1, in[a]);
            while (lo[a] < 0) lo[a] += dil[a];
          }
          float m = -std::numeric_limits<float>::infinity();
          i64 at = (lo[0] * in[1] + lo[1]) * in[2] + lo[2];
          for (i64 d = lo[0]; d < hi[0]; d += dil[0])
            for (i64 h = lo[1]; h < hi[1]; h += dil[1])
              for (i64 w = lo[2]; w < hi[2]; w += dil[2]) {
                const i64 i = (d * in[1] + h) * in[2] + w;
                const float v = xp[i];
                if (v > m || std::isnan(v)) m = v, at = i;
              }
          const i64 e = c * out_plane + (od * out[1] + oh) * out[2] + ow;
          y[e] = m;
          if (indices) indices[e] = static_cast<float>(at);
        }
  }
}

}  // namespace tracegraph::xnnpack::portable
