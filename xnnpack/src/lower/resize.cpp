// Resizes: nearest on the layout kernels; linear, bilinear, trilinear and bicubic in portable kernels.
#include "lower/resize.h"

namespace tracegraph::xnnpack {

void lower_resize(Context& cx, const Node& n, NodeState&) {
  const std::size_t rank = named_spatial_rank(n.op).value_or(2);  // upsample_nearest2d or 3d (lower/table.cpp)
  // .vec names its tensor "input", .default (core ATen) "self".
  const int x = cx.as_layout(cx.tensor_arg(n, input_for_arg(n, "input", 0) ? "input" : "self", 0), true);
  const Shape xs = cx.slot(x).shape;
  if (xs.size() != rank + 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs));
  auto size = cx.ints_arg(n, "output_size");
  auto factors = cx.floats_arg(n, "scale_factors");
  if (!factors) {  // the overload with one scale per axis
    std::vector<double> per_axis;
    for (const char* name : {"scales_d", "scales_h", "scales_w"})
      if (auto s = cx.float_arg(n, name)) per_axis.push_back(*s);
    if (per_axis.size() == rank) factors = per_axis;
  }
  i64 in[3] = {1, xs[2], xs[3]}, out[3] = {1, 0, 0};
  if (rank == 3) in[0] = xs[2], in[1] = xs[3], in[2] = xs[4];
  double scale[3] = {1, 1, 1};
  for (std::size_t i = 0; i < rank; ++i) {
    const std::size_t a = 3 - rank + i;
    if (size && size->size() == rank) {
      out[a] = (*size)[i];
      scale[a] = factors && factors->size() == rank ? 1.0 / (*factors)[i] : static_cast<double>(in[a]) / static_cast<double>(out[a]);
    } else if (factors && factors->size() == rank) {
      out[a] = static_cast<i64>(std::floor(static_cast<double>(in[a]) * (*factors)[i]));
      scale[a] = 1.0 / (*factors)[i];
    } else {
      fail(ErrorCode::kSchema, cx.where(n) + ": neither an output size nor scale factors for " + std::to_string(rank) + " dims");
    }
    if (out[a] <= 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": output size " + std::to_string(out[a]));
  }
  Shape out_shape{xs[0], xs[1]};
  for (std::size_t i = 0; i < rank; ++i) out_shape.push_back(out[3 - rank + i]);
  const int y = cx.new_tensor(out_shape, true);
  const i64 nb = xs[0], channels = xs[1];
  const std::array<i64, 3> in_a{in[0], in[1], in[2]}, out_a{out[0], out[1], out[2]};
  const std::array<double, 3> scale_a{scale[0], scale[1], scale[2]};
  Step& step = cx.add_step({x}, {y});
  step.run = [&cx, x, y, nb, in_a, out_a, scale_a, channels] {
    cx.parallel_slices(nb * out_a[0] * out_a[1], [&](i64 first, i64 count) {
      kernels::resize_nearest(cx.ptr(x), cx.ptr(y), nb, in_a.data(), out_a.data(), scale_a.data(), channels, first, count);
    });
  };
  cx.define(n.outputs[0], y);
}

