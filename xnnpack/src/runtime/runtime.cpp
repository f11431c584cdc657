// The runtime. Planning: the steps and slots for the inputs' shapes, then the memory plan (a buffer reused after each value's last use) and its allocation within the budget.
#include "runtime/runtime.h"

#include "runtime/memory_plan.h"
#include "lower/complex.h"
#include "lower/integer.h"
#include "lower/table.h"
#include "tracegraph/flops.h"

namespace tracegraph::xnnpack {
namespace {

// Integers held as float32 are exact up to this magnitude.
constexpr std::int64_t kExactInFloat = std::int64_t{1} << 24;

// A float32 output's values as `dtype` (exact for the integers and masks held
// as floats); an integer past 2^24, which float32 no longer holds exactly, is
// refused naming the output rather than given rounded.
Tensor held_as(const Tensor& t, DType dtype, const std::string& name) {
  const float* x = t.data_as<float>();
  const std::size_t n = static_cast<std::size_t>(t.numel());
  if (dtype == DType::kInt64 || dtype == DType::kInt32) {
    for (std::size_t i = 0; i < n; ++i)
      if (std::fabs(x[i]) > static_cast<float>(kExactInFloat))
        fail(ErrorCode::kOutOfRange, "xnnpack: output '" + name + "' element " + std::to_string(i) + " is about " + std::to_string(x[i]) +
                                         ", past 2^24: this backend holds integers as float32, where it is no longer exact");
  }
  switch (dtype) {
    case DType::kInt64: {
      std::vector<std::int64_t> v(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int64_t>(x[i]);
      return Tensor::from_vector<std::int64_t>(v, t.shape());
    }
    case DType::kInt32: {
      std::vector<std::int32_t> v(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int32_t>(x[i]);
      return Tensor::from_vector<std::int32_t>(v, t.shape());
    }
    case DType::kBool: {
      Tensor out = Tensor::zeros(DType::kBool, t.shape());
      auto* b = static_cast<bool*>(out.data());
      for (std::size_t i = 0; i < n; ++i) b[i] = x[i] != 0;
      return out;
    }
    default: return t;  // other float types: computed as float32
  }
}

// The dtypes a graph input may have: float32, and the integers and bool torch
// uses for indices and masks (held as float32 here).
bool input_dtype_held(DType d) {
  return d == DType::kFloat32 || d == DType::kComplex64 || d == DType::kInt64 || d == DType::kInt32 || d == DType::kInt16 || d == DType::kInt8 ||
         d == DType::kUInt8 || d == DType::kBool;
}

template <typename T>
void integers_to_int64(const Tensor& t, std::int64_t* dst) {
  const T* src = t.data_as<T>();
  for (std::int64_t i = 0; i < t.numel(); ++i) dst[i] = static_cast<std::int64_t>(src[i]);
}
// Copies input `t` into its slot's data: an integer input into an int64 slot
// (Slot::int64), a bool one as 0/1 floats, float32 and complex64 as they are.
void load_input(const Tensor& t, float* dst, const std::string& name) {
  auto* ints = reinterpret_cast<std::int64_t*>(dst);
  switch (t.dtype()) {
    case DType::kFloat32:
    case DType::kComplex64:
    case DType::kInt64: std::memcpy(dst, t.data(), t.nbytes()); return;
    case DType::kInt32: return integers_to_int64<std::int32_t>(t, ints);
    case DType::kInt16: return integers_to_int64<std::int16_t>(t, ints);
    case DType::kInt8: return integers_to_int64<std::int8_t>(t, ints);
    case DType::kUInt8: return integers_to_int64<std::uint8_t>(t, ints);
    case DType::kBool: {
      const auto* b = static_cast<const std::uint8_t*>(t.data());  // bytes, not bools: a caller's 2 is true, not undefined
      for (std::int64_t i = 0; i < t.numel(); ++i) dst[i] = b[i] != 0 ? 1.0f : 0.0f;
      return;
    }
    default: fail(ErrorCode::kDTypeMismatch, "xnnpack: input '" + name + "' is " + std::string(dtype_name(t.dtype())));
  }
}

// An int64 output as the graph's type for it: a narrower integer (wrapped,
// as torch's cast), bool, or float32.
Tensor int64_as(const Tensor& t, DType dtype) {
  const auto* x = t.data_as<std::int64_t>();
  const auto n = static_cast<std::size_t>(t.numel());
  auto make = [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(x[i]);
    return Tensor::from_vector<T>(v, t.shape());
  };
  switch (dtype) {
    case DType::kInt32: return make(std::int32_t{});
    case DType::kInt16: return make(std::int16_t{});
    case DType::kInt8: return make(std::int8_t{});
    case DType::kUInt8: return make(std::uint8_t{});
    case DType::kFloat32: return make(float{});
    case DType::kBool: {
      Tensor out = Tensor::zeros(DType::kBool, t.shape());
      auto* b = static_cast<bool*>(out.data());
      for (std::size_t i = 0; i < n; ++i) b[i] = x[i] != 0;
      return out;
    }
    default: return t;
  }
}

std::string shapes_str(const std::vector<Shape>& shapes) {
  std::string s;
  for (const Shape& x : shapes) s += (s.empty() ? "" : ", ") + shape_str(x);
  return s;
}

}  // namespace

void Runtime::reset_plan() {
  slots_.clear();
  steps_.clear();
  plan_ops_.clear();
  layout_memo_.clear();
  buffers_.clear();
  input_slots_.clear();
  output_slots_.clear();
  workspace_bytes_ = 0;
  operator_bytes_ = 0;
  workspace_.reset();
  arena_bytes_ = 0;
  planned_.reset();
  plan_stopped_ = false;
}

void Runtime::plan(const std::vector<Shape>& input_shapes) {
  reset_plan();
  planned_shapes_ = input_shapes;
  value_slot_.assign(max_value_index() + 1, -1);
  for (std::size_t i = 0; i < input_shapes.size(); ++i) {
    const ValueId v = graph_.inputs()[i];
    const DType dtype = graph_.value(v).dtype.value_or(DType::kFloat32);
    Shape shape = input_shapes[i];
    if (is_complex(dtype) || is_integer(dtype)) shape.push_back(2);  // the (real, imaginary) pairs; an int64's two words
    const int s = new_tensor(shape, false);
    slots_[static_cast<std::size_t>(s)].complex = is_complex(dtype);
    slots_[static_cast<std::size_t>(s)].int64 = is_integer(dtype);
    value_slot_[v.index] = s;
    input_slots_.push_back(s);
    slots_[s].first_step = -1;  // written before the first step
  }
  for (ValueId v : graph_.constants()) value_slot_[v.index] = constant_slot(v);
  for (NodeId id : graph_.nodes()) {
    current_ = id;
    const Node& n = graph_.node(id);
    const Lowering lower = lowering_for(n);
    if (!lower) fail(ErrorCode::kUnsupported, where(n) + ": op not supported by the XNNPACK backend");
    const std::string base = base_op(n.op);
    NodeState& st = states_[id.index];
    const auto input_where = [&](const Node& m, bool Slot::*flag) {
      return std::find_if(m.inputs.begin(), m.inputs.end(), [&](ValueId v) {
        return value_slot_[v.index] >= 0 && slots_[static_cast<std::size_t>(value_slot_[v.index])].*flag;
      });
    };
    const auto lower_rest = [&](const Node& m) {
      const auto complex_input = input_where(m, &Slot::complex);
      if (complex_input != m.inputs.end() && layout_op_on_pairs(base)) lower_layout_on_pairs(*this, m, st, lower);
      else if (complex_input != m.inputs.end() && !takes_complex(base))
        fail(ErrorCode::kUnsupported, where(m) + ": input '" + graph_.value(*complex_input).name + "' is complex; " + kComplexOps);
      else lower(*this, m, st);
    };
    if (input_where(n, &Slot::int64) != n.inputs.end()) lower_with_int64(*this, n, st, lower, lower_rest);
    else lower_rest(n);
    if (plan_stopped_) break;  // the rest waits for a value only the run knows
  }
  current_ = NodeId{};
  for (ValueId v : plan_stopped_ ? std::vector<ValueId>{} : graph_.outputs()) {
    const int s = value_slot_[v.index];
    if (s < 0) fail(ErrorCode::kUnproducedOutput, "xnnpack: graph output '" + graph_.value(v).name + "' is never computed");
    output_slots_.push_back(s);
  }
  allocate();
  for (Step& step : steps_)
    if (step.setup) step.setup();
  step_ms_.assign(steps_.size(), 0.0);
  planned_ = input_shapes;
}

std::size_t Runtime::max_value_index() const {
  std::size_t m = 0;
  for (ValueId v : graph_.values()) m = std::max<std::size_t>(m, v.index);
  return m;
}

void Runtime::allocate() {
  const int end = static_cast<int>(steps_.size());
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    for (int s : steps_[k].writes) {
      Slot& r = slots_[static_cast<std::size_t>(root(s))];
      r.first_step = std::min(r.first_step, static_cast<int>(k));
      r.last_step = std::max(r.last_step, static_cast<int>(k));
    }
    for (int s : steps_[k].reads) {
      Slot& r = slots_[static_cast<std::size_t>(root(s))];
      r.last_step = std::max(r.last_step, static_cast<int>(k));
    }
  }
  for (int s : output_slots_) {
    if (slots_[static_cast<std::size_t>(s)].kind == Kind::kTensor && !slots_[static_cast<std::size_t>(s)].constant)
      slots_[static_cast<std::size_t>(root(s))].last_step = end;
  }
  // The storage owners, each with the most elements any of its aliases spans.
  std::vector<i64> extent(slots_.size(), 1);
  for (const Slot& slot : slots_)
    if (slot.kind == Kind::kTensor && !slot.constant && slot.root >= 0)
      extent[static_cast<std::size_t>(slot.root)] = std::max(extent[static_cast<std::size_t>(slot.root)], numel(slot.shape));
  std::vector<int> owners;
  std::vector<Lifetime> lifetimes;
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    const Slot& slot = slots_[s];
    if (slot.kind == Kind::kTensor && !slot.constant && slot.root == static_cast<int>(s) && slot.last_step >= slot.first_step) {
      owners.push_back(static_cast<int>(s));
      lifetimes.push_back({static_cast<std::size_t>(extent[s]) * sizeof(float), slot.first_step, slot.last_step});
    }
  }
  const MemoryPlan memory = plan_memory(lifetimes);
  for (std::size_t k = 0; k < owners.size(); ++k) slots_[static_cast<std::size_t>(owners[k])].buffer = memory.buffer_of[k];
  const std::vector<std::size_t>& capacity = memory.capacity;
  // The bytes the plan needs, against the budget, before allocating any.
  std::size_t needed = memory.total();
  for (std::size_t more : {workspace_bytes_, operator_bytes_}) needed = needed > SIZE_MAX - more ? SIZE_MAX : needed + more;
  if (needed > memory_budget()) {
    fail(ErrorCode::kOutOfMemory, "xnnpack: running the graph on inputs " + shapes_str(planned_shapes_) + " needs " + std::to_string(needed) +
                                      " bytes of intermediates and operator buffers, over the memory budget of " + std::to_string(memory_budget()) + " bytes");
  }
  try {
    for (std::size_t b = 0; b < capacity.size(); ++b) {
      buffers_.push_back(aligned_floats(capacity[b]));
      arena_bytes_ += capacity[b];
    }
    if (workspace_bytes_) workspace_ = aligned_floats(workspace_bytes_);
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::kOutOfMemory, "xnnpack: allocating " + std::to_string(needed) + " bytes of intermediates failed");
  }
}

