// Average pooling over 1 to 3 spatial dims (avg_pool3d, and what XNNPACK's 2D
// one cannot: ceil_mode with counted padding, a divisor override).
#include "kernels/portable/portable.h"

#include <algorithm>

#include "kernels/portable/util.h"

namespace tracegraph::xnnpack::portable {

void avg_pool(const AvgPool& p, const float* x, float* y) {
  const std::size_t k = p.in.size();
  // Up to 3 spatial dims, the missing leading ones of size 1.
  i64 in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t a = 3 - k + i;
    in[a] = p.in[i], out[a] = p.out[i], kernel[a] = p.kernel[i], stride[a] = p.stride[i], pad[a] = p.padding[i];
  }
  const i64 in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2];
  for (i64 c = 0; c < p.planes; ++c) {
    const float* xp = x + c * in_plane;
    float* yp = y + c * out_plane;
    for (i64 od = 0; od < out[0]; ++od)
      for (i64 oh = 0; oh < out[1]; ++oh)
        for (i64 ow = 0; ow < out[2]; ++ow) {
          // torch's window: its end clipped to the padded input, then to the input.
          i64 lo[3], hi[3], padded = 1;
          const i64 o[3] = {od, oh, ow};
          for (int a = 0; a < 3; ++a) {
            lo[a] = o[a] * stride[a] - pad[a];
            hi[a] = std::min(lo[a] + kernel[a], in[a] + pad[a]);
            padded *= hi[a] - lo[a];
            lo[a] = std::max<i64>(lo[a], 0);
            hi[a] = std::min(hi[a], in[a]);
          }
          double sum = 0;
          for (i64 d = lo[0]; d < hi[0]; ++d)
            for (i64 h = lo[1]; h < hi[1]; ++h)
              for (i64 w = lo[2]; w < hi[2]; ++w) sum += xp[(d * in[1] + h) * in[2] + w];
          const i64 inside = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
          const i64 divisor = p.divisor_override ? p.divisor_override : p.count_include_pad ? padded : inside;
          yp[(od * out[1] + oh) * out[2] + ow] = static_cast<float>(sum / static_cast<double>(divisor));
        }
  }
}

}  // namespace tracegraph::xnnpack::portable
