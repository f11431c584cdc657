// read_model() and load(): a model file (TorchScript, a torch.export .pt2
// archive, or an exported graph by its .json), as read or as a TracedGraph on the LibTorch backend; what the
// CLI's commands and the bench read models with. Apart from the backend so that what
// needs only the backend (the backend fuzzer) links without the reader.
#include <filesystem>

#include "tracegraph/exported_graph.h"
#include "tracegraph/pt2.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/native/torchscript.h"

namespace tracegraph::native {

ExportedGraph read_model(const std::string& path, const TorchScriptOptions& options) {
  if (std::filesystem::path(path).extension() == ".json") return load_graph(path);
  // A .pt2 is told by what it holds, not by its name: torch.jit.save and
  // torch.export.save both write zip archives, under any extension.
  if (is_pt2_file(path)) return load_pt2(path);
  return read_torchscript(path, options);
}

TracedGraph load(const std::string& path, const TorchScriptOptions& options) {
  return TracedGraph::from_exported(read_model(path, options), make_libtorch_backend());
}

TracedGraph load(const torch::jit::Module& module, const TorchScriptOptions& options) {
  return TracedGraph::from_exported(read_torchscript(module, options), make_libtorch_backend());
}

}  // namespace tracegraph::native
