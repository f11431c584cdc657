// Normalizations and softmax: batch norm as a scale and shift, group/instance/layer norm, softmax and log-softmax, PReLU.
#include "backend_impl.h"

namespace tracegraph::xnnpack {

void XnnpackBackend::Impl::lower_batch_norm(const Node& n, NodeState& st) {
  const int x0 = tensor_arg(n, "input", 0);
  const Shape xs = slots_[static_cast<std::size_t>(x0)].shape;
  if (xs.size() < 2) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " has no channel dim");
  if (int_arg(n, "training").value_or(0)) fail(ErrorCode::kUnsupported, where(n) + ": batch norm in training mode");
  const i64 channels = xs[1];
  if (st.data.empty()) {
    const Tensor& w = constant_arg(n, "weight", 1, false);
    const Tensor& b = constant_arg(n, "bias", 2, false);
    const Tensor& mean = constant_arg(n, "running_mean", 3, true);
    const Tensor& var = constant_arg(n, "running_var", 4, true);
    const double eps = float_arg(n, "eps").value_or(1e-5);
    for (const Tensor* t : {&w, &b, &mean, &var})
      if (t->defined() && t->numel() != channels) fail(ErrorCode::kShapeMismatch, where(n) + ": a parameter of " + std::to_string(t->numel()) + " elements for " + std::to_string(channels) + " channels");
    std::vector<float> scale(static_cast<std::size_t>(channels)), shift(static_cast<std::size_t>(channels));
    for (i64 c = 0; c < channels; ++c) {
      const double s = (w.defined() ? w.data_as<float>()[c] : 1.0) / std::sqrt(static_cast<double>(var.data_as<float>()[c]) + eps);
      scale[static_cast<std::size_t>(c)] = static_cast<float>(s);
      shift[static_cast<std::size_t>(c)] = static_cast<float>((b.defined() ? b.data_as<float>()[c] : 0.0) - mean.data_as<float>()[c] * s);
    }
    st.data = {std::move(scale), std::move(shift)};
  }
  const float* scale = st.data[0].data();
  const float* shift = st.data[1].data();
  const bool channels_last = spatial_rank(xs.size()) || xs.size() == 2;
  const int x = as_layout(x0, true);
  const int out = new_tensor(xs, channels_last);
  Step& step = add_step({x}, {out});
  if (channels_last) {
    const i64 pixels = numel(xs) / std::max<i64>(channels, 1);
    step.run = [this, x, out, scale, shift, pixels, channels] { kernels::affine_channels_last(ptr(x), ptr(out), scale, shift, pixels, channels); };
  } else {
    const i64 outer = xs[0], inner = prod(xs, 2, xs.size());
    step.run = [this, x, out, scale, shift, outer, channels, inner] { kernels::affine_channels_first(ptr(x), ptr(out), scale, shift, outer, channels, inner); };
  }
  define(n.outputs[0], out);
}

