// Normalizations and softmax: batch norm as a scale and shift, group/instance/layer norm, softmax and log-softmax, PReLU.
#include "lower/norm.h"
#include "lower/permute.h"

namespace tracegraph::xnnpack {

void lower_batch_norm(Context& cx, const Node& n, NodeState& st) {
  const int x0 = cx.tensor_arg(n, "input", 0);
  const Shape xs = cx.slot(x0).shape;
  if (xs.size() < 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " has no channel dim");
  // Training mode normalizes by the batch's own statistics (lower_norm); the
  // running statistics it would update are not outputs of the forward.
  if (cx.int_arg(n, "training").value_or(0)) return lower_norm(cx, n, st);
  const i64 channels = xs[1];
  if (st.data.empty()) {
    const Tensor& w = cx.constant_arg(n, "weight", 1, false);
    const Tensor& b = cx.constant_arg(n, "bias", 2, false);
    const Tensor& mean = cx.constant_arg(n, "running_mean", 3, true);
    const Tensor& var = cx.constant_arg(n, "running_var", 4, true);
    const double eps = cx.float_arg(n, "eps").value_or(1e-5);
    for (const Tensor* t : {&w, &b, &mean, &var})
      if (t->defined() && t->numel() != channels) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": a parameter of " + std::to_string(t->numel()) + " elements for " + std::to_string(channels) + " channels");
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
  const int x = cx.as_layout(x0, true);
  const int out = cx.new_tensor(xs, channels_last);
  Step& step = cx.add_step({x}, {out});
  if (channels_last) {
    const i64 pixels = numel(xs) / std::max<i64>(channels, 1);
    step.run = [&cx, x, out, scale, shift, pixels, channels] { kernels::affine_channels_last(cx.ptr(x), cx.ptr(out), scale, shift, pixels, channels); };
  } else {
    const i64 outer = xs[0], inner = prod(xs, 2, xs.size());
    step.run = [&cx, x, out, scale, shift, outer, channels, inner] { kernels::affine_channels_first(cx.ptr(x), cx.ptr(out), scale, shift, outer, channels, inner); };
  }
  cx.define(n.outputs[0], out);
}

// softmax and log_softmax over any dim: XNNPACK's softmax over the innermost
// axis of storage (the channels of a channels-last tensor, or the last dim),
// a stable portable log_softmax; another dim is moved last and back.
void lower_softmax(Context& cx, const Node& n, NodeState& st) {
  const bool log = base_op(n.op).find("log_softmax") != std::string::npos;
  const int x0 = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x0).shape;
  const std::size_t rank = shape.size();
  if (const auto d = n.attributes.get_int("dtype"); d && *d != 6 && *d != 7)  // float32 or float64: computed as float32
    fail(ErrorCode::kUnsupported, cx.where(n) + ": softmax to the scalar type " + std::to_string(*d));
  if (rank == 0) {  // torch: the softmax of one number is 1, its log 0
    const int out = cx.new_tensor(shape, false);
    Step& step = cx.add_step({}, {out});
    step.run = [&cx, out, log] { portable::fill(cx.ptr(out), log ? 0.0f : 1.0f, 1); };
    return cx.define(n.outputs[0], out);
  }
  const std::size_t dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(-1), rank, cx.where(n)));
  const bool innermost = dim == rank - 1 || (spatial_rank(rank) && dim == 1);
  if (log || !innermost) {
    std::vector<std::size_t> to_last, back(rank);
    for (std::size_t i = 0; i < rank; ++i)
      if (i != dim) to_last.push_back(i);
    to_last.push_back(dim);
    for (std::size_t i = 0; i < rank; ++i) back[to_last[i]] = i;
    const int moved = permuted(cx, x0, to_last);
    Shape moved_shape;
    for (std::size_t p : to_last) moved_shape.push_back(shape[p]);
    const i64 length = shape[dim], rows = numel(shape) / std::max<i64>(length, 1);
    const int y = cx.new_tensor(moved_shape, false);
    if (log) {
      Step& step = cx.add_step({moved}, {y});
      step.run = [&cx, moved, y, rows, length] { portable::log_softmax(cx.ptr(moved), cx.ptr(y), rows, length); };
    } else {
      if (st.ops.empty()) {
        st.ops.emplace_back();
        cx.check(xnn_create_softmax_nc_f32(0, &st.ops[0].op), n, "creating a softmax");
      }
      xnn_operator_t op = st.ops[0].op;
      const auto c = static_cast<std::size_t>(length);
      cx.check(xnn_reshape_softmax_nc_f32(op, c, c, c, static_cast<std::size_t>(rows), cx.pool()), n, "reshaping a softmax");
      Step& step = cx.add_step({moved}, {y});
      step.setup = [&cx, op, moved, y, &n] { cx.check(xnn_setup_softmax_nc_f32(op, cx.ptr(moved), cx.ptr(y)), n, "setting up a softmax"); };
      step.xnnpack = true;
      step.run = [&cx, op, &n] { cx.check(xnn_run_operator(op, cx.pool()), n, "running a softmax"); };
    }
    return cx.define(n.outputs[0], permuted(cx, y, back));
  }
  const bool channels_last = dim != rank - 1;
  const int x = cx.as_layout(x0, channels_last);
  const i64 channels = shape[dim];
  if (st.ops.empty()) {
    st.ops.emplace_back();
    cx.check(xnn_create_softmax_nc_f32(0, &st.ops[0].op), n, "creating a softmax");
  }
  xnn_operator_t op = st.ops[0].op;
  const std::size_t c = static_cast<std::size_t>(channels);
  cx.check(xnn_reshape_softmax_nc_f32(op, c, c, c, static_cast<std::size_t>(numel(shape) / std::max<i64>(channels, 1)), cx.pool()), n, "reshaping a softmax");
  const int out = cx.new_tensor(shape, channels_last);
  Step& step = cx.add_step({x}, {out});
  step.setup = [&cx, op, x, out, &n] { cx.check(xnn_setup_softmax_nc_f32(op, cx.ptr(x), cx.ptr(out)), n, "setting up a softmax"); };
  step.xnnpack = true;
  step.run = [&cx, op, &n] { cx.check(xnn_run_operator(op, cx.pool()), n, "running a softmax"); };
  cx.define(n.outputs[0], out);
}

