// The XNNPACK backend's implementation class, shared by its files: the
// plan (slots and steps), argument decoding and layout here; one lowering file
// per op family (lower_*.cpp, dispatched by lowering_table.cpp); planning
// (plan.cpp) with the memory plan (memory_plan.cpp); the runtime and the
// public class (backend.cpp);
// the kernels of ours in portable.cpp, kernels.cpp and winograd.cpp. Private to wasm/xnnpack/src.
#pragma once

#include "tracegraph/xnnpack/backend.h"

#include <pthreadpool.h>
#include <xnnpack.h>
// Ours, renamed (scripts/build_xnnpack.sh), not LibTorch's header of the same
// name, which would have this file call LibTorch's copy.
#ifndef TRACEGRAPH_XNNPACK_SYMBOLS
#error "xnnpack.h is not tracegraph's own: put tracegraph_xnnpack_deps' include directory before LibTorch's"
#endif

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <new>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <unistd.h>
#endif

#include "cpu.h"
#include "kernels.h"
#include "memory_plan.h"
#include "portable.h"
#include "thread_pool.h"
#include "tracegraph/op_table.h"
#include "tracegraph/shape_rules.h"

namespace tracegraph::xnnpack {
namespace detail {

using i64 = std::int64_t;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr std::size_t kAlignment = 64;
// XNNPACK may read (never write) a little past the end of its inputs.
constexpr std::size_t kTailBytes = XNN_EXTRA_BYTES + kAlignment;

inline void init_xnnpack() {
  // The CPU first: a cap (TRACEGRAPH_MAX_CPU_ISA) must reach cpuinfo's table
  // before XNNPACK's hardware config reads it.
  cpu::features();
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
inline AlignedFloats aligned_floats(std::size_t bytes) {
  return AlignedFloats(static_cast<float*>(::operator new[](bytes + kTailBytes, std::align_val_t(kAlignment))));
}

// Choices measured while planning (Winograd's form, the depthwise kernel),
// remembered for the process by a key of sizes; graphs on any thread share them.
template <typename T>
class MeasuredChoices {
 public:
  std::optional<T> find(const std::vector<i64>& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = choices_.find(key);
    return it == choices_.end() ? std::nullopt : std::optional<T>(it->second);
  }
  void put(const std::vector<i64>& key, T choice) {
    std::lock_guard<std::mutex> lock(mutex_);
    choices_[key] = choice;
  }

 private:
  std::mutex mutex_;
  std::map<std::vector<i64>, T> choices_;
};

// The wall-clock seconds f takes.
inline double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// In wasm, a function first runs as V8's baseline (Liftoff) code; its
// optimized code replaces it only after it has run a while and a background
// compile is done. A kernel measured before then looks 1.5-4x slower than it
// is: our 1x1 kernel's first three rounds took 1.3-5.4 ms, then 0.31 (against
// XNNPACK's 0.45), so it lost a choice it should have won. Before a run is
// timed, warm_up() runs it untimed until its family (the kernels it runs) has
// run kWarmUpSeconds in this process. Natively there is nothing to wait for.
#ifdef __EMSCRIPTEN__
inline constexpr double kWarmUpSeconds = 0.05;
#else
inline constexpr double kWarmUpSeconds = 0.0;
#endif
inline void warm_up(const std::string& family, const std::function<void()>& run) {
  static std::mutex mutex;
  static std::map<std::string, double> spent;
  std::lock_guard<std::mutex> lock(mutex);
  double& seconds = spent[family];
  for (int calls = 0; seconds < kWarmUpSeconds && calls < 1000; ++calls) seconds += seconds_of(run);
}

inline i64 numel(const Shape& shape) { return checked_numel(shape); }
inline i64 prod(const Shape& shape, std::size_t from, std::size_t to) {
  i64 p = 1;
  for (std::size_t i = from; i < to && i < shape.size(); ++i) p *= shape[i];
  return p;
}
inline bool spatial_rank(std::size_t rank) { return rank == 4 || rank == 5; }
// XNNPACK takes geometry as uint32_t; the sizes were checked against the shapes.
inline std::uint32_t u32(i64 v) { return static_cast<std::uint32_t>(v); }

// Channels-last storage of a logical [N, C, S...] tensor is [N, S..., C].
inline Shape physical(const Shape& logical, bool channels_last) {
  if (!channels_last) return logical;
  Shape p{logical[0]};
  for (std::size_t i = 2; i < logical.size(); ++i) p.push_back(logical[i]);
  p.push_back(logical[1]);
  return p;
}
inline std::size_t physical_axis(std::size_t axis, std::size_t rank, bool channels_last) {
  if (!channels_last || axis == 0) return axis;
  return axis == 1 ? rank - 1 : axis - 1;
}
// Whether channels-last and plain storage of this shape are the same bytes.
inline bool layouts_agree(const Shape& s) { return !spatial_rank(s.size()) || s[1] == 1 || prod(s, 2, s.size()) == 1; }

inline i64 normalize_dim(i64 dim, std::size_t rank, const std::string& where) {
  const i64 r = static_cast<i64>(rank);
  if (dim < -r || dim >= std::max<i64>(r, 1)) fail(ErrorCode::kOutOfRange, where + ": dim " + std::to_string(dim) + " is out of range for rank " + std::to_string(r));
  return dim < 0 ? dim + r : dim;
}

// "relu_" for "aten::relu_" and for torch.export's "aten.relu_.default".
inline std::string base_op(const std::string& op) { return std::string(op_base(op)); }

}  // namespace detail
using namespace detail;

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

