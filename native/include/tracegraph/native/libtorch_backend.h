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

// One step of the LibTorch backend's plan: what runs for one node, or for a
// convolution and the residual add fused into it.
struct LibTorchStep {
  std::vector<std::string> nodes;  // the graph's nodes it runs
  std::string kernel;              // the LibTorch op it calls: "aten::max_pool2d", "mkldnn::_convolution_pointwise"
  std::string fused_activation;    // the activation done inside that kernel (oneDNN's post-op name); empty: none
  bool packed_weight = false;      // its weight is in oneDNN's blocked layout, reordered once (finalize(), to())
};
// The plan of a finalized graph's LibTorch backend, in run order: float32
// CPU convolutions run on oneDNN (LibTorch's mkldnn::_convolution_pointwise)
// on channels-last activations, with their activation and a residual add
// after them in the same pass; a residual operand nothing reads afterwards
// takes the sum in place. kInvalidArgument for another backend.
std::vector<LibTorchStep> libtorch_plan(const Backend& backend);

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
