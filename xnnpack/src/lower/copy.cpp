// Identities and copies: dropout in eval, detach, contiguous, alias and
// clone (the input itself, unless a later op writes it in place),
// native_dropout, copy.
#include "lower/copy.h"
#include "lower/broadcast.h"

namespace tracegraph::xnnpack {

namespace {

// Whether a later op writes value v in place (add_, copy_, ...), directly or
// through a view of it (a slice, a select).
bool written_in_place(const Graph& g, ValueId v) {
  std::vector<ValueId> todo{v};
  while (!todo.empty()) {
    const ValueId w = todo.back();
    todo.pop_back();
    for (const Use& use : g.value(w).users) {
      const Node& u = g.node(use.node);
      if (is_inplace_op(u.op) && use.input_index == 0) return true;
      if (is_view_op(u.op))
        for (ValueId o : u.outputs) todo.push_back(o);
    }
  }
  return false;
}

}  // namespace

void lower_identity(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  if (base.find("dropout") != std::string::npos && cx.int_arg(n, "train").value_or(0))
    fail(ErrorCode::kUnsupported, cx.where(n) + ": dropout in training mode");
  if (n.inputs.empty()) fail(ErrorCode::kSchema, cx.where(n) + ": no input");
  const int x = cx.tensor_slot(n, n.inputs[0]);
  // The same values, the same storage; but a clone that a later op updates in
  // place is a copy, so that the update leaves its source as it was.
  if ((base != "clone" && base != "lift_fresh_copy") || !written_in_place(cx.graph(), n.outputs[0])) return cx.define(n.outputs[0], x);
  const Slot s = cx.slot(x);  // a copy: new_tensor() may move the slots
  const int out = cx.new_tensor(s.shape, s.channels_last);
  cx.slot(out).complex = s.complex;
  const i64 count = numel(s.shape);
  Step& step = cx.add_step({x}, {out});
  step.run = [&cx, x, out, count] { cx.parallel_copy_blocks(cx.ptr(x), cx.ptr(out), 1, count, 0, 0); };
  cx.define(n.outputs[0], out);
}

void lower_native_dropout(Context& cx, const Node& n, NodeState&) {
  // train is optional: None (absent) means the module's mode, which an inference graph is not in.
  if (cx.int_arg(n, "train").value_or(0) && cx.float_arg(n, "p").value_or(0) != 0)
    fail(ErrorCode::kUnsupported, cx.where(n) + ": native_dropout in training mode (random)");
  const int x = cx.tensor_arg(n, "input", 0);
  cx.define(n.outputs[0], x);
  if (n.outputs.size() > 1) {
    const Shape shape = cx.slot(x).shape;
    cx.define(n.outputs[1], cx.planned_constant(shape, std::vector<float>(static_cast<std::size_t>(numel(shape)), 1.0f)));
  }
}

void lower_copy(Context& cx, const Node& n, NodeState&) {
  // copy(self, src): src broadcast to self's shape (functional copy_).
  const int self = cx.tensor_arg(n, "self", 0);
  const int src = cx.tensor_arg(n, "src", 1);
  const Shape to = cx.slot(self).shape, from = cx.slot(src).shape;
  const auto fits = shape_rules::broadcast(from, to);
  if (!fits || *fits != to) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": cannot copy " + shape_str(from) + " into " + shape_str(to));
  int out = broadcast_to(cx, src, to);
  if (out == cx.as_layout(src, false)) {  // the same shape: a copy of its own, never an alias of src
    const int copy = cx.new_tensor(to, false);
    const i64 count = numel(to);
    cx.portable_map(out, copy, [count](const float* a, float* b) { std::copy(a, a + count, b); });
    out = copy;
  }
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
