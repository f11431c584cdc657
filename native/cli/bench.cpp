#include "bench.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/InferenceMode.h>
#include <torch/script.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>

#include "run.h"
#include "timing.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/pt2.h"
#ifdef TRACEGRAPH_HAS_XNNPACK
#include "tracegraph/xnnpack/backend.h"
#endif

namespace tracegraph::cli {
namespace {

// Wraps LibTorch's CPU allocator to count live bytes and their peak, so that
// each variant's peak memory is measured the same way, in the same process.
class TrackingAllocator final : public c10::Allocator {
 public:
  explicit TrackingAllocator(c10::Allocator* base) : base_(base) { self_ = this; }

  // The context is the data pointer itself, as LibTorch's raw_allocate users
  // (oneDNN among them) assume; the bookkeeping lives in a side table.
  c10::DataPtr allocate(size_t n) override {
    c10::DataPtr inner = base_->allocate(n);
    void* data = inner.get();
    const c10::Device device = inner.device();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      live_ += static_cast<std::int64_t>(n);
      peak_ = std::max(peak_, live_);
      if (data) blocks_.emplace(data, Block{std::move(inner), n});
    }
    return c10::DataPtr(data, data, &release, device);
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }

  void reset_peak() const {
    std::lock_guard<std::mutex> lock(mutex_);
    peak_ = live_;
  }
  std::int64_t live() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_;
  }
  std::int64_t peak() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return peak_;
  }

 private:
  struct Block {
    c10::DataPtr inner;
    size_t n;
  };
  static void release(void* data) {
    c10::DataPtr inner;  // freed after the lock is dropped
    {
      std::lock_guard<std::mutex> lock(self_->mutex_);
      auto it = self_->blocks_.find(data);
      if (it == self_->blocks_.end()) return;
      self_->live_ -= static_cast<std::int64_t>(it->second.n);
      inner = std::move(it->second.inner);
      self_->blocks_.erase(it);
    }
  }

  static inline TrackingAllocator* self_ = nullptr;
  c10::Allocator* base_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<void*, Block> blocks_;
  mutable std::int64_t live_ = 0;
  mutable std::int64_t peak_ = 0;
};

TrackingAllocator& tracker() {
  static TrackingAllocator* t = [] {
    auto* a = new TrackingAllocator(c10::GetCPUAllocator());
    c10::SetCPUAllocator(a, /*priority=*/100);
    return a;
  }();
  return *t;
}


struct Result {
  std::string name;
  std::optional<std::string> error;
  double load_ms = 0, first_ms = 0, median_ms = 0, p10_ms = 0, p90_ms = 0;
  double peak_mib = 0;  // bytes allocated during runs beyond what was live before them
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double idx = p * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(idx);
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (idx - static_cast<double>(lo));
}

// Times `load` once, then `forward`: once cold, `warmup` more, then `runs` timed.
Result measure(const std::string& name, const BenchOptions& o, const std::function<std::function<void()>()>& load) {
  Result r;
  r.name = name;
  try {
    auto start = Clock::now();
    std::function<void()> forward = load();
    r.load_ms = ms_since(start);
    const bool cuda = o.device != "cpu";
    auto sync = [&] {
      if (cuda) at::zeros({1}, at::TensorOptions().device(at::kCUDA)).cpu();  // waits for the device's queue
    };
    tracker().reset_peak();
    const std::int64_t before = tracker().live();
    start = Clock::now();
    forward();
    sync();
    r.first_ms = ms_since(start);
    for (int i = 0; i < o.warmup; ++i) forward();
    std::vector<double> times;
    for (int i = 0; i < o.runs; ++i) {
      start = Clock::now();
      forward();
      sync();
      times.push_back(ms_since(start));
    }
    r.median_ms = percentile(times, 0.5);
    r.p10_ms = percentile(times, 0.1);
    r.p90_ms = percentile(times, 0.9);
    r.peak_mib = static_cast<double>(tracker().peak() - before) / (1024.0 * 1024.0);
  } catch (const std::exception& e) {
    std::string m = e.what();
    r.error = m.substr(0, m.find('\n'));
  }
  return r;
}

// What the LibTorch backend fused in the optimized graph's plan.
void print_libtorch_plan(const std::vector<native::LibTorchStep>& plan) {
  int onednn = 0, activations = 0, residual = 0, in_place = 0, packed = 0;
  for (const auto& s : plan) {
    if (s.kernel.rfind("mkldnn::_convolution_pointwise", 0) != 0) continue;
    ++onednn;
    activations += !s.fused_activation.empty();
    residual += s.kernel.find(".binary") != std::string::npos;
    in_place += s.kernel == "mkldnn::_convolution_pointwise_.binary";
    packed += s.packed_weight;
  }
  std::printf("libtorch plan (optimized): %zu steps; %d convolutions on oneDNN, %d with their activation inside, %d with a residual add "
              "(%d in place), %d weights in oneDNN's blocked layout\n",
              plan.size(), onednn, activations, residual, in_place, packed);
}