  void prepare(const Graph& graph);

  std::vector<Tensor> run(const std::vector<Tensor>& inputs);

  int threads() const { return threads_; }

  std::vector<NodeTime> profile() const;

  std::size_t arena_bytes() const { return arena_bytes_; }

  // Options::memory_budget, or what this platform can address.
  std::size_t memory_budget() const;
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
    bool xnnpack = false;   // runs an XNNPACK operator (else a kernel of ours)
    bool winograd = false;  // a Winograd convolution (transforms of ours around our GEMM or XNNPACK's)
    std::string winograd_form;  // NodeTime::winograd
    bool layout_change = false;  // a transpose between channels-last and torch's order
    int column_blocks = 0;       // XNNPACK operators over blocks of output columns (0: one, or none)
    int pixel_fold = 1;          // output pixels folded into one of XNNPACK's (pixel_fold())
  };
  // What outlives a re-plan: XNNPACK operators with packed weights, and the
  // constants a node derived (batch norm's scale and shift, scalar operands).
  struct NodeState {
    std::vector<XnnOp> ops;
    std::vector<std::vector<float>> data;
    // A Winograd convolution's batched GEMMs (lower_winograd.cpp), by form:
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

  // XNNPACK's GEMMs stream the whole packed weight matrix once per tile of
  // rows (its microkernel's 1 to 8), so a matrix past the L2 cache,
  // multiplied into many rows, comes from L3 or memory rows/8 times over.
  // Split by output columns into blocks of about 512 KB, each block's
  // weights stay in L2 across all rows (a GEMM's cache blocking).
  // The width of the blocks for `rows` x `depth` times `depth` x `columns`,
  // or 0: one operator.
  static i64 column_block_width(i64 rows, i64 depth, i64 columns);
  // The node's operators number `index` over blocks of `width` output columns
  // (0: one): `make(first, count, &op)` creates the one for columns
  // [first, first + count). Made again when the width changes.
  NodeState::ColumnBlocks& column_blocks(NodeState& st, std::size_t index, i64 width, i64 columns,
                                         const std::function<void(i64, i64, xnn_operator_t*)>& make);

  // Pixel folding. XNNPACK computes output channels in tiles of
  // gemm_tile_columns(); a convolution with fewer, or not a multiple, computes
  // the rest of its last tile for nothing. `fold` neighbouring output pixels
  // of a row computed as one pixel of fold x the channels, by a kernel
  // (fold - 1) strides wider with fold x the stride, fill the tiles; in
  // channels-last order that output is the same memory. The fold (2 to 16)
  // that fills them best where it does at least kMinFoldGain x the useful
  // work per multiply-add; else 1.
  static i64 pixel_fold(i64 channels, i64 kernel_w, i64 stride_w, i64 out_w);

  // ---- planning -------------------------------------------------------

  void reset_plan();