// softmax and log_softmax over any dim: XNNPACK's softmax over the innermost
// axis of storage (the channels of a channels-last tensor, or the last dim),
// a stable portable log_softmax; another dim is moved last and back.
void XnnpackBackend::Impl::lower_softmax(const Node& n, NodeState& st) {
  const bool log = base_op(n.op).find("log_softmax") != std::string::npos;
  const int x0 = tensor_arg(n, "self", 0);
  const Shape shape = slots_[static_cast<std::size_t>(x0)].shape;
  const std::size_t rank = shape.size();
  if (n.attributes.get_int("dtype")) fail(ErrorCode::kUnsupported, where(n) + ": softmax with a dtype");
  if (rank == 0) {  // torch: the softmax of one number is 1, its log 0
    const int out = new_tensor(shape, false);
    Step& step = add_step({}, {out});
    step.run = [this, out, log] { portable::fill(ptr(out), log ? 0.0f : 1.0f, 1); };
    return define(n.outputs[0], out);
  }
  const std::size_t dim = static_cast<std::size_t>(normalize_dim(int_arg(n, "dim").value_or(-1), rank, where(n)));
  const bool innermost = dim == rank - 1 || (spatial_rank(rank) && dim == 1);
  if (log || !innermost) {
    std::vector<std::size_t> to_last, back(rank);
    for (std::size_t i = 0; i < rank; ++i)
      if (i != dim) to_last.push_back(i);
    to_last.push_back(dim);
    for (std::size_t i = 0; i < rank; ++i) back[to_last[i]] = i;
    const int moved = permuted(x0, to_last);
    Shape moved_shape;
    for (std::size_t p : to_last) moved_shape.push_back(shape[p]);
    const i64 length = shape[dim], rows = numel(shape) / std::max<i64>(length, 1);
    const int y = new_tensor(moved_shape, false);
    if (log) {
      Step& step = add_step({moved}, {y});
      step.run = [this, moved, y, rows, length] { portable::log_softmax(ptr(moved), ptr(y), rows, length); };
    } else {
      if (st.ops.empty()) {
        st.ops.emplace_back();
        check(xnn_create_softmax_nc_f32(0, &st.ops[0].op), n, "creating a softmax");
      }
      xnn_operator_t op = st.ops[0].op;
      const auto c = static_cast<std::size_t>(length);
      check(xnn_reshape_softmax_nc_f32(op, c, c, c, static_cast<std::size_t>(rows), pool()), n, "reshaping a softmax");
      Step& step = add_step({moved}, {y});
      step.setup = [this, op, moved, y, &n] { check(xnn_setup_softmax_nc_f32(op, ptr(moved), ptr(y)), n, "setting up a softmax"); };
      step.xnnpack = true;
      step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running a softmax"); };
    }
    return define(n.outputs[0], permuted(y, back));
  }
  const bool channels_last = dim != rank - 1;
  const int x = as_layout(x0, channels_last);
  const i64 channels = shape[dim];
  if (st.ops.empty()) {
    st.ops.emplace_back();
    check(xnn_create_softmax_nc_f32(0, &st.ops[0].op), n, "creating a softmax");
  }
  xnn_operator_t op = st.ops[0].op;
  const std::size_t c = static_cast<std::size_t>(channels);
  check(xnn_reshape_softmax_nc_f32(op, c, c, c, static_cast<std::size_t>(numel(shape) / std::max<i64>(channels, 1)), pool()), n, "reshaping a softmax");
  const int out = new_tensor(shape, channels_last);
  Step& step = add_step({x}, {out});
  step.setup = [this, op, x, out, &n] { check(xnn_setup_softmax_nc_f32(op, ptr(x), ptr(out)), n, "setting up a softmax"); };
  step.xnnpack = true;
  step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running a softmax"); };
  define(n.outputs[0], out);
}

void XnnpackBackend::Impl::lower_norm(const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const int x = tensor_arg(n, "input", 0);
  const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
  const double eps = float_arg(n, "eps").value_or(1e-5);
  const int out = new_tensor(xs, false);
  std::vector<int> ins{x};
  if (base == "layer_norm") {
    auto normalized = ints_arg(n, "normalized_shape");
    if (!normalized || normalized->size() > xs.size()) fail(ErrorCode::kSchema, where(n) + ": normalized_shape for input " + shape_str(xs));
    for (std::size_t i = 0; i < normalized->size(); ++i) {
      if ((*normalized)[i] != xs[xs.size() - normalized->size() + i])
        fail(ErrorCode::kShapeMismatch, where(n) + ": normalized_shape " + shape_str(*normalized) + " for input " + shape_str(xs));
    }
    const i64 inner = prod(xs, xs.size() - normalized->size(), xs.size()), outer = numel(xs) / std::max<i64>(inner, 1);
    const float* w = weight_or_null(n, "weight", 2, inner);
    const float* b = weight_or_null(n, "bias", 3, inner);
    Step& step = portable_step(ins, {out});
    const int xi = ins[0];
    step.run = [this, xi, out, outer, inner, w, b, eps] { portable::layer_norm(ptr(xi), ptr(out), outer, inner, w, b, eps); };
    return define(n.outputs[0], out);
  }
  if (xs.size() < 2) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " has no channel dim");
  const i64 batch = xs[0], channels = xs[1], inner = prod(xs, 2, xs.size());
  i64 groups = channels;
  if (base == "group_norm") {
    groups = int_arg(n, "num_groups").value_or(1);
    if (groups <= 0 || channels % groups) fail(ErrorCode::kShapeMismatch, where(n) + ": " + std::to_string(channels) + " channels in " + std::to_string(groups) + " groups");
  } else if (!int_arg(n, "use_input_stats").value_or(1)) {
    fail(ErrorCode::kUnsupported, where(n) + ": instance norm with running statistics");
  }
  const float* w = weight_or_null(n, "weight", 2, channels);
  const float* b = weight_or_null(n, "bias", 3, channels);
  Step& step = portable_step(ins, {out});
  const int xi = ins[0];
  step.run = [this, xi, out, batch, channels, inner, groups, w, b, eps] {
    portable::group_norm(ptr(xi), ptr(out), batch, channels, inner, groups, w, b, eps);
  };
  define(n.outputs[0], out);
}

