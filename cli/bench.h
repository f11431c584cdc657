// `tracegraph bench`: our graph on LibTorch against LibTorch's own TorchScript
// forward (plain, frozen, optimize_for_inference), measured in one run.
#pragma once

#include <string>
#include <vector>

#include "tracegraph/tensor.h"

namespace tracegraph::cli {

struct BenchOptions {
  std::string model;             // a TorchScript file
  std::vector<Shape> input_shapes;
  std::vector<std::optional<DType>> input_dtypes;  // per input where --input-shape named one (int64:1,77)
  int warmup = 3;
  int runs = 20;
  int threads = 0;               // 0: LibTorch's default
  std::string device = "cpu";
};

// Prints the table; returns the process exit status.
int bench(const BenchOptions& options);

}  // namespace tracegraph::cli