namespace {

// A parameter of a norm (weight, bias, running statistics): a tensor of
// `expected` elements, constant or computed in the graph, read at the run as
// the step's reads[index]; index -1 where the argument is None or absent.
int norm_param(Context& cx, const Node& n, std::string_view name, std::size_t position, i64 expected, std::vector<int>& reads) {
  auto v = input_for_arg(n, name, position);
  if (!v || cx.slot_of(*v).kind != Kind::kTensor) return -1;
  const int s = cx.tensor_slot(n, *v);
  if (numel(cx.slot(s).shape) != expected)
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": '" + std::string(name) + "' " + shape_str(cx.slot(s).shape) + " for " + std::to_string(expected) + " elements");
  reads.push_back(s);
  return static_cast<int>(reads.size() - 1);
}

// Rows (groups, channels) of `size` floats to a thread task: a few thousand floats' worth.
i64 rows_per_task(i64 size) { return std::max<i64>(1, kSliceFloats / std::max<i64>(size, 1)); }

}  // namespace

void lower_norm(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const int x = cx.tensor_arg(n, "input", 0);
  const Shape xs = cx.slot(x).shape;
  const double eps = cx.float_arg(n, "eps").value_or(1e-5);
  const int out = cx.new_tensor(xs, false);
  std::vector<int> ins{x};
  // native_layer_norm, native_group_norm and _native_batch_norm_legit also
  // give the statistics (the mean and 1 / sqrt(var + eps)) as outputs 1 and 2,
  // of `stat_shape`; slots only where the graph has those outputs.
  int mean = -1, rstd = -1;
  auto statistics = [&](const Shape& stat_shape) {
    if (n.outputs.size() < 3) return std::vector<int>{out};
    mean = cx.new_tensor(stat_shape, false), rstd = cx.new_tensor(stat_shape, false);
    return std::vector<int>{out, mean, rstd};
  };
  auto ptr_or_null = [&cx](const std::vector<int>& reads, int index) { return index < 0 ? nullptr : cx.ptr(reads[static_cast<std::size_t>(index)]); };
  auto define_all = [&] {
    cx.define(n.outputs[0], out);
    if (mean >= 0) cx.define(n.outputs[1], mean), cx.define(n.outputs[2], rstd);
  };
  if (base == "layer_norm" || base == "native_layer_norm") {
    auto normalized = cx.ints_arg(n, "normalized_shape");
    if (!normalized || normalized->size() > xs.size()) fail(ErrorCode::kSchema, cx.where(n) + ": normalized_shape for input " + shape_str(xs));
    for (std::size_t i = 0; i < normalized->size(); ++i) {
      if ((*normalized)[i] != xs[xs.size() - normalized->size() + i])
        fail(ErrorCode::kShapeMismatch, cx.where(n) + ": normalized_shape " + shape_str(*normalized) + " for input " + shape_str(xs));
    }
    const std::size_t axis = xs.size() - normalized->size();
    const i64 inner = prod(xs, axis, xs.size()), outer = numel(xs) / std::max<i64>(inner, 1);
    const int w = norm_param(cx, n, "weight", 2, inner, ins), b = norm_param(cx, n, "bias", 3, inner, ins);
    Shape stat_shape(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(axis));
    stat_shape.resize(xs.size(), 1);
    Step& step = cx.portable_step(ins, statistics(stat_shape));
    step.run = [&cx, ins, out, mean, rstd, outer, inner, w, b, eps, ptr_or_null] {
      const float *x = cx.ptr(ins[0]), *wp = ptr_or_null(ins, w), *bp = ptr_or_null(ins, b);
      float *y = cx.ptr(out), *mp = mean < 0 ? nullptr : cx.ptr(mean), *rp = rstd < 0 ? nullptr : cx.ptr(rstd);
      cx.parallel_slices(outer, [&](i64 first, i64 count) {
        portable::layer_norm(x + first * inner, y + first * inner, count, inner, wp, bp, eps, mp ? mp + first : nullptr, rp ? rp + first : nullptr);
      }, rows_per_task(inner));
    };
    return define_all();
  }
  if (xs.size() < 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " has no channel dim");
  const i64 batch = xs[0], channels = xs[1], inner = prod(xs, 2, xs.size());
  if (base == "_native_batch_norm_legit" || base == "batch_norm" || base == "native_batch_norm") {
    // (input, weight, bias, [running_mean, running_var,] training, momentum, eps).
    // Training mode: the batch's own statistics (torch.export's instance norm
    // is the no_stats overload); the running statistics it would update are
    // not outputs of the forward. Otherwise the running ones, constant or
    // computed (folded into a scale and shift where constant: lower_batch_norm).
    const bool training = cx.int_arg(n, "training").value_or(0) != 0;
    const int w = norm_param(cx, n, "weight", 1, channels, ins), b = norm_param(cx, n, "bias", 2, channels, ins);
    if (training) {
      Step& step = cx.portable_step(ins, statistics({channels}));
      step.run = [&cx, ins, w, b, out, mean, rstd, batch, channels, inner, eps, ptr_or_null] {
        cx.parallel_slices(channels, [&](i64 first, i64 count) {
          portable::batch_norm_batch_stats(cx.ptr(ins[0]), cx.ptr(out), batch, channels, inner, ptr_or_null(ins, w), ptr_or_null(ins, b), eps,
                                           mean < 0 ? nullptr : cx.ptr(mean), rstd < 0 ? nullptr : cx.ptr(rstd), first, count);
        }, rows_per_task(batch * inner));
      };
      return define_all();
    }
    const int rm = norm_param(cx, n, "running_mean", 3, channels, ins), rv = norm_param(cx, n, "running_var", 4, channels, ins);
    if (rm < 0 || rv < 0) fail(ErrorCode::kSchema, cx.where(n) + ": batch norm outside training mode without running statistics");
    Step& step = cx.portable_step(ins, statistics({0}));  // torch gives empty statistics outside training mode
    step.run = [&cx, ins, w, b, rm, rv, out, batch, channels, inner, eps, ptr_or_null] {
      portable::batch_norm_running_stats(cx.ptr(ins[0]), cx.ptr(out), batch, channels, inner, ptr_or_null(ins, rm), ptr_or_null(ins, rv),
                                         ptr_or_null(ins, w), ptr_or_null(ins, b), eps);
    };
    return define_all();
  }
  i64 groups = channels;
  if (base == "group_norm" || base == "native_group_norm") {
    groups = cx.int_arg(n, base == "group_norm" ? "num_groups" : "group").value_or(1);
    if (groups <= 0 || channels % groups) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + std::to_string(channels) + " channels in " + std::to_string(groups) + " groups");
  } else if (!cx.int_arg(n, "use_input_stats").value_or(1)) {
    fail(ErrorCode::kUnsupported, cx.where(n) + ": instance norm with running statistics");
  }
  const bool native = base == "native_group_norm";  // (input, weight, bias, N, C, HxW, group, eps)
  const int w = norm_param(cx, n, "weight", native ? 1 : 2, channels, ins), b = norm_param(cx, n, "bias", native ? 2 : 3, channels, ins);
  Step& step = cx.portable_step(ins, statistics({batch, groups}));
  step.run = [&cx, ins, out, mean, rstd, batch, channels, inner, groups, w, b, eps, ptr_or_null] {
    cx.parallel_slices(batch * groups, [&](i64 first, i64 count) {
      portable::group_norm(cx.ptr(ins[0]), cx.ptr(out), channels, inner, groups, ptr_or_null(ins, w), ptr_or_null(ins, b), eps,
                           mean < 0 ? nullptr : cx.ptr(mean), rstd < 0 ? nullptr : cx.ptr(rstd), first, count);
    }, rows_per_task(channels / groups * inner));
  };
  define_all();
}

