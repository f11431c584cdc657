// Pooling and reductions: max and average pooling (ceil mode, padding), adaptive pooling, means, 1D pooling.
#include "lower/lowerings.h"

namespace tracegraph::xnnpack {

i64 pooled(i64 in, i64 k, i64 s, i64 p, i64 d, bool ceil_mode) {
  // Callers checked that the window fits; 0 stands for "does not".
  return shape_rules::window_output(in, k, s, p, d, ceil_mode).value_or(0);
}

namespace {

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

// mean and sum over dims (all of them when none are given).
void lower_mean(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const std::size_t rank = cx.slot(x).shape.size();
  const std::string base = base_op(n.op);
  if (n.attributes.get_int("dtype")) fail(ErrorCode::kUnsupported, cx.where(n) + ": " + base + " with a dtype");
  auto dims = cx.ints_arg(n, "dim").value_or(std::vector<i64>{});
  if (dims.empty())
    for (std::size_t i = 0; i < rank; ++i) dims.push_back(static_cast<i64>(i));
  for (i64& d : dims) d = normalize_dim(d, rank, cx.where(n));
  if (rank == 0) return cx.define(n.outputs[0], x);  // the mean or sum of one number is that number
  reduce_step(cx, n, x, dims, cx.int_arg(n, "keepdim").value_or(0) != 0, base == "mean");
}

void reduce_step(Context& cx, const Node& n, int x0, std::vector<i64> dims, bool keepdim, bool mean) {
  const Slot& xs0 = cx.slot(x0);
  const Shape shape = xs0.shape;
  const std::size_t rank = shape.size();
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  auto reduced = [&](std::size_t i) { return std::binary_search(dims.begin(), dims.end(), static_cast<i64>(i)); };
  bool all_spatial = true;
  for (std::size_t i = 2; i < rank; ++i) all_spatial = all_spatial && reduced(i);
  // Without keepdim the result is plain; channels-last storage only gives
  // its order when the channel or every spatial dim is reduced.
  bool channels_last = xs0.channels_last;
  if (!keepdim && channels_last && !(reduced(1) || all_spatial)) channels_last = false;
  const int x = cx.as_layout(x0, channels_last);
  Shape out_shape;
  for (std::size_t i = 0; i < rank; ++i) {
    if (!reduced(i)) out_shape.push_back(shape[i]);
    else if (keepdim) out_shape.push_back(1);
  }
  std::vector<std::size_t> axes;
  for (i64 d : dims) axes.push_back(physical_axis(static_cast<std::size_t>(d), rank, channels_last));
  std::sort(axes.begin(), axes.end());
  if (axes.empty()) return cx.define(n.outputs[0], cx.alias(x, out_shape, channels_last));
  if (axes.back() - axes.front() + 1 != axes.size()) {
    // Dims apart in storage: the reduced ones moved last (one transpose), then reduced as one block.
    std::vector<std::size_t> perm;
    for (std::size_t i = 0; i < rank; ++i)
      if (!reduced(i)) perm.push_back(i);
    for (std::size_t i = 0; i < rank; ++i)
      if (reduced(i)) perm.push_back(i);
    const int moved = permuted(cx, x0, perm);
    i64 span = 1;
    for (i64 d : dims) span *= shape[static_cast<std::size_t>(d)];
    const i64 kept = numel(shape) / std::max<i64>(span, 1);
    const int out = cx.new_tensor(out_shape, false);
    Step& step = cx.add_step({moved}, {out});
    step.run = [&cx, moved, out, kept, span, mean] { kernels::reduce_middle(cx.ptr(moved), cx.ptr(out), kept, span, 1, mean); };
    return cx.define(n.outputs[0], out);
  }
  const Shape phys = physical(shape, channels_last);
  const i64 outer = prod(phys, 0, axes.front()), span = prod(phys, axes.front(), axes.back() + 1),
            inner = prod(phys, axes.back() + 1, rank);
  const int out = cx.new_tensor(out_shape, keepdim && channels_last);
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, outer, span, inner, mean] { kernels::reduce_middle(cx.ptr(x), cx.ptr(out), outer, span, inner, mean); };
  cx.define(n.outputs[0], out);
}

i64 pooled_length(const Context& cx, const Node& n, i64 in, i64 kernel, i64 stride, i64 pad, i64 dilation, bool ceil_mode) {
  if (stride <= 0 || dilation <= 0 || !shape_rules::pool_padding_fits(kernel, pad))
    fail(ErrorCode::kInvalidArgument, cx.where(n) + ": kernel " + std::to_string(kernel) + ", stride " + std::to_string(stride) + ", padding " + std::to_string(pad) + ", dilation " + std::to_string(dilation));
  const auto length = shape_rules::window_output(in, kernel, stride, pad, dilation, ceil_mode);
  if (!length) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": window larger than the padded input of " + std::to_string(in));
  return *length;
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

Shape reduced_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdim) {
  Shape out;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (!reduced[i]) out.push_back(shape[i]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

void lower_reduce(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  const std::size_t rank = shape.size();
  const std::string base = base_op(n.op);
  if (n.attributes.get_int("dtype")) fail(ErrorCode::kUnsupported, cx.where(n) + ": " + base + " with a dtype");
  static const std::map<std::string, portable::Reduce, std::less<>> kOps = {
      {"linalg_vector_norm", portable::Reduce::kNorm}, {"amax", portable::Reduce::kAmax}, {"amin", portable::Reduce::kAmin},
      {"prod", portable::Reduce::kProd}, {"var", portable::Reduce::kVar}, {"std", portable::Reduce::kVar},
      {"logsumexp", portable::Reduce::kLogSumExp}, {"argmax", portable::Reduce::kArgmax}, {"argmin", portable::Reduce::kArgmin}};
  const portable::Reduce op = kOps.at(base);
  // The order of a norm; var's and std's correction (unbiased: 1).
  double ord = 2;
  if (op == portable::Reduce::kNorm) ord = cx.float_arg(n, "ord").value_or(2);
  if (op == portable::Reduce::kVar) {
    const std::optional<double> correction = n.attributes.contains("correction") ? cx.float_arg(n, "correction") : std::nullopt;
    ord = correction ? *correction : (cx.int_arg(n, "unbiased").value_or(1) != 0 ? 1.0 : 0.0);
  }
  const bool sqrt_after = base == "std";
  auto dims = cx.ints_arg(n, "dim").value_or(std::vector<i64>{});
  std::vector<bool> reduced(rank, dims.empty());
  for (i64 d : dims) {
    const i64 k = normalize_dim(d, rank, cx.where(n));
    if (rank) reduced[static_cast<std::size_t>(k)] = true;  // a 0-d tensor reduces to itself
  }
  const bool keepdim = cx.int_arg(n, "keepdim").value_or(0) != 0;
  for (std::size_t i = 0; i < rank; ++i) {
    if (reduced[i] && shape[i] == 0 && op != portable::Reduce::kNorm && op != portable::Reduce::kProd && op != portable::Reduce::kVar &&
        op != portable::Reduce::kLogSumExp)
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": " + base + " over an empty dim of " + shape_str(shape));
  }
  const Shape out_shape = reduced_shape(shape, reduced, keepdim);
  const int out = cx.new_tensor(out_shape, false);
  const i64 count = numel(out_shape);
  cx.portable_map(x, out, [op, shape, reduced, ord, sqrt_after, count](const float* a, float* b) {
    portable::reduce(op, a, b, shape, reduced, ord);
    if (sqrt_after) portable::unary(portable::Unary::kSqrt, b, b, count);
  });
  cx.define(n.outputs[0], out);
}

void lower_cumsum(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  if (n.attributes.get_int("dtype")) fail(ErrorCode::kUnsupported, cx.where(n) + ": " + base_op(n.op) + " with a dtype");
  const std::size_t rank = std::max<std::size_t>(shape.size(), 1);
  const auto dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), rank, cx.where(n)));
  const i64 outer = prod(shape, 0, dim), size = shape.empty() ? 1 : shape[dim], inner = prod(shape, dim + 1, shape.size());
  const int out = cx.new_tensor(shape, false);
  const bool product = base_op(n.op) == "cumprod";
  cx.portable_map(x, out, [outer, size, inner, product](const float* a, float* b) { portable::cumsum(a, b, outer, size, inner, product); });
  cx.define(n.outputs[0], out);
}

