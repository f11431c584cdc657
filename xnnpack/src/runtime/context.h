// The planning context: what a lowering (lower/) may use to turn a node into
// steps. Slots (the values of one plan: tensors with their logical shape and
// storage order, and numbers known before the run), steps (a node's work, run
// in order), the arguments of a node read against its schema, layout changes,
// the pool's threads and the memory budget. The runtime (runtime.h) derives
// from it and owns the rest: the planning loop, the memory plan, running and
// reading the outputs. Private to xnnpack/src.
#pragma once

#include "runtime/support.h"

namespace tracegraph::xnnpack {

enum class Kind { kNone, kTensor, kInt, kInts, kFloat };
struct Slot {
  Kind kind = Kind::kNone;
  Shape shape;                 // logical (torch) shape
  bool channels_last = false;  // storage order for rank 4 and 5
  // A complex tensor: `shape` is torch's with a last dim of 2, the (real,
  // imaginary) pairs (view_as_real's layout); lower/complex.cpp.
  bool complex = false;
  // An int64 tensor: `shape` is torch's with a last dim of 2, each element's
  // 8 bytes as two 32-bit words, so that the layout ops move them as they
  // move complex pairs; lower/integer.cpp.
  bool int64 = false;
  i64 i = 0;
  double f = 0;
  std::vector<i64> ints;
  const float* constant = nullptr;  // weights and other constants live outside the arena
  int root = -1;                    // the slot whose storage this one uses (itself unless an alias)
  int buffer = -1;
  int first_step = std::numeric_limits<int>::max();
  int last_step = -1;
};
// Torch's shape of a tensor slot: without the pair dim of a complex or int64 one.
inline Shape logical(const Slot& s) { return Shape(s.shape.begin(), s.shape.end() - (s.complex || s.int64 ? 1 : 0)); }
struct Step {
  NodeId node;  // invalid for the layout changes at the graph's edges
  std::vector<int> reads, writes;
  std::function<void()> setup;
  std::function<void()> run;
  bool xnnpack = false;   // runs an XNNPACK operator (else a kernel of ours)
  bool winograd = false;  // a Winograd convolution (transforms of ours around our GEMM or XNNPACK's)
  std::string winograd_form;  // NodeTime::winograd
  bool layout_change = false;  // a transpose between channels-last and torch's order
  bool conversion = false;     // int64 to float32 and back for an op that computes on float32 (lower/integer.cpp)
  int column_blocks = 0;       // XNNPACK operators over blocks of output columns (0: one, or none)
  int pixel_fold = 1;          // output pixels folded into one of XNNPACK's (pixel_fold())
};
// What outlives a re-plan: XNNPACK operators with packed weights, and the
// constants a node derived (batch norm's scale and shift, scalar operands).
struct NodeState {
  std::vector<XnnOp> ops;
  std::vector<std::vector<float>> data;
  // A Winograd convolution's batched GEMMs (conv_winograd.cpp), by form:
  // over XNNPACK's packed transformed weights, or with the transformed
  // weights (transposed, kept here) as the left operand.
  struct WinogradGemm {
    XnnOp op;
    std::vector<float> weights;
  };
  std::map<int, WinogradGemm> winograd;
  // A GEMM's operators over blocks of its output columns (column_blocks()),
  // by the node's operator number: one block, or `width` columns each.
  struct ColumnBlocks {
    i64 width = 0;
    std::vector<XnnOp> ops;
  };
  std::map<std::size_t, ColumnBlocks> columns;
};

// The fused activation a transform put on a node (fusible_activation() in
// the SDK says which), as XNNPACK output bounds where it is a clamp, else as
// a step after the op.
struct Fused {
  float min = -kInf, max = kInf;
  std::optional<xnn_unary_operator> post;
  std::optional<portable::Unary> portable_post;  // an activation XNNPACK has no operator for
};

// A memory-bound kernel (copies, adds) goes to threads in slices of about
// this many floats or more: smaller ones cost more to hand out than to run.
inline constexpr i64 kSliceFloats = 16384;

class Context {
 public:
  explicit Context(const Options& options);
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Options& options() const { return options_; }
  int threads() const { return threads_; }
  const Graph& graph() const { return graph_; }
  // Options::memory_budget, or what this platform can address.
  std::size_t memory_budget() const;

