// The XNNPACK backend in the command-line tool: compiled where the XNNPACK
// backend is built, and registered with what `run`, `check`, `ops` and
// `bench` show of it.
#include <algorithm>
#include <cstdio>
#include <map>

#include "../backends.h"
#include "tracegraph/op_table.h"
#include "tracegraph/xnnpack/backend.h"

namespace tracegraph::cli {
namespace {

std::unique_ptr<Backend> make(const BackendSettings& s, xnnpack::ConvAlgorithm algorithm) {
  xnnpack::Options options{s.threads == 0 ? 1 : s.threads};
  options.conv_algorithm = algorithm;
  return xnnpack::make_backend(options);
}

// What runs each lowered op, by its functional name: XNNPACK's operators,
// ours (the convolution kernels), portable kernels, or nothing at the run.
const std::map<std::string, std::string>& engines_by_op() {
  static const std::map<std::string, std::string> engines = [] {
    std::map<std::string, std::string> out;
    for (const auto& op : xnnpack::lowered_ops()) {
      // An in-place variant runs where its functional form does (inplace_to_functional).
      const std::string functional = functional_op_name("aten::" + op).substr(6);
      std::string listed;
      for (xnnpack::Engine e : xnnpack::op_engines(op).value_or(std::vector<xnnpack::Engine>{})) {
        const std::string name = e == xnnpack::Engine::kNone ? "view" : e == xnnpack::Engine::kWinograd ? "ours" : std::string(xnnpack::engine_name(e));
        listed += (listed.empty() ? "" : ", ") + name;
      }
      out[functional] = listed.empty() ? "view" : listed;
    }
    return out;
  }();
  return engines;
}

std::string engine_text(const xnnpack::NodeTime& t) {
  return std::string(xnnpack::engine_name(t.engine)) + (t.column_blocks ? " in " + std::to_string(t.column_blocks) + " column blocks" : "") +
         (t.pixel_fold > 1 ? ", " + std::to_string(t.pixel_fold) + " pixels folded" : "") + (t.winograd.empty() ? "" : ", " + t.winograd);
}

// The optimized graph with the per-node profile (a run of its own, apart from
// the timed ones): the slowest nodes with their GFLOP/s, the convolutions'
// total and the time by op, so that the next slow kernel is visible.
void print_profile(TracedGraph& g, const std::vector<Tensor>& inputs, int threads, int warmup, int runs) {
  auto owned = std::make_unique<xnnpack::XnnpackBackend>(xnnpack::Options{threads, true});
  const xnnpack::XnnpackBackend* backend = owned.get();
  g.set_backend(std::move(owned));
  g.finalize();
  for (int i = 0; i < warmup; ++i) g.run(inputs);
  // The profile is of the last run: keep each node's fastest of `runs`.
  std::vector<xnnpack::NodeTime> best;
  for (int i = 0; i < std::max(1, runs); ++i) {
    g.run(inputs);
    const auto times = backend->profile();
    if (best.empty()) best = times;
    for (std::size_t k = 0; k < times.size() && k < best.size(); ++k) best[k].milliseconds = std::min(best[k].milliseconds, times[k].milliseconds);
  }
  double total_ms = 0, conv_ms = 0, conv_flops = 0, layout_ms = 0;
  int layout_changes = 0;
  for (const auto& t : best) {
    total_ms += t.milliseconds;
    layout_changes += t.layout_changes;
    layout_ms += t.layout_milliseconds;
    if (t.flops > 0) {
      conv_ms += t.milliseconds;
      conv_flops += t.flops;
    }
  }
  std::vector<xnnpack::NodeTime> slowest = best;
  std::stable_sort(slowest.begin(), slowest.end(), [](const auto& a, const auto& b) { return a.milliseconds > b.milliseconds; });
  slowest.resize(std::min<std::size_t>(slowest.size(), 10));
  std::printf("xnnpack profile (optimized, %d threads, each node's fastest of %d runs): %.2f ms in nodes; convolutions and matrix products "
              "%.2f GFLOP in %.2f ms = %.1f GFLOP/s\n",
              threads, std::max(1, runs), total_ms, conv_flops / 1e9, conv_ms, conv_ms > 0 ? conv_flops / (conv_ms * 1e6) : 0.0);
  std::printf("layout changes inside the graph (channels-last <-> torch's order, before a node): %d, %.2f ms\n", layout_changes, layout_ms);
  std::printf("  %-32s %-28s %9s %9s %10s  %s\n", "node", "op", "ms", "share", "GFLOP/s", "engine");
  for (const auto& t : slowest) {
    char gflops[32] = "-";
    if (t.flops > 0) std::snprintf(gflops, sizeof gflops, "%.1f", t.gflops());
    std::printf("  %-32s %-28s %9.3f %8.1f%% %10s  %s\n", t.node.substr(0, 32).c_str(), t.op.substr(0, 28).c_str(), t.milliseconds,
                total_ms > 0 ? 100 * t.milliseconds / total_ms : 0.0, gflops, engine_text(t).c_str());
  }
  // The same time by op: where a kind of node (attention, norms) takes its share.
  std::map<std::string, std::pair<int, double>> by_op;
  for (const auto& t : best) {
    auto& [count, ms] = by_op[t.op];
    ++count;
    ms += t.milliseconds;
  }
  std::vector<std::pair<std::string, std::pair<int, double>>> ops(by_op.begin(), by_op.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  ops.resize(std::min<std::size_t>(ops.size(), 8));
  std::printf("  %-48s %6s %9s %9s\n", "by op", "nodes", "ms", "share");
  for (const auto& [op, cm] : ops)
    std::printf("  %-48s %6d %9.3f %8.1f%%\n", op.substr(0, 48).c_str(), cm.first, cm.second, total_ms > 0 ? 100 * cm.second / total_ms : 0.0);
}

BackendEntry entry() {
  BackendEntry e;
  e.name = "xnnpack";
  e.title = "XNNPACK";
  e.order = 20;
  e.make = [](const BackendSettings& s) { return make(s, xnnpack::ConvAlgorithm::kFastest); };
  e.kernels = [] { return xnnpack::XnnpackBackend::instruction_set(); };
  e.runs_op = [](const std::string& op) -> std::optional<std::string> {
    const auto& engines = engines_by_op();
    const auto it = engines.find(op);
    if (it == engines.end()) return std::nullopt;
    return it->second;
  };
  e.extra_ops = [] {
    std::vector<std::string> ops;
    for (const auto& [op, engines] : engines_by_op()) ops.push_back(op);
    return ops;
  };
  e.ops_legend =
      "- **XNNPACK**: what runs the op on the XNNPACK backend, natively and in wasm (`no`: it is refused at\n"
      "  `finalize()`, by name): `xnnpack`, XNNPACK's operators; `ours`, our convolution kernels (Winograd,\n"
      "  depthwise, pointwise, unfolded); `portable`, a plain C++ kernel of ours; `view`, nothing at the run (a\n"
      "  view, a size or a constant known while planning). Where several are listed the shape or the arguments\n"
      "  choose. The op sweep (docs/op_sweep.md) checks that every node it runs ran on one its op lists.\n";
  // Each 3x3 convolution as Winograd or directly, whichever measured faster
  // at finalize; then all of them directly, for the ratio.
  e.bench_variants = {
      {"tracegraph optimized on xnnpack", [](const BackendSettings& s) { return make(s, xnnpack::ConvAlgorithm::kFastest); }},
      {"  ... direct convolutions only", [](const BackendSettings& s) { return make(s, xnnpack::ConvAlgorithm::kDirect); }},
  };
  // XNNPACK allocates outside LibTorch's allocator: its rows' memory is the
  // arena of intermediates planned at finalize.
  e.planned_bytes = [](const Backend& b) -> std::optional<std::size_t> {
    const auto* x = dynamic_cast<const xnnpack::XnnpackBackend*>(&b);
    if (x == nullptr) return std::nullopt;
    return x->arena_bytes();
  };
  e.variants_ratio = "fastest / direct convolutions (finalize measures each 3x3 shape)";
  e.bench_profile = print_profile;
  return e;
}

const BackendRegistration kRegistered{entry()};

}  // namespace
}  // namespace tracegraph::cli
