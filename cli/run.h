#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tracegraph/tensor.h"

namespace tracegraph::cli {

struct RunOptions {
  std::string model;                // a TorchScript file or an exported graph (.json)
  // -i: FILE.npy (the next input in order), NAME=FILE.npy (the input by
  // name), or FILE.safetensors (inputs by name, as many as it holds).
  std::vector<std::string> inputs;
  std::vector<Shape> random;  // --random SHAPE: seeded inputs, in order (random_input(): of the input's dtype where the file says it)
  std::vector<std::optional<DType>> random_dtypes;  // per --random, the dtype it names (--random int64:1,77), if any
  // -o: one FILE.npy per output in order, or one FILE.safetensors with every output by name.
  std::vector<std::string> outputs;
  // --dump-nodes FILE.safetensors: every node's value of this run, by node
  // name (node_outputs.h), beside the inputs and outputs as "@input.N" and
  // "@output.N", for comparing runs node by node.
  std::string dump_nodes;
  // How a TorchScript file is read: "libtorch" (LibTorch's loader, then the
  // native reader) or "core" (the core's own reader, as the web page, the JS
  // API and the Python package read it: their node names, so that a dump
  // lines up with a run in the page).
  std::string reader = "libtorch";
  std::string backend = "libtorch";  // a registered backend's name (backends.h)
  int threads = 0;                   // 0: the backend's default
  std::string device = "cpu";
};

int run_model(const RunOptions& options);

// A seeded random input (at::manual_seed first) of a graph input's dtype:
// normal floats, whole numbers 0 to 9 for an integer input (token ids any
// embedding of 10 rows or more takes), 0/1 for a mask; float where the dtype is unknown.
Tensor random_input(const Shape& shape, std::optional<DType> dtype);

}  // namespace tracegraph::cli