void Runtime::prepare(const Graph& graph) {
  graph_ = graph;
  states_.clear();
  constant_copies_.clear();
  held_.clear();
  held_int64_.clear();
  observed_.clear();
  held_plans_.clear();
  padded_.clear();
  planned_.reset();
  for (ValueId v : graph_.inputs()) {
    const Value& value = graph_.value(v);
    if (value.dtype && !input_dtype_held(*value.dtype))
      fail(ErrorCode::kUnsupported, "xnnpack: graph input '" + value.name + "' is " + std::string(dtype_name(*value.dtype)) +
                                        "; this backend takes float32, complex64, integer and bool inputs");
  }
  // Plan now when every input's shape is known, so that an op this backend
  // cannot run is reported here rather than at the first run.
  std::vector<Shape> shapes;
  for (ValueId v : graph_.inputs()) {
    const Value& value = graph_.value(v);
    if (!value.shape) break;
    Shape s;
    for (const Dim& d : *value.shape) {
      if (!d.is_static()) break;
      s.push_back(d.size);
    }
    if (s.size() != value.shape->size()) break;
    shapes.push_back(std::move(s));
  }
  fail_if_unsupported("xnnpack", unsupported_nodes(graph_));  // every op this backend lacks, in one error, before planning any
  if (shapes.size() == graph_.inputs().size()) plan(shapes);
}

