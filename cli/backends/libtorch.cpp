// The LibTorch backend in the command-line tool: always built (the tool reads
// TorchScript with LibTorch), and the reference `check` and `bench` compare
// the other backends with.
#include <ATen/Parallel.h>

#include "../backends.h"
#include "tracegraph/native/libtorch_backend.h"

namespace tracegraph::cli {
namespace {

BackendEntry entry() {
  BackendEntry e;
  e.name = "libtorch";
  e.title = "LibTorch";
  e.order = 10;
  e.devices = {"cpu", "cuda"};
  e.make = [](const BackendSettings& s) {
    // LibTorch's intra-op threads are the process's, not the backend's.
    if (s.threads > 0) at::set_num_threads(s.threads);
    return native::make_libtorch_backend();
  };
  e.runs_op = [](const std::string& op) -> std::optional<std::string> {
    for (const char* ns : {"aten::", "prim::"}) {
      if (native::has_libtorch_op(ns + op)) return "yes";
    }
    return std::nullopt;
  };
  e.ops_legend = "- **LibTorch**: the LibTorch backend runs every op in LibTorch's registry, by its exact overload.\n";
  return e;
}

const BackendRegistration kRegistered{entry()};

}  // namespace
}  // namespace tracegraph::cli
