// The backends the command-line tool can run models on, by name. Each backend
// adds itself (cli/backends/<name>.cpp, compiled where its library is built)
// with what the commands need of it; the commands see only this registry, so
// none of them names a backend or asks whether one was built.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tracegraph/backend.h"
#include "tracegraph/tensor.h"
#include "tracegraph/traced_graph.h"

namespace tracegraph::cli {

// How a command asks for a backend: 0 threads is the backend's own default.
struct BackendSettings {
  int threads = 0;
};

// One more row of `bench`: the optimized graph on a variant of the backend.
struct BenchVariant {
  std::string row;  // as the table prints it
  std::function<std::unique_ptr<Backend>(const BackendSettings&)> make;
};

struct BackendEntry {
  std::string name;   // --backend NAME, and its column in `check` and `ops`
  std::string title;  // its column's heading in docs/ops.md ("XNNPACK")
  int order = 0;      // where it comes in listings (lowest first)
  std::function<std::unique_ptr<Backend>(const BackendSettings&)> make;
  // The devices it runs on ("cpu", "cuda"); `run --device` checks it.
  std::vector<std::string> devices = {"cpu"};

  // The instructions its kernels run with here ("avx2"), printed by run,
  // check and bench; empty: nothing to say.
  std::function<std::string()> kernels;

  // `ops`: what runs an op on this backend ("yes", or its engines), by the
  // op's name without "aten::"; std::nullopt: it does not run. `extra_ops`
  // are ops it runs that the op table does not know, listed too.
  std::function<std::optional<std::string>(const std::string& op)> runs_op;
  std::function<std::vector<std::string>()> extra_ops;
  std::string ops_legend;  // docs/ops.md's paragraph on its column (markdown)

  // `bench`, on the CPU: its rows beside LibTorch's (the first is the
  // backend as a user gets it), the bytes it planned for intermediates
  // (its rows' memory column, where it allocates outside LibTorch), what
  // the ratio of its first two rows means, and a profile of its own printed
  // after the table.
  std::vector<BenchVariant> bench_variants;
  std::function<std::optional<std::size_t>(const Backend&)> planned_bytes;
  std::string variants_ratio;
  std::function<void(TracedGraph& optimized, const std::vector<Tensor>& inputs, int threads, int warmup, int runs)> bench_profile;
};

// Adds a backend; called once per backend, before main() (a static
// BackendRegistration in the backend's file).
void register_backend(BackendEntry entry);

// Every registered backend, in order.
const std::vector<BackendEntry>& backends();

// The backend of that name; kInvalidArgument naming the ones there are.
const BackendEntry& find_backend(const std::string& name);

// "libtorch or xnnpack": the names there are, for messages and usage.
std::string backend_names();

struct BackendRegistration {
  explicit BackendRegistration(BackendEntry entry) { register_backend(std::move(entry)); }
};

}  // namespace tracegraph::cli
