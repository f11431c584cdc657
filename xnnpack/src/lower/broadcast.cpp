// numpy broadcasting of shapes and of slots.
#include "lower/broadcast.h"

namespace tracegraph::xnnpack {

Shape broadcast_shape(const Context& cx, const Node& n, const Shape& a, const Shape& b) {
  auto out = shape_rules::broadcast(a, b);
  if (!out) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
  return *out;
}

int broadcast_to(Context& cx, int s, const Shape& to) {
  s = cx.as_layout(s, false);
  const Shape from = cx.slot(s).shape;
  if (from == to) return s;
  const int out = cx.new_tensor(to, false);
  Step& step = cx.add_step({s}, {out});
  step.run = [&cx, s, out, from, to] { portable::broadcast(cx.ptr(s), cx.ptr(out), from, to); };
  return out;
}

}  // namespace tracegraph::xnnpack