 public:
  // Every node without a lowering, judged by its op alone.
  static std::vector<UnsupportedNode> unsupported(const Graph& graph);

  static std::vector<std::string> lowered_op_names();

 private:
  // Walks the ops only, before any planning.
  void check_ops() { fail_if_unsupported("xnnpack", unsupported(graph_)); }

  void plan(const std::vector<Shape>& input_shapes);

  std::size_t max_value_index() const;

  // Lifetimes from the steps, then a greedy best-fit assignment of buffers
  // that reuses a buffer once the last reader of its value has run.
  void allocate();

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
    step.layout_change = true;
    step.run = [this, o] { check(xnn_run_operator(o, pool()), "running a transpose"); };
    return out;
  }

  pthreadpool_t pool() const { return pool_.get(); }
  // A memory-bound kernel (copies, adds) goes to threads in slices of about
  // this many floats or more: smaller ones cost more to hand out than to run.
  static constexpr i64 kSliceFloats = 16384;
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

  static const std::unordered_map<std::string, Lowering>& lowering_table();

  static Lowering lowering_for(const Node& n);

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

  // ---- lower_elementwise.cpp -------------------------------------------

  // An elementwise XNNPACK op over a whole tensor, in place when in == out.
  void unary_step(const Node& n, xnn_operator_t op, int in, int out);
  xnn_operator_t make_unary(const Node& n, NodeState& st, std::size_t index, xnn_unary_operator type,
                            const xnn_unary_params* params);
  void post_activation(const Node& n, NodeState& st, std::size_t index, const Fused& f, int out);
  // A clamp after an op that has no output bounds of its own.
  void post_clamp(const Node& n, NodeState& st, std::size_t index, const Fused& f, int out);
  void lower_unary(const Node& n, NodeState& st);
  // add/sub/mul/div: scalars are computed now; tensors with numpy
  // broadcasting by XNNPACK, in the layout of the larger operand.
  void lower_binary(const Node& n, NodeState& st);
  // Elementwise ops, in whatever layout their input has (in place for x_ on a non-constant).
  void lower_pointwise(const Node& n, NodeState&);
  // An elementwise op of one number: ints stay ints where torch keeps them so
  // (neg, abs, square, pow to a non-negative integer power).
  int pointwise_number(const Node& n, const std::string& base, const Slot& num);
  // A fused activation that XNNPACK has no operator for, in place after the op.
  void portable_post(portable::Unary op, int out);
  // eq/ne/lt/le/gt/ge of a tensor and a number or a tensor (broadcast): 1 or 0.
  void lower_compare(const Node& n, NodeState&);
  // masked_fill(self, mask, value): value where the mask (broadcast to self) is set.
  void lower_masked_fill(const Node& n, NodeState&);
  // new_zeros/new_ones/new_full (of a size), zeros_like/ones_like/full_like
  // and fill (of self's shape): one value everywhere, written on each run.
  void lower_full(const Node& n, NodeState&);
  // numpy broadcasting of two shapes.
  Shape broadcast_shape(const Node& n, const Shape& a, const Shape& b) const;
  // Slot `s` in torch layout with shape `to` (broadcast by a step of ours when it differs).
  int broadcast_to(int s, const Shape& to);
  // A number argument: an attribute or an input known before the run.
  // A one-element constant tensor (fill.Tensor's value) counts as a number.
  double number_arg(const Node& n, std::string_view name) const;

  // ---- lower_conv.cpp --------------------------------------------------

