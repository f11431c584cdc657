// Pooling: max and average pooling (ceil mode, padding; 2D on XNNPACK, 1D,
// 3D and what XNNPACK lacks on portable kernels), adaptive pooling.
#include "lower/pool.h"
#include "lower/reduction.h"

namespace tracegraph::xnnpack {

namespace {

// torch's pooling output size, with ceil_mode.
i64 pooled(i64 in, i64 k, i64 s, i64 p, i64 d, bool ceil_mode) {
  // Callers checked that the window fits; 0 stands for "does not".
  return shape_rules::window_output(in, k, s, p, d, ceil_mode).value_or(0);
}

// Whether the graph reads `v` (a node's input or a graph output).
bool used(const Graph& g, ValueId v) {
  const auto& outs = g.outputs();
  return !g.value(v).users.empty() || std::find(outs.begin(), outs.end(), v) != outs.end();
}

// A pooling's stride: the kernel's when none is given, one number for every dim.
std::vector<i64> pool_stride(const Context& cx, const Node& n, const std::vector<i64>& kernel) {
  std::vector<i64> stride = cx.ints_arg(n, "stride").value_or(std::vector<i64>{});
  if (stride.empty()) stride = kernel;
  if (stride.size() == 1) stride.assign(kernel.size(), stride[0]);
  if (stride.size() != kernel.size())
    fail(ErrorCode::kSchema, cx.where(n) + ": stride " + shape_str(stride) + " for " + std::to_string(kernel.size()) + " spatial dims");
  return stride;
}

// pooled() with its arguments checked (validate.cpp has already, for a graph through finalize()).
i64 pooled_length(const Context& cx, const Node& n, i64 in, i64 kernel, i64 stride, i64 pad, i64 dilation, bool ceil_mode) {
  if (stride <= 0 || dilation <= 0 || !shape_rules::pool_padding_fits(kernel, pad))
    fail(ErrorCode::kInvalidArgument, cx.where(n) + ": kernel " + std::to_string(kernel) + ", stride " + std::to_string(stride) + ", padding " + std::to_string(pad) + ", dilation " + std::to_string(dilation));
  const auto length = shape_rules::window_output(in, kernel, stride, pad, dilation, ceil_mode);
  if (!length) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": window larger than the padded input of " + std::to_string(in));
  return *length;
}

void avg_pool_step(Context& cx, const Node& n, NodeState& st, int x, const Shape& xs, const std::vector<i64>& kernel,
                   const std::vector<i64>& stride, const std::vector<i64>& padding, bool ceil_mode) {
  const Shape out_shape{xs[0], xs[1], pooled(xs[2], kernel[0], stride[0], padding[0], 1, ceil_mode),
                        pooled(xs[3], kernel[1], stride[1], padding[1], 1, ceil_mode)};
  if (st.ops.empty()) {
    st.ops.emplace_back();
    cx.check(xnn_create_average_pooling2d_nhwc_f32(u32(padding[0]), u32(padding[1]),
                                                u32(padding[0]), u32(padding[1]),
                                                u32(kernel[0]), u32(kernel[1]),
                                                u32(stride[0]), u32(stride[1]),
                                                -kInf, kInf, 0, &st.ops[0].op),
          n, "creating an average pooling");
  }
  xnn_operator_t op = st.ops[0].op;
  cx.reserve_indirection(n, out_shape[2], out_shape[3], kernel[0] * kernel[1]);
  std::size_t oh = 0, ow = 0, ws_size = 0, ws_align = 0;
  const std::size_t c = static_cast<std::size_t>(xs[1]);
  cx.check(xnn_reshape_average_pooling2d_nhwc_f32(op, static_cast<std::size_t>(xs[0]), static_cast<std::size_t>(xs[2]),
                                               static_cast<std::size_t>(xs[3]), c, c, c, &ws_size, &ws_align, &oh, &ow, cx.pool()),
        n, "reshaping an average pooling");
  if (static_cast<i64>(oh) != out_shape[2] || static_cast<i64>(ow) != out_shape[3])
    fail(ErrorCode::kUnsupported, cx.where(n) + ": ceil_mode pooling whose output size XNNPACK does not produce");
  cx.reserve_workspace(ws_size);
  const int out = cx.new_tensor(out_shape, true);
  Step& step = cx.add_step({x}, {out});
  step.setup = [&cx, op, x, out, &n] { cx.check(xnn_setup_average_pooling2d_nhwc_f32(op, cx.workspace(), cx.ptr(x), cx.ptr(out)), n, "setting up an average pooling"); };
  step.xnnpack = true;
  step.run = [&cx, op, &n] { cx.check(xnn_run_operator(op, cx.pool()), n, "running an average pooling"); };
  cx.define(n.outputs[0], out);
}

}  // namespace

