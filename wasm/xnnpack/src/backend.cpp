#include "tracegraph/xnnpack/backend.h"

#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <array>
#include <tuple>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <unistd.h>
#endif

#include "kernels.h"
#include "portable.h"
#include "thread_pool.h"
#include "tracegraph/op_table.h"

namespace tracegraph::xnnpack {
namespace {

using i64 = std::int64_t;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr std::size_t kAlignment = 64;
// XNNPACK may read (never write) a little past the end of its inputs.
constexpr std::size_t kTailBytes = XNN_EXTRA_BYTES + kAlignment;

void init_xnnpack() {
  static std::once_flag once;
  static xnn_status status = xnn_status_success;
  std::call_once(once, [] { status = xnn_initialize(nullptr); });
  if (status != xnn_status_success)
    fail(ErrorCode::kUnsupported, "xnnpack: xnn_initialize failed (status " + std::to_string(status) +
                                      "): this CPU lacks what XNNPACK needs");
}

// Owns one XNNPACK operator.
struct XnnOp {
  xnn_operator_t op = nullptr;
  XnnOp() = default;
  XnnOp(const XnnOp&) = delete;
  XnnOp& operator=(const XnnOp&) = delete;
  XnnOp(XnnOp&& o) noexcept : op(std::exchange(o.op, nullptr)) {}
  ~XnnOp() {
    if (op) xnn_delete_operator(op);
  }
};

struct AlignedDeleter {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t(kAlignment)); }
};
using AlignedFloats = std::unique_ptr<float[], AlignedDeleter>;
AlignedFloats aligned_floats(std::size_t bytes) {
  return AlignedFloats(static_cast<float*>(::operator new[](bytes + kTailBytes, std::align_val_t(kAlignment))));
}

i64 numel(const Shape& shape) { return checked_numel(shape); }
i64 prod(const Shape& shape, std::size_t from, std::size_t to) {
  i64 p = 1;
  for (std::size_t i = from; i < to && i < shape.size(); ++i) p *= shape[i];
  return p;
}
bool spatial_rank(std::size_t rank) { return rank == 4 || rank == 5; }
// XNNPACK takes geometry as uint32_t; the sizes were checked against the shapes.
std::uint32_t u32(i64 v) { return static_cast<std::uint32_t>(v); }

// Channels-last storage of a logical [N, C, S...] tensor is [N, S..., C].
Shape physical(const Shape& logical, bool channels_last) {
  if (!channels_last) return logical;
  Shape p{logical[0]};
  for (std::size_t i = 2; i < logical.size(); ++i) p.push_back(logical[i]);
  p.push_back(logical[1]);
  return p;
}
std::size_t physical_axis(std::size_t axis, std::size_t rank, bool channels_last) {
  if (!channels_last || axis == 0) return axis;
  return axis == 1 ? rank - 1 : axis - 1;
}
// Whether channels-last and plain storage of this shape are the same bytes.
bool layouts_agree(const Shape& s) { return !spatial_rank(s.size()) || s[1] == 1 || prod(s, 2, s.size()) == 1; }

i64 normalize_dim(i64 dim, std::size_t rank, const std::string& where) {
  const i64 r = static_cast<i64>(rank);
  if (dim < -r || dim >= std::max<i64>(r, 1)) fail(ErrorCode::kOutOfRange, where + ": dim " + std::to_string(dim) + " is out of range for rank " + std::to_string(r));
  return dim < 0 ? dim + r : dim;
}

// "relu_" for "aten::relu_" and for torch.export's "aten.relu_.default".
std::string base_op(const std::string& op) { return std::string(op_base(op)); }

}  // namespace

class XnnpackBackend::Impl {
 public:
  explicit Impl(const Options& options) : options_(options) {
    init_xnnpack();
    int threads = options.threads;
    if (threads < 0) fail(ErrorCode::kInvalidArgument, "xnnpack: threads must be 0 (the machine's cores) or more, given " + std::to_string(threads));
    if (threads == 0) threads = detail::default_threads();
    if (!has_threads()) threads = 1;
    if (threads > 1) pool_ = detail::shared_pool(threads);
    threads_ = threads;
  }

