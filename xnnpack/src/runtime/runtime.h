// The runtime: a graph planned for its inputs' shapes and the values only a
// run knows (each node lowered into steps by lower/, then the memory plan),
// run step by step, its outputs read back in torch's layout, and the profile
// of the last run. Private to xnnpack/src.
#pragma once

#include "plan/context.h"

namespace tracegraph::xnnpack {

class Runtime : public Context {
 public:
  explicit Runtime(const Options& options) : Context(options) {}

  // Checks every op first (one error naming all this backend lacks), then
  // plans when every input's shape is known.
  void prepare(const Graph& graph);
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);
  std::vector<NodeTime> profile() const;
  std::size_t arena_bytes() const { return arena_bytes_; }

 private:
  void reset_plan();
  void plan(const std::vector<Shape>& input_shapes);
  std::size_t max_value_index() const;
  // Lifetimes from the steps, then a greedy best-fit assignment of buffers
  // that reuses a buffer once the last reader of its value has run.
  void allocate();
  Tensor read_out(int s);
  void run_steps();  // each step in order, timed when profiling
  // Drops the states (and the values read) of the nodes that read what `node`
  // computed, directly or not: made for a value only the run knows, which has
  // changed.
  void forget_after(NodeId node);

  std::unordered_map<std::uint32_t, NodeState> states_;
  std::optional<std::vector<Shape>> planned_;
  std::size_t arena_bytes_ = 0;
  std::vector<int> input_slots_, output_slots_;
  std::vector<double> step_ms_;
  std::vector<Shape> planned_shapes_;
};

}  // namespace tracegraph::xnnpack

// The public class's implementation is the runtime.
class tracegraph::xnnpack::XnnpackBackend::Impl : public Runtime {
 public:
  using Runtime::Runtime;
};