void lower_max_pool(Context& cx, const Node& n, NodeState& st) {
  const std::size_t rank = base_op(n.op).rfind("max_pool3d", 0) == 0 ? 3 : 2;
  const int x0 = cx.tensor_arg(n, "self", 0);
  const auto kernel = cx.spatial_arg(n, "kernel_size", rank, 1);
  // No batch dim, the maxima's positions asked for, or a window XNNPACK has no
  // operator for: the portable kernel.
  if (cx.slot(x0).shape.size() != rank + 2 || (n.outputs.size() > 1 && used(cx.graph(), n.outputs[1])) ||
      kernel[rank - 2] * kernel[rank - 1] <= 1)
    return lower_max_pool_portable(cx, n, st);
  const int x = cx.as_layout(x0, true);
  const Shape xs = cx.slot(x).shape;
  const auto stride = pool_stride(cx, n, kernel);
  const auto padding = cx.spatial_arg(n, "padding", rank, 0);
  const auto dilation = cx.spatial_arg(n, "dilation", rank, 1);
  cx.within_geometry(n, {{"kernel_size", &kernel}, {"stride", &stride}, {"padding", &padding}, {"dilation", &dilation}});
  const bool ceil_mode = cx.int_arg(n, "ceil_mode").value_or(0) != 0;
  Shape out_shape{xs[0], xs[1]};
  for (std::size_t i = 0; i < rank; ++i) {
    if (!shape_rules::pool_padding_fits(kernel[i], padding[i]))
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": padding " + shape_str(padding) + " larger than half the kernel " + shape_str(kernel));
    out_shape.push_back(pooled(xs[2 + i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode));
    if (out_shape.back() <= 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " is smaller than the kernel");
  }
  const std::size_t h = rank - 2;
  // ceil_mode: more padding after, so that XNNPACK's floor gives PyTorch's
  // ceil (XNNPACK's max pooling never reads padding, as PyTorch's -inf).
  i64 extra[2] = {0, 0};
  for (std::size_t i = 0; i < 2; ++i) {
    const std::size_t a = h + i;
    const i64 span = dilation[a] * (kernel[a] - 1) + 1;
    extra[i] = std::max<i64>(0, (out_shape[2 + a] - 1) * stride[a] + span - (xs[2 + a] + 2 * padding[a]));
  }
  xnn_operator_t op = nullptr;
  if (extra[0] || extra[1] || st.ops.empty()) {
    XnnOp* made;
    if (extra[0] || extra[1]) {  // depends on the input's size: made per plan
      made = &cx.plan_op();
    } else {
      st.ops.emplace_back();
      made = &st.ops.back();
    }
    cx.check(xnn_create_max_pooling2d_nhwc_f32(u32(padding[h]), u32(padding[h + 1] + extra[1]),
                                            u32(padding[h] + extra[0]), u32(padding[h + 1]),
                                            u32(kernel[h]), u32(kernel[h + 1]),
                                            u32(stride[h]), u32(stride[h + 1]),
                                            u32(dilation[h]), u32(dilation[h + 1]),
                                            -kInf, kInf, 0, &made->op),
          n, "creating a max pooling");
    op = made->op;
  } else {
    op = st.ops[0].op;
  }
  const i64 batch = rank == 3 ? xs[0] * xs[2] : xs[0];
  cx.reserve_indirection(n, out_shape[2 + h], out_shape[3 + h], kernel[h] * kernel[h + 1]);
  std::size_t oh = 0, ow = 0;
  const std::size_t c = static_cast<std::size_t>(xs[1]);
  cx.check(xnn_reshape_max_pooling2d_nhwc_f32(op, static_cast<std::size_t>(batch), static_cast<std::size_t>(xs[2 + h]),
                                           static_cast<std::size_t>(xs[3 + h]), c, c, c, &oh, &ow, cx.pool()),
        n, "reshaping a max pooling");
  if (static_cast<i64>(oh) != out_shape[2 + h] || static_cast<i64>(ow) != out_shape[3 + h])
    fail(ErrorCode::kUnsupported, cx.where(n) + ": ceil_mode pooling whose output size XNNPACK does not produce");
  const int planes = rank == 3 ? cx.new_tensor(Shape{batch, xs[1], static_cast<i64>(oh), static_cast<i64>(ow)}, true) : cx.new_tensor(out_shape, true);
  Step& step = cx.add_step({x}, {planes});
  step.setup = [&cx, op, x, planes, &n] { cx.check(xnn_setup_max_pooling2d_nhwc_f32(op, cx.ptr(x), cx.ptr(planes)), n, "setting up a max pooling"); };
  step.xnnpack = true;
  step.run = [&cx, op, &n] { cx.check(xnn_run_operator(op, cx.pool()), n, "running a max pooling"); };
  if (rank == 2) {
    cx.define(n.outputs[0], planes);
    return;
  }
  const int out = cx.new_tensor(out_shape, true);
  const kernels::Window depth{kernel[0], stride[0], padding[0], dilation[0]};
  const i64 nb = xs[0], d_in = xs[2], d_out = out_shape[2], plane = static_cast<i64>(oh * ow) * xs[1];
  Step& reduce = cx.add_step({planes}, {out});
  reduce.run = [&cx, planes, out, nb, d_in, d_out, plane, depth] { kernels::max_over_depth(cx.ptr(planes), cx.ptr(out), nb, d_in, d_out, plane, depth); };
  cx.define(n.outputs[0], out);
}