void lower_cum_extreme(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  const std::size_t rank = std::max<std::size_t>(shape.size(), 1);
  const auto dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), rank, cx.where(n)));
  const i64 outer = prod(shape, 0, std::min(dim, shape.size())), size = shape.empty() ? 1 : shape[dim];
  const i64 inner = shape.empty() ? 1 : prod(shape, dim + 1, shape.size());
  const int values = cx.new_tensor(shape, false), indices = cx.new_tensor(shape, false);
  const bool max = base_op(n.op) == "cummax";
  std::vector<int> ins{x};
  Step& step = cx.portable_step(ins, {values, indices});
  step.run = [&cx, xi = ins[0], values, indices, outer, size, inner, max] {
    portable::cum_extreme(cx.ptr(xi), cx.ptr(values), cx.ptr(indices), outer, size, inner, max);
  };
  cx.define(n.outputs[0], values);
  if (n.outputs.size() > 1) cx.define(n.outputs[1], indices);
}

void lower_aminmax(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  const std::size_t rank = shape.size();
  const std::optional<i64> dim = cx.int_arg(n, "dim");
  const bool keepdim = cx.int_arg(n, "keepdim").value_or(0) != 0;
  std::vector<bool> reduced(rank, !dim);
  if (dim) {
    const i64 d = normalize_dim(*dim, std::max<std::size_t>(rank, 1), cx.where(n));
    if (rank) reduced[static_cast<std::size_t>(d)] = true;
  }
  for (std::size_t i = 0; i < rank; ++i)
    if (reduced[i] && shape[i] == 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": aminmax over an empty dim of " + shape_str(shape));
  const Shape out_shape = reduced_shape(shape, reduced, keepdim);
  const int lo = cx.new_tensor(out_shape, false), hi = cx.new_tensor(out_shape, false);
  std::vector<int> ins{x};
  Step& step = cx.portable_step(ins, {lo, hi});
  step.run = [&cx, xi = ins[0], lo, hi, shape, reduced] {
    portable::reduce(portable::Reduce::kAmin, cx.ptr(xi), cx.ptr(lo), shape, reduced);
    portable::reduce(portable::Reduce::kAmax, cx.ptr(xi), cx.ptr(hi), shape, reduced);
  };
  cx.define(n.outputs[0], lo);
  if (n.outputs.size() > 1) cx.define(n.outputs[1], hi);
}