std::vector<Tensor> Runtime::run(const std::vector<Tensor>& inputs) {
  if (inputs.size() != graph_.inputs().size())
    fail(ErrorCode::kInvalidArgument, "xnnpack: the graph takes " + std::to_string(graph_.inputs().size()) + " inputs, given " + std::to_string(inputs.size()));
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    const std::string& name = graph_.value(graph_.inputs()[i]).name;
    if (!t.defined()) fail(ErrorCode::kInvalidArgument, "xnnpack: input '" + name + "' is undefined");
    // The graph's dtype for the input (float32 where the file gives none).
    const DType want = graph_.value(graph_.inputs()[i]).dtype.value_or(DType::kFloat32);
    if (t.dtype() != want)
      fail(ErrorCode::kDTypeMismatch, "xnnpack: input '" + name + "' is " + std::string(dtype_name(t.dtype())) + ", expected " + std::string(dtype_name(want)));
    if (t.device().type != DeviceType::kCPU) fail(ErrorCode::kInvalidArgument, "xnnpack: input '" + name + "' is on " + t.device().str() + "; this backend runs on the CPU");
    shapes.push_back(t.shape());
  }
  // A value only the run knows (nonzero's count, item()'s value) that is not
  // the one planned for: plan for it and run again. Each pass settles one
  // more such node, so there are at most as many passes as nodes, plus one.
  if (planned_shapes_ != shapes) {
    // Values read for other input shapes may not fit these: read them again.
    for (const auto& [node, value] : std::unordered_map<std::uint32_t, double>(observed_)) forget_after(NodeId{node});
    observed_.clear();
  }
  for (std::size_t pass = 0;; ++pass) {
    if (!planned_ || *planned_ != shapes) plan(shapes);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const int s = input_slots_[i];
      if (s >= 0 && inputs[i].numel()) load_input(inputs[i], ptr(s), graph_.value(graph_.inputs()[i]).name);
    }
    try {
      run_steps();
    } catch (const Observed& seen) {
      forget_after(seen.node);
      observed_[seen.node.index] = seen.value;
      planned_.reset();
      if (pass > graph_.nodes().size()) fail(ErrorCode::kInternal, "xnnpack: the values only the run knows did not settle");
      continue;
    }
    if (plan_stopped_) fail(ErrorCode::kInternal, "xnnpack: a plan that stops at a value only the run knows ran to its end");
    break;
  }
  std::vector<Tensor> outputs;
  for (std::size_t k = 0; k < output_slots_.size(); ++k) {
    Tensor t = read_out(output_slots_[k]);
    // An output torch holds as integers or bool, held here as floats or int64: its own type again.
    const auto& dtype = graph_.value(graph_.outputs()[k]).dtype;
    if (dtype && t.dtype() == DType::kFloat32 && *dtype != DType::kFloat32) t = held_as(t, *dtype, graph_.value(graph_.outputs()[k]).name);
    if (dtype && t.dtype() == DType::kInt64 && *dtype != DType::kInt64) t = int64_as(t, *dtype);
    outputs.push_back(std::move(t));
  }
  return outputs;
}

