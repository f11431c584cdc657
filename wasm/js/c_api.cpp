// The C functions tracegraph.mjs calls. Every function catches what the core
// throws and leaves it for tg_error_code()/tg_error_message(); a failure
// returns null (pointers) or -1 (ints). Strings returned are malloc'd UTF-8
// that the caller frees with tg_free().
#include <emscripten/emscripten.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tracegraph/activation.h"
#include "tracegraph/error.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/flops.h"
#include "tracegraph/geometry.h"
#include "tracegraph/module_graph.h"
#include "tracegraph/module_tree.h"
#include "tracegraph/node_outputs.h"
#include "tracegraph/op_table.h"
#include "tracegraph/optimizer.h"
#include "tracegraph/pt2.h"
#include "tracegraph/torchscript_archive.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/xnnpack/backend.h"

namespace tg = tracegraph;

namespace {

int g_error_code = 0;
std::string g_error_message;

template <class F>
auto guarded(F&& f, decltype(f()) on_error) -> decltype(f()) {
  try {
    g_error_code = 0;
    g_error_message.clear();
    return f();
  } catch (const tg::Error& e) {
    g_error_code = static_cast<int>(e.code());
    g_error_message = e.message();
  } catch (const std::bad_alloc&) {
    g_error_code = static_cast<int>(tg::ErrorCode::kOutOfMemory);
    g_error_message = "out of memory: an allocation failed";
  } catch (const std::exception& e) {
    g_error_code = static_cast<int>(tg::ErrorCode::kInternal);
    g_error_message = e.what();
  }
  return on_error;
}

std::string quote(const std::string& s) { return nlohmann::json(s).dump(); }

char* copy_string(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (!out) throw std::bad_alloc();
  std::memcpy(out, s.data(), s.size() + 1);
  return out;
}

// Each node's canonical op ("conv", "clip", ...) or null, in node order.
std::string canonical_ops(const tg::Graph& g) {
  std::string out = "[";
  for (std::size_t i = 0; i < g.nodes().size(); ++i) {
    const auto c = tg::canonical_op(g.node(g.nodes()[i]));
    out += (i ? "," : "") + (c ? quote(c->name) : std::string("null"));
  }
  return out + "]";
}

// Each node's FLOPs (node_flops at the graph's shapes) or null where it counts
// none, in node order: the page's per-node numbers, one rule with module_tree's.
std::string node_flops_list(const tg::Graph& g) {
  std::string out = "[";
  for (std::size_t i = 0; i < g.nodes().size(); ++i) {
    const auto f = tg::node_flops(g, g.nodes()[i]);
    out += (i ? "," : "") + (f ? nlohmann::json(*f).dump() : std::string("null"));
  }
  return out + "]";
}

struct Handle {
  tg::TracedGraph graph;
  tg::xnnpack::XnnpackBackend* backend = nullptr;  // owned by graph once finalized
  // The graph's geometry, computed once for tg_geometry and the per-size
  // questions after it; forgotten by every call that changes the graph.
  std::optional<std::vector<tg::OutputGeometry>> geometry;
  // What the reader said of the file (its reader, torch version, a .pt2's
  // example input sizes and symbol ranges), given back by tg_describe.
  std::map<std::string, std::string> metadata;

  const std::vector<tg::OutputGeometry>& network_geometry() {
    if (!geometry) geometry = tg::network_geometry(graph.graph());
    return *geometry;
  }
};

struct Result {
  std::vector<tg::Tensor> outputs;
};

}  // namespace