// PReLU: XNNPACK's binary prelu in x's own layout (the slopes broadcast over
// the channel dim), or a portable kernel for scalars and empty tensors.
void XnnpackBackend::Impl::lower_prelu(const Node& n, NodeState& st) {
  const int x = tensor_arg(n, "self", 0);
  const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
  const Tensor& w = constant_arg(n, "weight", 1, true);
  const i64 channels = xs.size() >= 2 ? xs[1] : 1;
  if (w.numel() != 1 && w.numel() != channels) fail(ErrorCode::kShapeMismatch, where(n) + ": " + std::to_string(w.numel()) + " weights for " + std::to_string(channels) + " channels");
  if (!xs.empty() && xs.size() <= XNN_MAX_TENSOR_DIMS && numel(xs) > 0) {
    const bool channels_last = slots_[static_cast<std::size_t>(x)].channels_last;
    std::vector<std::size_t> x_shape, slope_shape{static_cast<std::size_t>(w.numel())};
    for (i64 d : physical(xs, channels_last)) x_shape.push_back(static_cast<std::size_t>(d));
    if (w.numel() > 1 && !channels_last) slope_shape.resize(xs.size() - 1, 1);  // [C, 1, ...]: broadcast over dims after the channel
    Slot slopes;
    slopes.kind = Kind::kTensor;
    slopes.shape = {w.numel()};
    slopes.constant = w.data_as<float>();
    const int slope = padded(new_slot(std::move(slopes)));
    if (st.ops.empty()) {
      st.ops.emplace_back();
      check(xnn_create_binary_elementwise_nd(xnn_binary_prelu, xnn_datatype_fp32, nullptr, nullptr, nullptr, 0, &st.ops[0].op), n, "creating a prelu");
    }
    xnn_operator_t op = st.ops[0].op;
    check(xnn_reshape_binary_elementwise_nd(op, x_shape.size(), x_shape.data(), slope_shape.size(), slope_shape.data(), pool()), n, "reshaping a prelu");
    const int xp = padded(x);
    const int out = new_tensor(xs, channels_last);
    Step& step = add_step({xp, slope}, {out});
    step.setup = [this, op, xp, slope, out, &n] { check(xnn_setup_binary_elementwise_nd(op, ptr(xp), ptr(slope), ptr(out)), n, "setting up a prelu"); };
    step.xnnpack = true;
    step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running a prelu"); };
    return define(n.outputs[0], out);
  }
  const i64 batch = xs.empty() ? 1 : xs[0];
  const i64 inner = xs.size() >= 2 ? prod(xs, 2, xs.size()) : 1;
  const i64 count = w.numel();
  const float* wp = w.data_as<float>();
  const int out = new_tensor(xs, false);
  std::vector<int> ins{x};
  Step& step = portable_step(ins, {out});
  const int xi = ins[0];
  const i64 rows = xs.size() >= 2 ? batch : 1, chans = xs.size() >= 2 ? channels : 1;
  const i64 per = xs.size() >= 2 ? inner : numel(xs);
  step.run = [this, xi, out, wp, rows, chans, per, count] { portable::prelu(ptr(xi), wp, ptr(out), rows, chans, per, count); };
  define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
