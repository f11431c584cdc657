// Running graphs on LibTorch, CPU and CUDA.
//
// Each node runs the ATen kernel of its op through LibTorch's operator
// registry, so a graph read from TorchScript computes exactly what the module
// does. finalize() resolves every node to its kernel (an op LibTorch lacks is
// an error there, naming the node), moves the weights to the device, and plans
// when each intermediate is freed (after its last use). On CUDA, work runs on
// the chosen stream and tensors stay on the device between nodes; inputs on
// another device are moved to the graph's device; outputs are on the graph's
// device.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "tracegraph/backend.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/traced_graph.h"

namespace tracegraph::native {

std::unique_ptr<Backend> make_libtorch_backend();

// A TorchScript file or an exported graph (.json, whose inputs keep their
// exported shapes; `options` are TorchScript's), as read.
ExportedGraph read_model(const std::string& path, const TorchScriptOptions& options = {});
// The same, ready to finalize on LibTorch.
TracedGraph load(const std::string& path, const TorchScriptOptions& options = {});
// A module already loaded.
TracedGraph load(const torch::jit::Module& module, const TorchScriptOptions& options = {});

// run() for apps that already hold at::Tensors: no copies on the way in or out.
std::vector<at::Tensor> run(TracedGraph& graph, const std::vector<at::Tensor>& inputs);

// Whether LibTorch's operator registry has an op by this name ("aten::silu").
bool has_libtorch_op(const std::string& qualified);

// Whether this LibTorch can run on CUDA and sees a device.
bool cuda_available();

}  // namespace tracegraph::native
