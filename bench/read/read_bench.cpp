// How long reading and optimizing a model takes once LibTorch has loaded it,
// beside LibTorch's own freeze + optimize_for_inference of the same module,
// measured in the same run (medians of N runs).
//
//   tracegraph_read_bench MODEL.ts --input-shape D,D,... [--runs N]
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/frozen_graph_optimizations.h>
#include <c10/core/InferenceMode.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tracegraph/error.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/optimizer.h"

namespace tg = tracegraph;

namespace {

double median_ms(int runs, const std::function<void()>& f) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

tg::Shape parse_shape(const std::string& text) {
  tg::Shape s;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) s.push_back(std::stoll(item));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tracegraph_read_bench MODEL.ts --input-shape D,D,... [--runs N]\n");
    return 2;
  }
  const std::string path = argv[1];
  std::vector<tg::Shape> shapes;
  int runs = 9;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--input-shape") shapes.push_back(parse_shape(argv[i + 1]));
    else if (flag == "--runs") runs = std::max(1, std::stoi(argv[i + 1]));
  }
  try {
    torch::jit::Module module = torch::jit::load(path, c10::Device(c10::kCPU));
    module.eval();
    tg::native::TorchScriptOptions options;
    std::vector<c10::IValue> example;
    for (const auto& s : shapes) {
      example.emplace_back(at::randn(s));
      options.example_inputs.push_back(tg::native::from_aten(example.back().toTensor()));
    }
    tg::ExportedGraph read = tg::native::read_torchscript(module, options, path);
    const std::size_t nodes = read.graph.num_nodes();
    const double read_ms = median_ms(runs, [&] { read = tg::native::read_torchscript(module, options, path); });
    // Without example inputs: no forward run to learn each value's shape.
    const double read_bare_ms = median_ms(runs, [&] { tg::native::read_torchscript(module, {}, path); });
    // One forward of the module itself: what the example inputs cost the read.
    const double forward_ms = median_ms(runs, [&] {
      c10::InferenceMode guard;
      module.forward(example);
    });
    auto backend = tg::native::make_libtorch_backend();
    tg::Graph optimized;
    const double optimize_ms = median_ms(runs, [&] {
      optimized = read.graph;
      tg::optimize(optimized, std::nullopt, std::nullopt, {}, backend->evaluator());
    });
    // The reference: LibTorch's own freeze and frozen-graph optimizations of the same module.
    const double torch_ms = median_ms(runs, [&] {
      torch::jit::Module frozen = torch::jit::freeze_module(module);
      std::shared_ptr<torch::jit::Graph> graph = frozen.get_method("forward").graph();
      torch::jit::OptimizeFrozenGraph(graph, true);
    });
    std::printf("model                      %s\n", path.c_str());
    std::printf("nodes                      %zu (%zu after optimizing)\n", nodes, optimized.num_nodes());
    std::printf("read, example inputs       %8.1f ms (median of %d; runs the model once for every value's shape)\n", read_ms, runs);
    std::printf("read, no example inputs    %8.1f ms\n", read_bare_ms);
    std::printf("module forward             %8.1f ms  (one run of the module on the example input)\n", forward_ms);
    std::printf("optimize                   %8.1f ms\n", optimize_ms);
    std::printf("read + optimize            %8.1f ms  (target: under 100 ms for 1,000 nodes)\n", read_ms + optimize_ms);
    std::printf("  less the forward run     %8.1f ms\n", read_ms + optimize_ms - forward_ms);
    std::printf("torch freeze + optimize    %8.1f ms  (reference, same run)\n", torch_ms);
    std::printf("ratio to the reference     %8.2fx\n", (read_ms + optimize_ms) / torch_ms);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tracegraph_read_bench: %s\n", e.what());
    return 1;
  }
}
