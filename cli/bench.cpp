#include "bench.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>

#include "backends.h"
#include "run.h"
#include "timing.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/pt2.h"

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

}  // namespace

int bench(const BenchOptions& o) {
  tracker();  // install before anything allocates
  if (o.threads > 0) at::set_num_threads(o.threads);
  c10::InferenceMode inference;
  const c10::Device device(o.device);
  std::vector<at::Tensor> inputs;
  // A .pt2 program or an exported graph says its inputs' dtypes (token ids, masks).
  std::vector<std::optional<DType>> dtypes = o.input_dtypes;
  dtypes.resize(o.input_shapes.size());
  if (is_pt2_file(o.model) || std::filesystem::path(o.model).extension() == ".json") {
    const ExportedGraph probe = native::read_model(o.model, {});
    for (std::size_t i = 0; i < dtypes.size() && i < probe.graph.inputs().size(); ++i) {
      if (!dtypes[i]) dtypes[i] = probe.graph.value(probe.graph.inputs()[i]).dtype;
    }
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
  // Each other backend's rows (on the CPU, where they all run), on the
  // optimized graph; the memory column is what the backend planned where it
  // allocates outside LibTorch's allocator.
  std::vector<Tensor> flat;
  for (const auto& t : inputs) flat.push_back(native::from_aten(t.cpu()));
  struct Compared {
    const BackendEntry* backend;
    std::size_t first_row;
  };
  std::vector<Compared> compared;
  for (const BackendEntry& b : backends()) {
    if (b.bench_variants.empty() || o.device != "cpu") continue;
    compared.push_back({&b, results.size()});
    for (const BenchVariant& variant : b.bench_variants) {
      std::optional<std::size_t> planned;
      results.push_back(measure(variant.row, o, [&]() -> std::function<void()> {
        auto g = read_graph();
        g->optimize();
        auto backend = variant.make({at::get_num_threads()});
        const Backend* made = backend.get();
        g->set_backend(std::move(backend));
        g->finalize();
        if (b.planned_bytes) planned = b.planned_bytes(*made);  // planned at finalize: the input shapes are known
        return [g, &flat] { g->run(flat); };
      }));
      if (planned && !results.back().error) results.back().peak_mib = static_cast<double>(*planned) / (1024.0 * 1024.0);
    }
  }

  std::printf("tracegraph bench %s on %s, %d threads: %d warm runs after %d warm-ups\n", o.model.c_str(), o.device.c_str(),
              at::get_num_threads(), o.runs, o.warmup);
  for (const auto& c : compared) {
    if (c.backend->kernels) std::printf("%s kernels: %s\n", c.backend->name.c_str(), c.backend->kernels().c_str());
  }
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
  for (const auto& c : compared) {
    const std::size_t k = c.first_row;
    if (c.backend->variants_ratio.empty() || k + 1 >= results.size() || results[k].error || results[k + 1].error) continue;
    std::printf("%s, %s: %.2fx median, %.2fx first run\n", c.backend->name.c_str(), c.backend->variants_ratio.c_str(),
                results[k].median_ms / results[k + 1].median_ms, results[k].first_ms / results[k + 1].first_ms);
  }
  if (report) std::printf("the default pipeline on this model:\n%s", report->table().c_str());
  for (const auto& c : compared) {
    if (!c.backend->bench_profile) continue;
    auto g = read_graph();
    g->optimize();
    c.backend->bench_profile(*g, flat, at::get_num_threads(), o.warmup, o.runs);
  }
  return 0;
}

}  // namespace tracegraph::cli
