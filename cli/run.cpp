// tracegraph run: a model on inputs from files (.npy, safetensors) or random,
// outputs to files, with the output shapes, activations and times printed.
#include "run.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/api/module.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "backends.h"
#include "timing.h"
#include "tracegraph/activation.h"
#include "tracegraph/error.h"
#include "tracegraph/file_io.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/node_outputs.h"
#include "tracegraph/npy.h"
#include "tracegraph/pt2.h"
#include "tracegraph/safetensors.h"
#include "tracegraph/torchscript_archive.h"
#include "tracegraph/traced_graph.h"

namespace tracegraph::cli {
namespace {

std::string extension(const std::string& path) { return std::filesystem::path(path).extension().string(); }

// Inputs as given: by position (name empty) or by name.
struct GivenInput {
  std::string name;
  Tensor tensor;
  std::string source;
};

// `dtypes`: the graph's input dtypes where it is read first (an exported
// graph, a .pt2): a --random input is made of its position's dtype.
std::vector<GivenInput> gather_inputs(const RunOptions& o, const std::vector<std::optional<DType>>& dtypes) {
  std::vector<GivenInput> out;
  for (const std::string& spec : o.inputs) {
    std::string name, path = spec;
    const std::size_t eq = spec.find('=');
    std::error_code ec;
    if (eq != std::string::npos && !std::filesystem::exists(spec, ec)) {
      name = spec.substr(0, eq);
      path = spec.substr(eq + 1);
    }
    if (extension(path) == ".npy") {
      out.push_back({name, read_npy(path), path});
    } else if (extension(path) == ".safetensors") {
      if (!name.empty()) fail(ErrorCode::kInvalidArgument, "-i " + spec + ": a safetensors file gives inputs by their own names");
      const LoadLimits limits;
      const auto bytes = read_file_bytes(path, limits.max_file_bytes);
      for (auto& [tensor_name, t] : parse_safetensors(*bytes, bytes, path, limits).tensors) out.push_back({tensor_name, t, path});
    } else {
      fail(ErrorCode::kInvalidArgument, "-i " + spec + ": expected a .npy or .safetensors file");
    }
  }
  at::manual_seed(0);
  for (std::size_t k = 0; k < o.random.size(); ++k) {
    const Shape& s = o.random[k];
    const auto position = static_cast<std::size_t>(std::count_if(out.begin(), out.end(), [](const GivenInput& g) { return g.name.empty(); }));
    // The dtype --random names, else the graph's for that input, else float32.
    std::optional<DType> dtype = k < o.random_dtypes.size() ? o.random_dtypes[k] : std::nullopt;
    if (!dtype && position < dtypes.size()) dtype = dtypes[position];
    out.push_back({"", random_input(s, dtype), "--random " + shape_str(s)});
  }
  return out;
}

// The given inputs in the graph's input order: positional ones first, in
// order, then the named ones where they belong; every input exactly once.
std::vector<Tensor> order_inputs(const std::vector<GivenInput>& given, const std::vector<std::string>& names, const std::string& model) {
  std::vector<std::optional<Tensor>> slots(names.size());
  std::size_t next = 0;
  for (const auto& g : given) {
    if (g.name.empty()) {
      if (next >= names.size()) {
        fail(ErrorCode::kInvalidArgument, model + " takes " + std::to_string(names.size()) + " inputs; " + g.source + " is one too many");
      }
      slots[next++] = g.tensor;
      continue;
    }
    std::size_t i = 0;
    while (i < names.size() && names[i] != g.name) ++i;
    if (i == names.size()) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      fail(ErrorCode::kNotFound, g.source + ": " + model + " has no input '" + g.name + "' (its inputs: " + known + ")");
    }
    if (slots[i]) fail(ErrorCode::kInvalidArgument, g.source + ": input '" + g.name + "' is given twice");
    slots[i] = g.tensor;
  }
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!slots[i]) fail(ErrorCode::kInvalidArgument, model + ": input '" + names[i] + "' is not given (-i FILE.npy, -i " + names[i] + "=FILE.npy or --random SHAPE)");
    out.push_back(*slots[i]);
  }
  return out;
}


// Whether -o fits `count` outputs (checked before the model runs).
void check_output_files(const RunOptions& o, std::size_t count) {
  if (o.outputs.empty() || (o.outputs.size() == 1 && extension(o.outputs[0]) == ".safetensors")) return;
  for (const auto& path : o.outputs) {
    if (extension(path) != ".npy") fail(ErrorCode::kInvalidArgument, "-o " + path + ": expected FILE.npy per output, or one FILE.safetensors");
  }
  if (o.outputs.size() != count) {
    fail(ErrorCode::kInvalidArgument, "the model has " + std::to_string(count) + " outputs and " + std::to_string(o.outputs.size()) +
                                          " -o .npy files were given: give one per output, or one .safetensors");
  }
}

void write_outputs(const RunOptions& o, const std::vector<Tensor>& outputs, const std::vector<std::string>& names) {
  if (o.outputs.empty()) return;
  if (o.outputs.size() == 1 && extension(o.outputs[0]) == ".safetensors") {
    std::vector<std::pair<std::string, Tensor>> named;
    for (std::size_t i = 0; i < outputs.size(); ++i) named.emplace_back(names[i], outputs[i]);
    write_file_bytes(o.outputs[0], write_safetensors(named));
    std::printf("wrote %s (%zu outputs by name)\n", o.outputs[0].c_str(), outputs.size());
    return;
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    save_npy(outputs[i], o.outputs[i]);
    std::printf("wrote %s\n", o.outputs[i].c_str());
  }
}

