// Average pooling over 1 to 3 spatial dims (avg_pool3d, and what XNNPACK's 2D
// one cannot: ceil_mode with counted padding, a divisor override).
#include "kernels/portable/portable.h"

#include <algorithm>

#include "kernels/portable/util.h"

namespace tracegraph::xnnpack::portable {

void avg_pool(const AvgPool& p, const float* x, float* y) {
  const AvgPool3 g(p);
  const i64 in_plane = g.in[0] * g.in[1] * g.in[2], out_plane = g.out[0] * g.out[1] * g.out[2];
  for (i64 c = 0; c < p.planes; ++c) {
    const float* xp = x + c * in_plane;
    float* yp = y + c * out_plane;
    for (i64 od = 0; od < g.out[0]; ++od)
      for (i64 oh = 0; oh < g.out[1]; ++oh)
        for (i64 ow = 0; ow < g.out[2]; ++ow) {
          const AvgPool3::Span &sd = g.spans[0][od], &sh = g.spans[1][oh], &sw = g.spans[2][ow];
          double sum = 0;
          for (i64 d = sd.lo; d < sd.hi; ++d)
            for (i64 h = sh.lo; h < sh.hi; ++h)
              for (i64 i = sw.lo; i < sw.hi; ++i) sum += xp[(d * g.in[1] + h) * g.in[2] + i];
          yp[(od * g.out[1] + oh) * g.out[2] + ow] = static_cast<float>(sum / static_cast<double>(g.divisor(sd, sh, sw)));
        }
  }
}

}  // namespace tracegraph::xnnpack::portable
