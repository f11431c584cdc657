// The one seam between the core and the engines that run graphs (LibTorch
// natively, XNNPACK natively and in wasm). TracedGraph drives a Backend; a
// backend never changes the graph it is given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/graph.h"
#include "tracegraph/optimizer.h"
#include "tracegraph/tensor.h"

namespace tracegraph {

// A queue of work on a device: for CUDA, the stream's id as LibTorch packs it
// (c10::Stream::id()); `device` says which device it belongs to.
struct Stream {
  Device device;
  std::int64_t id = 0;
};

// A node a backend has no kernel for, and why.
struct UnsupportedNode {
  std::string node;
  std::string op;
  std::string why;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Readies `graph` to run on `device` (and `stream`, when given): resolves
  // each node to its kernel, moves weights, plans memory. An op the backend
  // cannot run is an error here, naming the node, never later.
  virtual void prepare(const Graph& graph, const Device& device, const Stream* stream) = 0;
  // Runs the prepared graph on flat inputs in graph-input order; returns the
  // graph outputs in order. Inputs are checked (count, dtype, shape).
  virtual std::vector<Tensor> run(const std::vector<Tensor>& inputs) = 0;
  // Moves a prepared graph to another device or stream.
  virtual void move(const Device& device, const Stream* stream) = 0;
  // What constant folding may use to evaluate a node; nullptr when none.
  virtual const ConstantEvaluator* evaluator() const { return nullptr; }
  // Every node of `graph` whose op (with its arguments) this backend has no
  // kernel for, judged without planning; prepare() refuses a graph with any,
  // naming them all.
  virtual std::vector<UnsupportedNode> unsupported(const Graph& graph) const = 0;
  // Refuses a device this backend can never run on (kUnsupported), so that
  // TracedGraph::to() says so at once rather than at finalize().
  virtual void check_device(const Device& device) const {}
};

// The backend a TracedGraph gets when it is made without one (trace(),
// from_exported() with no backend). Natively, linking tracegraph::native makes
// it the LibTorch backend; in the core alone (and in wasm) there is none and
// finalize() asks for set_backend(). set_default_backend(nullptr) clears it.
using BackendFactory = std::unique_ptr<Backend> (*)();
void set_default_backend(BackendFactory factory);
BackendFactory default_backend();

// Throws kUnsupported naming every op of `nodes` with its count and nodes:
// "the xnnpack backend cannot run 3 nodes (2 ops): aten::silu x2 (silu_1,
// silu_4: why), aten::pad x1 (pad_2: why)". Does nothing when `nodes` is empty.
void fail_if_unsupported(std::string_view backend, const std::vector<UnsupportedNode>& nodes);

}  // namespace tracegraph
