// The 1x1 convolution on our GEMM: the weights' packing and the pixels and
// panels handed to threads (the kernels are pointwise_kernels.h's).
#include "kernels/conv/pointwise.h"

#include "kernels/conv/conv_kernels.h"

#include <algorithm>
#include <cstdint>

namespace tracegraph::xnnpack::pointwise {

std::vector<float> pack(const float* weight, const float* bias, i64 in_channels, i64 out_channels, int panel) {
  const i64 P = panel, padded = panel_count(out_channels, panel) * P;
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
  const conv::Kernels* k;
  const Conv* p;
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

void run(const conv::Kernels& k, const Conv& p, const float* packed, const float* x, float* y, i64 pixels, pthreadpool_t pool) {
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
  const i64 slabs = (pixels + slab - 1) / slab, panels = panel_count(p.out_channels, k.panel);
  const i64 per_task = threads > 1 && slabs < 2 * threads ? 1 : panels;
  PointwiseRun c{&k, &p, packed, x, y, pixels, slab, per_task, panels};
  pthreadpool_parallelize_2d(pool, pointwise_task, &c, static_cast<std::size_t>(slabs), static_cast<std::size_t>((panels + per_task - 1) / per_task),
                             kNoDenormals);
}

}  // namespace tracegraph::xnnpack::pointwise