void lower_resize_portable(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const std::size_t rank = named_spatial_rank(base).value_or(2);
  const int x = cx.tensor_arg(n, input_for_arg(n, "input", 0) ? "input" : "self", 0);
  const Shape xs = cx.slot(x).shape;
  if (xs.size() != rank + 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " for a resize over " + std::to_string(rank) + " dims");
  auto size = cx.ints_arg(n, "output_size");
  auto factors = cx.floats_arg(n, "scale_factors");
  if (!factors) {
    std::vector<double> per_axis;
    const std::vector<const char*> names = rank == 1 ? std::vector<const char*>{"scales"} : rank == 2 ? std::vector<const char*>{"scales_h", "scales_w"}
                                                                                                     : std::vector<const char*>{"scales_d", "scales_h", "scales_w"};
    for (const char* name : names)
      if (auto s = cx.float_arg(n, name)) per_axis.push_back(*s);
    if (per_axis.size() == rank) factors = per_axis;
  }
  std::vector<i64> in, out;
  std::vector<double> scale;
  for (std::size_t i = 0; i < rank; ++i) {
    const i64 a = xs[2 + i];
    in.push_back(a);
    const bool have_factor = factors && factors->size() == rank && (*factors)[i] > 0;
    if (size && size->size() == rank) out.push_back((*size)[i]);
    else if (have_factor) out.push_back(static_cast<i64>(std::floor(static_cast<double>(a) * (*factors)[i])));
    else fail(ErrorCode::kSchema, cx.where(n) + ": neither an output size nor scale factors for " + std::to_string(rank) + " dims");
    if (out.back() <= 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": output size " + std::to_string(out.back()));
    scale.push_back(have_factor ? 1.0 / (*factors)[i] : static_cast<double>(a) / static_cast<double>(out.back()));
  }
  const bool align_corners = cx.int_arg(n, "align_corners").value_or(0) != 0;
  Shape out_shape{xs[0], xs[1]};
  for (i64 o : out) out_shape.push_back(o);
  // 2D bilinear on XNNPACK (channels-last, no layout change) where its
  // coordinates are torch's: the scale is in/out (no scale factor that says
  // otherwise), and with align_corners, sizes above 1.
  bool xnnpack_maps_alike = base == "upsample_bilinear2d";
  for (std::size_t i = 0; i < rank && xnnpack_maps_alike; ++i) {
    const double ratio = static_cast<double>(in[i]) / static_cast<double>(out[i]);
    xnnpack_maps_alike = std::abs(scale[i] - ratio) <= 1e-12 * ratio && (!align_corners || (in[i] > 1 && out[i] > 1));
  }
  if (xnnpack_maps_alike) {
    const int xc = cx.as_layout(x, true);
    XnnOp& made = cx.plan_op();
    xnn_operator_t op = nullptr;
    cx.check(xnn_create_resize_bilinear2d_nhwc_f32(static_cast<std::size_t>(out[0]), static_cast<std::size_t>(out[1]),
                                                align_corners ? XNN_FLAG_ALIGN_CORNERS : 0, &op),
          n, "creating a bilinear resize");
    made.op = op;
    const auto channels = static_cast<std::size_t>(xs[1]);
    std::size_t ws_size = 0, ws_align = 0;
    cx.check(xnn_reshape_resize_bilinear2d_nhwc_f32(op, static_cast<std::size_t>(xs[0]), static_cast<std::size_t>(in[0]), static_cast<std::size_t>(in[1]),
                                                 channels, channels, channels, &ws_size, &ws_align, cx.pool()),
          n, "reshaping a bilinear resize");
    cx.reserve_workspace(ws_size);
    const int y = cx.new_tensor(out_shape, true);
    Step& step = cx.add_step({xc}, {y});
    step.setup = [&cx, op, xc, y, &n] { cx.check(xnn_setup_resize_bilinear2d_nhwc_f32(op, cx.workspace(), cx.ptr(xc), cx.ptr(y)), n, "setting up a bilinear resize"); };
    step.xnnpack = true;
    step.run = [&cx, op, &n] { cx.check(xnn_run_operator(op, cx.pool()), n, "running a bilinear resize"); };
    return cx.define(n.outputs[0], y);
  }
  const int y = cx.new_tensor(out_shape, false);
  const i64 planes = xs[0] * xs[1];
  std::vector<int> ins{x};
  Step& step = cx.portable_step(ins, {y});
  const int xi = ins[0];
  if (base.find("nearest") != std::string::npos) {
    const bool exact = base.find("nearest_exact") != std::string::npos;
    step.run = [&cx, xi, y, planes, in, out, scale, exact] { portable::resize_nearest(cx.ptr(xi), cx.ptr(y), planes, in, out, scale, exact); };
  } else if (base.find("bicubic") != std::string::npos) {
    step.run = [&cx, xi, y, planes, in, out, scale, align_corners] {
      portable::resize_bicubic(cx.ptr(xi), cx.ptr(y), planes, in[0], in[1], out[0], out[1], scale[0], scale[1], align_corners);
    };
  } else {
    step.run = [&cx, xi, y, planes, in, out, scale, align_corners] {
      portable::resize_linear(cx.ptr(xi), cx.ptr(y), planes, in, out, scale, align_corners);
    };
  }
  cx.define(n.outputs[0], y);
}

void lower_grid_sample(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "input", 0);
  const int grid = cx.tensor_arg(n, "grid", 1);
  const Shape xs = cx.slot(x).shape, gs = cx.slot(grid).shape;
  if (xs.size() != 4 || gs.size() != 4 || gs[0] != xs[0] || gs[3] != 2)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " and grid " + shape_str(gs) + " (a grid [N, H, W, 2] for an input [N, C, H, W])");
  portable::GridSample g;
  g.batch = xs[0], g.channels = xs[1], g.in_h = xs[2], g.in_w = xs[3], g.out_h = gs[1], g.out_w = gs[2];
  const i64 mode = cx.int_arg(n, "interpolation_mode").value_or(0), padding = cx.int_arg(n, "padding_mode").value_or(0);
  if (mode < 0 || mode > 2 || padding < 0 || padding > 2)
    fail(ErrorCode::kInvalidArgument, cx.where(n) + ": interpolation mode " + std::to_string(mode) + ", padding mode " + std::to_string(padding));
  g.mode = static_cast<portable::GridMode>(mode);
  g.padding = static_cast<portable::GridPadding>(padding);
  g.align_corners = cx.int_arg(n, "align_corners").value_or(0) != 0;
  const int out = cx.new_tensor({g.batch, g.channels, g.out_h, g.out_w}, false);
  std::vector<int> ins{x, grid};
  Step& step = cx.portable_step(ins, {out});
  step.run = [&cx, g, xi = ins[0], gi = ins[1], out] { portable::grid_sample(g, cx.ptr(xi), cx.ptr(gi), cx.ptr(out)); };
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