void Runtime::forget_after(NodeId node) {
  std::unordered_set<std::uint32_t> changed;
  for (ValueId v : graph_.node(node).outputs) changed.insert(v.index);
  for (NodeId id : graph_.nodes()) {
    const Node& n = graph_.node(id);
    if (std::none_of(n.inputs.begin(), n.inputs.end(), [&](ValueId v) { return changed.count(v.index) > 0; })) continue;
    for (ValueId v : n.outputs) changed.insert(v.index);
    if (auto it = states_.find(id.index); it != states_.end()) {
      for (const std::vector<float>& d : it->second.data) forget_copies(d.data());
      states_.erase(it);
    }
    observed_.erase(id.index);  // read under the old value: read again
  }
}

void Runtime::run_steps() {
  if (!options_.profile) {
    for (Step& step : steps_) step.run();
    return;
  }
  std::fill(step_ms_.begin(), step_ms_.end(), 0.0);
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    steps_[k].run();
    step_ms_[k] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
}

std::vector<NodeTime> Runtime::profile() const {
  std::vector<NodeTime> out;
  if (!options_.profile || step_ms_.empty()) return out;
  std::unordered_map<std::uint32_t, std::size_t> index;
  // A value's shape as planned (its slot), else the graph's when static.
  auto shape_of = [&](ValueId v) -> Shape {
    const int s = v.index < value_slot_.size() ? value_slot_[v.index] : -1;
    if (s >= 0) return slots_[static_cast<std::size_t>(s)].shape;
    Shape shape;
    if (const auto& symbolic = graph_.value(v).shape) {
      for (const Dim& d : *symbolic) {
        if (!d.is_static()) return {};
        shape.push_back(d.size);
      }
    }
    return shape;
  };
  for (NodeId id : graph_.nodes()) {
    const Node& node = graph_.node(id);
    index[id.index] = out.size();
    std::vector<Shape> ins, outs;
    for (ValueId v : node.inputs) ins.push_back(shape_of(v));
    for (ValueId v : node.outputs) outs.push_back(shape_of(v));
    NodeTime& t = out.emplace_back();
    t.node = node.name;
    t.op = node.op;
    t.flops = node_flops(node, ins, outs).value_or(0);
  }
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    if (!steps_[k].node.valid()) continue;
    auto it = index.find(steps_[k].node.index);
    if (it == index.end()) continue;
    NodeTime& t = out[it->second];
    t.milliseconds += step_ms_[k];
    if (steps_[k].conversion) continue;  // the node's time, not its engine
    if (steps_[k].layout_change) {
      // A graph input's change is the graph's edge, not inside it.
      const bool edge = std::any_of(steps_[k].reads.begin(), steps_[k].reads.end(), [&](int s) {
        return std::find(input_slots_.begin(), input_slots_.end(), root(s)) != input_slots_.end();
      });
      if (!edge) {
        ++t.layout_changes;
        t.layout_milliseconds += step_ms_[k];
      }
      continue;  // the engine is the node's own
    }
    t.column_blocks = std::max(t.column_blocks, steps_[k].column_blocks);
    t.pixel_fold = std::max(t.pixel_fold, steps_[k].pixel_fold);
    if (steps_[k].winograd) t.engine = Engine::kWinograd, t.winograd = steps_[k].winograd_form;
    else if (steps_[k].xnnpack) {
      if (t.engine != Engine::kWinograd) t.engine = Engine::kXnnpack;
    } else if (t.engine == Engine::kNone) t.engine = Engine::kPortable;
  }
  return out;
}

