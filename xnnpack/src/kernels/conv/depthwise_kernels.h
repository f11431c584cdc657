// The 3x3 depthwise convolution (conv::Kernels::depthwise; depthwise.h)
// (kernel_table.h; lanes.h says how these headers are compiled).
#pragma once

#include "kernels/conv/lanes.h"
#include "kernels/conv/depthwise.h"

namespace tracegraph::xnnpack::depthwise {
namespace {

using conv::Lanes;
using conv::lesser;
using conv::greater;

// A 3x3 depthwise convolution (conv::Kernels::depthwise, depthwise.h's Conv):
// one output row's pixels [from, to) for the channels [c0, c0 + count) (the
// first cb of them). Inside: every tap of these pixels reads the input (no
// checks).
template <class V, bool Full, bool Inside>
void depthwise_pixels(const float* const rows[3], float* out, const V* k, V bias, const Conv& d, i64 c0, int cb, i64 from,
                      i64 to, V lo, V hi) {
  using L = Lanes<V>;
  const i64 C = d.channels;
  const int n = Full ? L::count : cb;
  for (i64 ox = from; ox < to; ++ox) {
    V acc = bias;
    const i64 ix0 = ox * d.stride_w - d.pad_w;
    for (int ky = 0; ky < 3; ++ky) {
      if (!rows[ky]) continue;
      for (int kx = 0; kx < 3; ++kx) {
        const i64 ix = ix0 + kx;
        if (!Inside && (ix < 0 || ix >= d.in_w)) continue;
        acc += L::load(rows[ky] + ix * C + c0, n) * k[ky * 3 + kx];
      }
    }
    L::store(out + ox * C + c0, L::min_of(L::max_of(acc, lo), hi), n);
  }
}

// The common case of depthwise_pixels(): whole vectors of channels, all
// three rows and columns inside, with pointers stepped along the row (32-bit
// arithmetic in wasm) and the three kernel rows summed apart (shorter
// dependency chains).
template <class V>
void depthwise_inner(const float* const rows[3], float* out, const V* k, V bias, const Conv& d, i64 c0, i64 from, i64 to, V lo,
                     V hi) {
  if (from >= to) return;  // (the pointers below would start past the row)
  using L = Lanes<V>;
  constexpr int W = L::count;
  const std::ptrdiff_t C = static_cast<std::ptrdiff_t>(d.channels), step = static_cast<std::ptrdiff_t>(d.stride_w) * C;
  const std::ptrdiff_t start = static_cast<std::ptrdiff_t>(from * d.stride_w - d.pad_w) * C + static_cast<std::ptrdiff_t>(c0);
  const float* p0 = rows[0] + start;
  const float* p1 = rows[1] + start;
  const float* p2 = rows[2] + start;
  float* o = out + static_cast<std::ptrdiff_t>(from) * C + static_cast<std::ptrdiff_t>(c0);
  i64 ox = from;
  if (d.stride_w == 1) {
    // Two pixels at a time: neighbours share two of their three columns, so
    // 12 loads for 18 multiply-adds (measured 10% faster in V8).
    for (; ox + 2 <= to; ox += 2, p0 += 2 * C, p1 += 2 * C, p2 += 2 * C, o += 2 * C) {
      V a0 = bias, a1 = bias, t;
      const float* const p[3] = {p0, p1, p2};
      for (int ky = 0; ky < 3; ++ky) {
        const V* kr = k + 3 * ky;
        t = L::load(p[ky], W);
        a0 += t * kr[0];
        t = L::load(p[ky] + C, W);
        a0 += t * kr[1];
        a1 += t * kr[0];
        t = L::load(p[ky] + 2 * C, W);
        a0 += t * kr[2];
        a1 += t * kr[1];
        t = L::load(p[ky] + 3 * C, W);
        a1 += t * kr[2];
      }
      L::store(o, L::min_of(L::max_of(a0, lo), hi), W);
      L::store(o + C, L::min_of(L::max_of(a1, lo), hi), W);
    }
  }
  for (; ox < to; ++ox, p0 += step, p1 += step, p2 += step, o += C) {
    const V a = bias + L::load(p0, W) * k[0] + L::load(p0 + C, W) * k[1] + L::load(p0 + 2 * C, W) * k[2];
    const V b = L::load(p1, W) * k[3] + L::load(p1 + C, W) * k[4] + L::load(p1 + 2 * C, W) * k[5];
    const V c = L::load(p2, W) * k[6] + L::load(p2 + C, W) * k[7] + L::load(p2 + 2 * C, W) * k[8];
    L::store(o, L::min_of(L::max_of(a + b + c, lo), hi), W);
  }
}

// Output pixels [from, to) of a row for channels [c0, c0 + cb): those in
// [inner_from, inner_to) read no padding along the row. The nine weight
// vectors and the bias stay in registers along the row.
template <class V, bool Full>
void depthwise_span(const float* const rows[3], float* out, const float* weights, const float* bias, const Conv& d, i64 c0,
                    int cb, i64 from, i64 inner_from, i64 inner_to, i64 to, V lo, V hi) {
  using L = Lanes<V>;
  const i64 padded = (d.channels + L::count - 1) / L::count * L::count;  // padded_channels(), kept out of this header (linkage)
  V k[9];
  for (int t = 0; t < 9; ++t) k[t] = L::load(weights + t * padded + c0, L::count);
  const V b = L::load(bias + c0, L::count);
  depthwise_pixels<V, Full, false>(rows, out, k, b, d, c0, cb, from, inner_from, lo, hi);
  if (Full && rows[0] && rows[1] && rows[2]) depthwise_inner<V>(rows, out, k, b, d, c0, inner_from, inner_to, lo, hi);
  else depthwise_pixels<V, Full, true>(rows, out, k, b, d, c0, cb, inner_from, inner_to, lo, hi);
  depthwise_pixels<V, Full, false>(rows, out, k, b, d, c0, cb, inner_to, to, lo, hi);
}

template <class V>
void depthwise_of(const float* x, float* y, const float* weights, const float* bias, const Conv& d, float min, float max,
                  i64 first, i64 count) {
  using L = Lanes<V>;
  constexpr int W = L::count;
  const i64 C = d.channels;
  const V lo = L::splat(min), hi = L::splat(max);
  // The output columns whose three taps all read the input: [inner_from, inner_to).
  const i64 inner_from = lesser(d.out_w, (d.pad_w + d.stride_w - 1) / d.stride_w);
  const i64 last = d.in_w - 3 + d.pad_w;  // the last ox with ox * stride <= last
  const i64 inner_to = greater(inner_from, last < 0 ? 0 : lesser(d.out_w, last / d.stride_w + 1));
  for (i64 row = first; row < first + count; ++row) {
    const i64 n = row / d.out_h, oy = row % d.out_h;
    const float* rows[3];
    for (int ky = 0; ky < 3; ++ky) {
      const i64 iy = oy * d.stride_h - d.pad_h + ky;
      rows[ky] = iy >= 0 && iy < d.in_h ? x + (n * d.in_h + iy) * d.in_w * C : nullptr;
    }
    float* out = y + row * d.out_w * C;
    i64 c0 = 0;
    for (; c0 + W <= C; c0 += W) depthwise_span<V, true>(rows, out, weights, bias, d, c0, W, 0, inner_from, inner_to, d.out_w, lo, hi);
    if (c0 < C) depthwise_span<V, false>(rows, out, weights, bias, d, c0, static_cast<int>(C - c0), 0, inner_from, inner_to, d.out_w, lo, hi);
  }
  Lanes<V>::leave();
}

}  // namespace
}  // namespace tracegraph::xnnpack::depthwise
