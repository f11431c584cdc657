// repeat: a tensor tiled along each dim; repeat_interleave: each slice along a dim repeated in place.
#include "kernels/portable/portable.h"

#include <cstring>

#include "kernels/portable/util.h"

namespace tracegraph::xnnpack::portable {
namespace {

// Dim d onwards: y (the out shape's block at d) from x (the in shape's block).
void repeat_from(const float* x, float* y, const std::vector<i64>& in, const std::vector<i64>& repeats, std::size_t d) {
  const i64 in_block = product(in, d + 1, in.size());
  const i64 out_block = in_block * product(repeats, d + 1, repeats.size());
  if (d + 1 == in.size()) {
    for (i64 r = 0; r < repeats[d]; ++r) std::memcpy(y + r * in[d] * in_block, x, static_cast<std::size_t>(in[d] * in_block) * sizeof(float));
    return;
  }
  for (i64 i = 0; i < in[d]; ++i) repeat_from(x + i * in_block, y + i * out_block, in, repeats, d + 1);
  // The first copy along d is whole: the others are that copy again.
  const i64 one = in[d] * out_block;
  for (i64 r = 1; r < repeats[d]; ++r) std::memcpy(y + r * one, y, static_cast<std::size_t>(one) * sizeof(float));
}

}  // namespace

void repeat(const float* x, float* y, const std::vector<i64>& in_shape, const std::vector<i64>& repeats) {
  if (product(in_shape, 0, in_shape.size()) == 0 || product(repeats, 0, repeats.size()) == 0) return;
  if (in_shape.empty()) {
    y[0] = x[0];
    return;
  }
  repeat_from(x, y, in_shape, repeats, 0);
}

void repeat_interleave(const float* x, float* y, i64 outer, i64 inner, const std::vector<i64>& repeats) {
  const i64 size = static_cast<i64>(repeats.size());
  for (i64 o = 0; o < outer; ++o) {
    for (i64 i = 0; i < size; ++i) {
      const float* from = x + (o * size + i) * inner;
      for (i64 r = 0; r < repeats[static_cast<std::size_t>(i)]; ++r, y += inner) std::memcpy(y, from, static_cast<std::size_t>(inner) * sizeof(float));
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