#ifdef TRACEGRAPH_HAS_XNNPACK
// The optimized graph on XNNPACK with the per-node profile (a run of its own,
// apart from the timed ones): the slowest nodes with their GFLOP/s, and the
// convolutions' total, so that the next slow kernel is visible.
void print_xnnpack_profile(TracedGraph& g, const std::vector<at::Tensor>& inputs, int threads, int warmup, int runs) {
  g.optimize();
  auto owned = std::make_unique<xnnpack::XnnpackBackend>(xnnpack::Options{threads, true});
  const xnnpack::XnnpackBackend* backend = owned.get();
  g.set_backend(std::move(owned));
  g.finalize();
  std::vector<Tensor> flat;
  for (const auto& t : inputs) flat.push_back(native::from_aten(t));
  for (int i = 0; i < warmup; ++i) g.run(flat);
  // The profile is of the last run: keep each node's fastest of `runs`.
  std::vector<xnnpack::NodeTime> best;
  for (int i = 0; i < std::max(1, runs); ++i) {
    g.run(flat);
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
                total_ms > 0 ? 100 * t.milliseconds / total_ms : 0.0, gflops,
                (std::string(xnnpack::engine_name(t.engine)) + (t.column_blocks ? " in " + std::to_string(t.column_blocks) + " column blocks" : "") +
                 (t.pixel_fold > 1 ? ", " + std::to_string(t.pixel_fold) + " pixels folded" : "") +
                 (t.winograd.empty() ? "" : ", " + t.winograd))
                    .c_str());
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
#endif

}  // namespace

int bench(const BenchOptions& o) {
  tracker();  // install before anything allocates
  if (o.threads > 0) at::set_num_threads(o.threads);
  c10::InferenceMode inference;
  const c10::Device device(o.device);
  std::vector<at::Tensor> inputs;
  // A .pt2 program or an exported graph says its inputs' dtypes (token ids, masks).
  std::vector<std::optional<DType>> dtypes(o.input_shapes.size());
  if (is_pt2_file(o.model) || std::filesystem::path(o.model).extension() == ".json") {
    const ExportedGraph probe = native::read_model(o.model, {});
    for (std::size_t i = 0; i < dtypes.size() && i < probe.graph.inputs().size(); ++i) dtypes[i] = probe.graph.value(probe.graph.inputs()[i]).dtype;
  }
  at::manual_seed(0);
  for (std::size_t i = 0; i < o.input_shapes.size(); ++i) inputs.push_back(native::to_aten(random_input(o.input_shapes[i], dtypes[i])).to(device));
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());

  // A .pt2 program has no TorchScript module: the LibTorch backend on the
  // graph as read is the reference its ratios are against.
  const bool pt2 = is_pt2_file(o.model);
  auto torchscript = [&](int how) {
    return [&, how]() -> std::function<void()> {
      if (pt2) fail(ErrorCode::kUnsupported, "a .pt2 program has no TorchScript module (the reference is tracegraph on libtorch)");
      auto m = std::make_shared<torch::jit::Module>(torch::jit::load(o.model, device));
      m->eval();
      if (how == 1) *m = torch::jit::freeze(*m);
      if (how == 2) *m = torch::jit::optimize_for_inference(*m);
      return [m, &args] { m->forward(args); };
    };
  };
  // tracegraph's graph of the model, read with the inputs as examples.
  auto read_graph = [&] {
    native::TorchScriptOptions options;
    for (const auto& t : inputs) options.example_inputs.push_back(native::from_aten(t.cpu()));
    auto g = std::make_shared<TracedGraph>(native::load(o.model, options));
    if (pt2) g->set_input_shapes(o.input_shapes);  // binds a torch.export.Dim's symbols
    return g;
  };
  std::vector<Result> results;
  results.push_back(measure("torchscript", o, torchscript(0)));
  results.push_back(measure("torchscript frozen", o, torchscript(1)));
  results.push_back(measure("torchscript optimize_for_inference", o, torchscript(2)));
  results.push_back(measure("tracegraph on libtorch", o, [&]() -> std::function<void()> {
    auto g = read_graph();
    g->to(o.device);
    g->finalize();
    return [g, &inputs] { native::run(*g, inputs); };
  }));
  std::optional<OptimizeReport> report;
  std::vector<native::LibTorchStep> plan;
  results.push_back(measure("tracegraph optimized on libtorch", o, [&]() -> std::function<void()> {
    auto g = read_graph();
    report = g->optimize();
    g->to(o.device);
    g->finalize();
    plan = native::libtorch_plan(*g->backend());
    return [g, &inputs] { native::run(*g, inputs); };
  }));
