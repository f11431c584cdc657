// The planning context's slots and constants: tensors and numbers of a plan,
// a graph's constants (held as float32 or as int64 words), the memory budget.
#include "plan/context.h"

namespace tracegraph::xnnpack {

float* Context::ptr(int s) {
  const Slot& slot = slots_[static_cast<std::size_t>(s)];
  if (slot.constant) return const_cast<float*>(slot.constant);
  return buffers_[static_cast<std::size_t>(slots_[static_cast<std::size_t>(slot.root)].buffer)].get();
}

int Context::new_slot(Slot slot) {
  slots_.push_back(std::move(slot));
  const int s = static_cast<int>(slots_.size() - 1);
  if (slots_.back().kind == Kind::kTensor && slots_.back().root < 0) slots_.back().root = s;
  return s;
}

int Context::new_tensor(Shape shape, bool channels_last) {
  Slot slot;
  slot.kind = Kind::kTensor;
  slot.shape = std::move(shape);
  slot.channels_last = channels_last && spatial_rank(slot.shape.size());
  within_budget(slot.shape);  // one tensor over the budget fails here, before any allocation
  return new_slot(std::move(slot));
}

void Context::within_budget(const Shape& shape) const {
  std::size_t bytes = 0;
  try {
    bytes = checked_nbytes(DType::kFloat32, shape);
  } catch (const Error&) {
    fail(ErrorCode::kOutOfMemory, where_now() + ": a tensor of shape " + shape_str(shape) + " is more than this platform can address");
  }
  if (bytes > memory_budget()) {
    fail(ErrorCode::kOutOfMemory, where_now() + ": a tensor of shape " + shape_str(shape) + " needs " + std::to_string(bytes) +
                                      " bytes, over the memory budget of " + std::to_string(memory_budget()) + " bytes");
  }
}

void Context::within_geometry(const Node& n, std::initializer_list<std::pair<const char*, const std::vector<i64>*>> lists) const {
  constexpr i64 kLimit = i64{1} << 24;
  for (const auto& [name, values] : lists) {
    for (i64 v : *values)
      if (v < 0 || v > kLimit)
        fail(ErrorCode::kLimitExceeded, where(n) + ": '" + name + "' " + shape_str(*values) + " is past the " + std::to_string(kLimit) +
                                            " XNNPACK's geometry takes");
  }
}

void Context::reserve_indirection(const Node& n, i64 out_h, i64 out_w, i64 window) {
  std::size_t bytes = 0;
  const bool overflow = out_h < 0 || out_w < 0 || window < 0 ||
                        __builtin_mul_overflow(static_cast<std::size_t>(out_h), static_cast<std::size_t>(out_w), &bytes) ||
                        __builtin_add_overflow(bytes, std::size_t{64}, &bytes) ||
                        __builtin_mul_overflow(bytes, static_cast<std::size_t>(window) * sizeof(void*), &bytes) ||
                        __builtin_add_overflow(operator_bytes_, bytes, &operator_bytes_);
  if (overflow || operator_bytes_ > memory_budget())
    fail(ErrorCode::kOutOfMemory, where(n) + ": XNNPACK's indirection buffers for an output of " + std::to_string(out_h) + " x " +
                                      std::to_string(out_w) + " with a window of " + std::to_string(window) + " need " +
                                      (overflow ? std::string("more bytes than this platform can address") : std::to_string(operator_bytes_) + " bytes") +
                                      ", over the memory budget of " + std::to_string(memory_budget()) + " bytes");
}

int Context::alias(int of, Shape shape, bool channels_last) {
  Slot slot;
  slot.kind = Kind::kTensor;
  slot.shape = std::move(shape);
  slot.channels_last = channels_last && spatial_rank(slot.shape.size());
  slot.constant = slots_[static_cast<std::size_t>(of)].constant;
  slot.complex = slots_[static_cast<std::size_t>(of)].complex;
  slot.int64 = slots_[static_cast<std::size_t>(of)].int64;
  slot.root = root(of);
  return new_slot(std::move(slot));
}

int Context::int_slot(i64 v) {
  Slot slot;
  slot.kind = Kind::kInt;
  slot.i = v;
  return new_slot(std::move(slot));
}

int Context::float_slot(double v) {
  Slot slot;
  slot.kind = Kind::kFloat;
  slot.f = v;
  return new_slot(std::move(slot));
}

int Context::ints_slot(std::vector<i64> v) {
  Slot slot;
  slot.kind = Kind::kInts;
  slot.ints = std::move(v);
  return new_slot(std::move(slot));
}

int Context::constant_slot(ValueId v) {
  const Value& value = graph_.value(v);
  const Tensor& t = value.data;
  if (t.dtype() == DType::kFloat32) {
    Slot slot;
    slot.kind = Kind::kTensor;
    slot.shape = t.shape();
    slot.constant = t.data_as<float>();
    return new_slot(std::move(slot));
  }
  if (t.dtype() == DType::kComplex64) {  // its (real, imaginary) pairs (Slot::complex)
    Slot slot;
    slot.kind = Kind::kTensor;
    slot.shape = t.shape();
    slot.shape.push_back(2);
    slot.complex = true;
    slot.constant = static_cast<const float*>(t.data());
    return new_slot(std::move(slot));
  }
  if (t.numel() == 1 && (t.dtype() == DType::kInt64 || t.dtype() == DType::kInt32 || t.dtype() == DType::kBool)) {
    if (t.dtype() == DType::kInt64) return int_slot(*t.data_as<std::int64_t>());
    if (t.dtype() == DType::kInt32) return int_slot(*t.data_as<std::int32_t>());
    return int_slot(*static_cast<const bool*>(t.data()) ? 1 : 0);
  }
  if (t.numel() == 1 && t.dtype() == DType::kFloat64) return float_slot(*t.data_as<double>());
  if (t.dim() == 1 && t.dtype() == DType::kInt64) {  // a folded shape
    const auto* v = t.data_as<std::int64_t>();
    return ints_slot(std::vector<i64>(v, v + t.numel()));
  }
  // Integers and masks of other shapes (index tables): as float32, the form
  // this backend holds them in, where every value is exact; integers past
  // float32's 2^24 as an int64 tensor (lower/integer.cpp).
  if (t.dtype() == DType::kInt64 || t.dtype() == DType::kInt32 || t.dtype() == DType::kBool || t.dtype() == DType::kFloat64) {
    if (auto s = held_as_floats(v)) return *s;
  }
  if (t.dtype() == DType::kInt64 || t.dtype() == DType::kInt32) {
    std::vector<i64> values(static_cast<std::size_t>(t.numel()));
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = t.dtype() == DType::kInt64 ? t.data_as<std::int64_t>()[i] : t.data_as<std::int32_t>()[i];
    return int64_constant(held_int64_[v.index], values, t.shape());
  }
  Slot slot;  // a constant no op here reads as a tensor; an error if one tries
  return new_slot(std::move(slot));
}

std::optional<int> Context::held_as_floats(ValueId v) {
  const Value& value = graph_.value(v);
  // A constant's floats are made once per graph; a value planning knows
  // (a size) may differ in the next plan: new floats each time, kept until
  // prepare() so that no pointer XNNPACK's padded copies are keyed by is reused.
  auto& floats = value.is_constant() ? held_[v.index] : held_plans_.emplace_back();
  Shape shape;
  if (floats.empty()) {
    const int s = value_slot_[v.index];
    std::vector<double> values;
    if (s >= 0 && slots_[static_cast<std::size_t>(s)].kind != Kind::kTensor) {
      const Slot& known = slots_[static_cast<std::size_t>(s)];
      if (known.kind == Kind::kInt) values = {static_cast<double>(known.i)};
      else if (known.kind == Kind::kFloat) values = {known.f};
      else if (known.kind == Kind::kInts) values.assign(known.ints.begin(), known.ints.end());
      else return std::nullopt;
    } else if (value.is_constant()) {
      const Tensor& t = value.data;
      for (std::int64_t i = 0; i < t.numel(); ++i) {
        switch (t.dtype()) {
          case DType::kInt64: values.push_back(static_cast<double>(t.data_as<std::int64_t>()[i])); break;
          case DType::kInt32: values.push_back(t.data_as<std::int32_t>()[i]); break;
          case DType::kBool: values.push_back(static_cast<const bool*>(t.data())[i] ? 1 : 0); break;
          case DType::kFloat64: values.push_back(t.data_as<double>()[i]); break;
          default: return std::nullopt;
        }
      }
    } else {
      return std::nullopt;
    }
    constexpr double kExact = 16777216.0;  // 2^24
    for (double x : values)
      if (value.is_constant() && value.data.dtype() != DType::kFloat64 && std::fabs(x) > kExact) return std::nullopt;
    floats.assign(values.begin(), values.end());
    floats.resize(floats.size() + kTailBytes / sizeof(float), 0.0f);
    padded_.insert(floats.data());
  }
  if (value.is_constant()) shape = value.data.shape();
  else if (slots_[static_cast<std::size_t>(value_slot_[v.index])].kind == Kind::kInts) shape = {static_cast<i64>(floats.size() - kTailBytes / sizeof(float))};
  Slot slot;
  slot.kind = Kind::kTensor;
  slot.shape = shape;
  slot.constant = floats.data();
  return new_slot(std::move(slot));
}

int Context::planned_constant(Shape shape, std::vector<float> values) {
  within_budget(shape);
  auto& floats = held_plans_.emplace_back(std::move(values));
  floats.resize(static_cast<std::size_t>(numel(shape)) + kTailBytes / sizeof(float), 0.0f);
  padded_.insert(floats.data());
  Slot slot;
  slot.kind = Kind::kTensor;
  slot.shape = std::move(shape);
  slot.constant = floats.data();
  return new_slot(std::move(slot));
}

int Context::int64_constant(std::vector<float>& store, const std::vector<i64>& values, Shape shape) {
  shape.push_back(2);
  within_budget(shape);
  if (store.empty()) {  // a graph's constant: made once
    store.assign(values.size() * 2 + kTailBytes / sizeof(float), 0.0f);  // operator new's alignment: 8 bytes at least
    if (!values.empty()) std::memcpy(store.data(), values.data(), values.size() * sizeof(i64));
    padded_.insert(store.data());
  }
  Slot slot;
  slot.kind = Kind::kTensor;
  slot.shape = std::move(shape);
  slot.int64 = true;
  slot.constant = store.data();
  return new_slot(std::move(slot));
}

int Context::held_tensor_slot(const Node& n, ValueId v) {
  const Slot& s = slot_of(v);
  if (s.kind == Kind::kTensor) return slot_index(v);
  if (auto h = held_as_floats(v)) return *h;
  fail(ErrorCode::kUnsupported, where(n) + ": input '" + graph_.value(v).name + "' is not a tensor this backend holds");
}

const Slot& Context::slot_of(ValueId v) const {
  const int s = value_slot_[v.index];
  if (s < 0) {
    // An output its producer's lowering leaves out (batch norm's saved statistics, pooling indices).
    const Value& value = graph_.value(v);
    if (!value.producer) fail(ErrorCode::kUnsupported, where_now() + ": reads '" + value.name + "' before it is computed");
    const Node& p = graph_.node(*value.producer);
    fail(ErrorCode::kUnsupported, where_now() + ": reads '" + value.name + "', output " + std::to_string(value.producer_output) + " of node '" +
                                      p.name + "' (" + p.op + "), which this backend does not compute");
  }
  return slots_[static_cast<std::size_t>(s)];
}

int Context::slot_index(ValueId v) const {
  slot_of(v);
  return value_slot_[v.index];
}

}  // namespace tracegraph::xnnpack
