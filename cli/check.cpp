#include "check.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/api/module.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "run.h"
#include "backends.h"
#include "timing.h"
#include "tracegraph/activation.h"
#include "tracegraph/error.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/pt2.h"
#include "tracegraph/traced_graph.h"

namespace tracegraph::cli {
namespace {

// A module's return value as flat tensors, in the order of its tree spec.
void flatten(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) out.push_back(v.toTensor());
  else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) flatten(e, out);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) flatten(e, out);
  } else if (v.isGenericDict()) {
    for (const auto& e : v.toGenericDict()) flatten(e.value(), out);
  }
}

double relative_error(const at::Tensor& got, const at::Tensor& want) {
  if (got.sizes() != want.sizes()) return INFINITY;
  const at::Tensor g = got.to(at::kDouble), w = want.to(at::kDouble);
  const double scale = std::max(w.abs().max().item<double>(), 1e-12);
  return (g - w).abs().max().item<double>() / scale;
}

}  // namespace

int check(const CheckOptions& o) {
  // An exported graph or a .pt2 program: no TorchScript forward to compare
  // with, so the LibTorch backend as read is the reference.
  const bool exported = std::filesystem::path(o.model).extension() == ".json" || is_pt2_file(o.model);
  // The inputs: seeded random tensors of the given shapes (or an exported
  // graph's own static input shapes).
  std::vector<Shape> shapes = o.input_shapes;
  std::optional<ExportedGraph> loaded;  // an exported graph, read once
  if (exported) loaded = native::read_model(o.model, {});
  if (exported && shapes.empty()) {
    const Graph& probe = loaded->graph;
    for (ValueId v : probe.inputs()) {
      const auto& s = probe.value(v).shape;
      Shape shape;
      for (const Dim& d : s ? *s : SymbolicShape{}) {
        if (!d.is_static()) fail(ErrorCode::kInvalidArgument, o.model + ": input '" + probe.value(v).name + "' has no static shape: give --input-shape");
        shape.push_back(d.size);
      }
      if (!s) fail(ErrorCode::kInvalidArgument, o.model + ": input '" + probe.value(v).name + "' has no shape: give --input-shape");
      shapes.push_back(shape);
    }
  }
  if (shapes.empty() && !exported) fail(ErrorCode::kInvalidArgument, "check runs the model: give --input-shape for each input");
  at::manual_seed(1234);
  std::vector<at::Tensor> inputs;
  std::vector<Tensor> sdk_inputs;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    // An exported graph's inputs of their own dtypes (token ids, masks).
    std::optional<DType> dtype = i < o.input_dtypes.size() ? o.input_dtypes[i] : std::nullopt;
    if (!dtype && loaded && i < loaded->graph.inputs().size()) dtype = loaded->graph.value(loaded->graph.inputs()[i]).dtype;
    sdk_inputs.push_back(random_input(shapes[i], dtype));
    inputs.push_back(native::to_aten(sdk_inputs.back()));
  }

  // The reference: the TorchScript module's own forward, on the module the
  // graph is then read from (loaded once).
  std::vector<at::Tensor> reference;
  std::string reference_name = "the TorchScript module's forward";
  native::TorchScriptOptions read_options;
  read_options.example_inputs = sdk_inputs;
  std::optional<torch::jit::Module> module;
  if (!exported) {
    module = native::load_torchscript_module(o.model);
    module->eval();
    c10::InferenceMode inference;
    std::vector<c10::IValue> args(inputs.begin(), inputs.end());
    flatten(module->forward(args), reference);
  }

  // Read once (timed); each run below starts from a copy of what was read.
  const auto start = Clock::now();
  const ExportedGraph read = exported ? std::move(*loaded) : native::read_torchscript(*module, read_options, o.model);
  const double read_ms = ms_since(start);
  const Graph& g = read.graph;
  std::printf("model       %s\n", o.model.c_str());
  std::printf("read        %zu nodes in %.1f ms\n", g.num_nodes(), read_ms);
  const auto activations = output_activation(g);
  for (std::size_t i = 0; i < activations.size(); ++i) {
    std::printf("output %zu    %s -> %s\n", i, g.value(g.outputs()[i]).name.c_str(), activations[i].str().c_str());
  }

  // The instructions each backend's kernels run with here (TRACEGRAPH_MAX_CPU_ISA caps them).
  for (const auto& b : backends()) {
    if (b.kernels) std::printf("kernels     %s (%s)\n", b.kernels().c_str(), b.name.c_str());
  }
  const BackendSettings settings{o.threads};

  // Each op, its count, and whether each backend runs it.
  std::vector<std::string> order;
  std::map<std::string, int> counts;
  for (NodeId id : g.nodes()) {
    if (counts[g.node(id).op]++ == 0) order.push_back(g.node(id).op);
  }
  std::map<std::string, std::map<std::string, std::string>> why_not;  // backend -> op -> reason
  for (const auto& b : backends()) {
    for (const auto& u : b.make(settings)->unsupported(g)) why_not[b.name].emplace(u.op, u.why);
  }
  std::printf("\n%-40s %6s", "op", "count");
  for (const auto& b : backends()) std::printf("  %-9s", b.name.c_str());
  std::printf("\n");
  for (const auto& op : order) {
    std::printf("%-40s %6d", op.c_str(), counts[op]);
    for (const auto& b : backends()) std::printf("  %-9s", why_not[b.name].count(op) ? "no" : "yes");
    std::printf("\n");
  }

  // Each backend, as read and optimized, against the reference.
  int failures = 0;
  std::printf("\nruns: max |error| / max |reference|, against %s (tolerance %g)\n", exported ? "the LibTorch backend as read" : reference_name.c_str(), o.tolerance);
  for (const auto& b : backends()) {
    for (bool optimized : {false, true}) {
      const char* variant = optimized ? "optimized" : "as read";
      std::string outcome;
      double worst = 0;
      double run_ms = 0;
      try {
        TracedGraph traced = TracedGraph::from_exported(read, b.make(settings));
        if (optimized) traced.optimize();
        traced.finalize();
        const auto start = Clock::now();
        std::vector<Tensor> out = traced.run(sdk_inputs);
        run_ms = ms_since(start);
        if (reference.empty()) {
          // An exported graph: the LibTorch backend as read is the reference.
          for (const Tensor& t : out) reference.push_back(native::to_aten(t).clone());
        }
        if (out.size() != reference.size()) {
          outcome = "returned " + std::to_string(out.size()) + " outputs, the reference " + std::to_string(reference.size());
        } else {
          for (std::size_t i = 0; i < out.size(); ++i) worst = std::max(worst, relative_error(native::to_aten(out[i]), reference[i]));
          if (!(worst <= o.tolerance)) outcome = "outside the tolerance";
        }
      } catch (const Error& e) {
        outcome = std::string("failed: ") + e.what();
      }
      if (!outcome.empty()) ++failures;
      if (outcome.rfind("failed", 0) == 0) {
        std::printf("  %-9s %-10s %s\n", b.name.c_str(), variant, outcome.c_str());
      } else {
        std::printf("  %-9s %-10s %9.2e  %-4s  %8.2f ms%s%s\n", b.name.c_str(), variant, worst, outcome.empty() ? "ok" : "FAIL", run_ms,
                    outcome.empty() ? "" : "  ", outcome.c_str());
      }
    }
  }
  std::printf("\n%s\n", failures == 0 ? "check: every backend runs the model within the tolerance"
                                       : ("check: " + std::to_string(failures) + " of " + std::to_string(backends().size() * 2) + " runs failed").c_str());
  return failures == 0 ? 0 : 1;
}

}  // namespace tracegraph::cli
