// A convolution as our GEMM over its unfolded input: the output's geometry,
// the weights' packing, the unfolding of the edges and the rows handed to
// threads (the kernel is unfolded_kernels.h's).
#include "kernels/conv/unfolded.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#include "kernels/conv/conv_kernels.h"
#include "kernels/simd.h"
#include "tracegraph/shape_rules.h"

namespace tracegraph::xnnpack::unfolded {

bool Conv::make_output() {
  for (int axis = 0; axis < 3; ++axis) {
    const std::optional<i64> o = shape_rules::window_output(in[axis], kernel[axis], stride[axis], padding[axis], dilation[axis]);
    if (!o) return false;
    out[axis] = *o;
  }
  return batch > 0 && channels > 0;
}

std::vector<float> pack(const Conv& u, const float* weight, const float* bias, i64 out_channels, int panel) {
  // Torch's [O][C][taps] as [O][taps][C]: the rows' order.
  const i64 C = u.channels, T = u.taps();
  std::vector<float> w(static_cast<std::size_t>(out_channels * T * C));
  for (i64 o = 0; o < out_channels; ++o)
    for (i64 c = 0; c < C; ++c)
      for (i64 t = 0; t < T; ++t) w[static_cast<std::size_t>((o * T + t) * C + c)] = weight[(o * C + c) * T + t];
  return pointwise::pack(w.data(), bias, T * C, out_channels, panel);
}

namespace {

// A few floats (a tap's channels, or a row of taps), four at a time: a call
// to memcpy per tap cost more than the copy.
inline void copy_floats(const float* src, float* dst, i64 n) {
  i64 i = 0;
  for (; i + 4 <= n; i += 4) std::memcpy(dst + i, src + i, 4 * sizeof(float));
  for (; i < n; ++i) dst[i] = src[i];
}

}  // namespace

void unfold(const Conv& u, const float* x, float* rows, i64 first, i64 count) {
  const i64 C = u.channels, K = u.row(), KW = u.kernel[2];
  i64 ox = first % u.out[2], oy = first / u.out[2] % u.out[1], oz = first / u.out[2] / u.out[1] % u.out[0];
  i64 n = first / u.out[2] / u.out[1] / u.out[0];
  for (i64 r = 0; r < count; ++r) {
    float* row = rows + r * K;
    const i64 ix0 = ox * u.stride[2] - u.padding[2];
    // Every tap of a kernel row inside, next to each other: one run of KW * C floats.
    const bool whole = u.dilation[2] == 1 && ix0 >= 0 && ix0 + KW <= u.in[2];
    for (i64 kz = 0; kz < u.kernel[0]; ++kz) {
      const i64 iz = oz * u.stride[0] - u.padding[0] + kz * u.dilation[0];
      for (i64 ky = 0; ky < u.kernel[1]; ++ky, row += KW * C) {
        const i64 iy = oy * u.stride[1] - u.padding[1] + ky * u.dilation[1];
        if (iz < 0 || iz >= u.in[0] || iy < 0 || iy >= u.in[1]) {
          std::fill_n(row, KW * C, 0.0f);
          continue;
        }
        const float* line = x + ((n * u.in[0] + iz) * u.in[1] + iy) * u.in[2] * C;
        if (whole) {
          copy_floats(line + ix0 * C, row, KW * C);
          continue;
        }
        for (i64 kx = 0; kx < KW; ++kx) {
          const i64 ix = ix0 + kx * u.dilation[2];
          if (ix >= 0 && ix < u.in[2]) copy_floats(line + ix * C, row + kx * C, C);
          else std::fill_n(row + kx * C, C, 0.0f);
        }
      }
    }
    if (++ox == u.out[2]) {
      ox = 0;
      if (++oy == u.out[1]) {
        oy = 0;
        if (++oz == u.out[0]) oz = 0, ++n;
      }
    }
  }
}

namespace {

// The pixels unfolded at a time (the edges of the input, where taps fall in
// the padding) stay about this small while every panel passes over them.
constexpr i64 kUnfoldedChunkBytes = i64{128} << 10;

struct UnfoldedRun {
  const conv::Kernels* k;
  const Conv* u;
  const pointwise::Conv* p;
  const float* packed;
  const float* x;
  float* y;
  float* scratch;
  i64 chunk, panels;
  // Kernels::direct's runs: per (kz, ky) one of KW * C floats (per tap of C
  // where the columns are dilated), at these offsets from a pixel's start.
  std::vector<i64> offsets;
  i64 length;
  i64 inner_from, inner_to;  // output columns whose taps along W all fall inside
};

// Output pixels [first, first + count) unfolded into `rows`, a chunk at a time.
void through_rows(const UnfoldedRun& c, float* rows, i64 first, i64 count) {
  for (i64 done = 0; done < count; done += c.chunk) {
    const i64 n = std::min(c.chunk, count - done);
    unfold(*c.u, c.x, rows, first + done, n);
    c.k->pointwise(*c.p, rows, c.packed, c.y + (first + done) * c.p->out_channels, 0, n, 0, c.panels);
  }
}

// One output row (n, oz, oy): its pixels whose every tap falls inside
// straight off the input, the rest unfolded.
void unfolded_row(void* context, std::size_t thread, std::size_t index) {
  const auto* c = static_cast<const UnfoldedRun*>(context);
  const Conv& u = *c->u;
  const i64 row = static_cast<i64>(index), OW = u.out[2], first = row * OW;
  float* rows = c->scratch + static_cast<i64>(thread) * c->chunk * u.row();
  const i64 oy = row % u.out[1], oz = row / u.out[1] % u.out[0], n = row / u.out[1] / u.out[0];
  const i64 iz = oz * u.stride[0] - u.padding[0], iy = oy * u.stride[1] - u.padding[1];
  const bool inside = iz >= 0 && iz + (u.kernel[0] - 1) * u.dilation[0] < u.in[0] && iy >= 0 && iy + (u.kernel[1] - 1) * u.dilation[1] < u.in[1];
  if (!inside || c->inner_from >= c->inner_to) {
    through_rows(*c, rows, first, OW);
    return;
  }
  through_rows(*c, rows, first, c->inner_from);
  const i64 C = u.channels;
  const float* x0 = c->x + ((n * u.in[0] + iz) * u.in[1] + iy) * u.in[2] * C + (c->inner_from * u.stride[2] - u.padding[2]) * C;
  c->k->direct(*c->p, x0, u.stride[2] * C, c->offsets.data(), static_cast<i64>(c->offsets.size()), c->length, c->packed,
               c->y + (first + c->inner_from) * c->p->out_channels, c->inner_to - c->inner_from);
  through_rows(*c, rows, first + c->inner_to, OW - c->inner_to);
}

}  // namespace

i64 chunk_pixels(const Conv& u) {
  return std::max<i64>(std::min(kUnfoldedChunkBytes / (u.row() * static_cast<i64>(sizeof(float))), u.out[2]), 1);
}

void run(const conv::Kernels& k, const Conv& u, const pointwise::Conv& p, const float* packed, const float* x, float* y, float* scratch,
         pthreadpool_t pool) {
  UnfoldedRun c{&k, &u, &p, packed, x, y, scratch, chunk_pixels(u), pointwise::panel_count(p.out_channels, k.panel), {}, 0, 0, 0};
  const i64 C = u.channels, plane = u.in[1] * u.in[2] * C, line = u.in[2] * C;
  for (i64 kz = 0; kz < u.kernel[0]; ++kz)
    for (i64 ky = 0; ky < u.kernel[1]; ++ky) {
      const i64 at = kz * u.dilation[0] * plane + ky * u.dilation[1] * line;
      if (u.dilation[2] == 1) c.offsets.push_back(at);
      else
        for (i64 kx = 0; kx < u.kernel[2]; ++kx) c.offsets.push_back(at + kx * u.dilation[2] * C);
    }
  c.length = u.dilation[2] == 1 ? u.kernel[2] * C : C;
  // ox * stride - padding >= 0, and its last tap, + (KW - 1) * dilation, < W.
  c.inner_from = std::min((u.padding[2] + u.stride[2] - 1) / u.stride[2], u.out[2]);
  const i64 last = u.in[2] - 1 - (u.kernel[2] - 1) * u.dilation[2] + u.padding[2];  // the last ox * stride
  c.inner_to = std::max(c.inner_from, last < 0 ? i64{0} : std::min(last / u.stride[2] + 1, u.out[2]));
  pthreadpool_parallelize_1d_with_thread(pool, unfolded_row, &c, static_cast<std::size_t>(u.batch * u.out[0] * u.out[1]), kNoDenormals);
}

}  // namespace tracegraph::xnnpack::unfolded
