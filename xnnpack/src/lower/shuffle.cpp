// Shuffles of pixels and channels: pixel_shuffle, pixel_unshuffle and
// channel_shuffle, on portable kernels.
#include "lower/shuffle.h"

namespace tracegraph::xnnpack {

void lower_pixel_shuffle(Context& cx, const Node& n, NodeState&) {
  const int x = cx.as_layout(cx.tensor_arg(n, "self", 0), false);
  const Shape xs = cx.slot(x).shape;
  const i64 r = cx.int_arg(n, "upscale_factor").value_or(1);
  if (xs.size() < 3 || r <= 0 || xs[xs.size() - 3] % (r * r))
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " with an upscale factor of " + std::to_string(r));
  const std::size_t k = xs.size();
  const i64 c = xs[k - 3] / (r * r), h = xs[k - 2], w = xs[k - 1], planes = prod(xs, 0, k - 3);
  Shape out_shape(xs.begin(), xs.end() - 3);
  out_shape.insert(out_shape.end(), {c, h * r, w * r});
  const int out = cx.new_tensor(out_shape, false);
  cx.portable_map(x, out, [planes, c, h, w, r](const float* a, float* b) { portable::pixel_shuffle(a, b, planes, c, h, w, r); });
  cx.define(n.outputs[0], out);
}

void lower_unshuffle(Context& cx, const Node& n, NodeState&) {
  // Both are a strided read of a contiguous input, in the output's order.
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape xs = cx.slot(x).shape;
  std::vector<i64> size, stride;
  Shape out_shape;
  if (base_op(n.op) == "pixel_unshuffle") {
    // [..., C, H * r, W * r] -> [..., C * r * r, H, W]: out[c, i, j, h, w] = x[c, h * r + i, w * r + j].
    const i64 r = cx.int_arg(n, "downscale_factor").value_or(1);
    const std::size_t k = xs.size();
    if (k < 3 || r <= 0 || xs[k - 2] % r || xs[k - 1] % r)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " with a downscale factor of " + std::to_string(r));
    const i64 planes = prod(xs, 0, k - 2), rows = xs[k - 2], cols = xs[k - 1];
    size = {planes, r, r, rows / r, cols / r};
    stride = {rows * cols, cols, 1, r * cols, r};
    out_shape.assign(xs.begin(), xs.end() - 3);
    out_shape.insert(out_shape.end(), {xs[k - 3] * r * r, rows / r, cols / r});
  } else {
    // channel_shuffle: [N, C, ...] viewed [N, g, C / g, ...], the two swapped.
    const i64 g = cx.int_arg(n, "groups").value_or(1);
    if (xs.size() < 2 || g <= 0 || xs[1] % g)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " in " + std::to_string(g) + " groups");
    const i64 rest = prod(xs, 2, xs.size()), per = xs[1] / g;
    size = {xs[0], per, g, rest};
    stride = {xs[1] * rest, rest, per * rest, 1};
    out_shape = xs;
  }
  const int out = cx.new_tensor(out_shape, false);
  cx.portable_map(x, out, [size, stride](const float* a, float* b) { portable::as_strided(a, b, size, stride, 0); });
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
