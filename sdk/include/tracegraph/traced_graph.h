// TracedGraph: a recorded graph with the tree specs of the traced inputs and
// outputs, and the graph's own surface on it (names, nodes, run, to, finalize).
//
// run() takes flat tensors, in signature order or by input name, and returns
// the flat outputs; the call operator takes the traced structure (matched
// against in_spec, with the path of any mismatch) and returns the structure
// built from out_spec. A traced graph arrives not finalized: finalize()
// readies it on the chosen device through its backend, a second call changes
// nothing, and only a finalized graph runs.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/backend.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/graph.h"
#include "tracegraph/optimizer.h"
#include "tracegraph/tree_spec.h"

namespace tracegraph {

class TracedGraph {
 public:
  // `in_spec` describes (args, kwargs) as PyTorch does: ((a, b), {"k": c});
  // nullopt when the graph was made from a signature alone. `out_spec`
  // nullopt means a flat tuple of the outputs.
  TracedGraph(Graph graph, std::optional<TreeSpec> in_spec, std::optional<TreeSpec> out_spec,
              std::unique_ptr<Backend> backend = nullptr);
  static TracedGraph from_exported(ExportedGraph exported, std::unique_ptr<Backend> backend = nullptr);

  TracedGraph(TracedGraph&&) noexcept;
  TracedGraph& operator=(TracedGraph&&) noexcept;
  ~TracedGraph();

  const Graph& graph() const { return graph_; }
  // The graph to edit; kInvalidArgument once finalized (edits would not reach the backend).
  Graph& mutable_graph();
  const std::optional<TreeSpec>& in_spec() const { return in_spec_; }
  const TreeSpec& out_spec() const { return out_spec_; }
  std::vector<std::string> input_names() const { return graph_.input_names(); }
  std::vector<std::string> output_names() const { return graph_.output_names(); }
  const std::vector<NodeId>& nodes() const { return graph_.nodes(); }
  // Gives the inputs these shapes (one per input, in order) and forgets the
  // shapes of the values computed from them (the backend infers them at
  // finalize()). Before finalize(); shapes an optimize() folded into constants
  // stay folded, so set the shapes first.
  void set_input_shapes(const std::vector<Shape>& shapes);

  // Where the graph runs: chosen before finalize(), or moves a finalized graph.
  void to(const Device& device);
  void to(const Stream& stream);
  void to(std::string_view device);  // "cpu", "cuda", "cuda:1"
  const Device& device() const { return device_; }
  // The stream given to to(Stream); nullopt after to(Device) or to(string).
  const std::optional<Stream>& stream() const { return stream_; }

  void set_backend(std::unique_ptr<Backend> backend);
  const Backend* backend() const { return backend_.get(); }

  // Runs the optimizer on the graph (kInvalidArgument once finalized). The
  // backend, when it has one, evaluates constant folding.
  OptimizeReport optimize(const std::optional<std::vector<std::shared_ptr<Transform>>>& transforms = std::nullopt,
                          std::optional<std::size_t> max_num_iterations = std::nullopt, const DefaultsOptions& defaults = {});

  void finalize();
  bool is_finalized() const { return finalized_; }

  // Flat inputs in signature order; kInvalidArgument on a wrong count,
  // kDTypeMismatch / kShapeMismatch naming the input, kNotFinalized before finalize().
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);
  // Flat inputs by name; every input exactly once (kNotFound names an unknown one).
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs);
  // The traced structure in, the traced structure out.
  Tree<Tensor> operator()(const Tree<Tensor>& args_and_kwargs);

 private:
  void check_inputs(const std::vector<Tensor>& inputs) const;

  Graph graph_;
  std::optional<TreeSpec> in_spec_;
  TreeSpec out_spec_;
  std::unique_ptr<Backend> backend_;
  Device device_;
  std::optional<Stream> stream_;
  bool finalized_ = false;
};

}  // namespace tracegraph
