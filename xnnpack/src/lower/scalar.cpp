// The numbers planning knows: size, dim and the numbers of a tensor's layout,
// lists of integers and their items, TorchScript's scalar casts, and item()
// (read by the run where the graph computes the tensor).
#include "lower/scalar.h"
#include "lower/held_type.h"

namespace tracegraph::xnnpack {

void lower_list(Context& cx, const Node& n, NodeState&) {
  std::vector<i64> items;
  for (ValueId v : n.inputs) {
    const Slot& s = cx.slot_of(v);
    if (s.kind != Kind::kInt) fail(ErrorCode::kUnsupported, cx.where(n) + ": a list of something other than integers known before the run");
    items.push_back(s.i);
  }
  cx.define(n.outputs[0], cx.ints_slot(std::move(items)));
}

void lower_size(Context& cx, const Node& n, NodeState&) {
  auto self = input_for_arg(n, "self", 0);
  if (!self) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'self'");
  const Slot& s = cx.slot_of(*self);
  if (s.kind != Kind::kTensor) fail(ErrorCode::kUnsupported, cx.where(n) + ": size of a non-tensor");
  const std::string base = base_op(n.op);
  if (base == "dim") return cx.define(n.outputs[0], cx.int_slot(static_cast<i64>(s.shape.size())));
  // The numbers of a tensor's layout as torch sees it (contiguous, no offset): known while planning.
  if (base == "sym_numel") return cx.define(n.outputs[0], cx.int_slot(numel(s.shape)));
  if (base == "sym_storage_offset") return cx.define(n.outputs[0], cx.int_slot(0));
  if (base == "sym_is_contiguous") return cx.define(n.outputs[0], cx.int_slot(1));
  if (base == "sym_stride") {
    const auto d = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), s.shape.size(), cx.where(n)));
    return cx.define(n.outputs[0], cx.int_slot(s.shape.empty() ? 1 : prod(s.shape, d + 1, s.shape.size())));
  }
  if (auto dim = cx.int_arg(n, "dim")) {
    // torch: "dimension specified as 0 but tensor has no dimensions" (fuzz_backends found it read past an empty shape).
    if (s.shape.empty()) fail(ErrorCode::kOutOfRange, cx.where(n) + ": size of dim " + std::to_string(*dim) + " of a 0-d tensor");
    const i64 d = normalize_dim(*dim, s.shape.size(), cx.where(n));
    return cx.define(n.outputs[0], cx.int_slot(s.shape[static_cast<std::size_t>(d)]));
  }
  cx.define(n.outputs[0], cx.ints_slot(s.shape));
}

void lower_getitem(Context& cx, const Node& n, NodeState&) {
  auto list = input_for_arg(n, "list", 0);
  if (!list) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'list'");
  const Slot& s = cx.slot_of(*list);
  if (s.kind != Kind::kInts) fail(ErrorCode::kUnsupported, cx.where(n) + ": indexing something other than a list of integers");
  const i64 size = static_cast<i64>(s.ints.size());
  i64 idx = cx.int_arg(n, "idx").value_or(0);
  if (idx < 0) idx += size;
  if (idx < 0 || idx >= size) fail(ErrorCode::kOutOfRange, cx.where(n) + ": index " + std::to_string(idx) + " of a list of " + std::to_string(size));
  cx.define(n.outputs[0], cx.int_slot(s.ints[static_cast<std::size_t>(idx)]));
}

void lower_scalar_identity(Context& cx, const Node& n, NodeState&) {
  if (n.inputs.empty()) fail(ErrorCode::kSchema, cx.where(n) + ": no input");
  const Slot& s = cx.slot_of(n.inputs[0]);
  if (s.kind == Kind::kInt) return cx.define(n.outputs[0], base_op(n.op) == "Float" ? cx.float_slot(static_cast<double>(s.i)) : cx.int_slot(s.i));
  if (s.kind == Kind::kFloat) return cx.define(n.outputs[0], base_op(n.op) == "Int" ? cx.int_slot(static_cast<i64>(s.f)) : cx.float_slot(s.f));
  fail(ErrorCode::kUnsupported, cx.where(n) + ": a value computed at run time where a number known before the run is needed");
}

void lower_item(Context& cx, const Node& n, NodeState&) {
  auto self = input_for_arg(n, "self", 0);
  if (!self) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'self'");
  const Slot& known = cx.slot_of(*self);
  if (known.kind == Kind::kInt || known.kind == Kind::kFloat) return cx.define(n.outputs[0], cx.slot_index(*self));  // a number planning knows
  const int x = cx.tensor_slot(n, *self);
  const Shape shape = cx.slot(x).shape;
  if (numel(shape) != 1) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": item() of a tensor of shape " + shape_str(shape) + " (one element is needed)");
  const auto& dtype = cx.graph().value(*self).dtype;
  const bool integral = dtype && held_kind(*dtype) != Held::kFloat;
  std::optional<double> value = Context::constant_number(cx.slot(x));
  if (!value) value = cx.read_by_run(x, [](const float* p) { return static_cast<double>(p[0]); });  // computed in the graph: the run reads it
  if (!value) return;
  if (!integral) return cx.define(n.outputs[0], cx.float_slot(*value));
  if (!std::isfinite(*value)) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": item() of an integer tensor read " + std::to_string(*value));
  cx.define(n.outputs[0], cx.int_slot(static_cast<i64>(*value)));
}

}  // namespace tracegraph::xnnpack
