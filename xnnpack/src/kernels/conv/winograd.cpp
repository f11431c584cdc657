// Winograd's weights, geometry and the kernels' table, and the 1x1
// convolution's packing and threads; the kernels themselves are
// winograd_kernels.h's, here for 4 lanes.
#include "kernels/conv/winograd.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "runtime/cpu.h"
#include "kernels/simd.h"
#include "kernels/conv/winograd_kernels.h"

namespace tracegraph::xnnpack::winograd {

#ifdef TRACEGRAPH_WINOGRAD_X86
// winograd_avx2.cpp's 8-lane kernels, to call only where the CPU has AVX2 and
// FMA; winograd_avx512.cpp's 16-lane ones, only where it has AVX-512F.
const Kernels& avx2_kernels();
const Kernels& avx512_kernels();
#endif

namespace {

template <>
struct Lanes<simd::v4> {
  static constexpr int count = 4;
  static constexpr int rows = 4;
  // pointwise(): 2 rows by 4 vectors (8 accumulators, 4 weight vectors and a
  // splat): fewer splats per multiply-add than 4 x 2, faster in V8.
  static constexpr int panel_rows = 2, panel_vectors = 4;
  static simd::v4 splat(float x) { return simd::splat(x); }
  static simd::v4 load(const float* p, int n) { return simd::load(p, n); }
  static void store(float* p, simd::v4 v, int n) { simd::store(p, v, n); }
  static simd::v4 max_of(simd::v4 a, simd::v4 b) { return simd::max_of(a, b); }
  static simd::v4 min_of(simd::v4 a, simd::v4 b) { return simd::min_of(a, b); }
  static void leave() {}
};

constexpr Kernels kFourLanes = kernels_of<simd::v4>();

}  // namespace

const Kernels* kernels(int lanes) {
  if (lanes == 4) return &kFourLanes;
#ifdef TRACEGRAPH_WINOGRAD_X86
  // As XNNPACK sees the CPU (cpu.h: one detection, under the same cap).
  const cpu::Features& cpu = cpu::features();
  if (lanes == 8 && cpu.avx2 && cpu.fma) return &avx2_kernels();
  if (lanes == 16 && cpu.avx512f) return &avx512_kernels();
#endif
  return nullptr;
}

const Kernels& widest_kernels() {
  for (int lanes : {16, 8})
    if (const Kernels* k = kernels(lanes)) return *k;
  return kFourLanes;
}

namespace {

// G along one axis: three taps to `points` (4 or 6) values.
inline void weight_1d(int points, const double g[3], double* u) {
  if (points == 4) {
    u[0] = g[0];
    u[1] = 0.5 * (g[0] + g[1] + g[2]);
    u[2] = 0.5 * (g[0] - g[1] + g[2]);
    u[3] = g[2];
    return;
  }
  u[0] = g[0] / 4;
  u[1] = -(g[0] + g[1] + g[2]) / 6;
  u[2] = -(g[0] - g[1] + g[2]) / 6;
  u[3] = g[0] / 24 + g[1] / 12 + g[2] / 6;
  u[4] = g[0] / 24 - g[1] / 12 + g[2] / 6;
  u[5] = g[2];
}

}  // namespace

bool Geometry::make(int rank, int tile, i64 batch, i64 in_channels, i64 out_channels, const i64* in_sizes, const i64* padding, Geometry& g) {
  g = Geometry{};
  if ((tile != 2 && tile != 4) || (rank == 3 && tile != 2)) return false;
  g.rank = rank;
  g.tile = tile;
  g.batch = batch;
  g.in_channels = in_channels;
  g.out_channels = out_channels;
  const int first = 3 - rank;
  for (int axis = first; axis < 3; ++axis) {
    g.in[axis] = in_sizes[axis - first];
    g.pad[axis] = padding[axis - first];
    g.out[axis] = g.in[axis] + 2 * g.pad[axis] - 2;
    if (g.out[axis] <= 0) return false;
    g.tiles_axis[axis] = (g.out[axis] + tile - 1) / tile;
  }
  return batch > 0 && in_channels > 0 && out_channels > 0;
}

std::vector<float> transform_weights(const Geometry& g, const float* weight, bool output_major) {
  const i64 C = g.in_channels, O = g.out_channels, P = g.points();
  const int a = g.span(), kd = g.rank == 3 ? 3 : 1, td = g.rank == 3 ? a : 1;
  std::vector<float> u(static_cast<std::size_t>(P * C * O));
  // The innermost index runs over the layout's last axis: P sequential writes.
  const i64 outer_count = output_major ? O : C, inner_count = output_major ? C : O;
  for (i64 outer = 0; outer < outer_count; ++outer) {
    for (i64 inner = 0; inner < inner_count; ++inner) {
      const i64 o = output_major ? outer : inner, c = output_major ? inner : outer;
      const float* w = weight + (o * C + c) * kd * 9;
      // Along W, then H, then D: [kd][3][3] -> [kd][3][a] -> [kd][a][a] -> [td][a][a].
      double along_w[3][3][6], along_h[3][6][6], along_d[6][6][6];
      for (int z = 0; z < kd; ++z)
        for (int y = 0; y < 3; ++y) {
          const double row[3] = {w[(z * 3 + y) * 3], w[(z * 3 + y) * 3 + 1], w[(z * 3 + y) * 3 + 2]};
          weight_1d(a, row, along_w[z][y]);
        }
      for (int z = 0; z < kd; ++z)
        for (int x = 0; x < a; ++x) {
          const double col[3] = {along_w[z][0][x], along_w[z][1][x], along_w[z][2][x]};
          double out[6];
          weight_1d(a, col, out);
          for (int y = 0; y < a; ++y) along_h[z][y][x] = out[y];
        }
      for (int y = 0; y < a; ++y)
        for (int x = 0; x < a; ++x) {
          if (kd == 1) {
            along_d[0][y][x] = along_h[0][y][x];
            continue;
          }
          const double col[3] = {along_h[0][y][x], along_h[1][y][x], along_h[2][y][x]};
          double out[6];
          weight_1d(a, col, out);
          for (int z = 0; z < a; ++z) along_d[z][y][x] = out[z];
        }
      for (int z = 0; z < td; ++z)
        for (int y = 0; y < a; ++y)
          for (int x = 0; x < a; ++x) {
            const i64 p = (z * a + y) * a + x;
            u[static_cast<std::size_t>(output_major ? (p * O + o) * C + c : (p * C + c) * O + o)] = static_cast<float>(along_d[z][y][x]);
          }
    }
  }
  return u;
}

std::vector<float> pack_pointwise(const float* weight, const float* bias, i64 in_channels, i64 out_channels, int panel) {
  const i64 P = panel, padded = pointwise_panels(out_channels, panel) * P;
  std::vector<float> packed(static_cast<std::size_t>(padded * (in_channels + 1)));
  for (i64 o = 0; o < out_channels; ++o) {
    const i64 q = o / P, j = o % P;
    for (i64 c = 0; c < in_channels; ++c) packed[static_cast<std::size_t>((q * in_channels + c) * P + j)] = weight[o * in_channels + c];
    if (bias) packed[static_cast<std::size_t>(padded * in_channels + o)] = bias[o];
  }
  return packed;
}

namespace {

// A slab of pixels keeps about this many bytes of input in cache while every
// panel of output channels passes over it.
constexpr i64 kSlabBytes = i64{256} << 10;

struct PointwiseRun {
  const Kernels* k;
  const Pointwise* p;
  const float* packed;
  const float* x;
  float* y;
  i64 pixels, slab, panels_per_task, panels;
};

void pointwise_task(void* context, std::size_t slab, std::size_t group) {
  const auto* c = static_cast<const PointwiseRun*>(context);
  const i64 first = static_cast<i64>(slab) * c->slab, first_panel = static_cast<i64>(group) * c->panels_per_task;
  c->k->pointwise(*c->p, c->x, c->packed, c->y, first, std::min(c->slab, c->pixels - first), first_panel,
                  std::min(c->panels_per_task, c->panels - first_panel));
}

}  // namespace

void pointwise(const Kernels& k, const Pointwise& p, const float* packed, const float* x, float* y, i64 pixels, pthreadpool_t pool) {
  // Slabs of equal size, a multiple of every width's rows per block, at most
  // kSlabBytes of input each, and (where there are several) a multiple of the
  // threads in count: 7 slabs on 2 threads left one idle for a seventh of
  // the time. Where there are fewer than two slabs a thread, a task is one
  // slab and one panel, so that the threads share out the panels evenly
  // (mobilenet_v2's 960->160 at 7x7 went in tasks of 3, 3, 3 and 1 panels).
  const i64 rows = 8, threads = static_cast<i64>(pthreadpool_get_threads_count(pool));
  const i64 most = std::max<i64>(kSlabBytes / (p.in_channels * static_cast<i64>(sizeof(float))), rows);
  i64 wanted = (pixels + most - 1) / most;
  if (wanted > 1) wanted = (wanted + threads - 1) / threads * threads;
  const i64 slab = ((pixels + wanted - 1) / wanted + rows - 1) / rows * rows;
  const i64 slabs = (pixels + slab - 1) / slab, panels = pointwise_panels(p.out_channels, k.panel);
  const i64 per_task = threads > 1 && slabs < 2 * threads ? 1 : panels;
  PointwiseRun c{&k, &p, packed, x, y, pixels, slab, per_task, panels};
  pthreadpool_parallelize_2d(pool, pointwise_task, &c, static_cast<std::size_t>(slabs), static_cast<std::size_t>((panels + per_task - 1) / per_task),
                             kNoDenormals);
}

bool Unfolded::make_output() {
  for (int axis = 0; axis < 3; ++axis) {
    const i64 span = in[axis] + 2 * padding[axis] - dilation[axis] * (kernel[axis] - 1) - 1;
    if (span < 0 || stride[axis] <= 0) return false;
    out[axis] = span / stride[axis] + 1;
  }
  return batch > 0 && channels > 0;
}

std::vector<float> pack_unfolded(const Unfolded& u, const float* weight, const float* bias, i64 out_channels, int panel) {
  // Torch's [O][C][taps] as [O][taps][C]: the rows' order.
  const i64 C = u.channels, T = u.taps();
  std::vector<float> w(static_cast<std::size_t>(out_channels * T * C));
  for (i64 o = 0; o < out_channels; ++o)
    for (i64 c = 0; c < C; ++c)
      for (i64 t = 0; t < T; ++t) w[static_cast<std::size_t>((o * T + t) * C + c)] = weight[(o * C + c) * T + t];
  return pack_pointwise(w.data(), bias, T * C, out_channels, panel);
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

void unfold(const Unfolded& u, const float* x, float* rows, i64 first, i64 count) {
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
  const Kernels* k;
  const Unfolded* u;
  const Pointwise* p;
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
  const Unfolded& u = *c->u;
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

i64 unfolded_chunk(const Unfolded& u) {
  return std::max<i64>(std::min(kUnfoldedChunkBytes / (u.row() * static_cast<i64>(sizeof(float))), u.out[2]), 1);
}

void unfolded(const Kernels& k, const Unfolded& u, const Pointwise& p, const float* packed, const float* x, float* y, float* scratch,
              pthreadpool_t pool) {
  UnfoldedRun c{&k, &u, &p, packed, x, y, scratch, unfolded_chunk(u), pointwise_panels(p.out_channels, k.panel), {}, 0, 0, 0};
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

std::vector<float> pad_columns(const Geometry& g, const std::vector<float>& u, int lanes) {
  const i64 rows = g.points() * g.in_channels, O = g.out_channels, padded = (O + lanes - 1) / lanes * lanes;
  std::vector<float> out(static_cast<std::size_t>(rows * padded));
  for (i64 r = 0; r < rows; ++r) std::copy_n(u.begin() + r * O, O, out.begin() + r * padded);
  return out;
}

}  // namespace tracegraph::xnnpack::winograd
