// The backward ops of PyTorch's core ATen opset, in the graphs torch.export
// and AOTAutograd make for training: the gradients of max, average and
// adaptive average pooling, embedding, layer and group norm, and
// convolution, each a portable kernel (kernels/portable/op_backward.cpp).
// Outputs that output_mask leaves out are not computed.
#include "lower/backward.h"

namespace tracegraph::xnnpack {
namespace {

// output_mask (bool[3]): which of the op's outputs torch computes; all where absent.
std::vector<bool> output_mask(const Node& n) {
  if (const AttributeValue* a = n.attributes.find("output_mask"))
    if (const auto* m = std::get_if<std::vector<bool>>(a); m && m->size() == 3) return *m;
  return {true, true, true};
}

// A tensor argument that may be None: its slot (torch order) added to `reads`, or -1.
int optional_tensor(Context& cx, const Node& n, std::string_view name, std::size_t position, std::vector<int>& reads) {
  auto v = input_for_arg(n, name, position);
  if (!v || cx.slot_of(*v).kind != Kind::kTensor) return -1;
  reads.push_back(cx.as_layout(cx.tensor_slot(n, *v), false));
  return reads.back();
}

void expect_shape(const Context& cx, const Node& n, std::string_view what, const Shape& got, const Shape& want) {
  if (got != want) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + std::string(what) + " " + shape_str(got) + ", not " + shape_str(want));
}

void pool_backward(Context& cx, const Node& n, const std::string& base) {
  const int grad = cx.as_layout(cx.tensor_arg(n, "grad_output", 0), false), self = cx.as_layout(cx.tensor_arg(n, "self", 1), false);
  const Shape gs = cx.slot(grad).shape, xs = cx.slot(self).shape;
  const std::size_t spatial = named_spatial_rank(base).value_or(2);
  if (xs.size() < spatial + 1 || gs.size() != xs.size() || !std::equal(gs.begin(), gs.end() - static_cast<std::ptrdiff_t>(spatial), xs.begin()))
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": grad_output " + shape_str(gs) + " for self " + shape_str(xs));
  const i64 planes = prod(xs, 0, xs.size() - spatial), in_plane = prod(xs, xs.size() - spatial, xs.size()),
            out_plane = prod(gs, gs.size() - spatial, gs.size());
  const int out = cx.new_tensor(xs, false);
  if (base.starts_with("max_pool")) {
    auto v = input_for_arg(n, "indices", 7);
    if (!v) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'indices'");
    const int indices = cx.as_layout(cx.held_tensor_slot(n, *v), false);
    expect_shape(cx, n, "indices", cx.slot(indices).shape, gs);
    Step& step = cx.add_step({grad, indices}, {out});
    step.run = [&cx, &n, grad, indices, out, planes, in_plane, out_plane, xs] {
      double bad = 0;
      if (!portable::max_pool_backward(cx.ptr(grad), cx.ptr(indices), cx.ptr(out), planes, in_plane, out_plane, &bad))
        fail(ErrorCode::kOutOfRange, cx.where(n) + ": index " + std::to_string(bad) + " is out of range for a plane of " + std::to_string(in_plane));
    };
  } else if (base == "_adaptive_avg_pool2d_backward") {
    const i64 ih = xs[xs.size() - 2], iw = xs.back(), oh = gs[gs.size() - 2], ow = gs.back();
    if (oh <= 0 || ow <= 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": grad_output " + shape_str(gs));
    Step& step = cx.add_step({grad}, {out});
    step.run = [&cx, grad, out, planes, ih, iw, oh, ow] { portable::adaptive_avg_pool2d_backward(cx.ptr(grad), cx.ptr(out), planes, ih, iw, oh, ow); };
  } else {  // avg_pool2d_backward, avg_pool3d_backward
    portable::AvgPool p;
    p.planes = planes;
    p.in.assign(xs.end() - static_cast<std::ptrdiff_t>(spatial), xs.end());
    p.out.assign(gs.end() - static_cast<std::ptrdiff_t>(spatial), gs.end());
    p.kernel = cx.spatial_arg(n, "kernel_size", spatial, 1);
    p.stride = cx.spatial_arg(n, "stride", spatial, 0);
    for (std::size_t i = 0; i < spatial; ++i)
      if (p.stride[i] == 0) p.stride[i] = p.kernel[i];  // torch: an empty stride is the kernel
    p.padding = cx.spatial_arg(n, "padding", spatial, 0);
    cx.within_geometry(n, {{"kernel_size", &p.kernel}, {"stride", &p.stride}, {"padding", &p.padding}});
    for (std::size_t i = 0; i < spatial; ++i)
      if (p.kernel[i] <= 0 || p.stride[i] <= 0 || p.padding[i] < 0 || 2 * p.padding[i] > p.kernel[i])
        fail(ErrorCode::kInvalidArgument, cx.where(n) + ": kernel " + shape_str(p.kernel) + ", stride " + shape_str(p.stride) + ", padding " + shape_str(p.padding));
    p.count_include_pad = cx.int_arg(n, "count_include_pad").value_or(1) != 0;
    p.divisor_override = cx.int_arg(n, "divisor_override").value_or(0);
    Step& step = cx.add_step({grad}, {out});
    step.run = [&cx, grad, out, p] { portable::avg_pool_backward(p, cx.ptr(grad), cx.ptr(out)); };
  }
  cx.define(n.outputs[0], out);
}