Tensor Runtime::read_out(int s) {
  const Slot& slot = slots_[static_cast<std::size_t>(s)];
  switch (slot.kind) {
    case Kind::kInt: return Tensor::from_vector<std::int64_t>({slot.i}, {});
    case Kind::kFloat: return Tensor::from_vector<double>({slot.f}, {});
    case Kind::kInts: return Tensor::from_vector<std::int64_t>(slot.ints, {static_cast<i64>(slot.ints.size())});
    case Kind::kTensor: break;
    case Kind::kNone: fail(ErrorCode::kUnsupported, "xnnpack: a graph output this backend cannot return");
  }
  if (slot.complex || slot.int64) {  // the pairs are complex64's or int64's bytes (torch's order: such slots never go channels-last)
    Tensor out = Tensor::zeros(slot.complex ? DType::kComplex64 : DType::kInt64, logical(slot));
    if (out.numel()) std::memcpy(out.data(), ptr(s), out.nbytes());
    return out;
  }
  Tensor out = Tensor::zeros(DType::kFloat32, slot.shape);
  if (!out.numel()) return out;
  const float* src = ptr(s);
  if (!slot.channels_last || layouts_agree(slot.shape)) {
    std::memcpy(out.data(), src, out.nbytes());
    return out;
  }
  const std::size_t rank = slot.shape.size();
  std::vector<std::size_t> in_shape, perm{0, rank - 1};
  for (i64 d : physical(slot.shape, true)) in_shape.push_back(static_cast<std::size_t>(d));
  for (std::size_t i = 2; i < rank; ++i) perm.push_back(i - 1);
  check(xnn_run_transpose_nd_x32(src, out.data(), rank, in_shape.data(), perm.data(), 0, pool()), "transposing an output");
  return out;
}

}  // namespace tracegraph::xnnpack
