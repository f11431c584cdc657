// The one seam between the core and the engines that run graphs (LibTorch
// natively, XNNPACK natively and in wasm). TracedGraph drives a Backend; a
// backend never changes the graph it is given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
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
};

}  // namespace tracegraph