void lower_max_min(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const bool is_max = base == "max";
  const auto self = input_for_arg(n, "self", 0);
  if (!self) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'self'");
  if (auto other = input_for_arg(n, "other", 1)) {  // max.other: maximum of two tensors
    return cx.define(n.outputs[0], portable_binary(cx, n, is_max ? portable::Binary::kMaximum : portable::Binary::kMinimum, *self, *other));
  }
  const int x = cx.held_tensor_slot(n, *self);
  const Shape shape = cx.slot(x).shape;
  const std::size_t rank = shape.size();
  const std::optional<i64> dim = cx.int_arg(n, "dim");
  if (!dim) {  // of every element: a 0-d tensor
    if (numel(shape) == 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": " + base + " of an empty tensor " + shape_str(shape));
    const int out = cx.new_tensor({}, false);
    const std::vector<bool> reduced(rank, true);
    const portable::Reduce op = is_max ? portable::Reduce::kAmax : portable::Reduce::kAmin;
    cx.portable_map(x, out, [op, shape, reduced](const float* a, float* b) { portable::reduce(op, a, b, shape, reduced); });
    return cx.define(n.outputs[0], out);
  }
  // Along one dim: the values and the index of the first of them (NaN wins, as torch's).
  std::vector<bool> reduced(rank, false);
  const i64 d = normalize_dim(*dim, rank, cx.where(n));
  if (rank) {
    reduced[static_cast<std::size_t>(d)] = true;
    if (shape[static_cast<std::size_t>(d)] == 0) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": " + base + " over an empty dim of " + shape_str(shape));
  }
  const Shape out_shape = reduced_shape(shape, reduced, cx.int_arg(n, "keepdim").value_or(0) != 0);
  const int values = cx.new_tensor(out_shape, false), indices = cx.new_tensor(out_shape, false);
  std::vector<int> ins{x};
  Step& step = cx.portable_step(ins, {values, indices});
  const portable::Reduce value_op = is_max ? portable::Reduce::kAmax : portable::Reduce::kAmin;
  const portable::Reduce index_op = is_max ? portable::Reduce::kArgmax : portable::Reduce::kArgmin;
  step.run = [&cx, xi = ins[0], values, indices, value_op, index_op, shape, reduced] {
    portable::reduce(value_op, cx.ptr(xi), cx.ptr(values), shape, reduced);
    portable::reduce(index_op, cx.ptr(xi), cx.ptr(indices), shape, reduced);
  };
  cx.define(n.outputs[0], values);
  if (n.outputs.size() > 1) cx.define(n.outputs[1], indices);
}

void lower_sort(Context& cx, const Node& n, NodeState&) {
  const bool topk = base_op(n.op) == "topk";
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  const std::size_t rank = std::max<std::size_t>(shape.size(), 1);  // a 0-d tensor is one line of one
  const auto dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(-1), rank, cx.where(n)));
  const i64 size = shape.empty() ? 1 : shape[dim];
  const i64 outer = prod(shape, 0, std::min(dim, shape.size())), inner = shape.empty() ? 1 : prod(shape, dim + 1, shape.size());
  i64 k = size;
  bool descending = cx.int_arg(n, "descending").value_or(0) != 0;
  if (topk) {
    const auto want = cx.int_arg(n, "k");
    if (!want || *want < 0 || *want > size)
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": k " + (want ? std::to_string(*want) : std::string("missing")) + " for a dim of " + std::to_string(size));
    k = *want;
    descending = cx.int_arg(n, "largest").value_or(1) != 0;  // sorted=False may be in any order: sorted is one
  }
  Shape out_shape = shape;
  if (!out_shape.empty()) out_shape[dim] = k;
  const int values = cx.new_tensor(out_shape, false), indices = cx.new_tensor(out_shape, false);
  std::vector<int> ins{x};
  Step& step = cx.portable_step(ins, {values, indices});
  step.run = [&cx, xi = ins[0], values, indices, outer, size, inner, k, descending] {
    portable::sort(cx.ptr(xi), cx.ptr(values), cx.ptr(indices), outer, size, inner, k, descending);
  };
  cx.define(n.outputs[0], values);
  if (n.outputs.size() > 1) cx.define(n.outputs[1], indices);
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