// Every node's value by node_outputs.h's keys, and the run's inputs and
// outputs as "@input.N" and "@output.N" ('@' is in no reader's node names; a
// TorchScript file's nodes may well be named input.1, after its variables):
// what a run in the page (or on another backend) is compared with, node by node.
void write_node_dump(const std::string& path, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs, std::size_t own,
                     const std::vector<NodeOutput>& nodes, const std::string& model, const std::string& backend) {
  std::vector<std::pair<std::string, Tensor>> named;
  for (std::size_t i = 0; i < inputs.size(); ++i) named.emplace_back("@input." + std::to_string(i), inputs[i]);
  for (std::size_t i = 0; i < own; ++i) named.emplace_back("@output." + std::to_string(i), outputs[i]);
  for (const NodeOutput& n : nodes) named.emplace_back(n.key, outputs[n.graph_output]);
  write_file_bytes(path, write_safetensors(named, {{"tracegraph", "node outputs"}, {"model", model}, {"backend", backend}}));
  std::printf("wrote %s (%zu node values, the inputs and outputs)\n", path.c_str(), nodes.size());
}

}  // namespace

Tensor random_input(const Shape& shape, std::optional<DType> dtype) {
  if (!dtype || is_floating(*dtype)) return native::from_aten(at::randn(shape));
  if (*dtype == DType::kBool) return native::from_aten(at::randint(0, 2, shape).to(at::kBool));
  return native::from_aten(at::randint(0, 10, shape).to(native::to_aten_dtype(*dtype)));
}

int run_model(const RunOptions& o) {
  const BackendEntry& backend = find_backend(o.backend);
  // The model is read once, onto the one backend it runs on. An exported
  // graph or a .pt2 is read, then given the inputs' shapes (a
  // torch.export.Dim's symbols bound); TorchScript is read with the inputs as
  // examples (every value gets its shape), so its module is loaded first and
  // its input names come from the module, for inputs given by name.
  const bool exported = extension(o.model) == ".json" || is_pt2_file(o.model);
  auto start = Clock::now();
  std::optional<TracedGraph> loaded;
  std::optional<torch::jit::Module> module;
  std::vector<std::optional<DType>> dtypes;
  std::vector<std::string> names;
  // With --dump-nodes, every node's value is made a graph output before the
  // backend sees the graph (the model's own outputs stay first).
  std::vector<NodeOutput> dumped;
  std::size_t own = 0;  // the model's own outputs
  const auto make = [&](ExportedGraph eg) {
    own = eg.graph.outputs().size();
    if (!o.dump_nodes.empty()) {
      dumped = expose_node_outputs(eg.graph);
      eg.out_spec.reset();  // the outputs are flat now
    }
    loaded.emplace(TracedGraph::from_exported(std::move(eg), backend.make({o.threads})));
  };
  if (exported) {
    make(native::read_model(o.model));
    for (ValueId v : loaded->graph().inputs()) dtypes.push_back(loaded->graph().value(v).dtype);
    names = loaded->input_names();
  } else {
    module = native::load_torchscript_module(o.model);
    names = native::torchscript_input_names(*module);
  }
  const std::vector<GivenInput> given = gather_inputs(o, dtypes);
  bool by_name = false;
  for (const auto& g : given) by_name = by_name || !g.name.empty();
  std::vector<Tensor> inputs;
  if (by_name) {
    inputs = order_inputs(given, names, o.model);
  } else {
    for (const auto& g : given) inputs.push_back(g.tensor);
  }
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  if (exported) {
    if (shapes.size() == names.size()) loaded->set_input_shapes(shapes);
  } else if (o.reader == "core") {
    make(load_torchscript_archive(o.model, {}, shapes));
  } else {
    native::TorchScriptOptions options;
    options.example_inputs = inputs;
    make(native::read_torchscript(*module, options, o.model));
  }
  TracedGraph& g = *loaded;
  const double read_ms = ms_since(start);
  check_output_files(o, own);
  g.to(o.device);
  start = Clock::now();
  g.finalize();
  const double finalize_ms = ms_since(start);
  start = Clock::now();
  std::vector<Tensor> outputs = g.run(inputs);
  const double run_ms = ms_since(start);
  for (Tensor& t : outputs) {
    if (t.device().type != DeviceType::kCPU) t = native::from_aten(native::to_aten(t).cpu());
  }
  if (!o.dump_nodes.empty()) write_node_dump(o.dump_nodes, inputs, outputs, own, dumped, o.model, g.backend()->name());
  outputs.resize(own);

  const Graph& graph = g.graph();
  const auto activations = output_activation(graph);
  std::printf("model       %s (%zu nodes, read in %.1f ms)\n", o.model.c_str(), graph.num_nodes(), read_ms);
  std::printf("backend     %s on %s (finalize %.1f ms)\n", g.backend()->name().c_str(), g.device().str().c_str(), finalize_ms);
  if (backend.kernels) std::printf("kernels     %s\n", backend.kernels().c_str());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::printf("input  %zu    %%%s: %s%s\n", i, graph.value(graph.inputs()[i]).name.c_str(), std::string(dtype_name(inputs[i].dtype())).c_str(),
                shape_str(inputs[i].shape()).c_str());
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    std::printf("output %zu    %%%s: %s%s  ->  %s\n", i, graph.value(graph.outputs()[i]).name.c_str(),
                std::string(dtype_name(outputs[i].dtype())).c_str(), shape_str(outputs[i].shape()).c_str(), activations[i].str().c_str());
  }
  std::printf("run         %.2f ms\n", run_ms);
  std::vector<std::string> names_out = g.output_names();
  names_out.resize(own);
  write_outputs(o, outputs, names_out);
  return 0;
}

}  // namespace tracegraph::cli
