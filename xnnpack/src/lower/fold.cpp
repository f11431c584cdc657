// im2col and col2im (F.unfold and F.fold), batched or not, on portable kernels.
#include "lower/fold.h"

namespace tracegraph::xnnpack {

void lower_fold(Context& cx, const Node& n, NodeState&) {
  const bool fold = base_op(n.op) == "col2im";
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape xs = cx.slot(x).shape;
  portable::Fold f;
  const std::vector<i64> kernel = cx.spatial_arg(n, "kernel_size", 2, 1), dilation = cx.spatial_arg(n, "dilation", 2, 1);
  const std::vector<i64> padding = cx.spatial_arg(n, "padding", 2, 0), stride = cx.spatial_arg(n, "stride", 2, 1);
  cx.within_geometry(n, {{"kernel_size", &kernel}, {"dilation", &dilation}, {"padding", &padding}, {"stride", &stride}});
  for (std::size_t i = 0; i < 2; ++i) {
    if (kernel[i] < 1 || dilation[i] < 1 || padding[i] < 0 || stride[i] < 1)
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": kernel " + shape_str(kernel) + ", dilation " + shape_str(dilation) + ", padding " +
                                            shape_str(padding) + ", stride " + shape_str(stride));
    f.kernel[i] = kernel[i], f.dilation[i] = dilation[i], f.padding[i] = padding[i], f.stride[i] = stride[i];
  }
  // An unbatched input ([C, H, W] or [C * kh * kw, L]) runs as a batch of one.
  const bool batched = xs.size() == (fold ? 3u : 4u);
  if (!batched && xs.size() != (fold ? 2u : 3u)) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs));
  f.batch = batched ? xs[0] : 1;
  const i64 taps = f.kernel[0] * f.kernel[1];
  if (fold) {
    const auto size = cx.ints_arg(n, "output_size");
    if (!size || size->size() != 2) fail(ErrorCode::kSchema, cx.where(n) + ": output_size of 2 dims");
    f.height = (*size)[0], f.width = (*size)[1];
    const i64 rows = xs[xs.size() - 2];
    if (rows % taps != 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + std::to_string(rows) + " rows for a kernel of " + std::to_string(taps));
    f.channels = rows / taps;
  } else {
    f.channels = xs[xs.size() - 3], f.height = xs[xs.size() - 2], f.width = xs[xs.size() - 1];
  }
  // The windows along each dim; none where the dilated kernel is wider than the padded image.
  auto windows = [](i64 size, i64 pad, i64 dilation, i64 kernel, i64 stride) {
    return shape_rules::window_output(size, kernel, stride, pad, dilation).value_or(0);
  };
  f.blocks_h = windows(f.height, f.padding[0], f.dilation[0], f.kernel[0], f.stride[0]);
  f.blocks_w = windows(f.width, f.padding[1], f.dilation[1], f.kernel[1], f.stride[1]);
  if (f.blocks_h < 1 || f.blocks_w < 1 || (fold && f.blocks_h * f.blocks_w != xs.back()))
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " for " + std::to_string(f.blocks_h) + " x " + std::to_string(f.blocks_w) +
                                        " sliding windows");
  Shape out_shape = fold ? Shape{f.channels, f.height, f.width} : Shape{f.channels * taps, f.blocks_h * f.blocks_w};
  if (batched) out_shape.insert(out_shape.begin(), f.batch);
  cx.within_budget(out_shape);
  const int out = cx.new_tensor(out_shape, false);
  cx.portable_map(x, out, [f, fold](const float* a, float* b) {
    if (fold) portable::col2im(f, a, b);
    else portable::im2col(f, a, b);
  });
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