void embedding_backward(Context& cx, const Node& n) {
  const int grad = cx.as_layout(cx.tensor_arg(n, "grad_output", 0), false);
  auto v = input_for_arg(n, "indices", 1);
  if (!v) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'indices'");
  const int indices = cx.as_layout(cx.held_tensor_slot(n, *v), false);
  const Shape gs = cx.slot(grad).shape, is = cx.slot(indices).shape;
  const i64 num_weights = cx.int_arg(n, "num_weights").value_or(-1), padding_idx = cx.int_arg(n, "padding_idx").value_or(-1);
  const bool by_frequency = cx.int_arg(n, "scale_grad_by_freq").value_or(0) != 0;
  Shape want = is;
  want.push_back(gs.empty() ? 0 : gs.back());
  if (gs.empty() || num_weights < 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": grad_output " + shape_str(gs) + ", num_weights " + std::to_string(num_weights));
  expect_shape(cx, n, "grad_output", gs, want);
  const i64 dim = gs.back(), count = numel(is);
  const int out = cx.new_tensor({num_weights, dim}, false);
  Step& step = cx.add_step({grad, indices}, {out});
  step.run = [&cx, &n, grad, indices, out, count, dim, num_weights, padding_idx, by_frequency] {
    double bad = 0;
    if (!portable::embedding_backward(cx.ptr(grad), cx.ptr(indices), cx.ptr(out), count, dim, num_weights, padding_idx, by_frequency, &bad))
      fail(ErrorCode::kOutOfRange, cx.where(n) + ": index " + std::to_string(bad) + " is out of range for " + std::to_string(num_weights) + " weights");
  };
  cx.define(n.outputs[0], out);
}

