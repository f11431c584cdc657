// im2col and col2im (F.unfold and F.fold): sliding windows to columns and back.
#include "kernels/portable/portable.h"

#include <algorithm>

namespace tracegraph::xnnpack::portable {
namespace {

// Calls f(column row, block, image offset or -1 in the padding) for every
// entry of one image's columns [channels * kh * kw, blocks_h * blocks_w].
template <class F>
void each_entry(const Fold& f, F&& visit) {
  const i64 blocks = f.blocks_h * f.blocks_w;
  for (i64 c = 0; c < f.channels; ++c)
    for (i64 ki = 0; ki < f.kernel[0]; ++ki)
      for (i64 kj = 0; kj < f.kernel[1]; ++kj) {
        const i64 row = (c * f.kernel[0] + ki) * f.kernel[1] + kj;
        for (i64 bi = 0; bi < f.blocks_h; ++bi) {
          const i64 y = bi * f.stride[0] - f.padding[0] + ki * f.dilation[0];
          for (i64 bj = 0; bj < f.blocks_w; ++bj) {
            const i64 x = bj * f.stride[1] - f.padding[1] + kj * f.dilation[1];
            const bool inside = y >= 0 && y < f.height && x >= 0 && x < f.width;
            visit(row * blocks + bi * f.blocks_w + bj, inside ? (c * f.height + y) * f.width + x : -1);
          }
        }
      }
}

}  // namespace

void im2col(const Fold& f, const float* image, float* columns) {
  const i64 image_size = f.channels * f.height * f.width, column_size = f.channels * f.kernel[0] * f.kernel[1] * f.blocks_h * f.blocks_w;
  for (i64 n = 0; n < f.batch; ++n) {
    const float* in = image + n * image_size;
    float* out = columns + n * column_size;
    each_entry(f, [&](i64 at, i64 from) { out[at] = from < 0 ? 0.0f : in[from]; });
  }
}

void col2im(const Fold& f, const float* columns, float* image) {
  const i64 image_size = f.channels * f.height * f.width, column_size = f.channels * f.kernel[0] * f.kernel[1] * f.blocks_h * f.blocks_w;
  std::fill_n(image, f.batch * image_size, 0.0f);
  for (i64 n = 0; n < f.batch; ++n) {
    const float* in = columns + n * column_size;
    float* out = image + n * image_size;
    each_entry(f, [&](i64 at, i64 to) {
      if (to >= 0) out[to] += in[at];
    });
  }
}

}  // namespace tracegraph::xnnpack::portable