  Slot& slot(int s) { return slots_[static_cast<std::size_t>(s)]; }
  const Slot& slot(int s) const { return slots_[static_cast<std::size_t>(s)]; }
  // An XNNPACK operator that lives as long as the plan (made again with it).
  XnnOp& plan_op() { return plan_ops_.emplace_back(); }
  // Scratch that XNNPACK's operators share (workspace()), at least `bytes`.
  void reserve_workspace(std::size_t bytes) { workspace_bytes_ = std::max(workspace_bytes_, bytes); }
  // Valid from the steps' setup on.
  float* workspace() const { return workspace_.get(); }

  // The slot whose storage slot `s` uses; the data of a tensor slot (valid
  // from the steps' setup on).
  int root(int s) const { return slots_[static_cast<std::size_t>(s)].root; }

  float* ptr(int s) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    if (slot.constant) return const_cast<float*>(slot.constant);
    return buffers_[static_cast<std::size_t>(slots_[static_cast<std::size_t>(slot.root)].buffer)].get();
  }

  // The data of an int64 slot (Slot::int64): its word pairs as the integers
  // they are (buffers and int64 constants are 8-byte aligned).
  i64* int_ptr(int s) { return reinterpret_cast<i64*>(ptr(s)); }

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
  // XNNPACK takes kernel sizes, strides, padding and dilation as 32-bit
  // unsigned; a file's values past this limit are refused before any is cast.
  void within_geometry(const Node& n, std::initializer_list<std::pair<const char*, const std::vector<i64>*>> lists) const {
    constexpr i64 kLimit = i64{1} << 24;
    for (const auto& [name, values] : lists) {
      for (i64 v : *values)
        if (v < 0 || v > kLimit)
          fail(ErrorCode::kLimitExceeded, where(n) + ": '" + name + "' " + shape_str(*values) + " is past the " + std::to_string(kLimit) +
                                              " XNNPACK's geometry takes");
    }
  }
  // The indirection buffer XNNPACK's convolution, deconvolution and pooling
  // operators allocate at reshape (a pointer per output pixel and kernel tap),
  // counted against the budget before the reshape allocates it.
  void reserve_indirection(const Node& n, i64 out_h, i64 out_w, i64 window) {
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
  int alias(int of, Shape shape, bool channels_last) {
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

  // Tensors torch holds as integers or bool (indices, masks) are held here
  // as float32, exact up to 2^24 (portable.h). A constant of value `v`
  // (integer, bool or double tensor), or a number or list of ints planning
  // knows, as a float32 constant tensor slot: nullopt where a value is not
  // exact as a float32.
  std::optional<int> held_as_floats(ValueId v) {
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
  // A constant tensor of `values` made while planning (arange, full): a float32
  // slot, its data kept until prepare().
  int planned_constant(Shape shape, std::vector<float> values) {
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
  // An int64 tensor slot (Slot::int64) of `values` and torch's `shape`, its
  // data kept in `store` (a graph's constant, or a plan's: planned_int64()).
  int int64_constant(std::vector<float>& store, const std::vector<i64>& values, Shape shape) {
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
  int planned_int64(const std::vector<i64>& values, Shape shape) { return int64_constant(held_plans_.emplace_back(), values, std::move(shape)); }
  // The slot of a tensor argument of any dtype torch has (indices, masks):
  // a float32 tensor, or a number or a list planning knows, held as floats.
  int held_tensor_slot(const Node& n, ValueId v) {
    const Slot& s = slot_of(v);
    if (s.kind == Kind::kTensor) return slot_index(v);
    if (auto h = held_as_floats(v)) return *h;
    fail(ErrorCode::kUnsupported, where(n) + ": input '" + graph_.value(v).name + "' is not a tensor this backend holds");
  }

  const Slot& slot_of(ValueId v) const {
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
  int slot_index(ValueId v) const {
    slot_of(v);
    return value_slot_[v.index];
  }
  void define(ValueId v, int s) { value_slot_[v.index] = s; }
  bool defined(ValueId v) const { return value_slot_[v.index] >= 0; }

  // ---- arguments ------------------------------------------------------

  std::string where(const Node& n) const { return "xnnpack: node '" + n.name + "' (" + n.op + ")"; }
  // The node being lowered, or the graph's edges.
  std::string where_now() const { return current_.valid() ? where(graph_.node(current_)) : std::string("xnnpack: the graph's inputs"); }

  // A one-element constant tensor's value (a scalar_tensor, fill.Tensor's value).
  static std::optional<double> constant_number(const Slot& s) {
    if (s.kind == Kind::kTensor && s.constant && checked_numel(s.shape) == 1) return s.constant[0];
    return std::nullopt;
  }
  // Arguments: an attribute through the op table's decoder (arg_int, ...), or
  // an input whose value planning knows.
  std::optional<i64> int_arg(const Node& n, std::string_view name) const {
    if (n.attributes.contains(name)) return tracegraph::arg_int(n, name);
    if (auto v = input_for_arg(n, name, std::numeric_limits<std::size_t>::max())) {
      const Slot& s = slot_of(*v);
      if (s.kind == Kind::kInt) return s.i;
      if (auto c = constant_number(s)) return static_cast<i64>(*c);
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
      if (auto c = constant_number(s)) return *c;
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
    if (slots_[static_cast<std::size_t>(s)].kind == Kind::kTensor) return s;
    // An integer or bool constant the op reads as a tensor (int64 operands,
    // which planning knows as numbers or a list): held as floats, exact to 2^24.
    if (graph_.value(v).is_constant())
      if (auto h = held_as_floats(v)) return *h;
    fail(ErrorCode::kUnsupported, where(n) + ": input '" + graph_.value(v).name + "' is not a float32 tensor");
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

  // Numbers a node derived (a scalar operand, a pad value), kept in its state
  // across plans as floats with XNNPACK's tail: rewritten where a new plan's
  // numbers differ (a size from new input shapes, item()'s value), and the
  // copies made of the old ones forgotten.
  const float* node_numbers(NodeState& st, std::size_t k, std::vector<float> values) {
    values.resize(values.size() + kTailBytes / sizeof(float), 0.0f);
    if (st.data.size() <= k) st.data.resize(k + 1);
    std::vector<float>& held = st.data[k];
    if (held.size() == values.size() && std::memcmp(held.data(), values.data(), values.size() * sizeof(float)) == 0) return held.data();
    forget_copies(held.data());
    held = std::move(values);
    padded_.insert(held.data());
    return held.data();
  }
  // Drops what was made from constant floats at `p` (padded and layout copies),
  // before they change or are freed.
  void forget_copies(const float* p) {
    padded_.erase(p);
    for (auto it = constant_copies_.begin(); it != constant_copies_.end();) {
      if (std::get<0>(it->first) == p) it = constant_copies_.erase(it);
      else ++it;
    }
  }

  // ---- values only the run knows ---------------------------------------

  // nonzero's count and item()'s value decide the shapes and numbers after
  // them. A plan is made for the value the last run read there
  // (read_by_run()); the node's step reads the value again and, where it
  // differs, stops the run with Observed: the runtime plans for the new value
  // and runs again. A node whose value no run has read yet ends its plan: its
  // step always reports.
  struct Observed {
    NodeId node;
    double value;
  };
  // The value `read(data of slot x)` gives at the run, for the node being
  // lowered: a step reads it and checks it against the value planned for (the
  // last run's; bit for bit, so a NaN is the NaN planned for). nullopt where
  // no run has read it yet: the plan stops after this step.
  template <class Read>
  std::optional<double> read_by_run(int x, Read read) {
    auto it = observed_.find(current_.index);
    const std::optional<double> planned = it == observed_.end() ? std::nullopt : std::optional<double>(it->second);
    Step& step = add_step({x}, {});
    step.run = [this, x, read, planned, id = step.node] {
      const double seen = read(ptr(x));
      if (!planned || std::memcmp(&*planned, &seen, sizeof seen) != 0) throw Observed{id, seen};
    };
    if (!planned) plan_stopped_ = true;
    return planned;
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

  // Slot `s` with its physical dims (`full_shape`) permuted by `full_perm`, as a slot
  // of logical shape `shape`: for a constant, a transposed copy made once; else
  // a transpose step.
  int transposed(int s, const std::vector<std::size_t>& full_shape, const std::vector<std::size_t>& full_perm, const Shape& shape,
                 bool channels_last) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    // The same move over fewer dims: size-1 dims dropped, and input dims that
    // stay next to each other merged (a 3D Swin transformer's window partition
    // permutes 8 dims, of which 5 or 6 are left). None moved: the same bytes.
    std::vector<std::size_t> in_shape, perm;
    simplify_permutation(full_shape, full_perm, in_shape, perm);
    if (std::is_sorted(perm.begin(), perm.end())) return alias(s, shape, channels_last);
    const std::size_t rank = in_shape.size();
    // XNNPACK's transpose takes up to XNN_MAX_TENSOR_DIMS (6) dims; past
    // that, a strided copy of ours.
    const bool portable = rank > XNN_MAX_TENSOR_DIMS;
    std::vector<i64> sizes(rank), strides(rank), in_strides(rank, 1);
    for (std::size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * static_cast<i64>(in_shape[d]);
    for (std::size_t d = 0; d < rank; ++d) sizes[d] = static_cast<i64>(in_shape[perm[d]]), strides[d] = in_strides[perm[d]];
    if (slot.constant) {
      auto& copy = constant_copies_[{slot.constant, channels_last, shape}];
      if (copy.empty()) {
        copy.resize(static_cast<std::size_t>(numel(shape)) + kTailBytes / sizeof(float));
        if (portable) portable::as_strided(slot.constant, copy.data(), sizes, strides, 0);
        else check(xnn_run_transpose_nd_x32(slot.constant, copy.data(), rank, in_shape.data(), perm.data(), 0, nullptr), "transposing a constant");
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
    if (portable) {
      Step& step = add_step({s}, {out});
      step.layout_change = true;
      step.run = [this, s, out, sizes, strides] { portable::as_strided(ptr(s), ptr(out), sizes, strides, 0); };
      return out;
    }
    plan_ops_.emplace_back();
    XnnOp& op = plan_ops_.back();
    check(xnn_create_transpose_nd_x32(0, &op.op), "creating a transpose");
    const xnn_status reshaped = xnn_reshape_transpose_nd_x32(op.op, rank, in_shape.data(), perm.data(), pool());
    if (reshaped != xnn_status_success) op.op = nullptr;  // XNNPACK deletes a transpose whose reshape fails
    check(reshaped, "reshaping a transpose");
    xnn_operator_t o = op.op;
    Step& step = add_step({s}, {out});
    step.setup = [this, o, s, out] { check(xnn_setup_transpose_nd_x32(o, ptr(s), ptr(out)), "setting up a transpose"); };
    step.xnnpack = true;
    step.layout_change = true;
    step.run = [this, o] { check(xnn_run_operator(o, pool()), "running a transpose"); };
    return out;
  }

  pthreadpool_t pool() const { return pool_.get(); }
  // f(first, count) over slices of [0, total), `tile` or more each, on the
  // pool's threads (inline without a pool), denormals flushed (kNoDenormals).
  void parallel_slices(i64 total, const std::function<void(i64, i64)>& f, i64 tile = 1) const {
    pthreadpool_parallelize_1d_tile_1d(
        pool(), [](void* context, std::size_t first, std::size_t count) {
          (*static_cast<const std::function<void(i64, i64)>*>(context))(static_cast<i64>(first), static_cast<i64>(count));
        },
        const_cast<std::function<void(i64, i64)>*>(&f), static_cast<std::size_t>(std::max<i64>(total, 0)), static_cast<std::size_t>(tile),
        kNoDenormals);
  }

  // kernels::copy_blocks on the pool's threads: `count` blocks of `block`
  // floats, whole blocks to a task where they are small, a block cut into
  // pieces of about kSliceFloats where they are large (a crop along the
  // outermost axis is one block).
  void parallel_copy_blocks(const float* src, float* dst, i64 count, i64 block, i64 src_stride, i64 dst_stride) const {
    if (count <= 0 || block <= 0) return;
    const i64 pieces = (block + kSliceFloats - 1) / kSliceFloats;
    if (pieces == 1) {
      parallel_slices(count, [&](i64 first, i64 n) { kernels::copy_blocks(src + first * src_stride, dst + first * dst_stride, n, block, src_stride, dst_stride); },
                      std::max<i64>(1, kSliceFloats / block));
      return;
    }
    const i64 piece = (block + pieces - 1) / pieces;
    parallel_slices(count * pieces, [&](i64 first, i64 n) {
      for (i64 t = first; t < first + n; ++t) {
        const i64 b = t / pieces, offset = t % pieces * piece;
        kernels::copy_blocks(src + b * src_stride + offset, dst + b * dst_stride + offset, 1, std::min(piece, block - offset), 0, 0);
      }
    });
  }

  // `perm` over `shape` with its size-1 dims dropped and each run of input
  // dims that stays in order in perm merged into one.
  static void simplify_permutation(const std::vector<std::size_t>& shape, const std::vector<std::size_t>& perm,
                                   std::vector<std::size_t>& out_shape, std::vector<std::size_t>& out_perm) {
    const std::size_t rank = shape.size();
    // The kept dims in input order, renumbered.
    std::vector<std::size_t> renumber(rank, rank);
    std::vector<std::size_t> kept_shape;
    for (std::size_t d = 0; d < rank; ++d)
      if (shape[d] != 1) renumber[d] = kept_shape.size(), kept_shape.push_back(shape[d]);
    std::vector<std::size_t> kept_perm;
    for (std::size_t p : perm)
      if (renumber[p] < rank) kept_perm.push_back(renumber[p]);
    // Runs of consecutive input dims in the output order.
    std::vector<std::size_t> group_of(kept_shape.size());  // input dim -> its run
    std::vector<std::size_t> first_of_run;                  // the runs in output order, by first input dim
    for (std::size_t k = 0; k < kept_perm.size(); ++k)
      if (k == 0 || kept_perm[k] != kept_perm[k - 1] + 1) first_of_run.push_back(kept_perm[k]);
    std::vector<std::size_t> starts(first_of_run);
    std::sort(starts.begin(), starts.end());  // the runs in input order
    out_shape.assign(starts.size(), 1);
    for (std::size_t r = 0; r < starts.size(); ++r) {
      const std::size_t end = r + 1 < starts.size() ? starts[r + 1] : kept_shape.size();
      for (std::size_t d = starts[r]; d < end; ++d) out_shape[r] *= kept_shape[d], group_of[d] = r;
    }
    out_perm.clear();
    for (std::size_t first : first_of_run) out_perm.push_back(group_of[first]);
  }

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
    else fail(ErrorCode::kUnsupported, where(n) + ": fused activation '" + *kind + "' is not one this backend runs");
    return f;
  }

  // A step of ours over torch-layout tensors: `ins` are made torch-layout first.
  Step& portable_step(std::vector<int>& ins, std::vector<int> outs) {
    for (int& s : ins) s = as_layout(s, false);
    return add_step(ins, std::move(outs));
  }
  // The common case: one input (made torch-layout) to `out`, kernel(x, y) on their data.
  template <class Kernel>
  void portable_map(int x, int out, Kernel kernel) {
    const int xi = as_layout(x, false);
    Step& step = add_step({xi}, {out});
    step.run = [this, xi, out, kernel] { kernel(ptr(xi), ptr(out)); };
  }
  const float* weight_or_null(const Node& n, std::string_view name, std::size_t position, i64 expected) {
    const Tensor& t = constant_arg(n, name, position, false);
    if (!t.defined()) return nullptr;
    if (t.numel() != expected)
      fail(ErrorCode::kShapeMismatch, where(n) + ": '" + std::string(name) + "' has " + std::to_string(t.numel()) + " elements, expected " + std::to_string(expected));
    return t.data_as<float>();
  }

 protected:
  Options options_;
  std::shared_ptr<pthreadpool> pool_;  // shared with the other graphs of as many threads
  int threads_ = 1;
  Graph graph_;
  std::map<std::tuple<const float*, bool, Shape>, std::vector<float>> constant_copies_;
  std::set<const float*> padded_;  // constants that already carry XNNPACK's tail
  std::unordered_map<std::uint32_t, std::vector<float>> held_;        // held_as_floats(), by value index
  std::unordered_map<std::uint32_t, std::vector<float>> held_int64_;  // the int64 constants' words, by value index
  std::deque<std::vector<float>> held_plans_;
  // The plan for the current input shapes.
  std::vector<Slot> slots_;
  std::vector<int> value_slot_;
  std::vector<Step> steps_;
  std::vector<XnnOp> plan_ops_;
  std::map<std::pair<int, bool>, int> layout_memo_;
  std::vector<AlignedFloats> buffers_;
  std::size_t workspace_bytes_ = 0;
  std::size_t operator_bytes_ = 0;  // XNNPACK's own buffers in this plan (indirection)
  AlignedFloats workspace_;
  NodeId current_;
  std::unordered_map<std::uint32_t, double> observed_;  // by node index: what the last run read there
  bool plan_stopped_ = false;                            // the plan ends at a node whose value no run has read
};

}  // namespace tracegraph::xnnpack
