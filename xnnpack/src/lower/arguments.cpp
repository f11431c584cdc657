// Arguments that Context's readers leave to the lowerings.
#include "lower/arguments.h"

namespace tracegraph::xnnpack {

std::optional<ValueId> run_time_tensor(const Context& cx, const Node& n, std::string_view name) {
  auto v = input_for_arg(n, name, std::numeric_limits<std::size_t>::max());
  if (!v) return std::nullopt;
  const Slot& s = cx.slot_of(*v);
  if (s.kind != Kind::kTensor || Context::constant_number(s)) return std::nullopt;
  return v;
}

double number_arg(const Context& cx, const Node& n, std::string_view name) {
  if (auto in = input_for_arg(n, name, std::numeric_limits<std::size_t>::max())) {
    const Value& value = cx.graph().value(*in);
    if (value.is_constant() && value.data.numel() == 1) {
      switch (value.data.dtype()) {
        case DType::kFloat32: return value.data.data_as<float>()[0];
        case DType::kFloat64: return value.data.data_as<double>()[0];
        case DType::kInt64: return static_cast<double>(value.data.data_as<std::int64_t>()[0]);
        default: fail(ErrorCode::kUnsupported, cx.where(n) + ": '" + std::string(name) + "' is a " + std::string(dtype_name(value.data.dtype())) + " tensor");
      }
    }
  }
  auto v = cx.float_arg(n, name);
  if (!v) fail(ErrorCode::kSchema, cx.where(n) + ": missing the number '" + std::string(name) + "'");
  return *v;
}

}  // namespace tracegraph::xnnpack
