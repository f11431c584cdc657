// Planning: the steps and slots for the inputs' shapes, then the memory plan (a buffer reused after each value's last use) and its allocation within the budget.
#include "backend_impl.h"

namespace tracegraph::xnnpack {

void XnnpackBackend::Impl::reset_plan() {
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
}

void XnnpackBackend::Impl::plan(const std::vector<Shape>& input_shapes) {
  reset_plan();
  planned_shapes_ = input_shapes;
  value_slot_.assign(max_value_index() + 1, -1);
  for (std::size_t i = 0; i < input_shapes.size(); ++i) {
    const ValueId v = graph_.inputs()[i];
    const int s = new_tensor(input_shapes[i], false);
    value_slot_[v.index] = s;
    input_slots_.push_back(s);
    slots_[s].first_step = -1;  // written before the first step
  }
  for (ValueId v : graph_.constants()) value_slot_[v.index] = constant_slot(v);
  for (NodeId id : graph_.nodes()) {
    current_ = id;
    const Node& n = graph_.node(id);
    auto lower = lowering_for(n);
    if (!lower) fail(ErrorCode::kUnsupported, where(n) + ": op not supported by the XNNPACK backend");
    (this->*lower)(n, states_[id.index]);
  }
  current_ = NodeId{};
  for (ValueId v : graph_.outputs()) {
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

std::size_t XnnpackBackend::Impl::max_value_index() const {
  std::size_t m = 0;
  for (ValueId v : graph_.values()) m = std::max<std::size_t>(m, v.index);
  return m;
}

void XnnpackBackend::Impl::allocate() {
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

}  // namespace tracegraph::xnnpack