void lower_rms_norm(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "input", 0);
  const Shape xs = cx.slot(x).shape;
  auto normalized = cx.ints_arg(n, "normalized_shape");
  if (!normalized || normalized->size() > xs.size()) fail(ErrorCode::kSchema, cx.where(n) + ": normalized_shape for input " + shape_str(xs));
  if (!std::equal(normalized->begin(), normalized->end(), xs.end() - static_cast<std::ptrdiff_t>(normalized->size())))
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": normalized_shape " + shape_str(*normalized) + " for input " + shape_str(xs));
  const i64 inner = prod(xs, xs.size() - normalized->size(), xs.size()), outer = numel(xs) / std::max<i64>(inner, 1);
  const double eps = cx.float_arg(n, "eps").value_or(std::numeric_limits<float>::epsilon());
  const int out = cx.new_tensor(xs, false);
  std::vector<int> ins{x};
  const int w = norm_param(cx, n, "weight", 2, inner, ins);
  Step& step = cx.portable_step(ins, {out});
  step.run = [&cx, ins, out, outer, inner, w, eps] {
    const float *x = cx.ptr(ins[0]), *wp = w < 0 ? nullptr : cx.ptr(ins[static_cast<std::size_t>(w)]);
    float* y = cx.ptr(out);
    cx.parallel_slices(outer, [&](i64 first, i64 count) { portable::rms_norm(x + first * inner, y + first * inner, count, inner, wp, eps); },
                       rows_per_task(inner));
  };
  cx.define(n.outputs[0], out);
}