  void lower_conv(const Node& n, NodeState& st);
  // A transposed convolution whose kernel equals its stride (no groups,
  // padding, dilation or output padding): XNNPACK's fully connected op gives
  // each input pixel its taps, kernels::taps_to_space puts them in place.
  void lower_conv_transpose_as_gemm(const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const Fused& fused);
  // A 1D convolution ([N, C, L], weight [O, C/groups, K]).
  void lower_conv1d(const Node& n, NodeState& st);
  // lower_winograd.cpp: a 3x3 (3x3x3) stride-1 convolution without groups as
  // Winograd F(2,3) where Options::conv_algorithm asks for it or it measures
  // faster; false to run it directly. `direct` runs the direct convolution
  // once (input, output: channels-last, scratch for a 3D one's unfolding) on
  // the geometry given, for the measurement.
  using DirectRun = std::function<void(const float* x, float* y, i64 batch, const i64* in_sizes)>;
  bool lower_winograd(const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const std::vector<i64>& padding,
                      const Fused& fused, const DirectRun& direct);
  // lower_conv.cpp: a 3x3 depthwise convolution (2D, stride 1 or 2, not
  // dilated) on our kernel (winograd::Kernels::depthwise) where it measures faster
  // than XNNPACK's on this shape (`direct`; remembered for the process), under
  // ConvAlgorithm::kFastest only; false: XNNPACK's runs it.
  bool lower_depthwise(const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const std::vector<i64>& stride,
                       const std::vector<i64>& padding, const Fused& fused, const DirectRun& direct);
  // lower_conv.cpp: a 1x1 convolution (2D or 3D, stride 1, no padding or
  // groups) on our GEMM (winograd::Kernels::pointwise) where it measures
  // faster than XNNPACK's on this shape, as lower_depthwise() decides.
  bool lower_pointwise(const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const Fused& fused, const DirectRun& direct);
  // lower_conv.cpp: a convolution without groups whose output pixels each
  // read few inputs (winograd::Unfolded, up to kMaxUnfoldedRow) as our GEMM
  // over its unfolded input, where that measures faster than XNNPACK's.
  bool lower_unfolded(const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const std::vector<i64>& stride,
                      const std::vector<i64>& padding, const std::vector<i64>& dilation, const Fused& fused, const DirectRun& direct);

  // ---- lower_norm.cpp --------------------------------------------------

  void lower_batch_norm(const Node& n, NodeState& st);
  // group_norm, instance_norm (statistics of the input), layer_norm.
  void lower_norm(const Node& n, NodeState&);
  void lower_softmax(const Node& n, NodeState& st);
  void lower_prelu(const Node& n, NodeState& st);

  // ---- lower_pool.cpp --------------------------------------------------

  // torch's pooling output size, with ceil_mode.
  static i64 pooled(i64 in, i64 k, i64 s, i64 p, i64 d, bool ceil_mode);
  void lower_max_pool(const Node& n, NodeState& st);
  void lower_avg_pool(const Node& n, NodeState& st);
  void avg_pool_step(const Node& n, NodeState& st, int x, const Shape& xs, const std::vector<i64>& kernel,
                     const std::vector<i64>& stride, const std::vector<i64>& padding, bool ceil_mode);
  // Adaptive pooling: the identity, a global mean, a plain average pooling
  // when the output divides the input (XNNPACK), else portable kernels.
  void lower_adaptive_pool(const Node& n, NodeState& st);
  void lower_mean(const Node& n, NodeState&);
  // A mean (or sum) over `dims`, adjacent in storage.
  void reduce_step(const Node& n, int x0, std::vector<i64> dims, bool keepdim, bool mean = true);
  // pooled() with its arguments checked (validate.cpp has already, for a graph through finalize()).
  i64 pooled_length(const Node& n, i64 in, i64 kernel, i64 stride, i64 pad, i64 dilation, bool ceil_mode) const;
  // 1D pooling over the last dim of [N, C, L] (or [C, L]).
  void lower_pool1d(const Node& n, NodeState&);

  // ---- lower_matrix.cpp ------------------------------------------------

