// PReLU with one weight or one per channel.
#include "kernels/portable/portable.h"

namespace tracegraph::xnnpack::portable {

void prelu(const float* x, const float* w, float* y, i64 batch, i64 channels, i64 inner, i64 weights) {
  for (i64 n = 0; n < batch; ++n) {
    for (i64 c = 0; c < channels; ++c) {
      const float a = w[weights == 1 ? 0 : c];
      const i64 offset = (n * channels + c) * inner;
      for (i64 i = 0; i < inner; ++i) {
        const float v = x[offset + i];
        y[offset + i] = v > 0 ? v : a * v;
      }
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
