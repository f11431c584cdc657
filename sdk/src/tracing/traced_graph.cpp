#include "tracegraph/traced_graph.h"

#include <set>

#include "tracegraph/validate.h"

namespace tracegraph {

TracedGraph::TracedGraph(Graph graph, std::optional<TreeSpec> in_spec, std::optional<TreeSpec> out_spec,
                         std::unique_ptr<Backend> backend)
    : graph_(std::move(graph)), in_spec_(std::move(in_spec)), backend_(std::move(backend)) {
  graph_.verify();
  if (!backend_ && default_backend()) backend_ = default_backend()();
  if (out_spec) {
    out_spec_ = std::move(*out_spec);
  } else {
    out_spec_ = TreeSpec::tuple(std::vector<TreeSpec>(graph_.outputs().size()));
  }
  if (out_spec_.num_leaves() != graph_.outputs().size()) {
    fail(ErrorCode::kTreeSpecMismatch, "out_spec " + out_spec_.str() + " has " + std::to_string(out_spec_.num_leaves()) +
                                           " leaves for " + std::to_string(graph_.outputs().size()) + " graph outputs");
  }
  if (in_spec_ && in_spec_->num_leaves() != graph_.inputs().size()) {
    fail(ErrorCode::kTreeSpecMismatch, "in_spec " + in_spec_->str() + " has " + std::to_string(in_spec_->num_leaves()) +
                                           " leaves for " + std::to_string(graph_.inputs().size()) + " graph inputs");
  }
}

TracedGraph TracedGraph::from_exported(ExportedGraph exported, std::unique_ptr<Backend> backend) {
  return TracedGraph(std::move(exported.graph), std::move(exported.in_spec), std::move(exported.out_spec), std::move(backend));
}

TracedGraph::TracedGraph(TracedGraph&&) noexcept = default;
TracedGraph& TracedGraph::operator=(TracedGraph&&) noexcept = default;
TracedGraph::~TracedGraph() = default;

Graph& TracedGraph::mutable_graph() {
  if (finalized_) fail(ErrorCode::kInvalidArgument, "graph " + graph_.name() + " is finalized; edit it before finalize()");
  return graph_;
}

void TracedGraph::set_input_shapes(const std::vector<Shape>& shapes) {
  Graph& g = mutable_graph();
  if (shapes.size() != g.inputs().size()) {
    fail(ErrorCode::kInvalidArgument, "graph " + g.name() + " takes " + std::to_string(g.inputs().size()) + " inputs, given " +
                                          std::to_string(shapes.size()) + " shapes");
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const ValueId v = g.inputs()[i];
    checked_nbytes(g.value(v).dtype.value_or(DType::kFloat32), shapes[i]);
    g.set_value_type(v, g.value(v).dtype, symbolic(shapes[i]));
  }
  for (ValueId v : g.values()) {
    const Value& value = g.value(v);
    if (value.is_constant() || !value.producer) continue;
    g.set_value_type(v, value.dtype, std::nullopt);
  }
}

// A finalized graph moves first and records where it is after: a move the
// backend refuses leaves device() and stream() where the graph still is.
void TracedGraph::to(const Device& device) {
  if (backend_) backend_->check_device(device);
  if (finalized_) backend_->move(device, nullptr);
  device_ = device;
  stream_.reset();
}

void TracedGraph::to(const Stream& stream) {
  if (backend_) backend_->check_device(stream.device);
  if (finalized_) backend_->move(stream.device, &stream);
  device_ = stream.device;
  stream_ = stream;
}

void TracedGraph::to(std::string_view device) { to(Device::parse(device)); }

void TracedGraph::set_backend(std::unique_ptr<Backend> backend) {
  if (finalized_) fail(ErrorCode::kInvalidArgument, "graph " + graph_.name() + " is finalized; choose its backend before finalize()");
  backend_ = std::move(backend);
}

OptimizeReport TracedGraph::optimize(const std::optional<std::vector<std::shared_ptr<Transform>>>& transforms,
                                     std::optional<std::size_t> max_num_iterations, const DefaultsOptions& defaults) {
  if (finalized_) fail(ErrorCode::kInvalidArgument, "graph " + graph_.name() + " is finalized; optimize it before finalize()");
  return tracegraph::optimize(graph_, transforms, max_num_iterations, defaults, backend_ ? backend_->evaluator() : nullptr);
}

void TracedGraph::finalize() {
  if (finalized_) return;
  if (!backend_) {
    fail(ErrorCode::kInvalidArgument, "graph " + graph_.name() + " has no backend to run on (set one with set_backend, "
                                      "or load it through a backend's loader)");
  }
  graph_.verify();
  validate_attributes(graph_);  // PyTorch's rules, before a backend lowers or allocates anything
  backend_->prepare(graph_, device_, stream_ ? &*stream_ : nullptr);
  finalized_ = true;
}

void TracedGraph::check_inputs(const std::vector<Tensor>& inputs) const {
  if (!finalized_) {
    fail(ErrorCode::kNotFinalized, "graph " + graph_.name() + " is not finalized: call finalize() before running it");
  }
  if (inputs.size() != graph_.inputs().size()) {
    fail(ErrorCode::kInvalidArgument, "graph " + graph_.name() + " takes " + std::to_string(graph_.inputs().size()) +
                                          " inputs, given " + std::to_string(inputs.size()));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph_.value(graph_.inputs()[i]);
    const Tensor& t = inputs[i];
    if (!t.defined()) fail(ErrorCode::kInvalidArgument, "input %" + v.name + " is an undefined tensor");
    if (v.dtype && t.dtype() != *v.dtype) {
      fail(ErrorCode::kDTypeMismatch, "input %" + v.name + " must be " + std::string(dtype_name(*v.dtype)) + ", given " +
                                          std::string(dtype_name(t.dtype())));
    }
    if (v.shape) {
      bool ok = v.shape->size() == t.shape().size();
      for (std::size_t d = 0; ok && d < t.shape().size(); ++d) {
        ok = !(*v.shape)[d].is_static() || (*v.shape)[d].size == t.shape()[d];
      }
      if (!ok) {
        fail(ErrorCode::kShapeMismatch, "input %" + v.name + " must have shape " + shape_str(*v.shape) + ", given " +
                                            shape_str(t.shape()));
      }
    }
  }
}

std::vector<Tensor> TracedGraph::run(const std::vector<Tensor>& inputs) {
  check_inputs(inputs);
  return backend_->run(inputs);
}

std::vector<Tensor> TracedGraph::run(const std::map<std::string, Tensor>& inputs) {
  std::vector<Tensor> flat(graph_.inputs().size());
  std::set<std::string> used;
  for (std::size_t i = 0; i < flat.size(); ++i) {
    const std::string& name = graph_.value(graph_.inputs()[i]).name;
    auto it = inputs.find(name);
    if (it == inputs.end()) fail(ErrorCode::kInvalidArgument, "input %" + name + " of graph " + graph_.name() + " is missing");
    flat[i] = it->second;
    used.insert(name);
  }
  for (const auto& [name, t] : inputs) {
    if (!used.count(name)) {
      std::string known;
      for (const auto& n : graph_.input_names()) known += (known.empty() ? "%" : ", %") + n;
      fail(ErrorCode::kNotFound, "graph " + graph_.name() + " has no input %" + name + " (its inputs: " + known + ")");
    }
  }
  return run(flat);
}

Tree<Tensor> TracedGraph::operator()(const Tree<Tensor>& args_and_kwargs) {
  if (!in_spec_) {
    fail(ErrorCode::kInvalidArgument, "graph " + graph_.name() + " was made from a signature and has no in_spec; use run()");
  }
  match(*in_spec_, args_and_kwargs);
  auto flat = flatten(args_and_kwargs).first;
  return unflatten(out_spec_, run(flat));
}

}  // namespace tracegraph