  void lower_linear(const Node& n, NodeState& st);
  // y = x @ w^T + b over x's last dim ([..., in] -> [..., out]): XNNPACK's
  // fully connected op, the node's operator number `index` (weights packed
  // once, on the first plan).
  int fully_connected(const Node& n, NodeState& st, std::size_t index, int x, const float* w, const float* b, i64 in_features,
                      i64 out_features, float out_min = -kInf, float out_max = kInf);
  // out[rows, columns] = x[rows, depth] times a weight matrix, on XNNPACK's
  // fully connected operators number `index` (column_blocks(): `make`
  // creates the one for some output columns, out's row stride `columns`).
  void gemm_step(const Node& n, NodeState& st, std::size_t index, int x, int out, i64 rows, i64 depth, i64 columns,
                 const std::function<void(i64, i64, xnn_operator_t*)>& make);
  // addmm(self, mat1, mat2): mat1 @ mat2 + self, with mat2 a weight [K, N]
  // (torch.export's linear: addmm(bias, x, permute(weight))).
  void lower_addmm(const Node& n, NodeState& st);
  // matmul / mm / bmm on XNNPACK's batch matrix multiply: [..., m, k] @
  // [..., k, n], batch dims broadcast (numpy rules), 1-D operands as torch
  // treats them (a row or a column, dropped from the result).
  void lower_matmul(const Node& n, NodeState& st);
  // C = A @ B on XNNPACK: A [a_batch..., m, k], B [b_batch..., k, n] (batch
  // dims of equal count, broadcast), C of `out_shape` (c's elements in
  // [batch..., m, n] order). The node's first XNNPACK operator is the one.
  int batch_matmul(const Node& n, NodeState& st, int a, int b, const Shape& a_batch, const Shape& b_batch, i64 m, i64 k, i64 nn,
                   const Shape& out_shape);
  // A torch-layout tensor with its dims in the order `perm` (XNNPACK's transpose; none when in order).
  int permuted(int x, const std::vector<std::size_t>& perm);
  // einsum of two operands as one batch matrix multiply: the letters in both
  // operands and the output are batch dims, those in both operands only are
  // summed over, the others are rows (first operand) and columns (second).
  // Each operand is permuted to [batch, rows or columns, summed] order once.
  void lower_einsum(const Node& n, NodeState& st);
  // torch.nn.MultiheadAttention's fused eval path (torchvision's ViT), without a mask.
  void lower_attention(const Node& n, NodeState& st);

  // ---- lower_shape.cpp -------------------------------------------------

  // permute(self, dims), transpose(self, dim0, dim1), t(self): in the standard layout.
  void lower_permute(const Node& n, NodeState&);
  void lower_cat(const Node& n, NodeState&);
  void lower_slice(const Node& n, NodeState&);
  // x[start:end:step] along `dim` (PyTorch's clamping of start and end): an
  // alias when it is the whole axis, else a copy in x's layout.
  int slice_of(const Node& n, int x, i64 dim_arg, i64 start, i64 end, i64 step_by);
  // flatten, view, reshape: plain storage read with another shape.
  void lower_view(const Node& n, NodeState&);
  void lower_narrow(const Node& n, NodeState&);
  // chunk(x, chunks, dim), split(x, split_size, dim): one slice per output.
  void lower_chunk(const Node& n, NodeState&);
  void lower_select(const Node& n, NodeState&);
  // unsqueeze, squeeze: the same bytes in torch's layout with another shape.
  void lower_reshape_dims(const Node& n, NodeState&);
  void lower_expand(const Node& n, NodeState&);
  // A list of integers known before the run (a shape for view, pad, resize).
  void lower_list(const Node& n, NodeState&);
  // pad / constant_pad_nd / reflection_padNd / replication_padNd.
  void lower_pad(const Node& n, NodeState& st);
  void lower_slice_scatter(const Node& n, NodeState&);
  // torch.roll: each (shift, dim) pair, or with no dims over the flattened tensor.
  void lower_roll(const Node& n, NodeState&);
  void lower_identity(const Node& n, NodeState&);
  void lower_size(const Node& n, NodeState&);
  void lower_getitem(const Node& n, NodeState&);
  void lower_scalar_identity(const Node& n, NodeState&);

  // ---- lower_resize.cpp ------------------------------------------------

  void lower_resize(const Node& n, NodeState&);
  // Linear, bilinear, trilinear, bicubic and 1D nearest resizes, torch layout.
  void lower_resize_portable(const Node& n, NodeState&);

  // ---- portable kernels (portable.h): what XNNPACK has no operator for ----
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

  // ---- outputs --------------------------------------------------------

  Tensor read_out(int s);

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
  std::size_t operator_bytes_ = 0;  // XNNPACK's own buffers in this plan (indirection)
  AlignedFloats workspace_;
  std::size_t arena_bytes_ = 0;
  std::vector<int> input_slots_, output_slots_;
  std::vector<double> step_ms_;
  NodeId current_;
  std::vector<Shape> planned_shapes_;
};

}  // namespace tracegraph::xnnpack