void norm_backward(Context& cx, const Node& n, const std::string& base) {
  const bool layer = base == "native_layer_norm_backward";
  const int grad = cx.as_layout(cx.tensor_arg(n, "grad_out", 0), false), x = cx.as_layout(cx.tensor_arg(n, "input", 1), false);
  std::vector<int> reads{grad, x};
  const Shape xs = cx.slot(x).shape;
  expect_shape(cx, n, "grad_out", cx.slot(grad).shape, xs);
  portable::NormBackward a;
  Shape params;  // the weight's and bias's shape: normalized_shape, or [C]
  if (layer) {
    const auto normalized = cx.ints_arg(n, "normalized_shape");
    if (!normalized || normalized->size() > xs.size() || !std::equal(normalized->begin(), normalized->end(), xs.end() - static_cast<std::ptrdiff_t>(normalized->size())))
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": normalized_shape for input " + shape_str(xs));
    params = *normalized;
    a.channels = prod(xs, xs.size() - normalized->size(), xs.size());
    a.batch = numel(xs) / std::max<i64>(a.channels, 1);
  } else {
    a.batch = cx.int_arg(n, "N").value_or(-1), a.channels = cx.int_arg(n, "C").value_or(-1);
    a.inner = cx.int_arg(n, "HxW").value_or(-1), a.groups = cx.int_arg(n, "group").value_or(-1);
    // The input's own dims (so that no product of these overflows): [N, C, ...] with HxW the rest.
    if (xs.size() < 2 || a.batch != xs[0] || a.channels != xs[1] || a.inner != prod(xs, 2, xs.size()) || a.groups <= 0 || a.groups > std::max<i64>(a.channels, 1) ||
        a.channels % a.groups)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": N, C, HxW and group for input " + shape_str(xs));
  }
  const int mean = optional_tensor(cx, n, "mean", layer ? 3 : 2, reads), rstd = optional_tensor(cx, n, "rstd", layer ? 4 : 3, reads);
  if (mean < 0 || rstd < 0 || numel(cx.slot(mean).shape) != a.batch * a.groups || numel(cx.slot(rstd).shape) != a.batch * a.groups)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": mean and rstd of " + std::to_string(a.batch * a.groups) + " elements expected");
  const int weight = optional_tensor(cx, n, "weight", layer ? 5 : 4, reads);
  if (weight >= 0 && numel(cx.slot(weight).shape) != a.channels)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": weight " + shape_str(cx.slot(weight).shape) + " for " + std::to_string(a.channels) + " channels");
  const std::vector<bool> mask = output_mask(n);
  if (!layer) params = {a.channels};
  const int gi = mask[0] ? cx.new_tensor(xs, false) : -1;
  // torch gives no weight gradient without a weight, and (layer norm) no bias gradient without a bias.
  const auto bias = input_for_arg(n, "bias", 6);
  const bool has_bias = !layer || (bias && cx.slot_of(*bias).kind == Kind::kTensor);
  const int gw = mask[1] && weight >= 0 ? cx.new_tensor(params, false) : -1, gb = mask[2] && has_bias ? cx.new_tensor(params, false) : -1;
  std::vector<int> writes;
  for (int s : {gi, gw, gb})
    if (s >= 0) writes.push_back(s);
  Step& step = cx.add_step(reads, writes);
  step.run = [&cx, a, grad, x, mean, rstd, weight, gi, gw, gb] {
    auto out = [&cx](int s) { return s < 0 ? nullptr : cx.ptr(s); };
    portable::norm_backward(a, cx.ptr(grad), cx.ptr(x), cx.ptr(mean), cx.ptr(rstd), weight < 0 ? nullptr : cx.ptr(weight), out(gi), out(gw), out(gb));
  };
  if (gi >= 0) cx.define(n.outputs[0], gi);
  if (gw >= 0 && n.outputs.size() > 1) cx.define(n.outputs[1], gw);
  if (gb >= 0 && n.outputs.size() > 2) cx.define(n.outputs[2], gb);
}

