// `tracegraph check`: what a user runs before deploying a model. Lists each
// op with its count and whether each backend runs it, then runs the model on
// each backend (as read and optimized) and prints the max relative error
// against the TorchScript module's own forward on the same input.
#pragma once

#include <string>
#include <vector>

#include "tracegraph/tensor.h"

namespace tracegraph::cli {

struct CheckOptions {
  std::string model;  // a TorchScript file, or an exported graph (.json) whose inputs have static shapes
  std::vector<Shape> input_shapes;
  std::vector<std::optional<DType>> input_dtypes;  // per input where --input-shape named one (int64:1,77)
  int threads = 1;
  double tolerance = 1e-4;  // max |got - want| / max |want|
};

// Prints the report; returns 0 when every backend runs the model within the
// tolerance, 1 otherwise.
int check(const CheckOptions& options);

}  // namespace tracegraph::cli