void lower_avg_pool(Context& cx, const Node& n, NodeState& st) {
  const int x0 = cx.tensor_arg(n, "self", 0);
  const auto kernel = cx.spatial_arg(n, "kernel_size", 2, 1);
  const auto stride = pool_stride(cx, n, kernel);
  const auto padding = cx.spatial_arg(n, "padding", 2, 0);
  cx.within_geometry(n, {{"kernel_size", &kernel}, {"stride", &stride}, {"padding", &padding}});
  const bool ceil_mode = cx.int_arg(n, "ceil_mode").value_or(0) != 0;
  const bool counts_padding = (padding[0] || padding[1]) && cx.int_arg(n, "count_include_pad").value_or(1);
  // No batch dim, a divisor override, or ceil mode with counted padding
  // (windows XNNPACK's operator does not make): the portable kernel.
  if (cx.slot(x0).shape.size() != 4 || cx.int_arg(n, "divisor_override").value_or(0) || (counts_padding && ceil_mode))
    return lower_avg_pool_portable(cx, n, st);
  const int x = cx.as_layout(x0, true);
  const Shape xs = cx.slot(x).shape;
  if (counts_padding) {
    // XNNPACK averages the valid pixels only; PyTorch counts the padding:
    // pad with zeros first (channels-last, a portable kernel), then pool unpadded.
    const Shape padded_shape{xs[0], xs[1], xs[2] + 2 * padding[0], xs[3] + 2 * padding[1]};
    const int p = cx.new_tensor(padded_shape, true);
    const std::vector<i64> phys{xs[0], xs[2], xs[3], xs[1]};
    const std::vector<i64> before{0, padding[0], padding[1], 0};
    Step& step = cx.add_step({x}, {p});
    step.run = [&cx, x, p, phys, before] { portable::pad(cx.ptr(x), cx.ptr(p), phys, before, before, portable::PadMode::kConstant, 0.0f); };
    avg_pool_step(cx, n, st, p, padded_shape, kernel, stride, {0, 0}, false);
    return;
  }
  avg_pool_step(cx, n, st, x, xs, kernel, stride, padding, ceil_mode);
}