// PReLU: XNNPACK's binary prelu in x's own layout (the slopes broadcast over
// the channel dim), or a portable kernel for scalars and empty tensors.
void lower_prelu(Context& cx, const Node& n, NodeState& st) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape xs = cx.slot(x).shape;
  const Tensor& w = cx.constant_arg(n, "weight", 1, true);
  const i64 channels = xs.size() >= 2 ? xs[1] : 1;
  if (w.numel() != 1 && w.numel() != channels) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + std::to_string(w.numel()) + " weights for " + std::to_string(channels) + " channels");
  if (!xs.empty() && xs.size() <= XNN_MAX_TENSOR_DIMS && numel(xs) > 0) {
    const bool channels_last = cx.slot(x).channels_last;
    std::vector<std::size_t> x_shape, slope_shape{static_cast<std::size_t>(w.numel())};
    for (i64 d : physical(xs, channels_last)) x_shape.push_back(static_cast<std::size_t>(d));
    if (w.numel() > 1 && !channels_last) slope_shape.resize(xs.size() - 1, 1);  // [C, 1, ...]: broadcast over dims after the channel
    Slot slopes;
    slopes.kind = Kind::kTensor;
    slopes.shape = {w.numel()};
    slopes.constant = w.data_as<float>();
    const int slope = cx.padded(cx.new_slot(std::move(slopes)));
    if (st.ops.empty()) {
      st.ops.emplace_back();
      cx.check(xnn_create_binary_elementwise_nd(xnn_binary_prelu, xnn_datatype_fp32, nullptr, nullptr, nullptr, 0, &st.ops[0].op), n, "creating a prelu");
    }
    xnn_operator_t op = st.ops[0].op;
    cx.check(xnn_reshape_binary_elementwise_nd(op, x_shape.size(), x_shape.data(), slope_shape.size(), slope_shape.data(), cx.pool()), n, "reshaping a prelu");
    const int xp = cx.padded(x);
    const int out = cx.new_tensor(xs, channels_last);
    Step& step = cx.add_step({xp, slope}, {out});
    step.setup = [&cx, op, xp, slope, out, &n] { cx.check(xnn_setup_binary_elementwise_nd(op, cx.ptr(xp), cx.ptr(slope), cx.ptr(out)), n, "setting up a prelu"); };
    step.xnnpack = true;
    step.run = [&cx, op, &n] { cx.check(xnn_run_operator(op, cx.pool()), n, "running a prelu"); };
    return cx.define(n.outputs[0], out);
  }
  const i64 batch = xs.empty() ? 1 : xs[0];
  const i64 inner = xs.size() >= 2 ? prod(xs, 2, xs.size()) : 1;
  const i64 count = w.numel();
  const float* wp = w.data_as<float>();
  const int out = cx.new_tensor(xs, false);
  std::vector<int> ins{x};
  Step& step = cx.portable_step(ins, {out});
  const int xi = ins[0];
  const i64 rows = xs.size() >= 2 ? batch : 1, chans = xs.size() >= 2 ? channels : 1;
  const i64 per = xs.size() >= 2 ? inner : numel(xs);
  step.run = [&cx, xi, out, wp, rows, chans, per, count] { portable::prelu(cx.ptr(xi), wp, cx.ptr(out), rows, chans, per, count); };
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