void convolution_backward(Context& cx, const Node& n) {
  const int grad = cx.as_layout(cx.tensor_arg(n, "grad_output", 0), false), x = cx.as_layout(cx.tensor_arg(n, "input", 1), false);
  const int w = cx.as_layout(cx.tensor_arg(n, "weight", 2), false);
  const Shape gs = cx.slot(grad).shape, xs = cx.slot(x).shape, ws = cx.slot(w).shape;
  if (xs.size() < 3 || xs.size() > 5 || gs.size() != xs.size() || ws.size() != xs.size() || gs[0] != xs[0])
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": grad_output " + shape_str(gs) + ", input " + shape_str(xs) + ", weight " + shape_str(ws) +
                                        " (1 to 3 spatial dims, one batch)");
  const std::size_t spatial = xs.size() - 2;
  portable::ConvBackward a;
  a.batch = xs[0], a.in_channels = xs[1], a.out_channels = gs[1];
  a.groups = cx.int_arg(n, "groups").value_or(1);
  a.transposed = cx.int_arg(n, "transposed").value_or(0) != 0;
  a.in.assign(xs.begin() + 2, xs.end());
  a.out.assign(gs.begin() + 2, gs.end());
  a.kernel.assign(ws.begin() + 2, ws.end());
  a.stride = cx.spatial_arg(n, "stride", spatial, 1);
  a.padding = cx.spatial_arg(n, "padding", spatial, 0);
  a.dilation = cx.spatial_arg(n, "dilation", spatial, 1);
  cx.within_geometry(n, {{"stride", &a.stride}, {"padding", &a.padding}, {"dilation", &a.dilation}});
  const i64 g = a.groups;
  const bool channels_fit = g > 0 && g <= std::max<i64>(a.in_channels, 1) && a.in_channels % g == 0 && a.out_channels % g == 0 &&
                            (a.transposed ? ws[0] == a.in_channels && ws[1] * g == a.out_channels : ws[0] == a.out_channels && ws[1] * g == a.in_channels);
  if (!channels_fit) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": weight " + shape_str(ws) + " for " + std::to_string(a.in_channels) + " in and " +
                                                         std::to_string(a.out_channels) + " out channels in " + std::to_string(g) + " groups");
  for (std::size_t i = 0; i < spatial; ++i) {
    // The forward's output size from these arguments must be the gradient's (up to output_padding for a transposed one).
    const i64 s = a.stride[i], d = a.dilation[i], p = a.padding[i];
    const i64 least = shape_rules::transposed_output(a.in[i], a.kernel[i], s, p, d, 0);  // a transposed one's, output_padding 0
    const bool fits = s > 0 && d > 0 && p >= 0 &&
                      (a.transposed ? a.out[i] >= least && a.out[i] < least + std::max(s, d)
                                    : shape_rules::window_output(a.in[i], a.kernel[i], s, p, d) == a.out[i]);
    if (!fits) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": grad_output " + shape_str(gs) + " is not the output of input " + shape_str(xs) + " and weight " +
                                                   shape_str(ws) + " with these strides, padding and dilation");
  }
  const std::vector<bool> mask = output_mask(n);
  const int gi = mask[0] ? cx.new_tensor(xs, false) : -1, gw = mask[1] ? cx.new_tensor(ws, false) : -1;
  const int gb = mask[2] ? cx.new_tensor({a.out_channels}, false) : -1;
  std::vector<int> writes;
  for (int s : {gi, gw, gb})
    if (s >= 0) writes.push_back(s);
  Step& step = cx.add_step({grad, x, w}, writes);
  step.run = [&cx, a, grad, x, w, gi, gw, gb] {
    auto out = [&cx](int s) { return s < 0 ? nullptr : cx.ptr(s); };
    portable::conv_backward(a, cx.ptr(grad), cx.ptr(x), cx.ptr(w), out(gi), out(gw), out(gb));
  };
  if (gi >= 0) cx.define(n.outputs[0], gi);
  if (gw >= 0 && n.outputs.size() > 1) cx.define(n.outputs[1], gw);
  if (gb >= 0 && n.outputs.size() > 2) cx.define(n.outputs[2], gb);
}

}  // namespace

void lower_backward(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  if (base == "embedding_dense_backward") return embedding_backward(cx, n);
  if (base == "native_layer_norm_backward" || base == "native_group_norm_backward") return norm_backward(cx, n, base);
  if (base == "convolution_backward") return convolution_backward(cx, n);
  pool_backward(cx, n, base);
}

}  // namespace tracegraph::xnnpack