void lower_adaptive_pool(Context& cx, const Node& n, NodeState& st) {
  std::string base = base_op(n.op);
  if (base.front() == '_') base.erase(0, 1);  // torch.export's _adaptive_avg_pool2d
  const bool max = base.rfind("adaptive_max", 0) == 0;
  const std::size_t rank = named_spatial_rank(base).value_or(2);
  const int x0 = cx.tensor_arg(n, "self", 0);
  const Shape xs = cx.slot(x0).shape;
  if (xs.size() != rank + 1 && xs.size() != rank + 2)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " for a " + std::to_string(rank) + "D adaptive pooling");
  const std::size_t lead = xs.size() - rank;  // [N, C] or, without a batch dim, [C]
  const auto size = cx.spatial_arg(n, "output_size", rank, 1);
  bool global = true, same = true, divides = true;
  for (std::size_t i = 0; i < rank; ++i) {
    global = global && size[i] == 1;
    same = same && size[i] == xs[lead + i];
    divides = divides && size[i] > 0 && xs[lead + i] % size[i] == 0;
  }
  for (i64 d : size)
    if (d <= 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": output_size " + shape_str(size) + " must be positive");
  const bool indices = max && n.outputs.size() > 1 && used(cx.graph(), n.outputs[1]);
  if (max && n.outputs.size() > 1 && !indices) cx.define(n.outputs[1], cx.new_slot(Slot{}));  // indices: read by nothing
  if (same && !indices) return cx.define(n.outputs[0], x0);
  std::vector<i64> axes;
  for (std::size_t i = 0; i < rank; ++i) axes.push_back(static_cast<i64>(lead + i));
  if (!max && global) return reduce_step(cx, n, x0, axes, true);
  if (!max && rank == 2 && lead == 2 && divides) {
    const std::vector<i64> k{xs[2] / size[0], xs[3] / size[1]};
    return avg_pool_step(cx, n, st, cx.as_layout(x0, true), xs, k, k, {0, 0}, false);
  }
  Shape out_shape(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(lead));
  out_shape.insert(out_shape.end(), size.begin(), size.end());
  cx.within_budget(out_shape);
  const Shape in(xs.begin() + static_cast<std::ptrdiff_t>(lead), xs.end());
  const i64 planes = prod(xs, 0, lead);
  const int out = cx.new_tensor(out_shape, false);
  if (!indices) {
    cx.portable_map(x0, out, [planes, in, size, max](const float* a, float* y) { portable::adaptive_pool(a, y, planes, in, size, max); });
    return cx.define(n.outputs[0], out);
  }
  const int at = cx.new_tensor(out_shape, false);
  std::vector<int> ins{x0};
  Step& step = cx.portable_step(ins, {out, at});
  step.run = [&cx, xi = ins[0], out, at, planes, in, size] { portable::adaptive_pool(cx.ptr(xi), cx.ptr(out), planes, in, size, true, cx.ptr(at)); };
  cx.define(n.outputs[0], out);
  cx.define(n.outputs[1], at);
}

void lower_max_pool_portable(Context& cx, const Node& n, NodeState&) {
  const std::size_t rank = named_spatial_rank(base_op(n.op)).value_or(2);
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape xs = cx.slot(x).shape;
  if (xs.size() != rank + 1 && xs.size() != rank + 2)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " for a " + std::to_string(rank) + "D max pooling");
  portable::MaxPool p;
  p.kernel = cx.spatial_arg(n, "kernel_size", rank, 1);
  p.stride = pool_stride(cx, n, p.kernel);
  p.padding = cx.spatial_arg(n, "padding", rank, 0);
  p.dilation = cx.spatial_arg(n, "dilation", rank, 1);
  cx.within_geometry(n, {{"kernel_size", &p.kernel}, {"stride", &p.stride}, {"padding", &p.padding}, {"dilation", &p.dilation}});
  const bool ceil_mode = cx.int_arg(n, "ceil_mode").value_or(0) != 0;
  Shape out_shape(xs.begin(), xs.end() - static_cast<std::ptrdiff_t>(rank));
  p.planes = prod(xs, 0, xs.size() - rank);
  for (std::size_t i = 0; i < rank; ++i) {
    if (!shape_rules::pool_padding_fits(p.kernel[i], p.padding[i]))
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": padding " + shape_str(p.padding) + " larger than half the kernel " + shape_str(p.kernel));
    const i64 in = xs[xs.size() - rank + i];
    p.in.push_back(in);
    p.out.push_back(pooled_length(cx, n, in, p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], ceil_mode));
    out_shape.push_back(p.out.back());
  }
  const bool indices = n.outputs.size() > 1 && used(cx.graph(), n.outputs[1]);
  const int out = cx.new_tensor(out_shape, false);
  const int at = indices ? cx.new_tensor(out_shape, false) : -1;
  std::vector<int> ins{x};
  Step& step = cx.portable_step(ins, indices ? std::vector<int>{out, at} : std::vector<int>{out});
  step.run = [&cx, xi = ins[0], out, at, p] { portable::max_pool(p, cx.ptr(xi), cx.ptr(out), at >= 0 ? cx.ptr(at) : nullptr); };
  cx.define(n.outputs[0], out);
  if (n.outputs.size() > 1) cx.define(n.outputs[1], indices ? at : cx.new_slot(Slot{}));
}