extern "C" {

EMSCRIPTEN_KEEPALIVE int tg_error_code() { return g_error_code; }
EMSCRIPTEN_KEEPALIVE const char* tg_error_code_name() {
  static std::string name;
  name = std::string(tg::error_code_name(static_cast<tg::ErrorCode>(g_error_code)));
  return name.c_str();
}
EMSCRIPTEN_KEEPALIVE const char* tg_error_message() { return g_error_message.c_str(); }

EMSCRIPTEN_KEEPALIVE void* tg_alloc(std::size_t bytes) { return std::malloc(bytes ? bytes : 1); }
EMSCRIPTEN_KEEPALIVE void tg_free(void* p) { std::free(p); }

// Reads an exported graph. Takes ownership of `weights` (from tg_alloc), also
// on failure; `json` stays the caller's.
EMSCRIPTEN_KEEPALIVE Handle* tg_load(const char* json, std::size_t json_len, void* weights, std::size_t weights_len,
                                     const char* json_name, const char* weights_name) {
  std::shared_ptr<void> owner(weights, std::free);
  return guarded(
      [&]() -> Handle* {
        const auto* bytes = static_cast<const std::byte*>(owner.get());
        tg::ExportedGraph eg = tg::deserialize_graph(std::string_view(json, json_len), {bytes, weights_len}, owner,
                                                     json_name, weights_name);
        auto metadata = std::move(eg.metadata);
        return new Handle{tg::TracedGraph::from_exported(std::move(eg)), nullptr, std::nullopt, std::move(metadata)};
      },
      nullptr);
}

// Reads a model archive, told by what it holds: a torch.export archive
// (.pt2) or a TorchScript archive (torch.jit.save). Takes ownership of
// `bytes` (from tg_alloc), also on failure: the graph's weights are views into it.
// `count` input shapes (ranks and dims as tg_set_input_shapes takes them; 0:
// none) let the TorchScript reader follow scripted code that branches on them,
// and are the graph's input shapes after.
EMSCRIPTEN_KEEPALIVE Handle* tg_load_archive(void* bytes, std::size_t len, const char* name, int count, const int* ranks, const int* dims) {
  std::shared_ptr<void> owner(bytes, std::free);
  return guarded(
      [&]() -> Handle* {
        const std::span<const std::byte> data(static_cast<const std::byte*>(owner.get()), len);
        std::vector<tg::Shape> shapes;
        std::size_t at = 0;
        for (int i = 0; i < count; ++i) {
          shapes.emplace_back(dims + at, dims + at + ranks[i]);
          at += static_cast<std::size_t>(ranks[i]);
        }
        tg::ExportedGraph eg = tg::is_torchscript_archive(data) ? tg::read_torchscript_archive(data, owner, name, {}, shapes)
                                                                : tg::read_pt2(data, owner, name);
        auto metadata = std::move(eg.metadata);
        auto* h = new Handle{tg::TracedGraph::from_exported(std::move(eg)), nullptr, std::nullopt, std::move(metadata)};
        try {
          if (!shapes.empty()) h->graph.set_input_shapes(shapes);
        } catch (...) {
          delete h;
          throw;
        }
        return h;
      },
      nullptr);
}

EMSCRIPTEN_KEEPALIVE void tg_dispose(Handle* h) { delete h; }

// The graph as the exported format's document (no weights), with the output
// activation and the module_graph view beside it.
EMSCRIPTEN_KEEPALIVE char* tg_describe(Handle* h) {
  return guarded(
      [&]() -> char* {
        tg::ExportedGraph eg{h->graph.graph(), h->graph.in_spec(), h->graph.out_spec(), h->metadata};
        std::string out = "{\"graph\":" + tg::graph_json(eg) +
                          ",\"activation\":" + tg::output_activation_json(tg::output_activation(h->graph.graph())) +
                          ",\"module_graph\":" + tg::module_graph_json(tg::module_graph(h->graph.graph())) +
                          ",\"canonical\":" + canonical_ops(h->graph.graph()) +
                          ",\"flops\":" + node_flops_list(h->graph.graph()) +
                          ",\"finalized\":" + (h->graph.is_finalized() ? "true" : "false") + "}";
        return copy_string(out);
      },
      nullptr);
}

// The geometry of the graph (tracegraph/geometry.h), as geometry_json writes
// it: [{"output", "input", "axes": [{"dim", "valid", "lattice", "smallest",
// "output_size", "context", "offset", "stride", "nonlocal"} or {"dim",
// "unknown": {"node", "op", "reason"}}]}].
EMSCRIPTEN_KEEPALIVE char* tg_geometry(Handle* h) {
  return guarded([&]() -> char* { return copy_string(tg::geometry_json(h->network_geometry())); }, nullptr);
}

// For input size `n` along axis `axis` of entry `output` of tg_geometry's list:
// {"output_size": m, "context_after": "p/q"}, or null where the network
// refuses n (the core's AxisGeometry::output_size and context_after). `n` is
// a double so that JavaScript's numbers cross whole; it must be an integer.
EMSCRIPTEN_KEEPALIVE char* tg_geometry_at(Handle* h, int output, int axis, double n) {
  return guarded(
      [&]() -> char* {
        const auto& geometry = h->network_geometry();
        if (output < 0 || static_cast<std::size_t>(output) >= geometry.size())
          tg::fail(tg::ErrorCode::kInvalidArgument, "geometry: no entry " + std::to_string(output) + " (the graph has " +
                                                        std::to_string(geometry.size()) + ")");
        const auto& axes = geometry[static_cast<std::size_t>(output)].axes;
        if (axis < 0 || static_cast<std::size_t>(axis) >= axes.size())
          tg::fail(tg::ErrorCode::kInvalidArgument, "geometry: %" + geometry[static_cast<std::size_t>(output)].output +
                                                        " has no spatial axis " + std::to_string(axis));
        // 2^53: every integer below it is a double exactly.
        if (!(n >= 0 && n <= 9007199254740992.0) || std::floor(n) != n)
          tg::fail(tg::ErrorCode::kInvalidArgument, "geometry: an input size is a non-negative integer, not " + nlohmann::json(n).dump());
        const tg::AxisGeometry& a = axes[static_cast<std::size_t>(axis)];
        const auto size = static_cast<std::int64_t>(n);
        const auto m = a.output_size(size);
        if (!m) return copy_string("null");
        return copy_string("{\"output_size\":" + std::to_string(*m) + ",\"context_after\":" + quote(a.context_after(size)->str()) + "}");
      },
      nullptr);
}

// The module tree (tracegraph/module_tree.h), as module_tree_json writes it.
EMSCRIPTEN_KEEPALIVE char* tg_module_tree(Handle* h) {
  return guarded(
      [&]() -> char* {
        const tg::Graph& g = h->graph.graph();
        return copy_string(tg::module_tree_json(g, tg::module_tree(g)));
      },
      nullptr);
}

// The default pipeline; `disabled` is a comma-separated list of transform names.
// Runs the optimizer with the options of TracedGraph::optimize, as JSON (what
// tracegraph.mjs's optimize() checked): {"transforms": [names] | null,
// "enabled": [names], "disabled": [names], "maxIterations": n | null,
// "rewriteBudget": n | null, "verifyEach": bool}. Unknown names are not_found.
EMSCRIPTEN_KEEPALIVE char* tg_optimize(Handle* h, const char* options_json) {
  return guarded(
      [&]() -> char* {
        const nlohmann::json o = nlohmann::json::parse(options_json ? options_json : "{}", nullptr, false);
        if (!o.is_object()) tg::fail(tg::ErrorCode::kInvalidArgument, "optimize: the options are not a JSON object");
        auto names = [&](const char* key) {
          std::vector<std::string> out;
          if (!o.contains(key) || o[key].is_null()) return out;
          if (!o[key].is_array()) tg::fail(tg::ErrorCode::kInvalidArgument, std::string("optimize: ") + key + " must be a list of names");
          for (const auto& n : o[key]) {
            if (!n.is_string()) tg::fail(tg::ErrorCode::kInvalidArgument, std::string("optimize: ") + key + " must be a list of names");
            out.push_back(n.get<std::string>());
          }
          return out;
        };
        auto count = [&](const char* key) -> std::optional<std::size_t> {
          if (!o.contains(key) || o[key].is_null()) return std::nullopt;
          if (!o[key].is_number_unsigned())
            tg::fail(tg::ErrorCode::kInvalidArgument, std::string("optimize: ") + key + " must be a non-negative integer");
          return o[key].get<std::size_t>();
        };
        tg::DefaultsOptions defaults;
        for (auto& n : names("enabled")) defaults.enabled.insert(std::move(n));
        for (auto& n : names("disabled")) defaults.disabled.insert(std::move(n));
        defaults.rewrite_budget = count("rewriteBudget");
        if (o.contains("verifyEach")) {
          if (!o["verifyEach"].is_boolean()) tg::fail(tg::ErrorCode::kInvalidArgument, "optimize: verifyEach must be a boolean");
          defaults.verify_each = o["verifyEach"].get<bool>();
        }
        std::optional<std::vector<std::shared_ptr<tg::Transform>>> transforms;
        if (o.contains("transforms") && !o["transforms"].is_null()) {
          transforms.emplace();
          for (const auto& n : names("transforms")) transforms->push_back(tg::transform_by_name(n));
        }
        h->geometry.reset();
        return copy_string(h->graph.optimize(transforms, count("maxIterations"), defaults).json());
      },
      nullptr);
}

// Gives the graph inputs these shapes and forgets every other value's shape
// (they follow from the inputs at finalize). Only before finalize.
EMSCRIPTEN_KEEPALIVE int tg_set_input_shapes(Handle* h, int count, const int* ranks, const int* dims) {
  return guarded(
      [&]() -> int {
        std::vector<tg::Shape> shapes;
        std::size_t at = 0;
        for (int i = 0; i < count; ++i) {
          shapes.emplace_back(dims + at, dims + at + ranks[i]);
          at += static_cast<std::size_t>(ranks[i]);
        }
        h->geometry.reset();
        h->graph.set_input_shapes(shapes);
        return 1;
      },
      -1);
}

// Makes every node's value that the graph reads a graph output, after the
// graph's own (the core's expose_node_outputs), so that a run returns each
// node's value: [{"key", "node", "output", "index"}] in node order, `index`
// the place among the outputs. Only before finalize; the outputs are flat
// after it (a structured call() returns them as a list).
EMSCRIPTEN_KEEPALIVE char* tg_expose_node_outputs(Handle* h) {
  return guarded(
      [&]() -> char* {
        if (h->graph.is_finalized()) tg::fail(tg::ErrorCode::kInvalidArgument, "keepNodeOutputs: the graph is finalized; call it before finalize()");
        tg::Graph graph = h->graph.graph();
        const std::vector<tg::NodeOutput> exposed = tg::expose_node_outputs(graph);
        h->graph = tg::TracedGraph(std::move(graph), h->graph.in_spec(), std::nullopt);
        h->geometry.reset();
        std::string out = "[";
        for (std::size_t i = 0; i < exposed.size(); ++i) {
          const tg::NodeOutput& e = exposed[i];
          out += std::string(i ? "," : "") + "{\"key\":" + quote(e.key) + ",\"node\":" + quote(h->graph.graph().node(e.node).name) +
                 ",\"output\":" + std::to_string(e.output) + ",\"index\":" + std::to_string(e.graph_output) + "}";
        }
        return copy_string(out + "]");
      },
      nullptr);
}

// memory_budget_mib: 0 for the platform's default (tg::xnnpack::Options::memory_budget).
// conv_algorithm: 0 fastest, 1 direct, 2 winograd, 3 winograd4 (xnnpack::ConvAlgorithm's order).
EMSCRIPTEN_KEEPALIVE int tg_finalize(Handle* h, int threads, int profile, double memory_budget_mib, int conv_algorithm) {
  return guarded(
      [&]() -> int {
        if (h->graph.is_finalized()) return h->backend ? h->backend->threads() : 1;  // as in C++: once
        h->geometry.reset();
        if (!(memory_budget_mib >= 0)) tg::fail(tg::ErrorCode::kInvalidArgument, "memoryBudget must be a non-negative number of bytes");
        tg::xnnpack::Options options{threads, profile != 0};
        options.memory_budget = static_cast<std::size_t>(std::min(memory_budget_mib * 1048576.0, 4294967295.0));
        if (conv_algorithm < 0 || conv_algorithm > 3)
          tg::fail(tg::ErrorCode::kInvalidArgument, "convAlgorithm: expected 'fastest', 'direct', 'winograd' or 'winograd4'");
        options.conv_algorithm = static_cast<tg::xnnpack::ConvAlgorithm>(conv_algorithm);
        auto backend = std::make_unique<tg::xnnpack::XnnpackBackend>(options);
        tg::xnnpack::XnnpackBackend* raw = backend.get();
        h->graph.set_backend(std::move(backend));
        h->backend = raw;
        h->graph.finalize();
        return raw->threads();
      },
      -1);
}

EMSCRIPTEN_KEEPALIVE int tg_is_finalized(Handle* h) { return h->graph.is_finalized() ? 1 : 0; }

// Runs on `count` inputs; input i is data[i], of dtype dtypes[i] (a DType's
// number), with ranks[i] dims taken in order from `dims`. The data are copied
// in; the result owns the outputs.
EMSCRIPTEN_KEEPALIVE Result* tg_run(Handle* h, int count, void** data, const int* ranks, const int* dims, const int* dtypes) {
  return guarded(
      [&]() -> Result* {
        std::vector<tg::Tensor> inputs;
        std::size_t at = 0;
        for (int i = 0; i < count; ++i) {
          if (dtypes[i] < 0 || static_cast<std::size_t>(dtypes[i]) >= std::size(tg::kAllDTypes))
            tg::fail(tg::ErrorCode::kDTypeMismatch, "input " + std::to_string(i) + ": dtype number " + std::to_string(dtypes[i]));
          const tg::DType dtype = tg::kAllDTypes[dtypes[i]];
          tg::Shape shape(dims + at, dims + at + ranks[i]);
          at += static_cast<std::size_t>(ranks[i]);
          const std::size_t bytes = tg::checked_nbytes(dtype, shape);
          inputs.push_back(tg::Tensor::borrow(data[i], bytes, dtype, std::move(shape)));
        }
        return new Result{h->graph.run(inputs)};
      },
      nullptr);
}

EMSCRIPTEN_KEEPALIVE int tg_result_count(Result* r) { return static_cast<int>(r->outputs.size()); }
EMSCRIPTEN_KEEPALIVE void* tg_result_data(Result* r, int i) { return r->outputs[static_cast<std::size_t>(i)].data(); }
EMSCRIPTEN_KEEPALIVE int tg_result_rank(Result* r, int i) { return static_cast<int>(r->outputs[static_cast<std::size_t>(i)].dim()); }
EMSCRIPTEN_KEEPALIVE int tg_result_dim(Result* r, int i, int d) {
  return static_cast<int>(r->outputs[static_cast<std::size_t>(i)].shape()[static_cast<std::size_t>(d)]);
}
EMSCRIPTEN_KEEPALIVE const char* tg_result_dtype(Result* r, int i) {
  return tg::dtype_name(r->outputs[static_cast<std::size_t>(i)].dtype()).data();
}
EMSCRIPTEN_KEEPALIVE void tg_result_free(Result* r) { delete r; }

// [{"node", "op", "ms", "engine", "flops", "gflops", "layoutChanges", "layoutMs", "columnBlocks", "pixelFold"}] of the last run, when finalized with profiling.
EMSCRIPTEN_KEEPALIVE char* tg_profile(Handle* h) {
  return guarded(
      [&]() -> char* {
        std::string out = "[";
        if (h->backend && h->graph.is_finalized()) {
          bool first = true;
          for (const auto& t : h->backend->profile()) {
            out += std::string(first ? "" : ",") + "{\"node\":" + quote(t.node) +
                   ",\"op\":" + quote(t.op) + ",\"ms\":" + nlohmann::json(t.milliseconds).dump() +
                   ",\"engine\":" + quote(std::string(tg::xnnpack::engine_name(t.engine))) +
                   ",\"flops\":" + nlohmann::json(t.flops).dump() + ",\"gflops\":" + nlohmann::json(t.gflops()).dump() +
                   ",\"layoutChanges\":" + std::to_string(t.layout_changes) + ",\"layoutMs\":" + nlohmann::json(t.layout_milliseconds).dump() +
                   ",\"columnBlocks\":" + std::to_string(t.column_blocks) +
                   ",\"pixelFold\":" + std::to_string(t.pixel_fold) + ",\"winograd\":" + quote(t.winograd) + "}";
            first = false;
          }
        }
        return copy_string(out + "]");
      },
      nullptr);
}

// {"name": {"count", "min", "max", "mean"}} of every float32 constant.
EMSCRIPTEN_KEEPALIVE char* tg_weight_stats(Handle* h) {
  return guarded(
      [&]() -> char* {
        const tg::Graph& g = h->graph.graph();
        std::string out = "{";
        bool first = true;
        for (tg::ValueId v : g.constants()) {
          const tg::Value& value = g.value(v);
          if (value.data.dtype() != tg::DType::kFloat32) continue;
          const float* p = value.data.data_as<float>();
          const std::int64_t n = value.data.numel();
          double lo = n ? p[0] : 0, hi = n ? p[0] : 0, sum = 0;
          for (std::int64_t i = 0; i < n; ++i) {
            lo = std::min<double>(lo, p[i]);
            hi = std::max<double>(hi, p[i]);
            sum += p[i];
          }
          auto num = [](double d) { return std::isfinite(d) ? nlohmann::json(d).dump() : std::string("null"); };
          out += std::string(first ? "" : ",") + quote(value.name) + ":{\"count\":" + std::to_string(n) +
                 ",\"min\":" + num(lo) + ",\"max\":" + num(hi) + ",\"mean\":" + num(n ? sum / static_cast<double>(n) : 0) + "}";
          first = false;
        }
        return copy_string(out + "}");
      },
      nullptr);
}

}  // extern "C"
