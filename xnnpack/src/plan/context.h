// The planning context: what a lowering (lower/) may use to turn a node into
// steps. Slots (the values of one plan: tensors with their logical shape and
// storage order, and numbers known before the run), steps (a node's work, run
// in order), the arguments of a node read against its schema, layout changes,
// the pool's threads and the memory budget. The runtime (runtime.h) derives
// from it and owns the rest: the planning loop, the memory plan, running and
// reading the outputs. Private to xnnpack/src.
#pragma once

#include "plan/support.h"
#include "tracegraph/transforms/transforms.h"

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

  float* ptr(int s);

  // The data of an int64 slot (Slot::int64): its word pairs as the integers
  // they are (buffers and int64 constants are 8-byte aligned).
  i64* int_ptr(int s) { return reinterpret_cast<i64*>(ptr(s)); }

  // ---- slots and constants (context_slots.cpp) -------------------------

  int new_slot(Slot slot);
  int new_tensor(Shape shape, bool channels_last);
  void within_budget(const Shape& shape) const;
  // XNNPACK takes kernel sizes, strides, padding and dilation as 32-bit
  // unsigned; a file's values past this limit are refused before any is cast.
  void within_geometry(const Node& n, std::initializer_list<std::pair<const char*, const std::vector<i64>*>> lists) const;
  // The indirection buffer XNNPACK's convolution, deconvolution and pooling
  // operators allocate at reshape (a pointer per output pixel and kernel tap),
  // counted against the budget before the reshape allocates it.
  void reserve_indirection(const Node& n, i64 out_h, i64 out_w, i64 window);
  int alias(int of, Shape shape, bool channels_last);
  int int_slot(i64 v);
  int float_slot(double v);
  int ints_slot(std::vector<i64> v);

  int constant_slot(ValueId v);

  // Tensors torch holds as integers or bool (indices, masks) are held here
  // as float32, exact up to 2^24 (portable.h). A constant of value `v`
  // (integer, bool or double tensor), or a number or list of ints planning
  // knows, as a float32 constant tensor slot: nullopt where a value is not
  // exact as a float32.
  std::optional<int> held_as_floats(ValueId v);
  // A constant tensor of `values` made while planning (arange, full): a float32
  // slot, its data kept until prepare().
  int planned_constant(Shape shape, std::vector<float> values);
  // An int64 tensor slot (Slot::int64) of `values` and torch's `shape`, its
  // data kept in `store` (a graph's constant, or a plan's: planned_int64()).
  int int64_constant(std::vector<float>& store, const std::vector<i64>& values, Shape shape);
  int planned_int64(const std::vector<i64>& values, Shape shape) { return int64_constant(held_plans_.emplace_back(), values, std::move(shape)); }
  // The slot of a tensor argument of any dtype torch has (indices, masks):
  // a float32 tensor, or a number or a list planning knows, held as floats.
  int held_tensor_slot(const Node& n, ValueId v);

  const Slot& slot_of(ValueId v) const;
  int slot_index(ValueId v) const;
  void define(ValueId v, int s) { value_slot_[v.index] = s; }
  bool defined(ValueId v) const { return value_slot_[v.index] >= 0; }

  // ---- arguments (context_arguments.cpp) --------------------------------

  std::string where(const Node& n) const { return "xnnpack: node '" + n.name + "' (" + n.op + ")"; }
  // The node being lowered, or the graph's edges.
  std::string where_now() const { return current_.valid() ? where(graph_.node(current_)) : std::string("xnnpack: the graph's inputs"); }

  // A one-element constant tensor's value (a scalar_tensor, fill.Tensor's value).
  static std::optional<double> constant_number(const Slot& s);
  // Arguments: an attribute through the op table's decoder (arg_int, ...), or
  // an input whose value planning knows.
  std::optional<i64> int_arg(const Node& n, std::string_view name) const;
  std::optional<double> float_arg(const Node& n, std::string_view name) const;
  std::optional<std::vector<i64>> ints_arg(const Node& n, std::string_view name) const;
  std::optional<std::vector<double>> floats_arg(const Node& n, std::string_view name) const;
  // Expands a one-element list to `rank` and checks the length.
  std::vector<i64> spatial_arg(const Node& n, std::string_view name, std::size_t rank, i64 fallback) const;

  // The slot of a tensor argument, float32 and computed.
  int tensor_arg(const Node& n, std::string_view name, std::size_t position);
  int tensor_slot(const Node& n, ValueId v);
  const Tensor& constant_arg(const Node& n, std::string_view name, std::size_t position, bool required);
  // A constant weight argument (a bias, a norm's scale) of `expected` elements, or nullptr when absent.
  const float* weight_or_null(const Node& n, std::string_view name, std::size_t position, i64 expected);
  // The activation a fused node carries (activation_fusion's attributes).
  Fused fused_of(const Node& n) const;

  // ---- steps, XNNPACK's status, threads (context_steps.cpp) -------------

  // XNNPACK's status as the SDK's error code.
  static ErrorCode code_of(xnn_status status);
  void check(xnn_status status, const Node& n, const char* what) const;
  void check(xnn_status status, const char* what) const;

  Step& add_step(std::vector<int> reads, std::vector<int> writes);

  // Numbers a node derived (a scalar operand, a pad value), kept in its state
  // across plans as floats with XNNPACK's tail: rewritten where a new plan's
  // numbers differ (a size from new input shapes, item()'s value), and the
  // copies made of the old ones forgotten.
  const float* node_numbers(NodeState& st, std::size_t k, std::vector<float> values);
  // Drops what was made from constant floats at `p` (padded and layout copies),
  // before they change or are freed.
  void forget_copies(const float* p);
  // A step of ours over torch-layout tensors: `ins` are made torch-layout first.
  Step& portable_step(std::vector<int>& ins, std::vector<int> outs);
  // The common case: one input (made torch-layout) to `out`, kernel(x, y) on their data.
  void portable_map(int x, int out, std::function<void(const float*, float*)> kernel);

  pthreadpool_t pool() const { return pool_.get(); }
  // f(first, count) over slices of [0, total), `tile` or more each, on the
  // pool's threads (inline without a pool), denormals flushed (kNoDenormals).
  void parallel_slices(i64 total, const std::function<void(i64, i64)>& f, i64 tile = 1) const;

  // kernels::copy_blocks on the pool's threads: `count` blocks of `block`
  // floats, whole blocks to a task where they are small, a block cut into
  // pieces of about kSliceFloats where they are large (a crop along the
  // outermost axis is one block).
  void parallel_copy_blocks(const float* src, float* dst, i64 count, i64 block, i64 src_stride, i64 dst_stride) const;

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
  std::optional<double> read_by_run(int x, std::function<double(const float*)> read);

  // ---- layout (context_layout.cpp) -------------------------------------

  // The slot holding tensor `s` in the wanted layout: itself when the layouts
  // agree, else a transposed copy (made once per plan, or once for constants).
  int as_layout(int s, bool channels_last);

  // Slot `s` with its physical dims (`full_shape`) permuted by `full_perm`, as a slot
  // of logical shape `shape`: for a constant, a transposed copy made once; else
  // a transpose step.
  int transposed(int s, const std::vector<std::size_t>& full_shape, const std::vector<std::size_t>& full_perm, const Shape& shape,
                 bool channels_last);

  // `perm` over `shape` with its size-1 dims dropped and each run of input
  // dims that stays in order in perm merged into one.
  static void simplify_permutation(const std::vector<std::size_t>& shape, const std::vector<std::size_t>& perm,
                                   std::vector<std::size_t>& out_shape, std::vector<std::size_t>& out_perm);

  // A constant XNNPACK reads as an operand, copied once with the tail XNNPACK
  // may read past its end (weights come from a file's buffer, unpadded).
  int padded(int s);

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
