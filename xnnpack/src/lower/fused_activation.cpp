// XNNPACK's unary operators as steps, and the fused activations and clamps
// after an op.
#include "lower/fused_activation.h"

namespace tracegraph::xnnpack {

void unary_step(Context& cx, const Node& n, xnn_operator_t op, int in, int out) {
  const std::size_t count = static_cast<std::size_t>(numel(cx.slot(in).shape));
  cx.check(xnn_reshape_unary_elementwise_nc(op, count, 1, 1, 1, cx.pool()), n, "reshaping an elementwise op");
  Step& step = cx.add_step({in}, {out});
  step.setup = [&cx, op, in, out, &n] { cx.check(xnn_setup_unary_elementwise_nc(op, cx.ptr(in), cx.ptr(out)), n, "setting up an elementwise op"); };
  step.xnnpack = true;
  step.run = [&cx, op, &n] { cx.check(xnn_run_operator(op, cx.pool()), n, "running an elementwise op"); };
}

xnn_operator_t make_unary(Context& cx, const Node& n, NodeState& st, std::size_t index, xnn_unary_operator type,
                          const xnn_unary_params* params) {
  while (st.ops.size() <= index) st.ops.emplace_back();
  XnnOp& op = st.ops[index];
  if (!op.op) cx.check(xnn_create_unary_elementwise_nc(type, xnn_datatype_fp32, xnn_datatype_fp32, params, nullptr, nullptr, 0, &op.op), n, "creating an elementwise op");
  return op.op;
}

namespace {

// A fused activation that XNNPACK has no operator for, in place after the op.
void portable_post(Context& cx, portable::Unary op, int out) {
  const i64 count = numel(cx.slot(out).shape);
  Step& step = cx.add_step({out}, {out});
  step.run = [&cx, op, out, count] {
    cx.parallel_slices(count, [&](i64 first, i64 n) { portable::unary(op, cx.ptr(out) + first, cx.ptr(out) + first, n); }, kSliceFloats);
  };
}

}  // namespace

void post_activation(Context& cx, const Node& n, NodeState& st, std::size_t index, const Fused& f, int out) {
  if (f.portable_post) portable_post(cx, *f.portable_post, out);
  if (!f.post) return;
  unary_step(cx, n, make_unary(cx, n, st, index, *f.post, nullptr), out, out);
}

void post_clamp(Context& cx, const Node& n, NodeState& st, std::size_t index, const Fused& f, int out) {
  if (f.min == -kInf && f.max == kInf) return;
  xnn_unary_params p{};
  p.clamp.min = f.min;
  p.clamp.max = f.max;
  unary_step(cx, n, make_unary(cx, n, st, index, xnn_unary_clamp, &p), out, out);
}

}  // namespace tracegraph::xnnpack