  void prepare(const Graph& graph) {
    graph_ = graph;
    states_.clear();
    constant_copies_.clear();
    padded_.clear();
    planned_.reset();
    for (ValueId v : graph_.inputs()) {
      const Value& value = graph_.value(v);
      if (value.dtype && *value.dtype != DType::kFloat32)
        fail(ErrorCode::kUnsupported, "xnnpack: graph input '" + value.name + "' is " + std::string(dtype_name(*value.dtype)) + "; this backend runs float32 graphs");
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
    check_ops();  // every op this backend lacks, in one error, before planning any
    if (shapes.size() == graph_.inputs().size()) plan(shapes);
  }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs) {
    if (inputs.size() != graph_.inputs().size())
      fail(ErrorCode::kInvalidArgument, "xnnpack: the graph takes " + std::to_string(graph_.inputs().size()) + " inputs, given " + std::to_string(inputs.size()));
    std::vector<Shape> shapes;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      const std::string& name = graph_.value(graph_.inputs()[i]).name;
      if (!t.defined()) fail(ErrorCode::kInvalidArgument, "xnnpack: input '" + name + "' is undefined");
      if (t.dtype() != DType::kFloat32) fail(ErrorCode::kDTypeMismatch, "xnnpack: input '" + name + "' is " + std::string(dtype_name(t.dtype())) + ", expected float32");
      if (t.device().type != DeviceType::kCPU) fail(ErrorCode::kInvalidArgument, "xnnpack: input '" + name + "' is on " + t.device().str() + "; this backend runs on the CPU");
      shapes.push_back(t.shape());
    }
    if (!planned_ || *planned_ != shapes) plan(shapes);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const int s = input_slots_[i];
      if (s >= 0 && inputs[i].nbytes()) std::memcpy(ptr(s), inputs[i].data(), inputs[i].nbytes());
    }
    if (options_.profile) {
      std::fill(step_ms_.begin(), step_ms_.end(), 0.0);
      for (std::size_t k = 0; k < steps_.size(); ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        steps_[k].run();
        step_ms_[k] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      }
    } else {
      for (Step& step : steps_) step.run();
    }
    std::vector<Tensor> outputs;
    for (int s : output_slots_) outputs.push_back(read_out(s));
    return outputs;
  }

  int threads() const { return threads_; }

  std::vector<NodeTime> profile() const {
    std::vector<NodeTime> out;
    if (!options_.profile || step_ms_.empty()) return out;
    std::unordered_map<std::uint32_t, std::size_t> index;
    for (NodeId id : graph_.nodes()) {
      index[id.index] = out.size();
      out.push_back({graph_.node(id).name, graph_.node(id).op, 0.0, Engine::kNone});
    }
    for (std::size_t k = 0; k < steps_.size(); ++k) {
      if (!steps_[k].node.valid()) continue;
      auto it = index.find(steps_[k].node.index);
      if (it == index.end()) continue;
      NodeTime& t = out[it->second];
      t.milliseconds += step_ms_[k];
      if (steps_[k].xnnpack) t.engine = Engine::kXnnpack;
      else if (t.engine == Engine::kNone) t.engine = Engine::kPortable;
    }
    return out;
  }

  std::size_t arena_bytes() const { return arena_bytes_; }

  // Options::memory_budget, or what this platform can address.
  std::size_t memory_budget() const {
    if (options_.memory_budget) return options_.memory_budget;
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
    // Natively, the machine's memory: beyond it an allocation may "succeed"
    // (overcommit) and the process dies when it touches the pages.
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
#endif
    return sizeof(void*) == 4 ? (std::size_t{1} << 31) : (std::size_t{1} << 46);
  }
  static std::string shapes_str(const std::vector<Shape>& shapes) {
    std::string s;
    for (const Shape& x : shapes) s += (s.empty() ? "" : ", ") + shape_str(x);
    return s;
  }

 private:
  enum class Kind { kNone, kTensor, kInt, kInts, kFloat };
  struct Slot {
    Kind kind = Kind::kNone;
    Shape shape;                 // logical (torch) shape
    bool channels_last = false;  // storage order for rank 4 and 5
    i64 i = 0;
    double f = 0;
    std::vector<i64> ints;
    const float* constant = nullptr;  // weights and other constants live outside the arena
    int root = -1;                    // the slot whose storage this one uses (itself unless an alias)
    int buffer = -1;
    int first_step = std::numeric_limits<int>::max();
    int last_step = -1;
  };
  struct Step {
    NodeId node;  // invalid for the layout changes at the graph's edges
    std::vector<int> reads, writes;
    std::function<void()> setup;
    std::function<void()> run;
    bool xnnpack = false;  // runs an XNNPACK operator (else a kernel of ours)
  };
  // What outlives a re-plan: XNNPACK operators with packed weights, and the
  // constants a node derived (batch norm's scale and shift, scalar operands).
  struct NodeState {
    std::vector<XnnOp> ops;
    std::vector<std::vector<float>> data;
  };

  // ---- planning -------------------------------------------------------

  void reset_plan() {
    slots_.clear();
    steps_.clear();
    plan_ops_.clear();
    layout_memo_.clear();
    buffers_.clear();
    input_slots_.clear();
    output_slots_.clear();
    workspace_bytes_ = 0;
    workspace_.reset();
    arena_bytes_ = 0;
    planned_.reset();
  }

  // Every node without a lowering, judged by its op alone.
 public:
  static std::vector<UnsupportedNode> unsupported(const Graph& graph) {
    std::vector<UnsupportedNode> out;
    for (NodeId id : graph.nodes()) {
      const Node& n = graph.node(id);
      if (!lowering_for(n)) out.push_back({n.name, n.op, "no XNNPACK lowering for this op"});
    }
    return out;
  }

  static std::vector<std::string> lowered_op_names() {
    std::vector<std::string> out;
    for (const auto& entry : lowering_table()) out.push_back(entry.first);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  // Walks the ops only, before any planning.
  void check_ops() { fail_if_unsupported("xnnpack", unsupported(graph_)); }

  void plan(const std::vector<Shape>& input_shapes) {
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

  std::size_t max_value_index() const {
    std::size_t m = 0;
    for (ValueId v : graph_.values()) m = std::max<std::size_t>(m, v.index);
    return m;
  }

  // Lifetimes from the steps, then a greedy best-fit assignment of buffers
  // that reuses a buffer once the last reader of its value has run.
  void allocate() {
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
    // Storage owners by first step; inputs (-1) first.
    std::vector<int> owners;
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      const Slot& slot = slots_[s];
      if (slot.kind == Kind::kTensor && !slot.constant && slot.root == static_cast<int>(s) && slot.last_step >= slot.first_step)
        owners.push_back(static_cast<int>(s));
    }
    std::stable_sort(owners.begin(), owners.end(), [&](int a, int b) {
      return slots_[static_cast<std::size_t>(a)].first_step < slots_[static_cast<std::size_t>(b)].first_step;
    });
    // The most elements any alias of a storage owner spans, in one pass.
    std::vector<i64> extent(slots_.size(), 1);
    for (const Slot& slot : slots_)
      if (slot.kind == Kind::kTensor && !slot.constant && slot.root >= 0)
        extent[static_cast<std::size_t>(slot.root)] = std::max(extent[static_cast<std::size_t>(slot.root)], numel(slot.shape));
    std::vector<std::size_t> capacity;
    std::multimap<int, int> busy_until;  // last step -> buffer
    std::vector<int> free_buffers;
    for (int s : owners) {
      Slot& slot = slots_[static_cast<std::size_t>(s)];
      for (auto it = busy_until.begin(); it != busy_until.end() && it->first < slot.first_step;) {
        free_buffers.push_back(it->second);
        it = busy_until.erase(it);
      }
      const std::size_t bytes = static_cast<std::size_t>(extent[static_cast<std::size_t>(s)]) * sizeof(float);
      int best = -1;
      for (std::size_t j = 0; j < free_buffers.size(); ++j) {
        const int b = free_buffers[j];
        if (capacity[static_cast<std::size_t>(b)] >= bytes &&
            (best < 0 || capacity[static_cast<std::size_t>(b)] < capacity[static_cast<std::size_t>(free_buffers[static_cast<std::size_t>(best)])]))
          best = static_cast<int>(j);
      }
      if (best < 0 && !free_buffers.empty()) {  // grow the largest free one
        best = 0;
        for (std::size_t j = 1; j < free_buffers.size(); ++j)
          if (capacity[static_cast<std::size_t>(free_buffers[j])] > capacity[static_cast<std::size_t>(free_buffers[static_cast<std::size_t>(best)])]) best = static_cast<int>(j);
      }
      int buffer;
      if (best >= 0) {
        buffer = free_buffers[static_cast<std::size_t>(best)];
        free_buffers.erase(free_buffers.begin() + best);
        capacity[static_cast<std::size_t>(buffer)] = std::max(capacity[static_cast<std::size_t>(buffer)], bytes);
      } else {
        buffer = static_cast<int>(capacity.size());
        capacity.push_back(bytes);
      }
      slot.buffer = buffer;
      busy_until.emplace(slot.last_step, buffer);
    }
    // The bytes the plan needs, against the budget, before allocating any.
    std::size_t needed = workspace_bytes_;
    for (std::size_t c : capacity) needed = needed > SIZE_MAX - c ? SIZE_MAX : needed + c;
    if (needed > memory_budget()) {
      fail(ErrorCode::kOutOfMemory, "xnnpack: running the graph on inputs " + shapes_str(planned_shapes_) + " needs " + std::to_string(needed) +
                                        " bytes of intermediates, over the memory budget of " + std::to_string(memory_budget()) + " bytes");
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

  // The most elements any alias of a storage owner spans.

  int root(int s) const { return slots_[static_cast<std::size_t>(s)].root; }

  float* ptr(int s) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    if (slot.constant) return const_cast<float*>(slot.constant);
    return buffers_[static_cast<std::size_t>(slots_[static_cast<std::size_t>(slot.root)].buffer)].get();
  }

  // ---- slots ----------------------------------------------------------

  int new_slot(Slot slot) {
    slots_.push_back(std::move(slot));
    const int s = static_cast<int>(slots_.size() - 1);
    if (slots_.back().kind == Kind::kTensor && slots_.back().root < 0) slots_.back().root = s;
    return s;
  }
  int new_tensor(Shape shape, bool channels_last) {
    Slot slot;
    slot.kind = Kind::kTensor;
    slot.shape = std::move(shape);
    slot.channels_last = channels_last && spatial_rank(slot.shape.size());
    within_budget(slot.shape);  // one tensor over the budget fails here, before any allocation
    return new_slot(std::move(slot));
  }
  void within_budget(const Shape& shape) const {
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
  int alias(int of, Shape shape, bool channels_last) {
    Slot slot;
    slot.kind = Kind::kTensor;
    slot.shape = std::move(shape);
    slot.channels_last = channels_last && spatial_rank(slot.shape.size());
    slot.constant = slots_[static_cast<std::size_t>(of)].constant;
    slot.root = root(of);
    return new_slot(std::move(slot));
  }
  int int_slot(i64 v) {
    Slot slot;
    slot.kind = Kind::kInt;
    slot.i = v;
    return new_slot(std::move(slot));
  }
  int float_slot(double v) {
    Slot slot;
    slot.kind = Kind::kFloat;
    slot.f = v;
    return new_slot(std::move(slot));
  }
  int ints_slot(std::vector<i64> v) {
    Slot slot;
    slot.kind = Kind::kInts;
    slot.ints = std::move(v);
    return new_slot(std::move(slot));
  }

  int constant_slot(ValueId v) {
    const Value& value = graph_.value(v);
    const Tensor& t = value.data;
    if (t.dtype() == DType::kFloat32) {
      Slot slot;
      slot.kind = Kind::kTensor;
      slot.shape = t.shape();
      slot.constant = t.data_as<float>();
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
    Slot slot;  // a constant no op here reads as a tensor; an error if one tries
    return new_slot(std::move(slot));
  }

  const Slot& slot_of(ValueId v) const {
    const int s = value_slot_[v.index];
    if (s < 0) fail(ErrorCode::kInternal, "xnnpack: value '" + graph_.value(v).name + "' is read before it is computed");
    return slots_[static_cast<std::size_t>(s)];
  }
  int slot_index(ValueId v) const {
    slot_of(v);
    return value_slot_[v.index];
  }
  void define(ValueId v, int s) { value_slot_[v.index] = s; }

  // ---- arguments ------------------------------------------------------

  std::string where(const Node& n) const { return "xnnpack: node '" + n.name + "' (" + n.op + ")"; }
  // The node being lowered, or the graph's edges.
  std::string where_now() const { return current_.valid() ? where(graph_.node(current_)) : std::string("xnnpack: the graph's inputs"); }

  // Arguments: an attribute through the op table's decoder (arg_int, ...), or
  // an input whose value planning knows.
  std::optional<i64> int_arg(const Node& n, std::string_view name) const {
    if (n.attributes.contains(name)) return tracegraph::arg_int(n, name);
    if (auto v = input_for_arg(n, name, std::numeric_limits<std::size_t>::max())) {
      const Slot& s = slot_of(*v);
      if (s.kind == Kind::kInt) return s.i;
      fail(ErrorCode::kUnsupported, where(n) + ": argument '" + std::string(name) + "' is not an integer known before the run");
    }
    return std::nullopt;
  }
  std::optional<double> float_arg(const Node& n, std::string_view name) const {
    if (n.attributes.contains(name)) return tracegraph::arg_float(n, name);
    if (auto v = input_for_arg(n, name, std::numeric_limits<std::size_t>::max())) {
      const Slot& s = slot_of(*v);
      if (s.kind == Kind::kInt) return static_cast<double>(s.i);
      if (s.kind == Kind::kFloat) return s.f;
      fail(ErrorCode::kUnsupported, where(n) + ": argument '" + std::string(name) + "' is not a number known before the run");
    }
    return std::nullopt;
  }
  std::optional<std::vector<i64>> ints_arg(const Node& n, std::string_view name) const {
    if (n.attributes.contains(name)) return tracegraph::arg_ints(n, name);  // int[N] may be written as one int
    if (auto v = input_for_arg(n, name, std::numeric_limits<std::size_t>::max())) {
      const Slot& s = slot_of(*v);
      if (s.kind == Kind::kInts) return s.ints;
      if (s.kind == Kind::kInt) return std::vector<i64>{s.i};
      fail(ErrorCode::kUnsupported, where(n) + ": argument '" + std::string(name) + "' is not a list of integers known before the run");
    }
    return std::nullopt;
  }
  std::optional<std::vector<double>> floats_arg(const Node& n, std::string_view name) const {
    if (const AttributeValue* a = n.attributes.find(name)) {
      if (auto d = std::get_if<std::vector<double>>(a)) return *d;
      if (auto d = std::get_if<std::vector<std::int64_t>>(a)) return std::vector<double>(d->begin(), d->end());
      if (auto d = std::get_if<double>(a)) return std::vector<double>{*d};
    }
    return std::nullopt;
  }
  // Expands a one-element list to `rank` and checks the length.
  std::vector<i64> spatial_arg(const Node& n, std::string_view name, std::size_t rank, i64 fallback) const {
    auto v = ints_arg(n, name).value_or(std::vector<i64>{});
    if (v.empty()) v.assign(rank, fallback);
    if (v.size() == 1) v.assign(rank, v[0]);
    if (v.size() != rank)
      fail(ErrorCode::kSchema, where(n) + ": '" + std::string(name) + "' has " + std::to_string(v.size()) + " entries for " + std::to_string(rank) + " spatial dims");
    return v;
  }

  // The slot of a tensor argument, float32 and computed.
  int tensor_arg(const Node& n, std::string_view name, std::size_t position) {
    auto v = input_for_arg(n, name, position);
    if (!v) fail(ErrorCode::kSchema, where(n) + ": missing tensor argument '" + std::string(name) + "'");
    return tensor_slot(n, *v);
  }
  int tensor_slot(const Node& n, ValueId v) {
    const int s = slot_index(v);
    if (slots_[static_cast<std::size_t>(s)].kind != Kind::kTensor)
      fail(ErrorCode::kUnsupported, where(n) + ": input '" + graph_.value(v).name + "' is not a float32 tensor");
    return s;
  }
  const Tensor& constant_arg(const Node& n, std::string_view name, std::size_t position, bool required) {
    static const Tensor none;
    auto v = input_for_arg(n, name, position);
    if (!v) {
      if (required) fail(ErrorCode::kSchema, where(n) + ": missing argument '" + std::string(name) + "'");
      return none;
    }
    const Value& value = graph_.value(*v);
    if (!value.is_constant())
      fail(ErrorCode::kUnsupported, where(n) + ": '" + std::string(name) + "' must be a constant (weights are packed once, at finalize)");
    if (value.data.dtype() != DType::kFloat32)
      fail(ErrorCode::kUnsupported, where(n) + ": '" + std::string(name) + "' is " + std::string(dtype_name(value.data.dtype())) + ", expected float32");
    return value.data;
  }

  // XNNPACK's status as the SDK's error code.
  static ErrorCode code_of(xnn_status status) {
    switch (status) {
      case xnn_status_invalid_parameter: return ErrorCode::kSchema;
      case xnn_status_unsupported_parameter:
      case xnn_status_unsupported_hardware: return ErrorCode::kUnsupported;
      case xnn_status_out_of_memory: return ErrorCode::kOutOfMemory;
      default: return ErrorCode::kInternal;
    }
  }
  void check(xnn_status status, const Node& n, const char* what) const {
    if (status != xnn_status_success) fail(code_of(status), where(n) + ": XNNPACK " + what + " failed (status " + std::to_string(status) + ")");
  }
  void check(xnn_status status, const char* what) const {
    if (status != xnn_status_success) fail(code_of(status), std::string("xnnpack: ") + what + " failed (status " + std::to_string(status) + ")");
  }

  Step& add_step(std::vector<int> reads, std::vector<int> writes) {
    Step step;
    step.node = current_;
    step.reads = std::move(reads);
    step.writes = std::move(writes);
    steps_.push_back(std::move(step));
    return steps_.back();
  }

  // ---- layout ---------------------------------------------------------

  // The slot holding tensor `s` in the wanted layout: itself when the layouts
  // agree, else a transposed copy (made once per plan, or once for constants).
  int as_layout(int s, bool channels_last) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    const bool want = channels_last && spatial_rank(slot.shape.size());
    if (slot.channels_last == want) return s;
    if (layouts_agree(slot.shape)) return alias(s, slot.shape, want);
    const auto key = std::make_pair(s, want);
    if (auto it = layout_memo_.find(key); it != layout_memo_.end()) return it->second;
    const std::size_t rank = slot.shape.size();
    std::vector<std::size_t> in_shape, perm(rank);
    for (i64 d : physical(slot.shape, slot.channels_last)) in_shape.push_back(static_cast<std::size_t>(d));
    if (want) {  // [N, C, S...] -> [N, S..., C]
      perm[0] = 0;
      for (std::size_t i = 1; i + 1 < rank; ++i) perm[i] = i + 1;
      perm[rank - 1] = 1;
    } else {  // [N, S..., C] -> [N, C, S...]
      perm[0] = 0;
      perm[1] = rank - 1;
      for (std::size_t i = 2; i < rank; ++i) perm[i] = i - 1;
    }
    const int out = transposed(s, in_shape, perm, slot.shape, want);
    layout_memo_[key] = out;
    return out;
  }

  // Slot `s` with its physical dims (`in_shape`) permuted by `perm`, as a slot
  // of logical shape `shape`: for a constant, a transposed copy made once; else
  // a transpose step.
  int transposed(int s, const std::vector<std::size_t>& in_shape, const std::vector<std::size_t>& perm, const Shape& shape,
                 bool channels_last) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    const std::size_t rank = in_shape.size();
    if (slot.constant) {
      auto& copy = constant_copies_[{slot.constant, channels_last, shape}];
      if (copy.empty()) {
        copy.resize(static_cast<std::size_t>(numel(shape)) + kTailBytes / sizeof(float));
        check(xnn_run_transpose_nd_x32(slot.constant, copy.data(), rank, in_shape.data(), perm.data(), 0, nullptr), "transposing a constant");
        padded_.insert(copy.data());
      }
      Slot c;
      c.kind = Kind::kTensor;
      c.shape = shape;
      c.channels_last = channels_last;
      c.constant = copy.data();
      return new_slot(std::move(c));
    }
    const int out = new_tensor(shape, channels_last);
    plan_ops_.emplace_back();
    XnnOp& op = plan_ops_.back();
    check(xnn_create_transpose_nd_x32(0, &op.op), "creating a transpose");
    check(xnn_reshape_transpose_nd_x32(op.op, rank, in_shape.data(), perm.data(), pool()), "reshaping a transpose");
    xnn_operator_t o = op.op;
    Step& step = add_step({s}, {out});
    step.setup = [this, o, s, out] { check(xnn_setup_transpose_nd_x32(o, ptr(s), ptr(out)), "setting up a transpose"); };
    step.xnnpack = true;
    step.run = [this, o] { check(xnn_run_operator(o, pool()), "running a transpose"); };
    return out;
  }

  pthreadpool_t pool() const { return pool_.get(); }

  // A constant XNNPACK reads as an operand, copied once with the tail XNNPACK
  // may read past its end (weights come from a file's buffer, unpadded).
  int padded(int s) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    if (!slot.constant || padded_.count(slot.constant)) return s;
    auto& copy = constant_copies_[{slot.constant, slot.channels_last, slot.shape}];
    if (copy.empty()) {
      const std::size_t n = static_cast<std::size_t>(numel(slot.shape));
      copy.assign(n + kTailBytes / sizeof(float), 0.0f);
      std::memcpy(copy.data(), slot.constant, n * sizeof(float));
      padded_.insert(copy.data());
    }
    Slot c = slot;
    c.constant = copy.data();
    c.root = -1;
    return new_slot(std::move(c));
  }

  // ---- ops ------------------------------------------------------------

  using Lowering = void (Impl::*)(const Node&, NodeState&);

  static const std::unordered_map<std::string, Lowering>& lowering_table() {
    static const std::unordered_map<std::string, Lowering> table = {
        {"_convolution", &Impl::lower_conv},   {"conv2d", &Impl::lower_conv},
        {"conv3d", &Impl::lower_conv},         {"conv_transpose2d", &Impl::lower_conv},
        {"conv_transpose3d", &Impl::lower_conv}, {"batch_norm", &Impl::lower_batch_norm},
        {"relu", &Impl::lower_unary},          {"relu_", &Impl::lower_unary},
        {"sigmoid", &Impl::lower_unary},       {"sigmoid_", &Impl::lower_unary},
        {"tanh", &Impl::lower_unary},          {"tanh_", &Impl::lower_unary},
        {"hardtanh", &Impl::lower_unary},      {"hardtanh_", &Impl::lower_unary},
        {"relu6", &Impl::lower_unary},         {"relu6_", &Impl::lower_unary},
        {"clamp", &Impl::lower_unary},         {"clamp_", &Impl::lower_unary},
        {"hardswish", &Impl::lower_unary},     {"hardswish_", &Impl::lower_unary},
        {"leaky_relu", &Impl::lower_unary},    {"leaky_relu_", &Impl::lower_unary},
        {"gelu", &Impl::lower_unary},          {"elu", &Impl::lower_unary},
        {"add", &Impl::lower_binary},          {"add_", &Impl::lower_binary},
        {"sub", &Impl::lower_binary},          {"sub_", &Impl::lower_binary},
        {"mul", &Impl::lower_binary},          {"mul_", &Impl::lower_binary},
        {"div", &Impl::lower_binary},          {"div_", &Impl::lower_binary},
        {"floor_divide", &Impl::lower_binary}, {"floordiv", &Impl::lower_binary},
        {"remainder", &Impl::lower_binary},    {"fmod", &Impl::lower_binary},
        {"max_pool2d", &Impl::lower_max_pool}, {"max_pool3d", &Impl::lower_max_pool},
        {"avg_pool2d", &Impl::lower_avg_pool}, {"adaptive_avg_pool2d", &Impl::lower_adaptive_pool},
        {"adaptive_avg_pool3d", &Impl::lower_adaptive_pool}, {"mean", &Impl::lower_mean},
        {"adaptive_max_pool2d", &Impl::lower_adaptive_pool}, {"adaptive_max_pool3d", &Impl::lower_adaptive_pool},
        {"linear", &Impl::lower_linear},       {"cat", &Impl::lower_cat},
        {"concat", &Impl::lower_cat},          {"slice", &Impl::lower_slice},
        {"upsample_nearest2d", &Impl::lower_resize}, {"upsample_nearest3d", &Impl::lower_resize},
        {"softmax", &Impl::lower_softmax},     {"flatten", &Impl::lower_view},
        {"view", &Impl::lower_view},           {"reshape", &Impl::lower_view},
        {"dropout", &Impl::lower_identity},    {"feature_dropout", &Impl::lower_identity},
        {"contiguous", &Impl::lower_identity}, {"detach", &Impl::lower_identity},
        {"size", &Impl::lower_size},           {"dim", &Impl::lower_size},
        {"__getitem__", &Impl::lower_getitem}, {"NumToTensor", &Impl::lower_scalar_identity},
        {"Int", &Impl::lower_scalar_identity}, {"Float", &Impl::lower_scalar_identity},
        {"ScalarImplicit", &Impl::lower_scalar_identity},
        // Core ATen's names, as torch.export programs spell them.
        {"convolution", &Impl::lower_conv},    {"_native_batch_norm_legit_no_training", &Impl::lower_batch_norm},
        {"native_batch_norm", &Impl::lower_batch_norm},
        {"max_pool2d_with_indices", &Impl::lower_max_pool}, {"max_pool3d_with_indices", &Impl::lower_max_pool},
        {"_softmax", &Impl::lower_softmax},    {"slice_copy", &Impl::lower_slice},
        {"view_copy", &Impl::lower_view},      {"alias", &Impl::lower_identity},
        {"permute", &Impl::lower_permute},     {"permute_copy", &Impl::lower_permute},
        {"transpose", &Impl::lower_permute},   {"t", &Impl::lower_permute},
        {"addmm", &Impl::lower_addmm},
        // Portable kernels (portable.h).
        {"hardsigmoid", &Impl::lower_pointwise}, {"hardsigmoid_", &Impl::lower_pointwise},
        {"silu", &Impl::lower_pointwise},      {"silu_", &Impl::lower_pointwise},
        {"mish", &Impl::lower_pointwise},      {"exp", &Impl::lower_pointwise},
        {"log", &Impl::lower_pointwise},       {"sqrt", &Impl::lower_pointwise},
        {"rsqrt", &Impl::lower_pointwise},     {"neg", &Impl::lower_pointwise},
        {"abs", &Impl::lower_pointwise},       {"square", &Impl::lower_pointwise},
        {"erf", &Impl::lower_pointwise},       {"pow", &Impl::lower_pointwise},
        {"rsub", &Impl::lower_pointwise},      {"narrow", &Impl::lower_narrow},
        {"chunk", &Impl::lower_chunk},         {"split", &Impl::lower_chunk},
        {"select", &Impl::lower_select},       {"unsqueeze", &Impl::lower_reshape_dims},
        {"squeeze", &Impl::lower_reshape_dims}, {"expand", &Impl::lower_expand},
        {"expand_as", &Impl::lower_expand},    {"ListConstruct", &Impl::lower_list},
        {"pad", &Impl::lower_pad},             {"constant_pad_nd", &Impl::lower_pad},
        {"reflection_pad1d", &Impl::lower_pad}, {"reflection_pad2d", &Impl::lower_pad},
        {"reflection_pad3d", &Impl::lower_pad}, {"replication_pad1d", &Impl::lower_pad},
        {"replication_pad2d", &Impl::lower_pad}, {"replication_pad3d", &Impl::lower_pad},
        {"upsample_bilinear2d", &Impl::lower_resize_portable}, {"upsample_trilinear3d", &Impl::lower_resize_portable},
        {"upsample_linear1d", &Impl::lower_resize_portable}, {"upsample_nearest1d", &Impl::lower_resize_portable},
        {"upsample_bicubic2d", &Impl::lower_resize_portable},
        {"group_norm", &Impl::lower_norm},     {"instance_norm", &Impl::lower_norm},
        {"layer_norm", &Impl::lower_norm},     {"conv1d", &Impl::lower_conv1d},
        {"max_pool1d", &Impl::lower_pool1d},   {"avg_pool1d", &Impl::lower_pool1d},
        {"adaptive_avg_pool1d", &Impl::lower_pool1d}, {"adaptive_max_pool1d", &Impl::lower_pool1d},
        {"prelu", &Impl::lower_prelu},         {"slice_scatter", &Impl::lower_slice_scatter},
        {"matmul", &Impl::lower_matmul},       {"mm", &Impl::lower_matmul},
        {"bmm", &Impl::lower_matmul},          {"_native_multi_head_attention", &Impl::lower_attention},
        {"roll", &Impl::lower_roll},           {"masked_fill", &Impl::lower_masked_fill},
        {"einsum", &Impl::lower_einsum},
        {"new_zeros", &Impl::lower_full},      {"new_ones", &Impl::lower_full},
        {"new_full", &Impl::lower_full},       {"zeros_like", &Impl::lower_full},
        {"ones_like", &Impl::lower_full},      {"full_like", &Impl::lower_full},
        {"fill", &Impl::lower_full},           {"eq", &Impl::lower_compare},
        {"ne", &Impl::lower_compare},          {"lt", &Impl::lower_compare},
        {"le", &Impl::lower_compare},          {"gt", &Impl::lower_compare},
        {"ge", &Impl::lower_compare},
    };
    return table;
  }

  static Lowering lowering_for(const Node& n) {
    const auto& table = lowering_table();
    const auto name = parse_op_name(n.op);
    if (!name || (name->qualified.rfind("aten::", 0) != 0 && name->qualified.rfind("prim::", 0) != 0)) return nullptr;
    auto it = table.find(base_op(n.op));
    return it == table.end() ? nullptr : it->second;
  }

  // The fused activation a transform put on a node, as XNNPACK output bounds
  // where it is a clamp, else as a step after the op.
  struct Fused {
    float min = -kInf, max = kInf;
    std::optional<xnn_unary_operator> post;
    std::optional<portable::Unary> portable_post;  // an activation XNNPACK has no operator for
  };
  Fused fused_of(const Node& n) const {
    Fused f;
    const auto kind = n.attributes.get_string("fused_activation");
    if (!kind) return f;
    if (*kind == "relu") f.min = 0;
    else if (*kind == "clip") {
      f.min = static_cast<float>(n.attributes.get_float("fused_min").value_or(-kInf));
      f.max = static_cast<float>(n.attributes.get_float("fused_max").value_or(kInf));
    } else if (*kind == "sigmoid") f.post = xnn_unary_sigmoid;
    else if (*kind == "tanh") f.post = xnn_unary_tanh;
    else if (*kind == "hardswish") f.post = xnn_unary_hardswish;
    else if (*kind == "silu") f.portable_post = portable::Unary::kSilu;
    else if (*kind == "hardsigmoid") f.portable_post = portable::Unary::kHardsigmoid;
    else fail(ErrorCode::kUnsupported, where(n) + ": fused activation '" + *kind + "' is not one this backend runs");
    return f;
  }

  // An elementwise XNNPACK op over a whole tensor, in place when in == out.
  void unary_step(const Node& n, xnn_operator_t op, int in, int out) {
    const std::size_t count = static_cast<std::size_t>(numel(slots_[static_cast<std::size_t>(in)].shape));
    check(xnn_reshape_unary_elementwise_nc(op, count, 1, 1, 1, pool()), n, "reshaping an elementwise op");
    Step& step = add_step({in}, {out});
    step.setup = [this, op, in, out, &n] { check(xnn_setup_unary_elementwise_nc(op, ptr(in), ptr(out)), n, "setting up an elementwise op"); };
    step.xnnpack = true;
    step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running an elementwise op"); };
  }
  xnn_operator_t make_unary(const Node& n, NodeState& st, std::size_t index, xnn_unary_operator type,
                            const xnn_unary_params* params) {
    while (st.ops.size() <= index) st.ops.emplace_back();
    XnnOp& op = st.ops[index];
    if (!op.op) check(xnn_create_unary_elementwise_nc(type, xnn_datatype_fp32, xnn_datatype_fp32, params, nullptr, nullptr, 0, &op.op), n, "creating an elementwise op");
    return op.op;
  }
  void post_activation(const Node& n, NodeState& st, std::size_t index, const Fused& f, int out) {
    if (f.portable_post) portable_post(*f.portable_post, out);
    if (!f.post) return;
    unary_step(n, make_unary(n, st, index, *f.post, nullptr), out, out);
  }
  // A clamp after an op that has no output bounds of its own.
  void post_clamp(const Node& n, NodeState& st, std::size_t index, const Fused& f, int out) {
    if (f.min == -kInf && f.max == kInf) return;
    xnn_unary_params p{};
    p.clamp.min = f.min;
    p.clamp.max = f.max;
    unary_step(n, make_unary(n, st, index, xnn_unary_clamp, &p), out, out);
  }

  void lower_conv(const Node& n, NodeState& st) {
    const std::string base = base_op(n.op);
    const Tensor& w = constant_arg(n, "weight", 1, true);
    const Tensor& b = constant_arg(n, "bias", 2, false);
    const bool transposed = base == "_convolution" || base == "convolution" ? int_arg(n, "transposed").value_or(0) != 0
                                                                            : base.rfind("conv_transpose", 0) == 0;
    if (w.dim() == 3 && !transposed) return lower_conv1d(n, st);
    if (w.dim() != 4 && w.dim() != 5) fail(ErrorCode::kUnsupported, where(n) + ": only 1D, 2D and 3D convolutions and 2D and 3D transposed ones run here (weight " + shape_str(w.shape()) + ")");
    const std::size_t rank = static_cast<std::size_t>(w.dim() - 2);
    const int x = as_layout(tensor_arg(n, "input", 0), true);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    if (xs.size() != rank + 2) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " for a " + std::to_string(rank) + "D convolution (unbatched input is not supported)");
    if (const AttributeValue* p = n.attributes.find("padding"); p && std::holds_alternative<std::string>(*p))
      fail(ErrorCode::kUnsupported, where(n) + ": padding '" + std::get<std::string>(*p) + "' (give explicit padding)");
    const auto stride = spatial_arg(n, "stride", rank, 1);
    const auto padding = spatial_arg(n, "padding", rank, 0);
    const auto dilation = spatial_arg(n, "dilation", rank, 1);
    const auto output_padding = spatial_arg(n, "output_padding", rank, 0);
    const i64 groups = int_arg(n, "groups").value_or(1);
    const i64 in_channels = xs[1];
    if (groups <= 0 || in_channels % groups) fail(ErrorCode::kShapeMismatch, where(n) + ": " + std::to_string(in_channels) + " input channels in " + std::to_string(groups) + " groups");
    const Fused fused = fused_of(n);
    const Shape& ws = w.shape();
    if (!transposed) {
      const i64 cg = in_channels / groups, out_channels = ws[0], cog = out_channels / groups;
      if (ws[1] != cg || out_channels % groups) fail(ErrorCode::kShapeMismatch, where(n) + ": weight " + shape_str(ws) + " for " + std::to_string(in_channels) + " input channels in " + std::to_string(groups) + " groups");
      if (b.defined() && b.numel() != out_channels) fail(ErrorCode::kShapeMismatch, where(n) + ": bias " + shape_str(b.shape()) + " for " + std::to_string(out_channels) + " output channels");
      const i64 kd = rank == 3 ? ws[2] : 1;
      const i64 kh = ws[rank == 3 ? 3 : 2], kw = ws[rank == 3 ? 4 : 3];
      const kernels::Window depth{kd, rank == 3 ? stride[0] : 1, rank == 3 ? padding[0] : 0, rank == 3 ? dilation[0] : 1};
      const std::size_t h = rank == 3 ? 1 : 0;  // index of H among the spatial args
      if (st.ops.empty()) {
        // XNNPACK's kernel layout [g][o][kh][kw][kd*cg + c] from torch's [g*cog + o][c][kd][kh][kw].
        std::vector<float> packed(static_cast<std::size_t>(w.numel()));
        const float* src = w.data_as<float>();
        const i64 ic = kd * cg;
        for (i64 o = 0; o < out_channels; ++o)
          for (i64 c = 0; c < cg; ++c)
            for (i64 d = 0; d < kd; ++d)
              for (i64 y = 0; y < kh; ++y)
                for (i64 x2 = 0; x2 < kw; ++x2)
                  packed[static_cast<std::size_t>(((o * kh + y) * kw + x2) * ic + d * cg + c)] = src[(((o * cg + c) * kd + d) * kh + y) * kw + x2];
        st.ops.emplace_back();
        check(xnn_create_convolution2d_nhwc_f32(
                  u32(padding[h]), u32(padding[h + 1]),
                  u32(padding[h]), u32(padding[h + 1]),
                  u32(kh), u32(kw), u32(stride[h]),
                  u32(stride[h + 1]), u32(dilation[h]),
                  u32(dilation[h + 1]), u32(groups),
                  static_cast<std::size_t>(ic), static_cast<std::size_t>(cog), static_cast<std::size_t>(ic * groups),
                  static_cast<std::size_t>(out_channels), packed.data(), b.defined() ? b.data_as<float>() : nullptr,
                  fused.min, fused.max, 0, nullptr, nullptr, &st.ops[0].op),
              n, "creating a convolution");
      }
      xnn_operator_t op = st.ops[0].op;
      i64 batch = xs[0], out_depth = 1;
      int conv_in = x;
      if (rank == 3) {
        out_depth = (xs[2] + 2 * depth.padding - depth.dilation * (kd - 1) - 1) / depth.stride + 1;
        if (out_depth <= 0) fail(ErrorCode::kShapeMismatch, where(n) + ": input depth " + std::to_string(xs[2]) + " is smaller than the kernel");
        batch = xs[0] * out_depth;
        const bool plain_slices = kd == 1 && depth.stride == 1 && depth.padding == 0;
        if (!plain_slices) {
          const int u = new_tensor(Shape{batch, kd * in_channels, xs[3], xs[4]}, true);
          const i64 nb = xs[0], d_in = xs[2], pixels = xs[3] * xs[4];
          Step& step = add_step({x}, {u});
          step.run = [this, x, u, nb, d_in, out_depth, pixels, groups, cg, depth] {
            kernels::unfold_depth(ptr(x), ptr(u), nb, d_in, out_depth, pixels, groups, cg, depth);
          };
          conv_in = u;
        }
      }
      const i64 in_h = xs[rank == 3 ? 3 : 2], in_w = xs[rank == 3 ? 4 : 3];
      // XNNPACK's sizes are unsigned: a window larger than the padded input would wrap.
      for (const auto& [size, k, axis] : {std::tuple{in_h, kh, h}, std::tuple{in_w, kw, h + 1}}) {
        if (size + 2 * padding[axis] < dilation[axis] * (k - 1) + 1)
          fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " is smaller than the kernel " + shape_str(ws) +
                                              " (padded size " + std::to_string(size + 2 * padding[axis]) + ")");
      }
      // The output against the budget before XNNPACK sizes its buffers for it.
      const i64 expect_h = (in_h + 2 * padding[h] - dilation[h] * (kh - 1) - 1) / stride[h] + 1;
      const i64 expect_w = (in_w + 2 * padding[h + 1] - dilation[h + 1] * (kw - 1) - 1) / stride[h + 1] + 1;
      within_budget(Shape{batch, out_channels, expect_h, expect_w});
      std::size_t ws_size = 0, ws_align = 0, oh = 0, ow = 0;
      check(xnn_reshape_convolution2d_nhwc_f32(op, static_cast<std::size_t>(batch), static_cast<std::size_t>(in_h),
                                               static_cast<std::size_t>(in_w), &ws_size, &ws_align, &oh, &ow, pool()),
            n, "reshaping a convolution");
      workspace_bytes_ = std::max(workspace_bytes_, ws_size);
      Shape out_shape = rank == 3 ? Shape{xs[0], out_channels, out_depth, static_cast<i64>(oh), static_cast<i64>(ow)}
                                  : Shape{xs[0], out_channels, static_cast<i64>(oh), static_cast<i64>(ow)};
      const int out = new_tensor(std::move(out_shape), true);
      Step& step = add_step({conv_in}, {out});
      step.setup = [this, op, conv_in, out, &n] { check(xnn_setup_convolution2d_nhwc_f32(op, workspace_.get(), ptr(conv_in), ptr(out)), n, "setting up a convolution"); };
      step.xnnpack = true;
      step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running a convolution"); };
      post_activation(n, st, 1, fused, out);
      define(n.outputs[0], out);
      return;
    }
    // Transposed: torch's weight is [g*cg][cog][k...].
    const i64 cg = in_channels / groups, cog = ws[1], out_channels = cog * groups;
    if (ws[0] != in_channels) fail(ErrorCode::kShapeMismatch, where(n) + ": weight " + shape_str(ws) + " for " + std::to_string(in_channels) + " input channels");
    if (b.defined() && b.numel() != out_channels) fail(ErrorCode::kShapeMismatch, where(n) + ": bias " + shape_str(b.shape()) + " for " + std::to_string(out_channels) + " output channels");
    const i64 kd = rank == 3 ? ws[2] : 1;
    const i64 kh = ws[rank == 3 ? 3 : 2], kw = ws[rank == 3 ? 4 : 3];
    const std::size_t h = rank == 3 ? 1 : 0;
    const kernels::Window depth{kd, rank == 3 ? stride[0] : 1, rank == 3 ? padding[0] : 0, rank == 3 ? dilation[0] : 1};
    // In 3D the depth taps become stacked output channels [g][kd][cog], and a
    // scatter puts each in its output slice, adding the bias.
    const bool bias_in_op = rank == 2;
    if (st.ops.empty()) {
      const i64 group_out = kd * cog;
      std::vector<float> packed(static_cast<std::size_t>(w.numel()));
      const float* src = w.data_as<float>();
      for (i64 g = 0; g < groups; ++g)
        for (i64 c = 0; c < cg; ++c)
          for (i64 o = 0; o < cog; ++o)
            for (i64 d = 0; d < kd; ++d)
              for (i64 y = 0; y < kh; ++y)
                for (i64 x2 = 0; x2 < kw; ++x2)
                  packed[static_cast<std::size_t>((((g * group_out + d * cog + o) * kh + y) * kw + x2) * cg + c)] =
                      src[((((g * cg + c) * cog + o) * kd + d) * kh + y) * kw + x2];
      st.ops.emplace_back();
      check(xnn_create_deconvolution2d_nhwc_f32(
                u32(padding[h]), u32(padding[h + 1]),
                u32(padding[h]), u32(padding[h + 1]),
                u32(kh), u32(kw), u32(stride[h]),
                u32(stride[h + 1]), u32(dilation[h]),
                u32(dilation[h + 1]), u32(groups), static_cast<std::size_t>(cg),
                static_cast<std::size_t>(group_out), static_cast<std::size_t>(in_channels),
                static_cast<std::size_t>(group_out * groups), packed.data(),
                bias_in_op && b.defined() ? b.data_as<float>() : nullptr, bias_in_op ? fused.min : -kInf,
                bias_in_op ? fused.max : kInf, 0, nullptr, nullptr, &st.ops[0].op),
            n, "creating a transposed convolution");
    }
    xnn_operator_t op = st.ops[0].op;
    const i64 batch = rank == 3 ? xs[0] * xs[2] : xs[0];
    {  // the output against the budget before XNNPACK sizes its buffers for it
      const i64 in_h = xs[rank == 3 ? 3 : 2], in_w = xs[rank == 3 ? 4 : 3];
      const i64 expect_h = (in_h - 1) * stride[h] - 2 * padding[h] + dilation[h] * (kh - 1) + output_padding[h] + 1;
      const i64 expect_w = (in_w - 1) * stride[h + 1] - 2 * padding[h + 1] + dilation[h + 1] * (kw - 1) + output_padding[h + 1] + 1;
      within_budget(Shape{batch, kd * out_channels, std::max<i64>(expect_h, 0), std::max<i64>(expect_w, 0)});
    }
    std::size_t oh = 0, ow = 0;
    check(xnn_reshape_deconvolution2d_nhwc_f32(op, static_cast<std::size_t>(batch), static_cast<std::size_t>(xs[rank == 3 ? 3 : 2]),
                                               static_cast<std::size_t>(xs[rank == 3 ? 4 : 3]), u32(output_padding[h]),
                                               u32(output_padding[h + 1]), &oh, &ow, pool()),
          n, "reshaping a transposed convolution");
    if (rank == 2) {
      const int out = new_tensor(Shape{xs[0], out_channels, static_cast<i64>(oh), static_cast<i64>(ow)}, true);
      Step& step = add_step({x}, {out});
      step.setup = [this, op, x, out, &n] { check(xnn_setup_deconvolution2d_nhwc_f32(op, ptr(x), ptr(out)), n, "setting up a transposed convolution"); };
      step.xnnpack = true;
      step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running a transposed convolution"); };
      post_activation(n, st, 1, fused, out);
      define(n.outputs[0], out);
      return;
    }
    const i64 out_depth = (xs[2] - 1) * depth.stride - 2 * depth.padding + depth.dilation * (kd - 1) + output_padding[0] + 1;
    if (out_depth <= 0) fail(ErrorCode::kShapeMismatch, where(n) + ": output depth " + std::to_string(out_depth));
    const int y = new_tensor(Shape{batch, kd * out_channels, static_cast<i64>(oh), static_cast<i64>(ow)}, true);
    const int out = new_tensor(Shape{xs[0], out_channels, out_depth, static_cast<i64>(oh), static_cast<i64>(ow)}, true);
    Step& step = add_step({x}, {y});
    step.setup = [this, op, x, y, &n] { check(xnn_setup_deconvolution2d_nhwc_f32(op, ptr(x), ptr(y)), n, "setting up a transposed convolution"); };
    step.xnnpack = true;
    step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running a transposed convolution"); };
    const float* bias = b.defined() ? b.data_as<float>() : nullptr;
    const i64 nb = xs[0], d_in = xs[2], pixels = static_cast<i64>(oh * ow);
    Step& scatter = add_step({y}, {out});
    scatter.run = [this, y, out, bias, nb, d_in, out_depth, pixels, groups, cog, depth] {
      kernels::scatter_depth(ptr(y), ptr(out), bias, nb, d_in, out_depth, pixels, groups, cog, depth);
    };
    post_clamp(n, st, 1, fused, out);
    post_activation(n, st, 2, fused, out);
    define(n.outputs[0], out);
  }

  void lower_batch_norm(const Node& n, NodeState& st) {
    const int x0 = tensor_arg(n, "input", 0);
    const Shape xs = slots_[static_cast<std::size_t>(x0)].shape;
    if (xs.size() < 2) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " has no channel dim");
    if (int_arg(n, "training").value_or(0)) fail(ErrorCode::kUnsupported, where(n) + ": batch norm in training mode");
    const i64 channels = xs[1];
    if (st.data.empty()) {
      const Tensor& w = constant_arg(n, "weight", 1, false);
      const Tensor& b = constant_arg(n, "bias", 2, false);
      const Tensor& mean = constant_arg(n, "running_mean", 3, true);
      const Tensor& var = constant_arg(n, "running_var", 4, true);
      const double eps = float_arg(n, "eps").value_or(1e-5);
      for (const Tensor* t : {&w, &b, &mean, &var})
        if (t->defined() && t->numel() != channels) fail(ErrorCode::kShapeMismatch, where(n) + ": a parameter of " + std::to_string(t->numel()) + " elements for " + std::to_string(channels) + " channels");
      std::vector<float> scale(static_cast<std::size_t>(channels)), shift(static_cast<std::size_t>(channels));
      for (i64 c = 0; c < channels; ++c) {
        const double s = (w.defined() ? w.data_as<float>()[c] : 1.0) / std::sqrt(static_cast<double>(var.data_as<float>()[c]) + eps);
        scale[static_cast<std::size_t>(c)] = static_cast<float>(s);
        shift[static_cast<std::size_t>(c)] = static_cast<float>((b.defined() ? b.data_as<float>()[c] : 0.0) - mean.data_as<float>()[c] * s);
      }
      st.data = {std::move(scale), std::move(shift)};
    }
    const float* scale = st.data[0].data();
    const float* shift = st.data[1].data();
    const bool channels_last = spatial_rank(xs.size()) || xs.size() == 2;
    const int x = as_layout(x0, true);
    const int out = new_tensor(xs, channels_last);
    Step& step = add_step({x}, {out});
    if (channels_last) {
      const i64 pixels = numel(xs) / std::max<i64>(channels, 1);
      step.run = [this, x, out, scale, shift, pixels, channels] { kernels::affine_channels_last(ptr(x), ptr(out), scale, shift, pixels, channels); };
    } else {
      const i64 outer = xs[0], inner = prod(xs, 2, xs.size());
      step.run = [this, x, out, scale, shift, outer, channels, inner] { kernels::affine_channels_first(ptr(x), ptr(out), scale, shift, outer, channels, inner); };
    }
    define(n.outputs[0], out);
  }

  void lower_unary(const Node& n, NodeState& st) {
    std::string base = base_op(n.op);
    const bool inplace_op = base.back() == '_';
    if (inplace_op) base.pop_back();
    const int x = tensor_arg(n, "self", 0);
    const bool inplace = inplace_op && !slots_[static_cast<std::size_t>(x)].constant;  // never write into weights
    xnn_unary_params params{};
    xnn_unary_operator type = xnn_unary_invalid;
    const xnn_unary_params* p = nullptr;
    auto clamp = [&](double lo, double hi) {
      type = xnn_unary_clamp;
      params.clamp.min = static_cast<float>(lo);
      params.clamp.max = static_cast<float>(hi);
      p = &params;
    };
    if (base == "relu") clamp(0, kInf);
    else if (base == "relu6") clamp(0, 6);
    else if (base == "hardtanh") clamp(float_arg(n, "min_val").value_or(-1), float_arg(n, "max_val").value_or(1));
    else if (base == "clamp") clamp(float_arg(n, "min").value_or(-kInf), float_arg(n, "max").value_or(kInf));
    else if (base == "sigmoid") type = xnn_unary_sigmoid;
    else if (base == "tanh") type = xnn_unary_tanh;
    else if (base == "hardswish") type = xnn_unary_hardswish;
    else if (base == "leaky_relu") {
      type = xnn_unary_leaky_relu;
      params.leaky_relu.negative_slope = static_cast<float>(float_arg(n, "negative_slope").value_or(0.01));
      p = &params;
    } else if (base == "gelu") {
      const std::string approximate = n.attributes.get_string("approximate").value_or("none");
      if (approximate == "tanh") {
        const Slot xs = slots_[static_cast<std::size_t>(x)];  // a copy: new_tensor may move the slots
        const int out = inplace ? x : new_tensor(xs.shape, xs.channels_last);
        const i64 count = numel(xs.shape);
        Step& step = add_step({x}, {out});
        step.run = [this, x, out, count] { portable::unary(portable::Unary::kGeluTanh, ptr(x), ptr(out), count); };
        return define(n.outputs[0], out);
      }
      if (approximate != "none") fail(ErrorCode::kSchema, where(n) + ": gelu approximate='" + approximate + "'");
      type = xnn_unary_gelu;
    } else if (base == "elu") {
      if (float_arg(n, "scale").value_or(1) != 1 || float_arg(n, "input_scale").value_or(1) != 1) fail(ErrorCode::kUnsupported, where(n) + ": elu with scale");
      type = xnn_unary_elu;
      params.elu.alpha = static_cast<float>(float_arg(n, "alpha").value_or(1));
      p = &params;
    } else {
      fail(ErrorCode::kUnsupported, where(n) + ": op not supported by the XNNPACK backend");
    }
    const Slot& xs = slots_[static_cast<std::size_t>(x)];
    const int out = inplace ? x : new_tensor(xs.shape, xs.channels_last);
    unary_step(n, make_unary(n, st, 0, type, p), x, out);
    define(n.outputs[0], out);
  }

  // add/sub/mul/div: scalars are computed now; tensors with numpy
  // broadcasting by XNNPACK, in the layout of the larger operand.
  void lower_binary(const Node& n, NodeState& st) {
    std::string base = base_op(n.op);
    bool inplace = base.back() == '_';
    if (inplace) base.pop_back();
    std::optional<ValueId> a = input_for_arg(n, "self", 0);
    if (!a) a = input_for_arg(n, "a", 0);
    std::optional<ValueId> b = input_for_arg(n, "other", 1);
    if (!b) b = input_for_arg(n, "b", 1);
    if (!a) fail(ErrorCode::kSchema, where(n) + ": missing its first operand");
    const double alpha = float_arg(n, "alpha").value_or(1.0);
    if (n.attributes.get_string("rounding_mode")) fail(ErrorCode::kUnsupported, where(n) + ": div with a rounding mode");
    const Slot& sa = slot_of(*a);
    // The second operand: a value, or a scalar attribute ("other" or "b").
    std::optional<double> b_number;
    bool b_is_int = false;
    if (b) {
      const Slot& sb = slot_of(*b);
      if (sb.kind == Kind::kInt) b_number = static_cast<double>(sb.i), b_is_int = true;
      else if (sb.kind == Kind::kFloat) b_number = sb.f;
    } else {
      const AttributeValue* attr = n.attributes.find("other");
      if (!attr) attr = n.attributes.find("b");
      if (!attr) fail(ErrorCode::kSchema, where(n) + ": missing its second operand");
      if (auto i = std::get_if<std::int64_t>(attr)) b_number = static_cast<double>(*i), b_is_int = true;
      else if (auto d = std::get_if<double>(attr)) b_number = *d;
      else fail(ErrorCode::kUnsupported, where(n) + ": second operand of kind " + std::string(attribute_kind(*attr)));
    }
    if (sa.kind == Kind::kInt || sa.kind == Kind::kFloat) {
      if (!b_number) fail(ErrorCode::kUnsupported, where(n) + ": a number and a tensor in that order");
      const bool ints = sa.kind == Kind::kInt && b_is_int;
      const double x = sa.kind == Kind::kInt ? static_cast<double>(sa.i) : sa.f, y = *b_number;
      auto int_result = [&](i64 v) { define(n.outputs[0], int_slot(v)); };
      if (base == "add" || base == "sub") {
        const double sign = base == "add" ? 1.0 : -1.0;
        if (ints && alpha == 1) int_result(sa.i + static_cast<i64>(sign) * static_cast<i64>(y));
        else define(n.outputs[0], float_slot(x + sign * alpha * y));
      } else if (base == "mul") {
        if (ints) int_result(sa.i * static_cast<i64>(y));
        else define(n.outputs[0], float_slot(x * y));
      } else if (base == "div") {
        if (y == 0) fail(ErrorCode::kInvalidArgument, where(n) + ": division by zero");
        define(n.outputs[0], float_slot(x / y));
      } else if (base == "remainder" || base == "fmod") {  // Python's modulo (remainder) or C's (fmod)
        if (y == 0) fail(ErrorCode::kInvalidArgument, where(n) + ": modulo by zero");
        if (ints) {
          const i64 d = static_cast<i64>(y), r = sa.i % d;
          int_result(base == "remainder" && r != 0 && ((r < 0) != (d < 0)) ? r + d : r);
        } else {
          const double r = std::fmod(x, y);
          define(n.outputs[0], float_slot(base == "remainder" && r != 0 && ((r < 0) != (y < 0)) ? r + y : r));
        }
      } else {  // floor_divide, floordiv
        if (y == 0) fail(ErrorCode::kInvalidArgument, where(n) + ": division by zero");
        if (ints) {
          const i64 q = sa.i / static_cast<i64>(y), r = sa.i % static_cast<i64>(y);
          int_result((r != 0 && ((r < 0) != (static_cast<i64>(y) < 0))) ? q - 1 : q);
        } else {
          define(n.outputs[0], float_slot(std::floor(x / y)));
        }
      }
      return;
    }
    if (sa.kind != Kind::kTensor) fail(ErrorCode::kUnsupported, where(n) + ": operand is not a float32 tensor");
    if (base == "floor_divide" || base == "floordiv" || base == "remainder" || base == "fmod")
      fail(ErrorCode::kUnsupported, where(n) + ": " + base + " of tensors");
    int x = slot_index(*a);
    if (slots_[static_cast<std::size_t>(x)].constant) inplace = false;  // never write into weights
    int y;
    if (b_number) {
      if (st.data.empty()) st.data.push_back({static_cast<float>(*b_number * (base == "add" || base == "sub" ? alpha : 1.0)), 0, 0, 0});
      Slot c;
      c.kind = Kind::kTensor;
      c.constant = st.data[0].data();
      y = new_slot(std::move(c));
    } else {
      y = tensor_slot(n, *b);
      if (alpha != 1) fail(ErrorCode::kUnsupported, where(n) + ": alpha " + std::to_string(alpha) + " with a tensor operand");
    }
    // Broadcast logical shapes, then put both in the output's layout.
    const Shape ax = slots_[static_cast<std::size_t>(x)].shape, by = slots_[static_cast<std::size_t>(y)].shape;
    const std::size_t rank = std::max(ax.size(), by.size());
    Shape out_shape(rank);
    auto dim_of = [&](const Shape& s, std::size_t i) { return i + s.size() >= rank ? s[i + s.size() - rank] : i64{1}; };
    for (std::size_t i = 0; i < rank; ++i) {
      const i64 p = dim_of(ax, i), q = dim_of(by, i);
      if (p != q && p != 1 && q != 1) fail(ErrorCode::kShapeMismatch, where(n) + ": shapes " + shape_str(ax) + " and " + shape_str(by) + " do not broadcast");
      out_shape[i] = p == 1 ? q : p;
    }
    if (inplace && out_shape != ax) fail(ErrorCode::kShapeMismatch, where(n) + ": in-place result " + shape_str(out_shape) + " does not fit " + shape_str(ax));
    const bool channels_last = spatial_rank(rank) && (slots_[static_cast<std::size_t>(x)].channels_last || slots_[static_cast<std::size_t>(y)].channels_last);
    auto operand = [&](int s) {
      const Shape shape = slots_[static_cast<std::size_t>(s)].shape;
      if (numel(shape) == 1) return std::make_pair(s, Shape{1});
      if (!channels_last) return std::make_pair(as_layout(s, false), shape);
      Shape full(rank - shape.size(), 1);
      full.insert(full.end(), shape.begin(), shape.end());
      const int expanded = shape.size() == rank ? s : alias(as_layout(s, false), full, false);
      return std::make_pair(as_layout(expanded, true), physical(full, true));
    };
    const auto x_operand = operand(x), y_operand = operand(y);
    const int xa = padded(x_operand.first), yb = padded(y_operand.first);
    const Shape& xshape = x_operand.second;
    const Shape& yshape = y_operand.second;
    if (inplace && xa != x) fail(ErrorCode::kUnsupported, where(n) + ": in-place op on a tensor whose layout must change");
    const int out = inplace ? x : new_tensor(out_shape, channels_last);
    if (st.ops.empty()) {
      st.ops.emplace_back();
      const xnn_binary_operator type = base == "add" ? xnn_binary_add : base == "sub" ? xnn_binary_subtract : base == "mul" ? xnn_binary_multiply : xnn_binary_divide;
      check(xnn_create_binary_elementwise_nd(type, xnn_datatype_fp32, nullptr, nullptr, nullptr, 0, &st.ops[0].op), n, "creating an elementwise op");
    }
    xnn_operator_t op = st.ops[0].op;
    std::vector<std::size_t> s1(xshape.begin(), xshape.end()), s2(yshape.begin(), yshape.end());
    if (s1.size() > XNN_MAX_TENSOR_DIMS || s2.size() > XNN_MAX_TENSOR_DIMS) fail(ErrorCode::kUnsupported, where(n) + ": more than 6 dims");
    check(xnn_reshape_binary_elementwise_nd(op, s1.size(), s1.data(), s2.size(), s2.data(), pool()), n, "reshaping an elementwise op");
    Step& step = add_step({xa, yb}, {out});
    step.setup = [this, op, xa, yb, out, &n] { check(xnn_setup_binary_elementwise_nd(op, ptr(xa), ptr(yb), ptr(out)), n, "setting up an elementwise op"); };
    step.xnnpack = true;
    step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running an elementwise op"); };
    define(n.outputs[0], out);
  }

  // torch's pooling output size, with ceil_mode.
  static i64 pooled(i64 in, i64 k, i64 s, i64 p, i64 d, bool ceil_mode) {
    const i64 span = in + 2 * p - d * (k - 1) - 1;
    i64 out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= in + p) --out;
    return out;
  }

  void lower_max_pool(const Node& n, NodeState& st) {
    const std::size_t rank = base_op(n.op).rfind("max_pool3d", 0) == 0 ? 3 : 2;
    const int x = as_layout(tensor_arg(n, "self", 0), true);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    if (xs.size() != rank + 2) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " (unbatched input is not supported)");
    const auto kernel = spatial_arg(n, "kernel_size", rank, 1);
    auto stride = ints_arg(n, "stride").value_or(std::vector<i64>{});
    if (stride.empty()) stride = kernel;
    if (stride.size() == 1) stride.assign(rank, stride[0]);
    const auto padding = spatial_arg(n, "padding", rank, 0);
    const auto dilation = spatial_arg(n, "dilation", rank, 1);
    const bool ceil_mode = int_arg(n, "ceil_mode").value_or(0) != 0;
    Shape out_shape{xs[0], xs[1]};
    for (std::size_t i = 0; i < rank; ++i) {
      if (padding[i] * 2 > kernel[i]) fail(ErrorCode::kInvalidArgument, where(n) + ": padding larger than half the kernel");
      out_shape.push_back(pooled(xs[2 + i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode));
      if (out_shape.back() <= 0) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " is smaller than the kernel");
    }
    const std::size_t h = rank - 2;
    if (kernel[h] * kernel[h + 1] <= 1) fail(ErrorCode::kUnsupported, where(n) + ": a 1x1 pooling window in H and W");
    // ceil_mode: more padding after, so that XNNPACK's floor gives PyTorch's
    // ceil (XNNPACK's max pooling never reads padding, as PyTorch's -inf).
    i64 extra[2] = {0, 0};
    for (std::size_t i = 0; i < 2; ++i) {
      const std::size_t a = h + i;
      const i64 span = dilation[a] * (kernel[a] - 1) + 1;
      extra[i] = std::max<i64>(0, (out_shape[2 + a] - 1) * stride[a] + span - (xs[2 + a] + 2 * padding[a]));
    }
    xnn_operator_t op = nullptr;
    if (extra[0] || extra[1] || st.ops.empty()) {
      XnnOp* made;
      if (extra[0] || extra[1]) {  // depends on the input's size: made per plan
        plan_ops_.emplace_back();
        made = &plan_ops_.back();
      } else {
        st.ops.emplace_back();
        made = &st.ops.back();
      }
      check(xnn_create_max_pooling2d_nhwc_f32(u32(padding[h]), u32(padding[h + 1] + extra[1]),
                                              u32(padding[h] + extra[0]), u32(padding[h + 1]),
                                              u32(kernel[h]), u32(kernel[h + 1]),
                                              u32(stride[h]), u32(stride[h + 1]),
                                              u32(dilation[h]), u32(dilation[h + 1]),
                                              -kInf, kInf, 0, &made->op),
            n, "creating a max pooling");
      op = made->op;
    } else {
      op = st.ops[0].op;
    }
    const i64 batch = rank == 3 ? xs[0] * xs[2] : xs[0];
    std::size_t oh = 0, ow = 0;
    const std::size_t c = static_cast<std::size_t>(xs[1]);
    check(xnn_reshape_max_pooling2d_nhwc_f32(op, static_cast<std::size_t>(batch), static_cast<std::size_t>(xs[2 + h]),
                                             static_cast<std::size_t>(xs[3 + h]), c, c, c, &oh, &ow, pool()),
          n, "reshaping a max pooling");
    if (static_cast<i64>(oh) != out_shape[2 + h] || static_cast<i64>(ow) != out_shape[3 + h])
      fail(ErrorCode::kUnsupported, where(n) + ": ceil_mode pooling whose output size XNNPACK does not produce");
    const int planes = rank == 3 ? new_tensor(Shape{batch, xs[1], static_cast<i64>(oh), static_cast<i64>(ow)}, true) : new_tensor(out_shape, true);
    Step& step = add_step({x}, {planes});
    step.setup = [this, op, x, planes, &n] { check(xnn_setup_max_pooling2d_nhwc_f32(op, ptr(x), ptr(planes)), n, "setting up a max pooling"); };
    step.xnnpack = true;
    step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running a max pooling"); };
    if (rank == 2) {
      define(n.outputs[0], planes);
      return;
    }
    const int out = new_tensor(out_shape, true);
    const kernels::Window depth{kernel[0], stride[0], padding[0], dilation[0]};
    const i64 nb = xs[0], d_in = xs[2], d_out = out_shape[2], plane = static_cast<i64>(oh * ow) * xs[1];
    Step& reduce = add_step({planes}, {out});
    reduce.run = [this, planes, out, nb, d_in, d_out, plane, depth] { kernels::max_over_depth(ptr(planes), ptr(out), nb, d_in, d_out, plane, depth); };
    define(n.outputs[0], out);
  }

  void lower_avg_pool(const Node& n, NodeState& st) {
    const int x = as_layout(tensor_arg(n, "self", 0), true);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    if (xs.size() != 4) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " (unbatched input is not supported)");
    const auto kernel = spatial_arg(n, "kernel_size", 2, 1);
    auto stride = ints_arg(n, "stride").value_or(std::vector<i64>{});
    if (stride.empty()) stride = kernel;
    if (stride.size() == 1) stride.assign(2, stride[0]);
    const auto padding = spatial_arg(n, "padding", 2, 0);
    if (int_arg(n, "divisor_override")) fail(ErrorCode::kUnsupported, where(n) + ": divisor_override");
    const bool ceil_mode = int_arg(n, "ceil_mode").value_or(0) != 0;
    if ((padding[0] || padding[1]) && int_arg(n, "count_include_pad").value_or(1)) {
      // XNNPACK averages the valid pixels only; PyTorch counts the padding:
      // pad with zeros first (channels-last, a portable kernel), then pool unpadded.
      if (ceil_mode) fail(ErrorCode::kUnsupported, where(n) + ": ceil_mode average pooling that counts the padding");
      const Shape padded_shape{xs[0], xs[1], xs[2] + 2 * padding[0], xs[3] + 2 * padding[1]};
      const int p = new_tensor(padded_shape, true);
      const std::vector<i64> phys{xs[0], xs[2], xs[3], xs[1]};
      const std::vector<i64> before{0, padding[0], padding[1], 0};
      Step& step = add_step({x}, {p});
      step.run = [this, x, p, phys, before] { portable::pad(ptr(x), ptr(p), phys, before, before, portable::PadMode::kConstant, 0.0f); };
      avg_pool_step(n, st, p, padded_shape, kernel, stride, {0, 0}, false);
      return;
    }
    avg_pool_step(n, st, x, xs, kernel, stride, padding, ceil_mode);
  }

  void avg_pool_step(const Node& n, NodeState& st, int x, const Shape& xs, const std::vector<i64>& kernel,
                     const std::vector<i64>& stride, const std::vector<i64>& padding, bool ceil_mode) {
    const Shape out_shape{xs[0], xs[1], pooled(xs[2], kernel[0], stride[0], padding[0], 1, ceil_mode),
                          pooled(xs[3], kernel[1], stride[1], padding[1], 1, ceil_mode)};
    if (st.ops.empty()) {
      st.ops.emplace_back();
      check(xnn_create_average_pooling2d_nhwc_f32(u32(padding[0]), u32(padding[1]),
                                                  u32(padding[0]), u32(padding[1]),
                                                  u32(kernel[0]), u32(kernel[1]),
                                                  u32(stride[0]), u32(stride[1]),
                                                  -kInf, kInf, 0, &st.ops[0].op),
            n, "creating an average pooling");
    }
    xnn_operator_t op = st.ops[0].op;
    std::size_t oh = 0, ow = 0, ws_size = 0, ws_align = 0;
    const std::size_t c = static_cast<std::size_t>(xs[1]);
    check(xnn_reshape_average_pooling2d_nhwc_f32(op, static_cast<std::size_t>(xs[0]), static_cast<std::size_t>(xs[2]),
                                                 static_cast<std::size_t>(xs[3]), c, c, c, &ws_size, &ws_align, &oh, &ow, pool()),
          n, "reshaping an average pooling");
    if (static_cast<i64>(oh) != out_shape[2] || static_cast<i64>(ow) != out_shape[3])
      fail(ErrorCode::kUnsupported, where(n) + ": ceil_mode pooling whose output size XNNPACK does not produce");
    workspace_bytes_ = std::max(workspace_bytes_, ws_size);
    const int out = new_tensor(out_shape, true);
    Step& step = add_step({x}, {out});
    step.setup = [this, op, x, out, &n] { check(xnn_setup_average_pooling2d_nhwc_f32(op, workspace_.get(), ptr(x), ptr(out)), n, "setting up an average pooling"); };
    step.xnnpack = true;
    step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running an average pooling"); };
    define(n.outputs[0], out);
  }

  // Adaptive pooling: the identity, a global mean, a plain average pooling
  // when the output divides the input (XNNPACK), else portable kernels.
  void lower_adaptive_pool(const Node& n, NodeState& st) {
    const std::string base = base_op(n.op);
    const bool max = base.rfind("adaptive_max", 0) == 0;
    const std::size_t rank = base.back() == 'd' && base[base.size() - 2] == '3' ? 3 : 2;
    const int x0 = tensor_arg(n, "self", 0);
    const Shape xs = slots_[static_cast<std::size_t>(x0)].shape;
    if (xs.size() != rank + 2) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " (unbatched input is not supported)");
    const auto size = spatial_arg(n, "output_size", rank, 1);
    bool global = true, same = true, divides = true;
    for (std::size_t i = 0; i < rank; ++i) {
      global = global && size[i] == 1;
      same = same && size[i] == xs[2 + i];
      divides = divides && size[i] > 0 && xs[2 + i] % size[i] == 0;
    }
    for (i64 d : size)
      if (d <= 0) fail(ErrorCode::kInvalidArgument, where(n) + ": output_size " + shape_str(size) + " must be positive");
    if (max && n.outputs.size() > 1) define(n.outputs[1], new_slot(Slot{}));  // indices: not computed
    if (same) return define(n.outputs[0], x0);
    std::vector<i64> axes;
    for (std::size_t i = 0; i < rank; ++i) axes.push_back(static_cast<i64>(2 + i));
    if (!max && global) return mean_step(n, st, x0, axes, true);
    if (!max && rank == 2 && divides) {
      const std::vector<i64> k{xs[2] / size[0], xs[3] / size[1]};
      return avg_pool_step(n, st, as_layout(x0, true), xs, k, k, {0, 0}, false);
    }
    Shape out_shape{xs[0], xs[1]};
    out_shape.insert(out_shape.end(), size.begin(), size.end());
    within_budget(out_shape);
    const Shape in(xs.begin() + 2, xs.end());
    const i64 planes = xs[0] * xs[1];
    const int out = new_tensor(out_shape, false);
    std::vector<int> ins{x0};
    Step& step = portable_step(ins, {out});
    const int xi = ins[0];
    step.run = [this, xi, out, planes, in, size, max] { portable::adaptive_pool(ptr(xi), ptr(out), planes, in, size, max); };
    define(n.outputs[0], out);
  }

  void lower_mean(const Node& n, NodeState& st) {
    const int x = tensor_arg(n, "self", 0);
    const std::size_t rank = slots_[static_cast<std::size_t>(x)].shape.size();
    if (n.attributes.get_int("dtype")) fail(ErrorCode::kUnsupported, where(n) + ": mean with a dtype");
    auto dims = ints_arg(n, "dim").value_or(std::vector<i64>{});
    if (dims.empty())
      for (std::size_t i = 0; i < rank; ++i) dims.push_back(static_cast<i64>(i));
    for (i64& d : dims) d = normalize_dim(d, rank, where(n));
    mean_step(n, st, x, dims, int_arg(n, "keepdim").value_or(0) != 0);
  }

  void mean_step(const Node& n, NodeState&, int x0, std::vector<i64> dims, bool keepdim) {
    const Slot& xs0 = slots_[static_cast<std::size_t>(x0)];
    const Shape shape = xs0.shape;
    const std::size_t rank = shape.size();
    std::sort(dims.begin(), dims.end());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
    auto reduced = [&](std::size_t i) { return std::binary_search(dims.begin(), dims.end(), static_cast<i64>(i)); };
    bool all_spatial = true;
    for (std::size_t i = 2; i < rank; ++i) all_spatial = all_spatial && reduced(i);
    // Without keepdim the result is plain; channels-last storage only gives
    // its order when the channel or every spatial dim is reduced.
    bool channels_last = xs0.channels_last;
    if (!keepdim && channels_last && !(reduced(1) || all_spatial)) channels_last = false;
    const int x = as_layout(x0, channels_last);
    Shape out_shape;
    for (std::size_t i = 0; i < rank; ++i) {
      if (!reduced(i)) out_shape.push_back(shape[i]);
      else if (keepdim) out_shape.push_back(1);
    }
    std::vector<std::size_t> axes;
    for (i64 d : dims) axes.push_back(physical_axis(static_cast<std::size_t>(d), rank, channels_last));
    std::sort(axes.begin(), axes.end());
    if (axes.empty()) return define(n.outputs[0], alias(x, out_shape, channels_last));
    // A mean over a block of adjacent storage axes; others would need a transpose first.
    if (axes.back() - axes.front() + 1 != axes.size())
      fail(ErrorCode::kUnsupported, where(n) + ": mean over dims that are not adjacent in storage");
    const Shape phys = physical(shape, channels_last);
    const i64 outer = prod(phys, 0, axes.front()), span = prod(phys, axes.front(), axes.back() + 1),
              inner = prod(phys, axes.back() + 1, rank);
    const int out = new_tensor(out_shape, keepdim && channels_last);
    Step& step = add_step({x}, {out});
    step.run = [this, x, out, outer, span, inner] { kernels::mean_middle(ptr(x), ptr(out), outer, span, inner); };
    define(n.outputs[0], out);
  }

  void lower_linear(const Node& n, NodeState& st) {
    const int x = as_layout(tensor_arg(n, "input", 0), false);
    const Tensor& w = constant_arg(n, "weight", 1, true);
    const Tensor& b = constant_arg(n, "bias", 2, false);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    if (w.dim() != 2 || xs.empty() || xs.back() != w.shape()[1])
      fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " and weight " + shape_str(w.shape()));
    const i64 in_features = w.shape()[1], out_features = w.shape()[0];
    if (b.defined() && b.numel() != out_features) fail(ErrorCode::kShapeMismatch, where(n) + ": bias " + shape_str(b.shape()));
    const Fused fused = fused_of(n);
    const int out = fully_connected(n, st, 0, x, w.data_as<float>(), b.defined() ? b.data_as<float>() : nullptr, in_features, out_features,
                                    fused.min, fused.max);
    post_activation(n, st, 1, fused, out);
    define(n.outputs[0], out);
  }

  // y = x @ w^T + b over x's last dim ([..., in] -> [..., out]): XNNPACK's
  // fully connected op, the node's operator number `index` (weights packed
  // once, on the first plan).
  int fully_connected(const Node& n, NodeState& st, std::size_t index, int x, const float* w, const float* b, i64 in_features,
                      i64 out_features, float out_min = -kInf, float out_max = kInf) {
    if (st.ops.size() <= index) st.ops.resize(index + 1);
    if (!st.ops[index].op) {
      check(xnn_create_fully_connected_nc_f32(static_cast<std::size_t>(in_features), static_cast<std::size_t>(out_features),
                                              static_cast<std::size_t>(in_features), static_cast<std::size_t>(out_features), w, b,
                                              out_min, out_max, 0, nullptr, nullptr, &st.ops[index].op),
            n, "creating a fully connected op");
    }
    xnn_operator_t op = st.ops[index].op;
    x = as_layout(x, false);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    const i64 batch = numel(xs) / std::max<i64>(in_features, 1);
    check(xnn_reshape_fully_connected_nc_f32(op, static_cast<std::size_t>(batch), pool()), n, "reshaping a fully connected op");
    Shape out_shape = xs;
    out_shape.back() = out_features;
    const int out = new_tensor(out_shape, false);
    Step& step = add_step({x}, {out});
    step.setup = [this, op, x, out, &n] { check(xnn_setup_fully_connected_nc_f32(op, ptr(x), ptr(out)), n, "setting up a fully connected op"); };
    step.xnnpack = true;
    step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running a fully connected op"); };
    return out;
  }

  // permute(self, dims), transpose(self, dim0, dim1), t(self): in the standard layout.
  void lower_permute(const Node& n, NodeState&) {
    const int x = as_layout(tensor_arg(n, "self", 0), false);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    const std::size_t rank = xs.size();
    std::vector<i64> dims(rank);
    for (std::size_t i = 0; i < rank; ++i) dims[i] = static_cast<i64>(i);
    const std::string base = base_op(n.op);
    if (base.rfind("permute", 0) == 0) {
      auto given = ints_arg(n, "dims");
      if (!given || given->size() != rank) fail(ErrorCode::kSchema, where(n) + ": 'dims' must list " + std::to_string(rank) + " dims");
      dims = *given;
    } else if (base == "t") {
      if (rank > 2) fail(ErrorCode::kShapeMismatch, where(n) + ": t() of a rank-" + std::to_string(rank) + " tensor");
      if (rank == 2) std::swap(dims[0], dims[1]);
    } else {
      const i64 a = normalize_dim(int_arg(n, "dim0").value_or(0), rank, where(n));
      const i64 b = normalize_dim(int_arg(n, "dim1").value_or(0), rank, where(n));
      std::swap(dims[static_cast<std::size_t>(a)], dims[static_cast<std::size_t>(b)]);
    }
    std::vector<std::size_t> in_shape, perm;
    std::vector<bool> seen(rank, false);
    Shape out_shape;
    for (i64 d : dims) {
      const auto p = static_cast<std::size_t>(normalize_dim(d, rank, where(n)));
      if (seen[p]) fail(ErrorCode::kSchema, where(n) + ": dim " + std::to_string(d) + " appears twice in the permutation");
      seen[p] = true;
      perm.push_back(p);
      out_shape.push_back(xs[p]);
    }
    for (i64 d : xs) in_shape.push_back(static_cast<std::size_t>(d));
    define(n.outputs[0], rank < 2 ? x : transposed(x, in_shape, perm, out_shape, false));
  }

  // addmm(self, mat1, mat2): mat1 @ mat2 + self, with mat2 a weight [K, N]
  // (torch.export's linear: addmm(bias, x, permute(weight))).
  void lower_addmm(const Node& n, NodeState& st) {
    if (float_arg(n, "beta").value_or(1) != 1 || float_arg(n, "alpha").value_or(1) != 1)
      fail(ErrorCode::kUnsupported, where(n) + ": addmm with alpha or beta other than 1");
    const int x = as_layout(tensor_arg(n, "mat1", 1), false);
    const int m = as_layout(tensor_arg(n, "mat2", 2), false);
    const Slot& ms = slots_[static_cast<std::size_t>(m)];
    if (!ms.constant) fail(ErrorCode::kUnsupported, where(n) + ": 'mat2' must be a constant (weights are packed once, at finalize)");
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    if (ms.shape.size() != 2 || xs.size() != 2 || xs[1] != ms.shape[0])
      fail(ErrorCode::kShapeMismatch, where(n) + ": mat1 " + shape_str(xs) + " and mat2 " + shape_str(ms.shape));
    const i64 in_features = ms.shape[0], out_features = ms.shape[1];
    const Tensor& b = constant_arg(n, "self", 0, true);
    if (b.numel() != out_features || b.dim() > 2 || (b.dim() == 2 && b.shape()[0] != 1))
      fail(ErrorCode::kUnsupported, where(n) + ": 'self' " + shape_str(b.shape()) + " is not a bias of " + std::to_string(out_features));
    const Fused fused = fused_of(n);
    if (st.ops.empty()) {
      st.ops.emplace_back();
      check(xnn_create_fully_connected_nc_f32(static_cast<std::size_t>(in_features), static_cast<std::size_t>(out_features),
                                              static_cast<std::size_t>(in_features), static_cast<std::size_t>(out_features),
                                              ms.constant, b.data_as<float>(), fused.min, fused.max, XNN_FLAG_TRANSPOSE_WEIGHTS,
                                              nullptr, nullptr, &st.ops[0].op),
            n, "creating a fully connected op");
    }
    xnn_operator_t op = st.ops[0].op;
    check(xnn_reshape_fully_connected_nc_f32(op, static_cast<std::size_t>(xs[0]), pool()), n, "reshaping a fully connected op");
    const int out = new_tensor(Shape{xs[0], out_features}, false);
    Step& step = add_step({x}, {out});
    step.setup = [this, op, x, out, &n] { check(xnn_setup_fully_connected_nc_f32(op, ptr(x), ptr(out)), n, "setting up a fully connected op"); };
    step.xnnpack = true;
    step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running a fully connected op"); };
    post_activation(n, st, 1, fused, out);
    define(n.outputs[0], out);
  }

  void lower_cat(const Node& n, NodeState&) {
    std::vector<ValueId> parts = n.attributes.contains(kArgNamesAttribute) ? inputs_for_arg(n, "tensors") : n.inputs;
    if (parts.empty()) fail(ErrorCode::kSchema, where(n) + ": nothing to concatenate");
    std::vector<int> in;
    bool channels_last = false;
    for (ValueId v : parts) {
      in.push_back(tensor_slot(n, v));
      channels_last = channels_last || slots_[static_cast<std::size_t>(in.back())].channels_last;
    }
    const Shape first = slots_[static_cast<std::size_t>(in[0])].shape;
    const std::size_t rank = first.size();
    const i64 dim = normalize_dim(int_arg(n, "dim").value_or(0), rank, where(n));
    Shape out_shape = first;
    out_shape[static_cast<std::size_t>(dim)] = 0;
    for (int& s : in) {
      s = as_layout(s, channels_last);
      const Shape& shape = slots_[static_cast<std::size_t>(s)].shape;
      for (std::size_t i = 0; i < rank; ++i)
        if (shape.size() != rank || (i != static_cast<std::size_t>(dim) && shape[i] != first[i]))
          fail(ErrorCode::kShapeMismatch, where(n) + ": cannot concatenate " + shape_str(first) + " and " + shape_str(shape) + " along dim " + std::to_string(dim));
      out_shape[static_cast<std::size_t>(dim)] += shape[static_cast<std::size_t>(dim)];
    }
    const int out = new_tensor(out_shape, channels_last);
    const Shape phys = physical(out_shape, channels_last && spatial_rank(rank));
    const std::size_t axis = physical_axis(static_cast<std::size_t>(dim), rank, channels_last && spatial_rank(rank));
    const i64 outer = prod(phys, 0, axis), inner = prod(phys, axis + 1, rank), out_axis = phys[axis];
    std::vector<std::pair<int, i64>> pieces;  // (slot, its extent along the axis)
    for (int s : in) pieces.emplace_back(s, slots_[static_cast<std::size_t>(s)].shape[static_cast<std::size_t>(dim)]);
    Step& step = add_step(in, {out});
    step.run = [this, pieces, out, outer, inner, out_axis] {
      float* dst = ptr(out);
      i64 offset = 0;
      for (const auto& [s, extent] : pieces) {
        kernels::copy_blocks(ptr(s), dst + offset * inner, outer, extent * inner, extent * inner, out_axis * inner);
        offset += extent;
      }
    };
    define(n.outputs[0], out);
  }

  void lower_slice(const Node& n, NodeState&) {
    const int x = tensor_arg(n, "self", 0);
    define(n.outputs[0], slice_of(n, x, int_arg(n, "dim").value_or(0), int_arg(n, "start").value_or(0),
                                  int_arg(n, "end").value_or(std::numeric_limits<i64>::max()), int_arg(n, "step").value_or(1)));
  }

  // x[start:end:step] along `dim` (PyTorch's clamping of start and end): an
  // alias when it is the whole axis, else a copy in x's layout.
  int slice_of(const Node& n, int x, i64 dim_arg, i64 start, i64 end, i64 step_by) {
    const Slot& xs = slots_[static_cast<std::size_t>(x)];
    const Shape shape = xs.shape;
    const bool channels_last = xs.channels_last;
    const std::size_t rank = shape.size();
    if (rank == 0) fail(ErrorCode::kShapeMismatch, where(n) + ": slicing a 0-d tensor");
    const std::size_t dim = static_cast<std::size_t>(normalize_dim(dim_arg, rank, where(n)));
    const i64 size = shape[dim];
    if (step_by <= 0) fail(ErrorCode::kInvalidArgument, where(n) + ": slice step must be positive");
    if (start < 0) start += size;
    if (end < 0) end += size;
    start = std::clamp<i64>(start, 0, size);
    end = std::clamp<i64>(end, start, size);
    const i64 length = (end - start + step_by - 1) / step_by;
    Shape out_shape = shape;
    out_shape[dim] = length;
    if (length == size) return alias(x, out_shape, channels_last);  // the whole axis: no copy
    const Shape phys = physical(shape, channels_last);
    const std::size_t axis = physical_axis(dim, rank, channels_last);
    const i64 outer = prod(phys, 0, axis), inner = prod(phys, axis + 1, rank);
    const int out = new_tensor(out_shape, channels_last);
    Step& step = add_step({x}, {out});
    if (step_by == 1) {
      step.run = [this, x, out, outer, inner, start, length, size] {
        kernels::copy_blocks(ptr(x) + start * inner, ptr(out), outer, length * inner, size * inner, length * inner);
      };
    } else {
      step.run = [this, x, out, outer, inner, start, length, size, step_by] {
        kernels::copy_strided_axis(ptr(x), ptr(out), outer, size, length, start, step_by, inner);
      };
    }
    return out;
  }

  void lower_resize(const Node& n, NodeState&) {
    const std::size_t rank = base_op(n.op) == "upsample_nearest3d" ? 3 : 2;
    // .vec names its tensor "input", .default (core ATen) "self".
    const int x = as_layout(tensor_arg(n, input_for_arg(n, "input", 0) ? "input" : "self", 0), true);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    if (xs.size() != rank + 2) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs));
    auto size = ints_arg(n, "output_size");
    auto factors = floats_arg(n, "scale_factors");
    if (!factors) {  // the overload with one scale per axis
      std::vector<double> per_axis;
      for (const char* name : {"scales_d", "scales_h", "scales_w"})
        if (auto s = float_arg(n, name)) per_axis.push_back(*s);
      if (per_axis.size() == rank) factors = per_axis;
    }
    i64 in[3] = {1, xs[2], xs[3]}, out[3] = {1, 0, 0};
    if (rank == 3) in[0] = xs[2], in[1] = xs[3], in[2] = xs[4];
    double scale[3] = {1, 1, 1};
    for (std::size_t i = 0; i < rank; ++i) {
      const std::size_t a = 3 - rank + i;
      if (size && size->size() == rank) {
        out[a] = (*size)[i];
        scale[a] = factors && factors->size() == rank ? 1.0 / (*factors)[i] : static_cast<double>(in[a]) / static_cast<double>(out[a]);
      } else if (factors && factors->size() == rank) {
        out[a] = static_cast<i64>(std::floor(static_cast<double>(in[a]) * (*factors)[i]));
        scale[a] = 1.0 / (*factors)[i];
      } else {
        fail(ErrorCode::kSchema, where(n) + ": neither an output size nor scale factors for " + std::to_string(rank) + " dims");
      }
      if (out[a] <= 0) fail(ErrorCode::kShapeMismatch, where(n) + ": output size " + std::to_string(out[a]));
    }
    Shape out_shape{xs[0], xs[1]};
    for (std::size_t i = 0; i < rank; ++i) out_shape.push_back(out[3 - rank + i]);
    const int y = new_tensor(out_shape, true);
    const i64 nb = xs[0], channels = xs[1];
    const std::array<i64, 3> in_a{in[0], in[1], in[2]}, out_a{out[0], out[1], out[2]};
    const std::array<double, 3> scale_a{scale[0], scale[1], scale[2]};
    Step& step = add_step({x}, {y});
    step.run = [this, x, y, nb, in_a, out_a, scale_a, channels] {
      kernels::resize_nearest(ptr(x), ptr(y), nb, in_a.data(), out_a.data(), scale_a.data(), channels);
    };
    define(n.outputs[0], y);
  }

  void lower_softmax(const Node& n, NodeState& st) {
    const int x0 = tensor_arg(n, "self", 0);
    const Shape shape = slots_[static_cast<std::size_t>(x0)].shape;
    const std::size_t rank = shape.size();
    if (rank == 0) fail(ErrorCode::kShapeMismatch, where(n) + ": softmax of a 0-d tensor");
    if (n.attributes.get_int("dtype")) fail(ErrorCode::kUnsupported, where(n) + ": softmax with a dtype");
    const std::size_t dim = static_cast<std::size_t>(normalize_dim(int_arg(n, "dim").value_or(-1), rank, where(n)));
    // XNNPACK's softmax runs over the innermost axis of storage.
    bool channels_last;
    if (spatial_rank(rank) && dim == 1) channels_last = true;
    else if (dim == rank - 1) channels_last = false;
    else fail(ErrorCode::kUnsupported, where(n) + ": softmax over dim " + std::to_string(dim) + " of rank " + std::to_string(rank));
    const int x = as_layout(x0, channels_last);
    const i64 channels = shape[dim];
    if (st.ops.empty()) {
      st.ops.emplace_back();
      check(xnn_create_softmax_nc_f32(0, &st.ops[0].op), n, "creating a softmax");
    }
    xnn_operator_t op = st.ops[0].op;
    const std::size_t c = static_cast<std::size_t>(channels);
    check(xnn_reshape_softmax_nc_f32(op, c, c, c, static_cast<std::size_t>(numel(shape) / std::max<i64>(channels, 1)), pool()), n, "reshaping a softmax");
    const int out = new_tensor(shape, channels_last);
    Step& step = add_step({x}, {out});
    step.setup = [this, op, x, out, &n] { check(xnn_setup_softmax_nc_f32(op, ptr(x), ptr(out)), n, "setting up a softmax"); };
    step.xnnpack = true;
    step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running a softmax"); };
    define(n.outputs[0], out);
  }

  // flatten, view, reshape: plain storage read with another shape.
  void lower_view(const Node& n, NodeState&) {
    const int x0 = tensor_arg(n, "self", 0);
    const Shape shape = slots_[static_cast<std::size_t>(x0)].shape;
    const i64 count = numel(shape);
    Shape out_shape;
    if (base_op(n.op) == "flatten") {
      const std::size_t rank = std::max<std::size_t>(shape.size(), 1);
      const i64 start = normalize_dim(int_arg(n, "start_dim").value_or(0), rank, where(n));
      const i64 end = normalize_dim(int_arg(n, "end_dim").value_or(-1), rank, where(n));
      if (shape.empty()) out_shape = {1};
      else {
        for (i64 i = 0; i < start; ++i) out_shape.push_back(shape[static_cast<std::size_t>(i)]);
        out_shape.push_back(prod(shape, static_cast<std::size_t>(start), static_cast<std::size_t>(end + 1)));
        for (std::size_t i = static_cast<std::size_t>(end + 1); i < shape.size(); ++i) out_shape.push_back(shape[i]);
      }
    } else {
      auto wanted = ints_arg(n, "size");
      if (!wanted) wanted = ints_arg(n, "shape");
      if (!wanted) fail(ErrorCode::kSchema, where(n) + ": no target shape");
      i64 known = 1;
      int infer = -1;
      for (std::size_t i = 0; i < wanted->size(); ++i) {
        if ((*wanted)[i] == -1 && infer < 0) infer = static_cast<int>(i);
        else if ((*wanted)[i] < 0) fail(ErrorCode::kBadShape, where(n) + ": shape " + shape_str(*wanted));
        else known *= (*wanted)[i];
      }
      out_shape = *wanted;
      if (infer >= 0) {
        if (known == 0 || count % known) fail(ErrorCode::kShapeMismatch, where(n) + ": cannot view " + shape_str(shape) + " as " + shape_str(*wanted));
        out_shape[static_cast<std::size_t>(infer)] = count / known;
      }
    }
    if (numel(out_shape) != count) fail(ErrorCode::kShapeMismatch, where(n) + ": cannot view " + shape_str(shape) + " as " + shape_str(out_shape));
    define(n.outputs[0], alias(as_layout(x0, false), out_shape, false));
  }

  // ---- portable kernels (portable.h): what XNNPACK has no operator for ----

  // A step of ours over torch-layout tensors: `ins` are made torch-layout first.
  Step& portable_step(std::vector<int>& ins, std::vector<int> outs) {
    for (int& s : ins) s = as_layout(s, false);
    return add_step(ins, std::move(outs));
  }
  const float* weight_or_null(const Node& n, std::string_view name, std::size_t position, i64 expected) {
    const Tensor& t = constant_arg(n, name, position, false);
    if (!t.defined()) return nullptr;
    if (t.numel() != expected)
      fail(ErrorCode::kShapeMismatch, where(n) + ": '" + std::string(name) + "' has " + std::to_string(t.numel()) + " elements, expected " + std::to_string(expected));
    return t.data_as<float>();
  }

  // Elementwise ops, in whatever layout their input has (in place for x_ on a non-constant).
  void lower_pointwise(const Node& n, NodeState&) {
    std::string base = base_op(n.op);
    const bool inplace_op = base.back() == '_';
    if (inplace_op) base.pop_back();
    if (auto self = input_for_arg(n, "self", 0); self && base == "rsub") {
      // Shape arithmetic (other - alpha * self on numbers known before the run).
      const Slot& num = slot_of(*self);
      if (num.kind == Kind::kInt || num.kind == Kind::kFloat) {
        const double other = float_arg(n, "other").value_or(0), alpha = float_arg(n, "alpha").value_or(1);
        const AttributeValue* o = n.attributes.find("other");
        const bool ints = num.kind == Kind::kInt && alpha == 1 && (!o || std::holds_alternative<std::int64_t>(*o)) &&
                          (o || slot_of(*input_for_arg(n, "other", 1)).kind == Kind::kInt);
        if (ints) return define(n.outputs[0], int_slot(static_cast<i64>(other) - num.i));
        return define(n.outputs[0], float_slot(other - alpha * (num.kind == Kind::kInt ? static_cast<double>(num.i) : num.f)));
      }
    }
    if (auto self = input_for_arg(n, "self", 0)) {
      // Shape arithmetic on a number known before the run (traced models scale
      // attention by size ** -0.5).
      const Slot& num = slot_of(*self);
      if (num.kind == Kind::kInt || num.kind == Kind::kFloat) return define(n.outputs[0], pointwise_number(n, base, num));
    }
    const int x = tensor_arg(n, "self", 0);
    const Slot xs = slots_[static_cast<std::size_t>(x)];  // a copy: new_tensor may move the slots
    const int out = inplace_op && !xs.constant ? x : new_tensor(xs.shape, xs.channels_last);
    const i64 count = numel(xs.shape);
    std::function<void(const float*, float*)> f;
    static const std::map<std::string, portable::Unary, std::less<>> kUnary = {
        {"hardsigmoid", portable::Unary::kHardsigmoid}, {"silu", portable::Unary::kSilu}, {"mish", portable::Unary::kMish},
        {"exp", portable::Unary::kExp},   {"log", portable::Unary::kLog},   {"sqrt", portable::Unary::kSqrt},
        {"rsqrt", portable::Unary::kRsqrt}, {"neg", portable::Unary::kNeg}, {"abs", portable::Unary::kAbs},
        {"square", portable::Unary::kSquare}, {"erf", portable::Unary::kErf}};
    if (auto it = kUnary.find(base); it != kUnary.end()) {
      const portable::Unary op = it->second;
      f = [op, count](const float* a, float* b) { portable::unary(op, a, b, count); };
    } else if (base == "pow") {
      auto e = float_arg(n, "exponent");
      if (!e) fail(ErrorCode::kUnsupported, where(n) + ": pow with a tensor exponent");
      const double exponent = *e;
      f = [exponent, count](const float* a, float* b) { portable::pow_scalar(a, b, count, exponent); };
    } else if (base == "rsub") {
      auto other = float_arg(n, "other");
      if (!other) fail(ErrorCode::kUnsupported, where(n) + ": rsub of two tensors");
      const double o = *other, alpha = float_arg(n, "alpha").value_or(1);
      f = [o, alpha, count](const float* a, float* b) { portable::rsub_scalar(a, b, count, o, alpha); };
    } else {
      fail(ErrorCode::kUnsupported, where(n) + ": op not supported by the XNNPACK backend");
    }
    Step& step = add_step({x}, {out});
    step.run = [this, f, x, out] { f(ptr(x), ptr(out)); };
    define(n.outputs[0], out);
  }

  // An elementwise op of one number: ints stay ints where torch keeps them so
  // (neg, abs, square, pow to a non-negative integer power).
  int pointwise_number(const Node& n, const std::string& base, const Slot& num) {
    const bool is_int = num.kind == Kind::kInt;
    const double x = is_int ? static_cast<double>(num.i) : num.f;
    if (base == "pow") {
      const AttributeValue* e = n.attributes.find("exponent");
      if (!e) fail(ErrorCode::kUnsupported, where(n) + ": pow with a tensor exponent");
      if (const auto* k = std::get_if<std::int64_t>(e); k && is_int && *k >= 0 && *k < 63) {
        i64 r = 1;
        for (i64 i = 0; i < *k; ++i) {
          if (__builtin_mul_overflow(r, num.i, &r)) fail(ErrorCode::kOutOfRange, where(n) + ": " + std::to_string(num.i) + " ** " + std::to_string(*k) + " overflows int64");
        }
        return int_slot(r);
      }
      return float_slot(std::pow(x, *float_arg(n, "exponent")));
    }
    if (is_int && (base == "neg" || base == "abs" || base == "square")) {
      if (num.i == std::numeric_limits<i64>::min() && base != "square") fail(ErrorCode::kOutOfRange, where(n) + ": " + base + " of the smallest int64");
      i64 sq = 0;
      if (base == "square" && __builtin_mul_overflow(num.i, num.i, &sq)) fail(ErrorCode::kOutOfRange, where(n) + ": the square of " + std::to_string(num.i) + " overflows int64");
      return int_slot(base == "neg" ? -num.i : base == "abs" ? std::abs(num.i) : sq);
    }
    static const std::map<std::string, double (*)(double), std::less<>> kMath = {
        {"exp", [](double v) { return std::exp(v); }},   {"log", [](double v) { return std::log(v); }},
        {"sqrt", [](double v) { return std::sqrt(v); }}, {"rsqrt", [](double v) { return 1 / std::sqrt(v); }},
        {"neg", [](double v) { return -v; }},            {"abs", [](double v) { return std::fabs(v); }},
        {"square", [](double v) { return v * v; }},      {"erf", [](double v) { return std::erf(v); }}};
    const auto it = kMath.find(base);
    if (it == kMath.end()) fail(ErrorCode::kUnsupported, where(n) + ": " + base + " of a number");
    return float_slot(it->second(x));
  }

  // A fused activation that XNNPACK has no operator for, in place after the op.
  void portable_post(portable::Unary op, int out) {
    const i64 count = numel(slots_[static_cast<std::size_t>(out)].shape);
    Step& step = add_step({out}, {out});
    step.run = [this, op, out, count] { portable::unary(op, ptr(out), ptr(out), count); };
  }

  void lower_narrow(const Node& n, NodeState&) {
    const int x = tensor_arg(n, "self", 0);
    const i64 start = int_arg(n, "start").value_or(0), length = int_arg(n, "length").value_or(0);
    const std::size_t rank = slots_[static_cast<std::size_t>(x)].shape.size();
    const i64 dim = normalize_dim(int_arg(n, "dim").value_or(0), rank, where(n));
    const i64 size = slots_[static_cast<std::size_t>(x)].shape[static_cast<std::size_t>(dim)];
    const i64 begin = start < 0 ? start + size : start;
    if (begin < 0 || length < 0 || begin + length > size)
      fail(ErrorCode::kOutOfRange, where(n) + ": narrow(" + std::to_string(start) + ", " + std::to_string(length) + ") of a dim of " + std::to_string(size));
    define(n.outputs[0], slice_of(n, x, dim, begin, begin + length, 1));
  }

  // chunk(x, chunks, dim), split(x, split_size, dim): one slice per output.
  void lower_chunk(const Node& n, NodeState&) {
    const int x = tensor_arg(n, "self", 0);
    const Shape shape = slots_[static_cast<std::size_t>(x)].shape;
    const i64 dim = normalize_dim(int_arg(n, "dim").value_or(0), shape.size(), where(n));
    const i64 size = shape[static_cast<std::size_t>(dim)];
    i64 piece;
    if (base_op(n.op) == "chunk") {
      const i64 chunks = int_arg(n, "chunks").value_or(1);
      if (chunks <= 0) fail(ErrorCode::kInvalidArgument, where(n) + ": chunks must be positive");
      piece = (size + chunks - 1) / chunks;
    } else {
      piece = int_arg(n, "split_size").value_or(size);
      if (piece <= 0) fail(ErrorCode::kInvalidArgument, where(n) + ": split_size must be positive");
    }
    const i64 pieces = piece ? (size + piece - 1) / piece : 1;
    if (static_cast<std::size_t>(pieces) != n.outputs.size())
      fail(ErrorCode::kShapeMismatch, where(n) + ": " + std::to_string(pieces) + " pieces for " + std::to_string(n.outputs.size()) + " outputs");
    for (std::size_t k = 0; k < n.outputs.size(); ++k) {
      const i64 begin = static_cast<i64>(k) * piece;
      define(n.outputs[k], slice_of(n, x, dim, begin, std::min(begin + piece, size), 1));
    }
  }

  void lower_select(const Node& n, NodeState&) {
    const int x = tensor_arg(n, "self", 0);
    const Shape shape = slots_[static_cast<std::size_t>(x)].shape;
    const i64 dim = normalize_dim(int_arg(n, "dim").value_or(0), shape.size(), where(n));
    const i64 size = shape[static_cast<std::size_t>(dim)];
    i64 index = int_arg(n, "index").value_or(0);
    if (index < -size || index >= size) fail(ErrorCode::kOutOfRange, where(n) + ": index " + std::to_string(index) + " of a dim of " + std::to_string(size));
    if (index < 0) index += size;
    const int one = as_layout(slice_of(n, x, dim, index, index + 1, 1), false);
    Shape out_shape = shape;
    out_shape.erase(out_shape.begin() + dim);
    define(n.outputs[0], alias(one, out_shape, false));
  }

  // unsqueeze, squeeze: the same bytes in torch's layout with another shape.
  void lower_reshape_dims(const Node& n, NodeState&) {
    const int x = tensor_arg(n, "self", 0);
    Shape shape = slots_[static_cast<std::size_t>(x)].shape;
    if (base_op(n.op) == "unsqueeze") {
      const i64 dim = normalize_dim(int_arg(n, "dim").value_or(0), shape.size() + 1, where(n));
      shape.insert(shape.begin() + dim, 1);
    } else {
      std::vector<i64> dims;
      if (auto d = ints_arg(n, "dim")) dims = *d;
      else if (auto ds = ints_arg(n, "dims")) dims = *ds;
      std::set<i64> drop;
      for (i64 d : dims) drop.insert(normalize_dim(d, shape.size(), where(n)));
      Shape kept;
      for (std::size_t i = 0; i < shape.size(); ++i) {
        const bool squeeze = shape[i] == 1 && (dims.empty() || drop.count(static_cast<i64>(i)));
        if (!squeeze) kept.push_back(shape[i]);
      }
      shape = kept;
    }
    define(n.outputs[0], alias(as_layout(x, false), shape, false));
  }

  void lower_expand(const Node& n, NodeState&) {
    const int x = tensor_arg(n, "self", 0);
    const Shape in = slots_[static_cast<std::size_t>(x)].shape;
    Shape target;
    if (base_op(n.op) == "expand_as") {
      auto other = input_for_arg(n, "other", 1);
      if (!other) fail(ErrorCode::kSchema, where(n) + ": missing 'other'");
      target = slot_of(*other).shape;
    } else {
      auto size = ints_arg(n, "size");
      if (!size) fail(ErrorCode::kSchema, where(n) + ": no size");
      target = *size;
    }
    if (target.size() < in.size()) fail(ErrorCode::kShapeMismatch, where(n) + ": cannot expand " + shape_str(in) + " to " + shape_str(target));
    const std::size_t lead = target.size() - in.size();
    for (std::size_t i = 0; i < target.size(); ++i) {
      const i64 have = i >= lead ? in[i - lead] : 1;
      if (target[i] == -1 && i >= lead) target[i] = have;
      if (target[i] < 0 || (have != 1 && have != target[i]))
        fail(ErrorCode::kShapeMismatch, where(n) + ": cannot expand " + shape_str(in) + " to " + shape_str(target));
    }
    if (target == in) return define(n.outputs[0], x);
    const int out = new_tensor(target, false);
    std::vector<int> ins{x};
    Step& step = portable_step(ins, {out});
    const int xi = ins[0];
    step.run = [this, xi, out, in, target] { portable::broadcast(ptr(xi), ptr(out), in, target); };
    define(n.outputs[0], out);
  }

  // A list of integers known before the run (a shape for view, pad, resize).
  void lower_list(const Node& n, NodeState&) {
    std::vector<i64> items;
    for (ValueId v : n.inputs) {
      const Slot& s = slot_of(v);
      if (s.kind != Kind::kInt) fail(ErrorCode::kUnsupported, where(n) + ": a list of something other than integers known before the run");
      items.push_back(s.i);
    }
    define(n.outputs[0], ints_slot(std::move(items)));
  }

  // pad / constant_pad_nd / reflection_padNd / replication_padNd.
  void lower_pad(const Node& n, NodeState&) {
    const std::string base = base_op(n.op);
    const int x = tensor_arg(n, input_for_arg(n, "self", 0) ? "self" : "input", 0);
    const Shape in = slots_[static_cast<std::size_t>(x)].shape;
    auto pads = ints_arg(n, "pad");
    if (!pads) pads = ints_arg(n, "padding");
    if (!pads || pads->size() % 2 || pads->size() / 2 > in.size())
      fail(ErrorCode::kSchema, where(n) + ": padding " + (pads ? shape_str(*pads) : std::string("missing")) + " for a tensor of rank " + std::to_string(in.size()));
    portable::PadMode mode = portable::PadMode::kConstant;
    std::string mode_name = n.attributes.get_string("mode").value_or("constant");
    if (base.rfind("reflection_pad", 0) == 0) mode_name = "reflect";
    if (base.rfind("replication_pad", 0) == 0) mode_name = "replicate";
    if (mode_name == "reflect") mode = portable::PadMode::kReflect;
    else if (mode_name == "replicate") mode = portable::PadMode::kReplicate;
    else if (mode_name == "circular") mode = portable::PadMode::kCircular;
    else if (mode_name != "constant") fail(ErrorCode::kUnsupported, where(n) + ": padding mode '" + mode_name + "'");
    const float value = static_cast<float>(float_arg(n, "value").value_or(0));
    std::vector<i64> before(in.size(), 0), after(in.size(), 0);
    Shape out_shape = in;
    for (std::size_t k = 0; k < pads->size() / 2; ++k) {
      const std::size_t d = in.size() - 1 - k;
      before[d] = (*pads)[2 * k];
      after[d] = (*pads)[2 * k + 1];
      if (mode != portable::PadMode::kConstant && (before[d] < 0 || after[d] < 0))
        fail(ErrorCode::kInvalidArgument, where(n) + ": negative padding in " + mode_name + " mode");
      if (mode == portable::PadMode::kReflect && (before[d] >= in[d] || after[d] >= in[d]))
        fail(ErrorCode::kShapeMismatch, where(n) + ": reflect padding " + std::to_string(std::max(before[d], after[d])) + " must be less than the dim's size " + std::to_string(in[d]));
      if ((mode == portable::PadMode::kReplicate || mode == portable::PadMode::kCircular) && in[d] == 0)
        fail(ErrorCode::kShapeMismatch, where(n) + ": padding an empty dim in " + mode_name + " mode");
      out_shape[d] = in[d] + before[d] + after[d];
      if (out_shape[d] < 0) fail(ErrorCode::kShapeMismatch, where(n) + ": padding makes dim " + std::to_string(d) + " negative");
    }
    const int out = new_tensor(out_shape, false);
    std::vector<int> ins{x};
    Step& step = portable_step(ins, {out});
    const int xi = ins[0];
    step.run = [this, xi, out, in, before, after, mode, value] { portable::pad(ptr(xi), ptr(out), in, before, after, mode, value); };
    define(n.outputs[0], out);
  }

  // Linear, bilinear, trilinear, bicubic and 1D nearest resizes, torch layout.
  void lower_resize_portable(const Node& n, NodeState&) {
    const std::string base = base_op(n.op);
    const std::size_t rank = base.find("1d") != std::string::npos ? 1 : base.find("3d") != std::string::npos ? 3 : 2;
    const int x = tensor_arg(n, input_for_arg(n, "input", 0) ? "input" : "self", 0);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    if (xs.size() != rank + 2) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " for a resize over " + std::to_string(rank) + " dims");
    auto size = ints_arg(n, "output_size");
    auto factors = floats_arg(n, "scale_factors");
    if (!factors) {
      std::vector<double> per_axis;
      const std::vector<const char*> names = rank == 1 ? std::vector<const char*>{"scales"} : rank == 2 ? std::vector<const char*>{"scales_h", "scales_w"}
                                                                                                       : std::vector<const char*>{"scales_d", "scales_h", "scales_w"};
      for (const char* name : names)
        if (auto s = float_arg(n, name)) per_axis.push_back(*s);
      if (per_axis.size() == rank) factors = per_axis;
    }
    std::vector<i64> in, out;
    std::vector<double> scale;
    for (std::size_t i = 0; i < rank; ++i) {
      const i64 a = xs[2 + i];
      in.push_back(a);
      const bool have_factor = factors && factors->size() == rank && (*factors)[i] > 0;
      if (size && size->size() == rank) out.push_back((*size)[i]);
      else if (have_factor) out.push_back(static_cast<i64>(std::floor(static_cast<double>(a) * (*factors)[i])));
      else fail(ErrorCode::kSchema, where(n) + ": neither an output size nor scale factors for " + std::to_string(rank) + " dims");
      if (out.back() <= 0) fail(ErrorCode::kShapeMismatch, where(n) + ": output size " + std::to_string(out.back()));
      scale.push_back(have_factor ? 1.0 / (*factors)[i] : static_cast<double>(a) / static_cast<double>(out.back()));
    }
    const bool align_corners = int_arg(n, "align_corners").value_or(0) != 0;
    Shape out_shape{xs[0], xs[1]};
    for (i64 o : out) out_shape.push_back(o);
    const int y = new_tensor(out_shape, false);
    const i64 planes = xs[0] * xs[1];
    std::vector<int> ins{x};
    Step& step = portable_step(ins, {y});
    const int xi = ins[0];
    if (base.find("nearest") != std::string::npos) {
      step.run = [this, xi, y, planes, in, out, scale] { portable::resize_nearest(ptr(xi), ptr(y), planes, in, out, scale); };
    } else if (base.find("bicubic") != std::string::npos) {
      step.run = [this, xi, y, planes, in, out, scale, align_corners] {
        portable::resize_bicubic(ptr(xi), ptr(y), planes, in[0], in[1], out[0], out[1], scale[0], scale[1], align_corners);
      };
    } else {
      step.run = [this, xi, y, planes, in, out, scale, align_corners] {
        portable::resize_linear(ptr(xi), ptr(y), planes, in, out, scale, align_corners);
      };
    }
    define(n.outputs[0], y);
  }

  // group_norm, instance_norm (statistics of the input), layer_norm.
  void lower_norm(const Node& n, NodeState&) {
    const std::string base = base_op(n.op);
    const int x = tensor_arg(n, "input", 0);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    const double eps = float_arg(n, "eps").value_or(1e-5);
    const int out = new_tensor(xs, false);
    std::vector<int> ins{x};
    if (base == "layer_norm") {
      auto normalized = ints_arg(n, "normalized_shape");
      if (!normalized || normalized->size() > xs.size()) fail(ErrorCode::kSchema, where(n) + ": normalized_shape for input " + shape_str(xs));
      for (std::size_t i = 0; i < normalized->size(); ++i) {
        if ((*normalized)[i] != xs[xs.size() - normalized->size() + i])
          fail(ErrorCode::kShapeMismatch, where(n) + ": normalized_shape " + shape_str(*normalized) + " for input " + shape_str(xs));
      }
      const i64 inner = prod(xs, xs.size() - normalized->size(), xs.size()), outer = numel(xs) / std::max<i64>(inner, 1);
      const float* w = weight_or_null(n, "weight", 2, inner);
      const float* b = weight_or_null(n, "bias", 3, inner);
      Step& step = portable_step(ins, {out});
      const int xi = ins[0];
      step.run = [this, xi, out, outer, inner, w, b, eps] { portable::layer_norm(ptr(xi), ptr(out), outer, inner, w, b, eps); };
      return define(n.outputs[0], out);
    }
    if (xs.size() < 2) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " has no channel dim");
    const i64 batch = xs[0], channels = xs[1], inner = prod(xs, 2, xs.size());
    i64 groups = channels;
    if (base == "group_norm") {
      groups = int_arg(n, "num_groups").value_or(1);
      if (groups <= 0 || channels % groups) fail(ErrorCode::kShapeMismatch, where(n) + ": " + std::to_string(channels) + " channels in " + std::to_string(groups) + " groups");
    } else if (!int_arg(n, "use_input_stats").value_or(1)) {
      fail(ErrorCode::kUnsupported, where(n) + ": instance norm with running statistics");
    }
    const float* w = weight_or_null(n, "weight", 2, channels);
    const float* b = weight_or_null(n, "bias", 3, channels);
    Step& step = portable_step(ins, {out});
    const int xi = ins[0];
    step.run = [this, xi, out, batch, channels, inner, groups, w, b, eps] {
      portable::group_norm(ptr(xi), ptr(out), batch, channels, inner, groups, w, b, eps);
    };
    define(n.outputs[0], out);
  }

  // pooled() with its arguments checked (validate.cpp has already, for a graph through finalize()).
  i64 pooled_length(const Node& n, i64 in, i64 kernel, i64 stride, i64 pad, i64 dilation, bool ceil_mode) const {
    if (kernel <= 0 || stride <= 0 || dilation <= 0 || pad < 0 || pad * 2 > kernel)
      fail(ErrorCode::kInvalidArgument, where(n) + ": kernel " + std::to_string(kernel) + ", stride " + std::to_string(stride) + ", padding " + std::to_string(pad) + ", dilation " + std::to_string(dilation));
    if (in + 2 * pad - dilation * (kernel - 1) - 1 < 0) fail(ErrorCode::kShapeMismatch, where(n) + ": window larger than the padded input of " + std::to_string(in));
    return pooled(in, kernel, stride, pad, dilation, ceil_mode);
  }

  // 1D pooling over the last dim of [N, C, L] (or [C, L]).
  void lower_pool1d(const Node& n, NodeState&) {
    const std::string base = base_op(n.op);
    const int x = tensor_arg(n, "self", 0);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    if (xs.size() != 2 && xs.size() != 3) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + " for a 1D pooling");
    const i64 length = xs.back(), planes = numel(xs) / std::max<i64>(length, 1);
    Shape out_shape = xs;
    std::vector<int> ins{x};
    if (base.rfind("adaptive", 0) == 0) {
      const auto size = spatial_arg(n, "output_size", 1, 1);
      if (size[0] <= 0) fail(ErrorCode::kInvalidArgument, where(n) + ": output size " + std::to_string(size[0]));
      out_shape.back() = size[0];
      const int out = new_tensor(out_shape, false);
      const i64 o = size[0];
      const bool max = base == "adaptive_max_pool1d";
      Step& step = portable_step(ins, {out});
      const int xi = ins[0];
      step.run = [this, xi, out, planes, length, o, max] {
        if (max) portable::adaptive_max_pool1d(ptr(xi), ptr(out), planes, length, o);
        else portable::adaptive_avg_pool1d(ptr(xi), ptr(out), planes, length, o);
      };
      define(n.outputs[0], out);
      if (max && n.outputs.size() > 1) define(n.outputs[1], new_slot(Slot{}));  // indices: not computed
      return;
    }
    const i64 kernel = spatial_arg(n, "kernel_size", 1, 1)[0];
    auto stride_v = ints_arg(n, "stride");
    const i64 stride = stride_v && !stride_v->empty() ? (*stride_v)[0] : kernel;
    const i64 pad = spatial_arg(n, "padding", 1, 0)[0];
    const bool max = base == "max_pool1d";
    const i64 dilation = max ? spatial_arg(n, "dilation", 1, 1)[0] : 1;
    const bool ceil_mode = int_arg(n, "ceil_mode").value_or(0) != 0;
    portable::Pool1d p{planes, length, kernel, stride, pad, dilation, pooled_length(n, length, kernel, stride, pad, dilation, ceil_mode),
                       int_arg(n, "count_include_pad").value_or(1) != 0};
    out_shape.back() = p.out_length;
    const int out = new_tensor(out_shape, false);
    Step& step = portable_step(ins, {out});
    const int xi = ins[0];
    step.run = [this, xi, out, p, max] {
      if (max) portable::max_pool1d(p, ptr(xi), ptr(out));
      else portable::avg_pool1d(p, ptr(xi), ptr(out));
    };
    define(n.outputs[0], out);
  }

  // A 1D convolution ([N, C, L], weight [O, C/groups, K]).
  void lower_conv1d(const Node& n, NodeState& st) {
    const Tensor& w = constant_arg(n, "weight", 1, true);
    const Tensor& b = constant_arg(n, "bias", 2, false);
    const int x = tensor_arg(n, "input", 0);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    if (xs.size() != 3 || w.dim() != 3) fail(ErrorCode::kShapeMismatch, where(n) + ": input " + shape_str(xs) + ", weight " + shape_str(w.shape()) + " for a 1D convolution");
    portable::Conv1d c{};
    c.batch = xs[0];
    c.in_channels = xs[1];
    c.in_length = xs[2];
    c.out_channels = w.shape()[0];
    c.kernel = w.shape()[2];
    c.groups = int_arg(n, "groups").value_or(1);
    c.stride = spatial_arg(n, "stride", 1, 1)[0];
    c.dilation = spatial_arg(n, "dilation", 1, 1)[0];
    if (const AttributeValue* p = n.attributes.find("padding"); p && std::holds_alternative<std::string>(*p))
      fail(ErrorCode::kUnsupported, where(n) + ": padding '" + std::get<std::string>(*p) + "' (give explicit padding)");
    c.padding = spatial_arg(n, "padding", 1, 0)[0];
    if (c.groups <= 0 || c.in_channels % c.groups || c.out_channels % c.groups || w.shape()[1] * c.groups != c.in_channels)
      fail(ErrorCode::kShapeMismatch, where(n) + ": weight " + shape_str(w.shape()) + " with groups=" + std::to_string(c.groups) + " for " + std::to_string(c.in_channels) + " input channels");
    if (c.stride <= 0 || c.dilation <= 0 || c.padding < 0) fail(ErrorCode::kInvalidArgument, where(n) + ": stride, dilation must be positive and padding not negative");
    if (b.defined() && b.numel() != c.out_channels) fail(ErrorCode::kShapeMismatch, where(n) + ": bias " + shape_str(b.shape()));
    const i64 span = c.in_length + 2 * c.padding - c.dilation * (c.kernel - 1) - 1;
    if (span < 0) fail(ErrorCode::kShapeMismatch, where(n) + ": kernel larger than the padded input of " + std::to_string(c.in_length));
    c.out_length = span / c.stride + 1;
    const int out = new_tensor({c.batch, c.out_channels, c.out_length}, false);
    const float* wp = w.data_as<float>();
    const float* bp = b.defined() ? b.data_as<float>() : nullptr;
    std::vector<int> ins{x};
    Step& step = portable_step(ins, {out});
    const int xi = ins[0];
    step.run = [this, xi, out, c, wp, bp] { portable::conv1d(c, ptr(xi), wp, bp, ptr(out)); };
    post_activation(n, st, 0, fused_of(n), out);
    post_clamp(n, st, 1, fused_of(n), out);
    define(n.outputs[0], out);
  }

  void lower_prelu(const Node& n, NodeState&) {
    const int x = tensor_arg(n, "self", 0);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    const Tensor& w = constant_arg(n, "weight", 1, true);
    const i64 channels = xs.size() >= 2 ? xs[1] : 1;
    if (w.numel() != 1 && w.numel() != channels) fail(ErrorCode::kShapeMismatch, where(n) + ": " + std::to_string(w.numel()) + " weights for " + std::to_string(channels) + " channels");
    const i64 batch = xs.empty() ? 1 : xs[0];
    const i64 inner = xs.size() >= 2 ? prod(xs, 2, xs.size()) : 1;
    const i64 count = w.numel();
    const float* wp = w.data_as<float>();
    const int out = new_tensor(xs, false);
    std::vector<int> ins{x};
    Step& step = portable_step(ins, {out});
    const int xi = ins[0];
    const i64 rows = xs.size() >= 2 ? batch : 1, chans = xs.size() >= 2 ? channels : 1;
    const i64 per = xs.size() >= 2 ? inner : numel(xs);
    step.run = [this, xi, out, wp, rows, chans, per, count] { portable::prelu(ptr(xi), wp, ptr(out), rows, chans, per, count); };
    define(n.outputs[0], out);
  }

  void lower_slice_scatter(const Node& n, NodeState&) {
    const int x = tensor_arg(n, "self", 0);
    const int src = tensor_arg(n, "src", 1);
    const Shape shape = slots_[static_cast<std::size_t>(x)].shape;
    const Shape src_shape = slots_[static_cast<std::size_t>(src)].shape;
    if (shape.empty()) fail(ErrorCode::kShapeMismatch, where(n) + ": scattering into a 0-d tensor");
    const std::size_t dim = static_cast<std::size_t>(normalize_dim(int_arg(n, "dim").value_or(0), shape.size(), where(n)));
    const i64 size = shape[dim];
    i64 start = int_arg(n, "start").value_or(0), end = int_arg(n, "end").value_or(std::numeric_limits<i64>::max());
    const i64 step_by = int_arg(n, "step").value_or(1);
    if (step_by <= 0) fail(ErrorCode::kInvalidArgument, where(n) + ": slice step must be positive");
    if (start < 0) start += size;
    if (end < 0) end += size;
    start = std::clamp<i64>(start, 0, size);
    end = std::clamp<i64>(end, start, size);
    const i64 length = (end - start + step_by - 1) / step_by;
    Shape want = shape;
    want[dim] = length;
    if (src_shape != want) fail(ErrorCode::kShapeMismatch, where(n) + ": src " + shape_str(src_shape) + " for a slice of shape " + shape_str(want));
    const i64 outer = prod(shape, 0, dim), inner = prod(shape, dim + 1, shape.size());
    const int out = new_tensor(shape, false);
    std::vector<int> ins{x, src};
    Step& step = portable_step(ins, {out});
    const int xi = ins[0], si = ins[1];
    step.run = [this, xi, si, out, outer, size, inner, start, step_by, length] {
      portable::slice_scatter(ptr(xi), ptr(si), ptr(out), outer, size, inner, start, step_by, length);
    };
    define(n.outputs[0], out);
  }

  // torch.roll: each (shift, dim) pair, or with no dims over the flattened tensor.
  void lower_roll(const Node& n, NodeState&) {
    const int x = tensor_arg(n, "self", 0);
    const Shape shape = slots_[static_cast<std::size_t>(x)].shape;
    const auto shifts = ints_arg(n, "shifts");
    const auto dims = ints_arg(n, "dims").value_or(std::vector<i64>{});
    if (!shifts || shifts->empty()) fail(ErrorCode::kSchema, where(n) + ": no shifts");
    Shape rolled = shape;  // the shape the kernel sees: flattened when no dims are given
    std::vector<i64> per_dim;
    auto add = [](i64 have, i64 shift, i64 size) { return size == 0 ? 0 : ((have + shift % size) % size + size) % size; };
    if (dims.empty()) {
      if (shifts->size() != 1) fail(ErrorCode::kSchema, where(n) + ": " + std::to_string(shifts->size()) + " shifts and no dims");
      rolled = {numel(shape)};
      per_dim = {add(0, (*shifts)[0], rolled[0])};
    } else {
      if (dims.size() != shifts->size())
        fail(ErrorCode::kSchema, where(n) + ": " + std::to_string(shifts->size()) + " shifts for " + std::to_string(dims.size()) + " dims");
      per_dim.assign(shape.size(), 0);
      for (std::size_t i = 0; i < dims.size(); ++i) {
        const auto d = static_cast<std::size_t>(normalize_dim(dims[i], shape.size(), where(n)));
        per_dim[d] = add(per_dim[d], (*shifts)[i], shape[d]);
      }
    }
    const int out = new_tensor(shape, false);
    std::vector<int> ins{x};
    Step& step = portable_step(ins, {out});
    const int xi = ins[0];
    step.run = [this, xi, out, rolled, per_dim] { portable::roll(ptr(xi), ptr(out), rolled, per_dim); };
    define(n.outputs[0], out);
  }

  // numpy broadcasting of two shapes.
  Shape broadcast_shape(const Node& n, const Shape& a, const Shape& b) const {
    const std::size_t rank = std::max(a.size(), b.size());
    Shape out(rank);
    auto dim_of = [&](const Shape& s, std::size_t i) { return i + s.size() >= rank ? s[i + s.size() - rank] : i64{1}; };
    for (std::size_t i = 0; i < rank; ++i) {
      const i64 p = dim_of(a, i), q = dim_of(b, i);
      if (p != q && p != 1 && q != 1) fail(ErrorCode::kShapeMismatch, where(n) + ": shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
      out[i] = p == 1 ? q : p;
    }
    return out;
  }
  // Slot `s` in torch layout with shape `to` (broadcast by a step of ours when it differs).
  int broadcast_to(int s, const Shape& to) {
    s = as_layout(s, false);
    const Shape from = slots_[static_cast<std::size_t>(s)].shape;
    if (from == to) return s;
    const int out = new_tensor(to, false);
    Step& step = add_step({s}, {out});
    step.run = [this, s, out, from, to] { portable::broadcast(ptr(s), ptr(out), from, to); };
    return out;
  }

  // A number argument: an attribute or an input known before the run.
  // A one-element constant tensor (fill.Tensor's value) counts as a number.
  double number_arg(const Node& n, std::string_view name) const {
    if (auto in = input_for_arg(n, name, std::numeric_limits<std::size_t>::max())) {
      const Value& value = graph_.value(*in);
      if (value.is_constant() && value.data.numel() == 1) {
        switch (value.data.dtype()) {
          case DType::kFloat32: return value.data.data_as<float>()[0];
          case DType::kFloat64: return value.data.data_as<double>()[0];
          case DType::kInt64: return static_cast<double>(value.data.data_as<std::int64_t>()[0]);
          default: fail(ErrorCode::kUnsupported, where(n) + ": '" + std::string(name) + "' is a " + std::string(dtype_name(value.data.dtype())) + " tensor");
        }
      }
    }
    auto v = float_arg(n, name);
    if (!v) fail(ErrorCode::kSchema, where(n) + ": missing the number '" + std::string(name) + "'");
    return *v;
  }

  // new_zeros/new_ones/new_full (of a size), zeros_like/ones_like/full_like
  // and fill (of self's shape): one value everywhere, written on each run.
  void lower_full(const Node& n, NodeState&) {
    std::string base = base_op(n.op);
    if (base.back() == '_') base.pop_back();
    Shape shape;
    if (base.rfind("new_", 0) == 0) {
      const auto size = ints_arg(n, "size");
      if (!size) fail(ErrorCode::kSchema, where(n) + ": no size");
      shape = *size;
      for (i64 d : shape)
        if (d < 0) fail(ErrorCode::kBadShape, where(n) + ": size " + shape_str(shape) + " has a negative dim");
      checked_nbytes(DType::kFloat32, shape);
    } else {
      shape = slots_[static_cast<std::size_t>(tensor_arg(n, "self", 0))].shape;
    }
    const float value = static_cast<float>(base == "new_zeros" || base == "zeros_like" ? 0.0
                                           : base == "new_ones" || base == "ones_like" ? 1.0
                                           : number_arg(n, base == "fill" ? "value" : "fill_value"));
    const int out = new_tensor(shape, false);
    const i64 count = numel(shape);
    Step& step = add_step({}, {out});
    step.run = [this, out, value, count] { portable::fill(ptr(out), value, count); };
    define(n.outputs[0], out);
  }

  // eq/ne/lt/le/gt/ge of a tensor and a number or a tensor (broadcast): 1 or 0.
  void lower_compare(const Node& n, NodeState&) {
    static const std::map<std::string, portable::Compare, std::less<>> kOps = {
        {"eq", portable::Compare::kEq}, {"ne", portable::Compare::kNe}, {"lt", portable::Compare::kLt},
        {"le", portable::Compare::kLe}, {"gt", portable::Compare::kGt}, {"ge", portable::Compare::kGe}};
    const portable::Compare op = kOps.at(base_op(n.op));
    const int a = tensor_arg(n, "self", 0);
    const auto other = input_for_arg(n, "other", 1);
    if (!other || slot_of(*other).kind != Kind::kTensor) {
      const float b = static_cast<float>(number_arg(n, "other"));
      const Shape shape = slots_[static_cast<std::size_t>(a)].shape;
      std::vector<int> ins{a};
      const int out = new_tensor(shape, false);
      Step& step = portable_step(ins, {out});
      const int ai = ins[0];
      const i64 count = numel(shape);
      step.run = [this, op, ai, b, out, count] { portable::compare(op, ptr(ai), &b, ptr(out), count, 0); };
      return define(n.outputs[0], out);
    }
    const int b = tensor_slot(n, *other);
    const Shape shape = broadcast_shape(n, slots_[static_cast<std::size_t>(a)].shape, slots_[static_cast<std::size_t>(b)].shape);
    const int ai = broadcast_to(a, shape), bi = broadcast_to(b, shape);
    const int out = new_tensor(shape, false);
    const i64 count = numel(shape);
    Step& step = add_step({ai, bi}, {out});
    step.run = [this, op, ai, bi, out, count] { portable::compare(op, ptr(ai), ptr(bi), ptr(out), count, 1); };
    define(n.outputs[0], out);
  }

  // masked_fill(self, mask, value): value where the mask (broadcast to self) is set.
  void lower_masked_fill(const Node& n, NodeState&) {
    const int x = tensor_arg(n, "self", 0);
    const int mask = tensor_arg(n, "mask", 1);
    const float value = static_cast<float>(number_arg(n, "value"));
    const Shape shape = slots_[static_cast<std::size_t>(x)].shape;
    if (broadcast_shape(n, shape, slots_[static_cast<std::size_t>(mask)].shape) != shape)
      fail(ErrorCode::kShapeMismatch, where(n) + ": a mask of shape " + shape_str(slots_[static_cast<std::size_t>(mask)].shape) +
                                          " does not broadcast to " + shape_str(shape));
    const int xi = as_layout(x, false), mi = broadcast_to(mask, shape);
    const int out = new_tensor(shape, false);
    const i64 count = numel(shape);
    Step& step = add_step({xi, mi}, {out});
    step.run = [this, xi, mi, value, out, count] { portable::masked_fill(ptr(xi), ptr(mi), value, ptr(out), count); };
    define(n.outputs[0], out);
  }

  // matmul / mm / bmm on XNNPACK's batch matrix multiply: [..., m, k] @
  // [..., k, n], batch dims broadcast (numpy rules), 1-D operands as torch
  // treats them (a row or a column, dropped from the result).
  void lower_matmul(const Node& n, NodeState& st) {
    const std::string base = base_op(n.op);
    const int a = tensor_arg(n, "self", 0);
    const int b = tensor_arg(n, base == "matmul" ? "other" : "mat2", 1);
    Shape as = slots_[static_cast<std::size_t>(a)].shape, bs = slots_[static_cast<std::size_t>(b)].shape;
    const std::size_t want_rank = base == "mm" ? 2 : 3;
    if (base != "matmul" && (as.size() != want_rank || bs.size() != want_rank))
      fail(ErrorCode::kShapeMismatch, where(n) + ": " + base + " takes two " + std::to_string(want_rank) + "-D tensors, given " + shape_str(as) + " and " + shape_str(bs));
    if (as.empty() || bs.empty()) fail(ErrorCode::kShapeMismatch, where(n) + ": matmul of a 0-d tensor");
    const bool a_vector = as.size() == 1, b_vector = bs.size() == 1;
    if (a_vector) as.insert(as.begin(), 1);
    if (b_vector) bs.push_back(1);
    const i64 m = as[as.size() - 2], k = as.back(), nn = bs.back();
    if (bs[bs.size() - 2] != k) fail(ErrorCode::kShapeMismatch, where(n) + ": " + shape_str(as) + " @ " + shape_str(bs));
    Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
    const std::size_t batch_rank = std::max(a_batch.size(), b_batch.size());
    a_batch.insert(a_batch.begin(), batch_rank - a_batch.size(), 1);
    b_batch.insert(b_batch.begin(), batch_rank - b_batch.size(), 1);
    const Shape c_batch = broadcast_shape(n, a_batch, b_batch);
    Shape out_shape = c_batch;
    if (!a_vector) out_shape.push_back(m);
    if (!b_vector) out_shape.push_back(nn);
    define(n.outputs[0], batch_matmul(n, st, a, b, a_batch, b_batch, m, k, nn, out_shape));
  }

  // C = A @ B on XNNPACK: A [a_batch..., m, k], B [b_batch..., k, n] (batch
  // dims of equal count, broadcast), C of `out_shape` (c's elements in
  // [batch..., m, n] order). The node's first XNNPACK operator is the one.
  int batch_matmul(const Node& n, NodeState& st, int a, int b, const Shape& a_batch, const Shape& b_batch, i64 m, i64 k, i64 nn,
                   const Shape& out_shape) {
    const std::size_t batch_rank = a_batch.size();
    within_budget(out_shape);
    const int out = new_tensor(out_shape, false);
    const i64 count = numel(out_shape);
    if (count == 0) return out;
    if (k == 0) {  // a sum over nothing
      Step& step = add_step({}, {out});
      step.run = [this, out, count] { portable::fill(ptr(out), 0.0f, count); };
      return out;
    }
    if (st.ops.empty()) {
      st.ops.emplace_back();
      check(xnn_create_batch_matrix_multiply_nc_f32(0, &st.ops.back().op), n, "creating a batch matrix multiply");
    }
    xnn_operator_t op = st.ops.front().op;
    std::vector<std::size_t> da(a_batch.begin(), a_batch.end()), db(b_batch.begin(), b_batch.end());
    std::size_t ws_size = 0, ws_align = 0;
    check(xnn_reshape_batch_matrix_multiply_nc_f32(op, batch_rank, da.data(), db.data(), static_cast<std::size_t>(m),
                                                   static_cast<std::size_t>(k), static_cast<std::size_t>(nn), &ws_size, &ws_align, pool()),
          n, "reshaping a batch matrix multiply");
    workspace_bytes_ = std::max(workspace_bytes_, ws_size);
    const int ai = as_layout(a, false), bi = as_layout(b, false);
    Step& step = add_step({ai, bi}, {out});
    step.setup = [this, op, ai, bi, out, &n] {
      check(xnn_setup_batch_matrix_multiply_nc_f32(op, workspace_.get(), ptr(ai), ptr(bi), ptr(out)), n, "setting up a batch matrix multiply");
    };
    step.xnnpack = true;
    step.run = [this, op, &n] { check(xnn_run_operator(op, pool()), n, "running a batch matrix multiply"); };
    return out;
  }

  // A torch-layout tensor with its dims in the order `perm` (XNNPACK's transpose; none when in order).
  int permuted(int x, const std::vector<std::size_t>& perm) {
    x = as_layout(x, false);
    const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
    bool in_order = true;
    for (std::size_t i = 0; i < perm.size(); ++i) in_order = in_order && perm[i] == i;
    if (in_order || xs.size() < 2) return x;
    std::vector<std::size_t> in_shape(xs.begin(), xs.end());
    Shape out_shape;
    for (std::size_t p : perm) out_shape.push_back(xs[p]);
    return transposed(x, in_shape, perm, out_shape, false);
  }

  // einsum of two operands as one batch matrix multiply: the letters in both
  // operands and the output are batch dims, those in both operands only are
  // summed over, the others are rows (first operand) and columns (second).
  // Each operand is permuted to [batch, rows or columns, summed] order once.
  void lower_einsum(const Node& n, NodeState& st) {
    std::string eq;
    for (char c : n.attributes.get_string("equation").value_or("")) {
      if (c != ' ') eq += c;
    }
    std::vector<ValueId> operands = n.attributes.contains(kArgNamesAttribute) ? inputs_for_arg(n, "tensors") : n.inputs;
    const std::size_t arrow = eq.find("->");
    const std::size_t comma = eq.find(',');
    if (operands.size() != 2 || comma == std::string::npos || eq.find(',', comma + 1) != std::string::npos)
      fail(ErrorCode::kUnsupported, where(n) + ": einsum '" + eq + "' of " + std::to_string(operands.size()) + " operands (two are supported)");
    if (eq.find('.') != std::string::npos) fail(ErrorCode::kUnsupported, where(n) + ": einsum with an ellipsis");
    const std::string sa = eq.substr(0, comma), sb = eq.substr(comma + 1, arrow == std::string::npos ? std::string::npos : arrow - comma - 1);
    std::string so;
    if (arrow != std::string::npos) {
      so = eq.substr(arrow + 2);
    } else {  // implicit output: the letters used once, in alphabetical order
      for (char c : sa + sb)
        if (std::count(sa.begin(), sa.end(), c) + std::count(sb.begin(), sb.end(), c) == 1) so += c;
      std::sort(so.begin(), so.end());
    }
    const int a = tensor_slot(n, operands[0]), b = tensor_slot(n, operands[1]);
    const Shape as = slots_[static_cast<std::size_t>(a)].shape, bs = slots_[static_cast<std::size_t>(b)].shape;
    if (sa.size() != as.size() || sb.size() != bs.size())
      fail(ErrorCode::kShapeMismatch, where(n) + ": '" + eq + "' for operands " + shape_str(as) + " and " + shape_str(bs));
    std::map<char, i64> size;
    auto take = [&](const std::string& letters, const Shape& shape) {
      for (std::size_t i = 0; i < letters.size(); ++i) {
        const char c = letters[i];
        if (!std::isalpha(static_cast<unsigned char>(c))) fail(ErrorCode::kSchema, where(n) + ": '" + eq + "' has '" + std::string(1, c) + "'");
        if (std::count(letters.begin(), letters.end(), c) > 1) fail(ErrorCode::kUnsupported, where(n) + ": einsum '" + eq + "' repeats a letter in one operand");
        auto [it, fresh] = size.emplace(c, shape[i]);
        if (!fresh && it->second != shape[i])
          fail(ErrorCode::kShapeMismatch, where(n) + ": '" + std::string(1, c) + "' is " + std::to_string(it->second) + " and " + std::to_string(shape[i]) + " in '" + eq + "'");
      }
    };
    take(sa, as);
    take(sb, bs);
    std::string batch, rows, cols, summed;
    auto in = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
    for (char c : so) {
      if (!in(sa, c) && !in(sb, c)) fail(ErrorCode::kSchema, where(n) + ": output letter '" + std::string(1, c) + "' is in no operand");
      if (std::count(so.begin(), so.end(), c) > 1) fail(ErrorCode::kSchema, where(n) + ": output letter '" + std::string(1, c) + "' twice");
      (in(sa, c) && in(sb, c) ? batch : in(sa, c) ? rows : cols) += c;
    }
    for (char c : sa) {
      if (in(so, c)) continue;
      if (!in(sb, c)) fail(ErrorCode::kUnsupported, where(n) + ": einsum '" + eq + "' sums '" + std::string(1, c) + "' over one operand only");
      summed += c;
    }
    for (char c : sb)
      if (!in(so, c) && !in(sa, c)) fail(ErrorCode::kUnsupported, where(n) + ": einsum '" + eq + "' sums '" + std::string(1, c) + "' over one operand only");
    auto order = [](const std::string& letters, const std::string& want) {
      std::vector<std::size_t> perm;
      for (char c : want) perm.push_back(letters.find(c));
      return perm;
    };
    auto product_of = [&](const std::string& letters) {
      i64 p = 1;
      for (char c : letters) p *= size[c];
      return p;
    };
    const i64 m = product_of(rows), k = product_of(summed), nn = product_of(cols);
    const int pa = permuted(a, order(sa, batch + rows + summed));
    const int pb = permuted(b, order(sb, batch + summed + cols));
    Shape batch_shape;
    for (char c : batch) batch_shape.push_back(size[c]);
    Shape mid = batch_shape;  // the product's own order: batch, rows, columns
    for (char c : rows + cols) mid.push_back(size[c]);
    const int product = batch_matmul(n, st, pa, pb, batch_shape, batch_shape, m, k, nn, mid);
    define(n.outputs[0], permuted(product, order(batch + rows + cols, so)));
  }

  // torch.nn.MultiheadAttention's fused eval path (torchvision's ViT), without a mask.
  void lower_attention(const Node& n, NodeState& st) {
    const int q = tensor_arg(n, "query", 0), k = tensor_arg(n, "key", 1), v = tensor_arg(n, "value", 2);
    const Shape qs = slots_[static_cast<std::size_t>(q)].shape, ks = slots_[static_cast<std::size_t>(k)].shape;
    if (qs.size() != 3 || ks != qs || ks != slots_[static_cast<std::size_t>(v)].shape)  // as PyTorch's kernel requires
      fail(ErrorCode::kShapeMismatch, where(n) + ": query " + shape_str(qs) + ", key " + shape_str(ks) + " (equal batch-first [batch, length, embed] expected)");
    if (input_for_arg(n, "mask", 9)) fail(ErrorCode::kUnsupported, where(n) + ": attention with a mask");
    portable::Attention a{};
    a.batch = qs[0];
    a.query_length = qs[1];
    a.key_length = ks[1];
    a.embed = int_arg(n, "embed_dim").value_or(qs[2]);
    a.heads = int_arg(n, "num_head").value_or(1);
    a.average = int_arg(n, "average_attn_weights").value_or(1) != 0;
    if (a.embed != qs[2] || a.heads <= 0 || a.embed % a.heads)
      fail(ErrorCode::kShapeMismatch, where(n) + ": embed_dim " + std::to_string(a.embed) + " in " + std::to_string(a.heads) + " heads for inputs of " + std::to_string(qs[2]));
    const i64 e = a.embed;
    const float* qkv_w = weight_or_null(n, "qkv_weight", 5, 3 * e * e);
    const float* qkv_b = weight_or_null(n, "qkv_bias", 6, 3 * e);
    const float* proj_w = weight_or_null(n, "proj_weight", 7, e * e);
    const float* proj_b = weight_or_null(n, "proj_bias", 8, e);
    if (!qkv_w || !proj_w) fail(ErrorCode::kSchema, where(n) + ": missing qkv_weight or proj_weight");
    const bool need_weights = int_arg(n, "need_weights").value_or(1) != 0;
    // The projections on XNNPACK (weights packed once), the attention itself
    // (scores, softmax, weighted sum per head) in a portable kernel.
    const int pq = fully_connected(n, st, 0, q, qkv_w, qkv_b, e, e);
    const int pk = fully_connected(n, st, 1, k, qkv_w + e * e, qkv_b ? qkv_b + e : nullptr, e, e);
    const int pv = fully_connected(n, st, 2, v, qkv_w + 2 * e * e, qkv_b ? qkv_b + 2 * e : nullptr, e, e);
    const int context = new_tensor(qs, false);
    const int weights = need_weights ? new_tensor(a.average ? Shape{a.batch, a.query_length, a.key_length} : Shape{a.batch, a.heads, a.query_length, a.key_length}, false)
                                     : new_tensor(Shape{0}, false);
    Step& step = add_step({pq, pk, pv}, {context, weights});
    step.run = [this, a, pq, pk, pv, context, weights, need_weights] {
      portable::attention(a, ptr(pq), ptr(pk), ptr(pv), ptr(context), need_weights ? ptr(weights) : nullptr);
    };
    define(n.outputs[0], fully_connected(n, st, 3, context, proj_w, proj_b, e, e));
    if (n.outputs.size() > 1) define(n.outputs[1], weights);
  }

  void lower_identity(const Node& n, NodeState&) {
    if (base_op(n.op).find("dropout") != std::string::npos && int_arg(n, "train").value_or(0))
      fail(ErrorCode::kUnsupported, where(n) + ": dropout in training mode");
    if (n.inputs.empty()) fail(ErrorCode::kSchema, where(n) + ": no input");
    define(n.outputs[0], tensor_slot(n, n.inputs[0]));
  }

  void lower_size(const Node& n, NodeState&) {
    auto self = input_for_arg(n, "self", 0);
    if (!self) fail(ErrorCode::kSchema, where(n) + ": missing 'self'");
    const Slot& s = slot_of(*self);
    if (s.kind != Kind::kTensor) fail(ErrorCode::kUnsupported, where(n) + ": size of a non-tensor");
    if (base_op(n.op) == "dim") return define(n.outputs[0], int_slot(static_cast<i64>(s.shape.size())));
    if (auto dim = int_arg(n, "dim")) {
      const i64 d = normalize_dim(*dim, s.shape.size(), where(n));
      return define(n.outputs[0], int_slot(s.shape[static_cast<std::size_t>(d)]));
    }
    define(n.outputs[0], ints_slot(s.shape));
  }

  void lower_getitem(const Node& n, NodeState&) {
    auto list = input_for_arg(n, "list", 0);
    if (!list) fail(ErrorCode::kSchema, where(n) + ": missing 'list'");
    const Slot& s = slot_of(*list);
    if (s.kind != Kind::kInts) fail(ErrorCode::kUnsupported, where(n) + ": indexing something other than a list of integers");
    const i64 size = static_cast<i64>(s.ints.size());
    i64 idx = int_arg(n, "idx").value_or(0);
    if (idx < 0) idx += size;
    if (idx < 0 || idx >= size) fail(ErrorCode::kOutOfRange, where(n) + ": index " + std::to_string(idx) + " of a list of " + std::to_string(size));
    define(n.outputs[0], int_slot(s.ints[static_cast<std::size_t>(idx)]));
  }

  void lower_scalar_identity(const Node& n, NodeState&) {
    if (n.inputs.empty()) fail(ErrorCode::kSchema, where(n) + ": no input");
    const Slot& s = slot_of(n.inputs[0]);
    if (s.kind == Kind::kInt) return define(n.outputs[0], base_op(n.op) == "Float" ? float_slot(static_cast<double>(s.i)) : int_slot(s.i));
    if (s.kind == Kind::kFloat) return define(n.outputs[0], base_op(n.op) == "Int" ? int_slot(static_cast<i64>(s.f)) : float_slot(s.f));
    fail(ErrorCode::kUnsupported, where(n) + ": a value computed at run time where a number known before the run is needed");
  }

  // ---- outputs --------------------------------------------------------

  Tensor read_out(int s) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    switch (slot.kind) {
      case Kind::kInt: return Tensor::from_vector<std::int64_t>({slot.i}, {});
      case Kind::kFloat: return Tensor::from_vector<double>({slot.f}, {});
      case Kind::kInts: return Tensor::from_vector<std::int64_t>(slot.ints, {static_cast<i64>(slot.ints.size())});
      case Kind::kTensor: break;
      case Kind::kNone: fail(ErrorCode::kUnsupported, "xnnpack: a graph output this backend cannot return");
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

  Options options_;
  std::shared_ptr<pthreadpool> pool_;  // shared with the other graphs of as many threads
  int threads_ = 1;
  Graph graph_;
  std::unordered_map<std::uint32_t, NodeState> states_;
  std::map<std::tuple<const float*, bool, Shape>, std::vector<float>> constant_copies_;
  std::set<const float*> padded_;  // constants that already carry XNNPACK's tail
  std::optional<std::vector<Shape>> planned_;
  // The plan for the current input shapes.
  std::vector<Slot> slots_;
  std::vector<int> value_slot_;
  std::vector<Step> steps_;
  std::vector<XnnOp> plan_ops_;
  std::map<std::pair<int, bool>, int> layout_memo_;
  std::vector<AlignedFloats> buffers_;
  std::size_t workspace_bytes_ = 0;
  AlignedFloats workspace_;
  std::size_t arena_bytes_ = 0;
  std::vector<int> input_slots_, output_slots_;
  std::vector<double> step_ms_;
  NodeId current_;
  std::vector<Shape> planned_shapes_;
};

XnnpackBackend::XnnpackBackend(const Options& options) : impl_(std::make_unique<Impl>(options)) {}
XnnpackBackend::~XnnpackBackend() = default;

void XnnpackBackend::prepare(const Graph& graph, const Device& device, const Stream* stream) {
  if (device.type != DeviceType::kCPU || stream)
    fail(ErrorCode::kUnsupported, "xnnpack: runs on the CPU only, not on " + device.str());
  impl_->prepare(graph);
}

std::vector<Tensor> XnnpackBackend::run(const std::vector<Tensor>& inputs) { return impl_->run(inputs); }

std::vector<UnsupportedNode> XnnpackBackend::unsupported(const Graph& graph) const { return Impl::unsupported(graph); }

std::vector<std::string> lowered_ops() {
  std::vector<std::string> out;
  return XnnpackBackend::Impl::lowered_op_names();
}

void XnnpackBackend::move(const Device& device, const Stream* stream) {
  if (device.type != DeviceType::kCPU || stream)
    fail(ErrorCode::kUnsupported, "xnnpack: runs on the CPU only, not on " + device.str());
}

int XnnpackBackend::threads() const { return impl_->threads(); }
std::vector<NodeTime> XnnpackBackend::profile() const { return impl_->profile(); }

std::string_view engine_name(Engine engine) {
  switch (engine) {
    case Engine::kXnnpack: return "xnnpack";
    case Engine::kPortable: return "portable";
    case Engine::kNone: break;
  }
  return "none";
}
std::size_t XnnpackBackend::arena_bytes() const { return impl_->arena_bytes(); }

std::unique_ptr<Backend> make_backend(const Options& options) { return std::make_unique<XnnpackBackend>(options); }

bool has_threads() {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  return false;
#else
  return true;
#endif
}

}  // namespace tracegraph::xnnpack
