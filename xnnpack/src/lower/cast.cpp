// Casts: _to_copy, to, type_as, of the values held as floats (held_type.h)
// and of complex values.
#include "lower/cast.h"
#include "lower/complex.h"
#include "lower/held_type.h"

namespace tracegraph::xnnpack {

void lower_cast(Context& cx, const Node& n, NodeState&) {
  auto self = input_for_arg(n, "self", 0);
  if (!self) fail(ErrorCode::kSchema, cx.where(n) + ": missing 'self'");
  std::optional<Held> to;
  // Complex: to a complex type ((x, 0) pairs), from one to a real type (its
  // real parts), or the same pairs.
  {
    const bool from_complex = cx.slot_of(*self).complex;
    std::optional<bool> to_complex;
    if (base_op(n.op) == "type_as" || input_for_arg(n, "other", std::numeric_limits<std::size_t>::max())) {
      const auto& d = cx.graph().value(*input_for_arg(n, "other", 1)).dtype;
      if (d) to_complex = is_complex(*d);
    } else if (auto code = cx.int_arg(n, "dtype")) {
      to_complex = *code == 8 || *code == 9 || *code == 10;  // c10's ComplexHalf, ComplexFloat, ComplexDouble
    }
    const bool want = to_complex.value_or(from_complex);
    if (from_complex == want && want) return cx.define(n.outputs[0], cx.slot_index(*self));
    if (from_complex != want) return cx.define(n.outputs[0], complex_cast(cx, n, cx.held_tensor_slot(n, *self), want));
  }
  if (base_op(n.op) == "type_as" || input_for_arg(n, "other", std::numeric_limits<std::size_t>::max())) {
    auto other = input_for_arg(n, "other", 1);
    const Value& o = cx.graph().value(*other);
    if (!o.dtype) fail(ErrorCode::kUnsupported, cx.where(n) + ": the type of '" + o.name + "' is not known");
    to = held_kind(*o.dtype);
  } else if (auto code = cx.int_arg(n, "dtype")) {
    to = held_kind(*code);
    if (!to) fail(ErrorCode::kUnsupported, cx.where(n) + ": a cast to the scalar type " + std::to_string(*code) + " (complex or quantized)");
  } else {
    to = Held::kFloat;  // a device, layout or memory format change only: the same values
  }
  const int x = cx.held_tensor_slot(n, *self);
  const Value& in = cx.graph().value(*self);
  const auto from = in.dtype ? held_kind(*in.dtype) : std::optional<Held>(Held::kFloat);
  // float to float, or to a type at least as wide as the values: the same floats.
  if (*to == Held::kFloat || from == to || (*to == Held::kInteger && from == Held::kBool)) return cx.define(n.outputs[0], x);
  const Shape shape = cx.slot(x).shape;
  const int out = cx.new_tensor(shape, false);
  const i64 count = numel(shape);
  if (*to == Held::kBool) cx.portable_map(x, out, [count](const float* a, float* b) { portable::cast_to_bool(a, b, count); });
  else cx.portable_map(x, out, [count](const float* a, float* b) { portable::cast_to_integer(a, b, count); });
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
