// Padding: constant (XNNPACK's constant pad where it only adds, in the
// input's layout), reflect, replicate and circular (portable).
#include "lower/pad.h"

namespace tracegraph::xnnpack {

void lower_pad(Context& cx, const Node& n, NodeState& st) {
  const std::string base = base_op(n.op);
  const int x = cx.tensor_arg(n, input_for_arg(n, "self", 0) ? "self" : "input", 0);
  const Shape in = cx.slot(x).shape;
  auto pads = cx.ints_arg(n, "pad");
  if (!pads) pads = cx.ints_arg(n, "padding");
  if (!pads || pads->size() % 2 || pads->size() / 2 > in.size())
    fail(ErrorCode::kSchema, cx.where(n) + ": padding " + (pads ? shape_str(*pads) : std::string("missing")) + " for a tensor of rank " + std::to_string(in.size()));
  portable::PadMode mode = portable::PadMode::kConstant;
  std::string mode_name = n.attributes.get_string("mode").value_or("constant");
  if (base.rfind("reflection_pad", 0) == 0) mode_name = "reflect";
  if (base.rfind("replication_pad", 0) == 0) mode_name = "replicate";
  if (mode_name == "reflect") mode = portable::PadMode::kReflect;
  else if (mode_name == "replicate") mode = portable::PadMode::kReplicate;
  else if (mode_name == "circular") mode = portable::PadMode::kCircular;
  else if (mode_name != "constant") fail(ErrorCode::kUnsupported, cx.where(n) + ": padding mode '" + mode_name + "'");
  const float value = static_cast<float>(cx.float_arg(n, "value").value_or(0));
  std::vector<i64> before(in.size(), 0), after(in.size(), 0);
  Shape out_shape = in;
  for (std::size_t k = 0; k < pads->size() / 2; ++k) {
    const std::size_t d = in.size() - 1 - k;
    before[d] = (*pads)[2 * k];
    after[d] = (*pads)[2 * k + 1];
    // Negative padding crops (constant and replicate mode, as torch allows).
    if ((mode == portable::PadMode::kReflect || mode == portable::PadMode::kCircular) && (before[d] < 0 || after[d] < 0))
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": negative padding in " + mode_name + " mode");
    if (mode == portable::PadMode::kReflect && (before[d] >= in[d] || after[d] >= in[d]))
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": reflect padding " + std::to_string(std::max(before[d], after[d])) + " must be less than the dim's size " + std::to_string(in[d]));
    if ((mode == portable::PadMode::kReplicate || mode == portable::PadMode::kCircular) && in[d] == 0)
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": padding an empty dim in " + mode_name + " mode");
    if (__builtin_add_overflow(in[d], before[d], &out_shape[d]) || __builtin_add_overflow(out_shape[d], after[d], &out_shape[d]))
      fail(ErrorCode::kOutOfRange, cx.where(n) + ": padding dim " + std::to_string(d) + " by " + std::to_string(before[d]) + " and " +
                                       std::to_string(after[d]) + " passes int64 (fuzz_backends, under UBSan)");
    if (out_shape[d] < 0) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": padding makes dim " + std::to_string(d) + " negative");
  }
  // Constant padding that only adds (XNNPACK's padding is unsigned), in x's own layout.
  bool grows = mode == portable::PadMode::kConstant && in.size() <= XNN_MAX_TENSOR_DIMS && numel(in) > 0;
  for (std::size_t d = 0; d < in.size() && grows; ++d) grows = before[d] >= 0 && after[d] >= 0;
  if (grows) {
    const bool channels_last = cx.slot(x).channels_last;
    const std::size_t rank = in.size();
    std::vector<std::size_t> shape, pre(rank), post(rank);
    for (i64 d : physical(in, channels_last)) shape.push_back(static_cast<std::size_t>(d));
    for (std::size_t d = 0; d < rank; ++d) {
      const std::size_t p = physical_axis(d, rank, channels_last);
      pre[p] = static_cast<std::size_t>(before[d]);
      post[p] = static_cast<std::size_t>(after[d]);
    }
    XnnOp& made = cx.plan_op();
    cx.check(xnn_create_constant_pad_nd_x32(cx.node_numbers(st, 0, {value}), 0, &made.op), n, "creating a constant pad");
    xnn_operator_t op = made.op;
    cx.check(xnn_reshape_constant_pad_nd_x32(op, rank, shape.data(), pre.data(), post.data(), cx.pool()), n, "reshaping a constant pad");
    const int out = cx.new_tensor(out_shape, channels_last);
    Step& step = cx.add_step({x}, {out});
    step.setup = [&cx, op, x, out, &n] { cx.check(xnn_setup_constant_pad_nd_x32(op, cx.ptr(x), cx.ptr(out)), n, "setting up a constant pad"); };
    step.xnnpack = true;
    step.run = [&cx, op, &n] { cx.check(xnn_run_operator(op, cx.pool()), n, "running a constant pad"); };
    return cx.define(n.outputs[0], out);
  }
  const int out = cx.new_tensor(out_shape, false);
  cx.portable_map(x, out, [in, before, after, mode, value](const float* a, float* y) { portable::pad(a, y, in, before, after, mode, value); });
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