#ifdef TRACEGRAPH_HAS_XNNPACK
  if (o.device == "cpu") {
    // XNNPACK allocates outside LibTorch's allocator: its row's memory is the
    // planned arena of intermediates.
    std::optional<std::size_t> arena_bytes;
    auto on_xnnpack = [&](const char* name, xnnpack::ConvAlgorithm algorithm) {
      results.push_back(measure(name, o, [&]() -> std::function<void()> {
        auto g = read_graph();
        g->optimize();
        xnnpack::Options options{at::get_num_threads()};
        options.conv_algorithm = algorithm;
        auto backend = std::make_unique<xnnpack::XnnpackBackend>(options);
        const xnnpack::XnnpackBackend* xnn = backend.get();
        g->set_backend(std::move(backend));
        g->finalize();
        arena_bytes = xnn->arena_bytes();  // planned at finalize: the input shapes are known
        std::vector<Tensor> flat;
        for (const auto& t : inputs) flat.push_back(native::from_aten(t));
        return [g, flat] { g->run(flat); };
      }));
      if (arena_bytes && !results.back().error) results.back().peak_mib = static_cast<double>(*arena_bytes) / (1024.0 * 1024.0);
    };
    // Each 3x3 convolution as Winograd or directly, whichever measured faster
    // at finalize; then all of them directly, for the ratio.
    on_xnnpack("tracegraph optimized on xnnpack", xnnpack::ConvAlgorithm::kFastest);
    on_xnnpack("  ... direct convolutions only", xnnpack::ConvAlgorithm::kDirect);
  }
#endif

  std::printf("tracegraph bench %s on %s, %d threads: %d warm runs after %d warm-ups\n", o.model.c_str(), o.device.c_str(),
              at::get_num_threads(), o.runs, o.warmup);
#ifdef TRACEGRAPH_HAS_XNNPACK
  std::printf("xnnpack kernels: %s\n", xnnpack::XnnpackBackend::instruction_set().c_str());
#endif
  std::printf("%-36s %9s %9s %10s %19s %10s\n", "variant", "load ms", "first ms", "median ms", "p10..p90 ms", "peak MiB");
  for (const auto& r : results) {
    if (r.error) {
      std::printf("%-36s  failed: %s\n", r.name.c_str(), r.error->c_str());
      continue;
    }
    std::printf("%-36s %9.1f %9.1f %10.2f %9.2f..%-9.2f %10.1f\n", r.name.c_str(), r.load_ms, r.first_ms, r.median_ms, r.p10_ms,
                r.p90_ms, r.peak_mib);
  }
  const std::size_t references = pt2 ? 4 : 3;  // the rows each of ours is compared with: [first, references)
  for (std::size_t k = references; k < results.size(); ++k) {
    const Result& ours = results[k];
    if (ours.error) return 1;
    std::printf("ratios, %s / variant (below 1: tracegraph is faster or smaller)\n", ours.name.c_str());
    std::printf("%-40s %10s %10s %10s\n", "", "median", "first run", "peak mem");
    for (std::size_t i = pt2 ? 3 : 0; i < references; ++i) {
      const Result& r = results[i];
      if (r.error) continue;
      std::printf("%-40s %9.2fx %9.2fx %9.2fx\n", ("vs " + r.name).c_str(), ours.median_ms / r.median_ms, ours.first_ms / r.first_ms,
                  r.peak_mib > 0 ? ours.peak_mib / r.peak_mib : 0.0);
    }
  }
  print_libtorch_plan(plan);
#ifdef TRACEGRAPH_HAS_XNNPACK
  if (o.device == "cpu" && results.size() >= 7 && !results[5].error && !results[6].error)
    std::printf("xnnpack, fastest / direct convolutions: %.2fx median, %.2fx first run (finalize measures each 3x3 shape)\n",
                results[5].median_ms / results[6].median_ms, results[5].first_ms / results[6].first_ms);
#endif
  if (report) std::printf("the default pipeline on this model:\n%s", report->table().c_str());
#ifdef TRACEGRAPH_HAS_XNNPACK
  if (o.device == "cpu") print_xnnpack_profile(*read_graph(), inputs, at::get_num_threads(), o.warmup, o.runs);
#endif
  return 0;
}

}  // namespace tracegraph::cli
