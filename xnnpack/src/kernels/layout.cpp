#include "kernels/layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/simd.h"

namespace tracegraph::xnnpack::kernels {
namespace {

using i64 = std::int64_t;

// The input index a window tap reads, or -1 where it falls in the padding.
i64 tap(i64 out_index, i64 k, i64 in_size, const Window& w) {
  const i64 i = out_index * w.stride - w.padding + k * w.dilation;
  return (i >= 0 && i < in_size) ? i : -1;
}

// SiLU of four floats (silu()).
inline simd::v4 silu4(simd::v4 x) {
  using simd::v4;
  using simd::v4i;
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
  constexpr float kCutoff = -87.3365479f;  // below it exp underflows past the normal floats
  const v4 z = simd::min_of(x, -x);       // -|x| (NaN kept)
  const v4 zc = simd::max_of(z, simd::splat(kCutoff));
  const v4 t = zc * simd::splat(kLog2e) + simd::splat(kMagic);
  const v4 n = t - simd::splat(kMagic);
  const v4 r = zc - n * simd::splat(kLn2Hi) - n * simd::splat(kLn2Lo);
  // exp(r) for |r| <= ln2 / 2: Taylor's terms to r^6.
  v4 p = simd::splat(1.0f / 720);
  p = p * r + simd::splat(1.0f / 120);
  p = p * r + simd::splat(1.0f / 24);
  p = p * r + simd::splat(1.0f / 6);
  p = p * r + simd::splat(0.5f);
  p = p * r + simd::splat(1.0f);
  p = p * r + simd::splat(1.0f);
  // times 2^n: n (in t's low bits, -126 to 0) added to p's exponent; zero past the cutoff.
  const v4i shift = (reinterpret_cast<v4i>(t) - reinterpret_cast<v4i>(simd::splat(kMagic))) << 23;
  const v4i under = z < simd::splat(kCutoff);
  const v4 e = reinterpret_cast<v4>((reinterpret_cast<v4i>(p) + shift) & ~under);
  const v4 s = e / (simd::splat(1.0f) + e);  // sigmoid(-|x|)
  const v4i negative = x < simd::splat(0.0f);
  const v4 sigmoid = reinterpret_cast<v4>((reinterpret_cast<v4i>(s) & negative) | (reinterpret_cast<v4i>(simd::splat(1.0f) - s) & ~negative));
  return x * sigmoid;
}

}  // namespace

void silu(const float* x, float* y, i64 count) {
  i64 i = 0;
  for (; i + 4 <= count; i += 4) simd::store(y + i, silu4(simd::load(x + i)), 4);
  if (i < count) {
    const int rest = static_cast<int>(count - i);
    simd::store(y + i, silu4(simd::load(x + i, rest)), rest);
  }
}

void add_clamp(const float* a, const float* b, float* out, i64 first, i64 count, float min, float max) {
  for (i64 i = first; i < first + count; ++i) out[i] = std::min(std::max(a[i] + b[i], min), max);
}

void unfold_depth(const float* x, float* u, i64 n, i64 depth, i64 out_depth, i64 pixels, i64 groups,
                  i64 group_channels, const Window& w, i64 first, i64 count) {
  const i64 channels = groups * group_channels;
  const i64 u_channels = channels * w.kernel;
  for (i64 plane = first; plane < std::min(first + count, n * out_depth); ++plane) {
    const i64 b = plane / out_depth, od = plane % out_depth;
    {
      float* dst = u + plane * pixels * u_channels;
      for (i64 kd = 0; kd < w.kernel; ++kd) {
        const i64 id = tap(od, kd, depth, w);
        for (i64 g = 0; g < groups; ++g) {
          float* d = dst + g * w.kernel * group_channels + kd * group_channels;
          if (id < 0) {
            for (i64 p = 0; p < pixels; ++p) std::memset(d + p * u_channels, 0, sizeof(float) * group_channels);
            continue;
          }
          const float* s = x + ((b * depth + id) * pixels) * channels + g * group_channels;
          // Short runs of channels: an inlined loop beats a memcpy call per pixel.
          for (i64 p = 0; p < pixels; ++p) {
            float* dp = d + p * u_channels;
            const float* sp = s + p * channels;
            for (i64 c = 0; c < group_channels; ++c) dp[c] = sp[c];
          }
        }
      }
    }
  }
}

void scatter_depth(const float* y, float* out, const float* bias, i64 n, i64 in_depth, i64 out_depth, i64 pixels,
                   i64 groups, i64 group_channels, const Window& w, i64 first, i64 count) {
  const i64 channels = groups * group_channels;
  const i64 y_channels = channels * w.kernel;
  for (i64 plane = first; plane < std::min(first + count, n * out_depth); ++plane) {
    const i64 b = plane / out_depth, od = plane % out_depth;
    float* dst = out + plane * pixels * channels;
    for (i64 p = 0; p < pixels; ++p) {
      if (bias) std::memcpy(dst + p * channels, bias, sizeof(float) * channels);
      else std::memset(dst + p * channels, 0, sizeof(float) * channels);
    }
    // The taps that land on od, by id rising (kd falling): od = id*stride - padding + kd*dilation.
    for (i64 kd = w.kernel - 1; kd >= 0; --kd) {
      const i64 from = od + w.padding - kd * w.dilation;
      if (from < 0 || from % w.stride != 0 || from / w.stride >= in_depth) continue;
      const float* src = y + (b * in_depth + from / w.stride) * pixels * y_channels;
      for (i64 p = 0; p < pixels; ++p) {
        for (i64 g = 0; g < groups; ++g) {
          const float* s = src + p * y_channels + g * w.kernel * group_channels + kd * group_channels;
          float* d = dst + p * channels + g * group_channels;
          for (i64 c = 0; c < group_channels; ++c) d[c] += s[c];
        }
      }
    }
  }
}

void taps_to_space(const float* y, float* out, i64 n, const i64 in[3], const i64 kernel[3], i64 channels, i64 first, i64 count) {
  const i64 out_d = in[0] * kernel[0], out_h = in[1] * kernel[1], out_w = in[2] * kernel[2];
  const i64 taps = kernel[0] * kernel[1] * kernel[2], run = kernel[2] * channels;  // one pixel's taps along W: contiguous both sides
  for (i64 row = first; row < std::min(first + count, n * out_d * out_h); ++row) {
    const i64 oh = row % out_h, plane = row / out_h, od = plane % out_d, b = plane / out_d;
    const i64 d = od / kernel[0], h = oh / kernel[1];
    const i64 tap_row = (od % kernel[0]) * kernel[1] + oh % kernel[1];
    const float* src = y + ((((b * in[0] + d) * in[1] + h) * in[2]) * taps + tap_row * kernel[2]) * channels;
    float* dst = out + row * out_w * channels;
    for (i64 w = 0; w < in[2]; ++w) std::memcpy(dst + w * run, src + w * taps * channels, sizeof(float) * run);
  }
}

void max_over_depth(const float* p, float* out, i64 n, i64 in_depth, i64 out_depth, i64 plane, const Window& w) {
  for (i64 b = 0; b < n; ++b) {
    for (i64 od = 0; od < out_depth; ++od) {
      float* dst = out + (b * out_depth + od) * plane;
      bool first = true;
      for (i64 kd = 0; kd < w.kernel; ++kd) {
        const i64 id = tap(od, kd, in_depth, w);
        if (id < 0) continue;  // padding is -inf for a max: skipped
        const float* src = p + (b * in_depth + id) * plane;
        if (first) {
          std::memcpy(dst, src, sizeof(float) * plane);
          first = false;
          continue;
        }
        for (i64 i = 0; i < plane; ++i) dst[i] = std::max(dst[i], src[i]);
      }
      if (first) std::fill(dst, dst + plane, -INFINITY);  // a window of padding only
    }
  }
}

void affine_channels_last(const float* x, float* y, const float* scale, const float* shift, i64 pixels, i64 channels) {
  for (i64 p = 0; p < pixels; ++p) {
    const float* s = x + p * channels;
    float* d = y + p * channels;
    for (i64 c = 0; c < channels; ++c) d[c] = s[c] * scale[c] + shift[c];
  }
}

void affine_channels_first(const float* x, float* y, const float* scale, const float* shift, i64 outer, i64 channels,
                           i64 inner) {
  for (i64 o = 0; o < outer; ++o) {
    for (i64 c = 0; c < channels; ++c) {
      const float* s = x + (o * channels + c) * inner;
      float* d = y + (o * channels + c) * inner;
      const float a = scale[c], b = shift[c];
      for (i64 i = 0; i < inner; ++i) d[i] = s[i] * a + b;
    }
  }
}

void reduce_middle(const float* x, float* out, i64 outer, i64 reduced, i64 inner, bool mean) {
  const float scale = !mean ? 1.0f : reduced ? 1.0f / static_cast<float>(reduced) : std::numeric_limits<float>::quiet_NaN();
  for (i64 o = 0; o < outer; ++o) {
    float* d = out + o * inner;
    std::fill(d, d + inner, 0.0f);
    for (i64 r = 0; r < reduced; ++r) {
      const float* s = x + (o * reduced + r) * inner;
      for (i64 i = 0; i < inner; ++i) d[i] += s[i];
    }
    for (i64 i = 0; i < inner; ++i) d[i] *= scale;
  }
}

void copy_blocks(const float* src, float* dst, i64 count, i64 block, i64 src_stride, i64 dst_stride) {
  if (block == src_stride && block == dst_stride) {
    std::memcpy(dst, src, sizeof(float) * static_cast<std::size_t>(count * block));
    return;
  }
  for (i64 i = 0; i < count; ++i) std::memcpy(dst + i * dst_stride, src + i * src_stride, sizeof(float) * block);
}

void copy_strided_axis(const float* src, float* dst, i64 outer, i64 in_axis, i64 out_axis, i64 start, i64 step,
                       i64 inner) {
  for (i64 o = 0; o < outer; ++o) {
    for (i64 a = 0; a < out_axis; ++a) {
      std::memcpy(dst + (o * out_axis + a) * inner, src + (o * in_axis + start + a * step) * inner,
                  sizeof(float) * inner);
    }
  }
}

void resize_nearest(const float* x, float* y, i64 n, const i64 in[3], const i64 out[3], const double scale[3],
                    i64 channels, i64 first, i64 count) {
  auto source = [](i64 o, double s, i64 size) { return std::min(static_cast<i64>(std::floor(o * s)), size - 1); };
  const i64 in_row = in[2] * channels, out_row = out[2] * channels;
  for (i64 row = first; row < std::min(first + count, n * out[0] * out[1]); ++row) {
    const i64 oh = row % out[1], plane = row / out[1], b = plane / out[0], od = plane % out[0];
    const i64 id = source(od, scale[0], in[0]), ih = source(oh, scale[1], in[1]);
    float* dst = y + row * out_row;
    // The same source row as the row above, written by this call: copy that.
    if (row > first && oh > 0 && source(oh - 1, scale[1], in[1]) == ih) {
      std::memcpy(dst, dst - out_row, sizeof(float) * out_row);
      continue;
    }
    const float* src = x + ((b * in[0] + id) * in[1] + ih) * in_row;
    if (channels == 1) {
      for (i64 ow = 0; ow < out[2]; ++ow) dst[ow] = src[source(ow, scale[2], in[2])];
    } else {
      for (i64 ow = 0; ow < out[2]; ++ow)
        std::memcpy(dst + ow * channels, src + source(ow, scale[2], in[2]) * channels, sizeof(float) * channels);
    }
  }
}

}  // namespace tracegraph::xnnpack::kernels