void lower_pool1d(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape xs = cx.slot(x).shape;
  if (xs.size() != 2 && xs.size() != 3) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " for a 1D pooling");
  const i64 length = xs.back(), planes = numel(xs) / std::max<i64>(length, 1);
  Shape out_shape = xs;
  std::vector<int> ins{x};
  const i64 kernel = cx.spatial_arg(n, "kernel_size", 1, 1)[0];
  auto stride_v = cx.ints_arg(n, "stride");
  const i64 stride = stride_v && !stride_v->empty() ? (*stride_v)[0] : kernel;
  const i64 pad = cx.spatial_arg(n, "padding", 1, 0)[0];
  const bool max = base == "max_pool1d";
  const i64 dilation = max ? cx.spatial_arg(n, "dilation", 1, 1)[0] : 1;
  const bool ceil_mode = cx.int_arg(n, "ceil_mode").value_or(0) != 0;
  portable::Pool1d p{planes, length, kernel, stride, pad, dilation, pooled_length(cx, n, length, kernel, stride, pad, dilation, ceil_mode),
                     cx.int_arg(n, "count_include_pad").value_or(1) != 0};
  out_shape.back() = p.out_length;
  const int out = cx.new_tensor(out_shape, false);
  Step& step = cx.portable_step(ins, {out});
  const int xi = ins[0];
  step.run = [&cx, xi, out, p, max] {
    if (max) portable::max_pool1d(p, cx.ptr(xi), cx.ptr(out));
    else portable::avg_pool1d(p, cx.ptr(xi), cx.ptr(out));
  };
  cx.define(n.outputs[0], out);
}

void lower_avg_pool_portable(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const std::size_t rank = named_spatial_rank(base).value_or(2);
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape xs = cx.slot(x).shape;
  if (xs.size() != rank + 1 && xs.size() != rank + 2)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " for a " + std::to_string(rank) + "D average pooling");
  portable::AvgPool p;
  p.kernel = cx.spatial_arg(n, "kernel_size", rank, 1);
  p.stride = pool_stride(cx, n, p.kernel);
  p.padding = cx.spatial_arg(n, "padding", rank, 0);
  const bool ceil_mode = cx.int_arg(n, "ceil_mode").value_or(0) != 0;
  p.count_include_pad = cx.int_arg(n, "count_include_pad").value_or(1) != 0;
  p.divisor_override = cx.int_arg(n, "divisor_override").value_or(0);
  if (p.divisor_override < 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": divisor_override " + std::to_string(p.divisor_override));
  Shape out_shape(xs.begin(), xs.end() - static_cast<std::ptrdiff_t>(rank));
  p.planes = prod(xs, 0, xs.size() - rank);
  for (std::size_t i = 0; i < rank; ++i) {
    if (!shape_rules::pool_padding_fits(p.kernel[i], p.padding[i]))
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": padding " + shape_str(p.padding) + " larger than half the kernel " + shape_str(p.kernel));
    const i64 in = xs[xs.size() - rank + i];
    p.in.push_back(in);
    p.out.push_back(pooled_length(cx, n, in, p.kernel[i], p.stride[i], p.padding[i], 1, ceil_mode));
    out_shape.push_back(p.out.back());
  }
  const int out = cx.new_tensor(out_shape, false);
  cx.portable_map(x, out, [p](const float* a, float* b) { portable::avg_pool(p, a, b); });
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
