// Reading TorchScript models (.ts/.pt from torch.jit.trace or torch.jit.script)
// into the core's graph.
//
// The module is read in eval mode and frozen: every submodule call is inlined,
// weights and buffers become constant values with their data, branches whose
// condition is known once frozen (`if not self.training:`) are resolved. A
// list built for aten::cat becomes the cat's inputs; tuples, lists and dicts
// built for the return value become the graph's outputs and its out_spec.
// In-place ops are rewritten to their functional form (inplace_to_functional).
// What cannot be read faithfully (a branch on a tensor's values, a loop whose
// count depends on data) is an error naming the node and its source line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/exported_graph.h"
#include "tracegraph/tensor.h"

namespace torch::jit {
struct Module;
}

namespace tracegraph::native {

struct InputSignature {
  DType dtype = DType::kFloat32;
  Shape shape;
};

struct TorchScriptOptions {
  // Positional example inputs: every value gets the dtype and shape it has
  // when the module runs on them, and in_spec is ((inputs...), {}).
  std::vector<Tensor> example_inputs;
  // Or only dtypes and shapes (in_spec stays empty); used when no examples.
  std::vector<InputSignature> signature;
};

// Errors: kIo (cannot read), kParse (not a zip archive), kTruncated (the
// archive ends early), kSchema (a zip that is not TorchScript), kUnsupported
// (a construct that cannot be read faithfully; names node and source line).
ExportedGraph read_torchscript(const std::string& path, const TorchScriptOptions& options = {});
// The same for a module already loaded; the module itself is not changed.
ExportedGraph read_torchscript(const torch::jit::Module& module, const TorchScriptOptions& options = {},
                               std::string_view source = "<module>");

// The module of a TorchScript file, on the CPU, with the errors of
// read_torchscript(path) (kIo, then LibTorch's own, named by the file): for a
// caller that reads it and runs it too, loading it once.
torch::jit::Module load_torchscript_module(const std::string& path);

// The names read_torchscript gives a module's forward inputs, in order,
// without reading the module (what `-i NAME=FILE` is matched against).
std::vector<std::string> torchscript_input_names(const torch::jit::Module& module);

}  // namespace tracegraph::native
