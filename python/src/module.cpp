// tracegraph._core: the C++ core and the XNNPACK backend for Python, a thin
// edge over the same calls the C++ and JavaScript APIs make. The Python
// package (python/tracegraph/) gives it the seeds' surface: TracedGraph,
// load, trace, module_graph, output_activation.
//
// Tensors cross without copies: inputs are borrowed from the caller's arrays
// (held alive until the backend lets go of them), outputs are numpy arrays
// over the backend's own buffers. Errors are tracegraph.Error subclasses, one
// per ErrorCode (errors.cpp).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "arrays.h"
#include "bytes.h"
#include "errors.h"
#include "tracegraph/activation.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/file_io.h"
#include "tracegraph/flops.h"
#include "tracegraph/geometry.h"
#include "tracegraph/module_graph.h"
#include "tracegraph/module_tree.h"
#include "tracegraph/op_table.h"
#include "tracegraph/optimizer.h"
#include "tracegraph/pt2.h"
#include "tracegraph/torchscript_archive.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/xnnpack/backend.h"

namespace nb = nanobind;
namespace tg = tracegraph;
using namespace nb::literals;

namespace {

// A loaded model: the core's TracedGraph and the XNNPACK backend it runs on.
// Runs of one graph are serialized (the backend's buffers are the graph's
// own); the GIL is released while a run computes.
struct Model {
  tg::TracedGraph graph;
  tg::xnnpack::XnnpackBackend* backend = nullptr;  // owned by `graph` once finalized
  std::mutex run_mutex;

  explicit Model(tg::ExportedGraph eg) : graph(tg::TracedGraph::from_exported(std::move(eg))) {}
};

std::shared_ptr<const void> keep(std::shared_ptr<std::vector<std::byte>> bytes) { return bytes; }

std::unique_ptr<Model> model_from_archive(std::span<const std::byte> data, std::shared_ptr<const void> owner,
                                          const std::string& name, const std::vector<tg::Shape>& shapes) {
  tg::ExportedGraph eg;
  if (tg::is_torchscript_archive(data)) {
    eg = tg::read_torchscript_archive(data, owner, name, {}, shapes);
  } else if (tg::is_pt2_archive(data)) {
    eg = tg::read_pt2(data, owner, name);
  } else {
    tg::fail(tg::ErrorCode::kUnsupported, name + ": neither a torch.export archive (.pt2) nor a TorchScript archive "
                                                  "(torch.jit.save); an exported graph is read from its .json path");
  }
  auto model = std::make_unique<Model>(std::move(eg));
  if (!shapes.empty()) model->graph.set_input_shapes(shapes);
  return model;
}

// A .pt2, a TorchScript file, or an exported graph by its .json (weights beside it).
std::unique_ptr<Model> load_path(const std::string& path, const std::vector<tg::Shape>& shapes) {
  if (std::filesystem::path(path).extension() == ".json") {
    auto model = std::make_unique<Model>(tg::load_graph(path));
    if (!shapes.empty()) model->graph.set_input_shapes(shapes);
    return model;
  }
  auto bytes = tg::read_file_bytes(path, tg::LoadLimits{}.max_file_bytes);
  return model_from_archive({bytes->data(), bytes->size()}, keep(bytes), path, shapes);
}

std::unique_ptr<Model> load_bytes(nb::bytes data, const std::string& name, const std::vector<tg::Shape>& shapes) {
  auto bytes = tracegraph::python::copy_bytes(data);
  return model_from_archive({bytes->data(), bytes->size()}, keep(bytes), name, shapes);
}

std::unique_ptr<Model> load_exported(const std::string& json, nb::bytes weights, const std::string& json_name,
                                     const std::string& weights_name) {
  auto bytes = tracegraph::python::copy_bytes(weights);
  return std::make_unique<Model>(
      tg::deserialize_graph(json, {bytes->data(), bytes->size()}, keep(bytes), json_name, weights_name));
}

nb::object attribute_to_python(const tg::AttributeValue& v) {
  return std::visit(
      [](const auto& x) -> nb::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, tg::Tensor>) {
          return tracegraph::python::to_numpy(x);
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          nb::list out;
          for (bool b : x) out.append(nb::bool_(b));
          return out;
        } else {
          return nb::cast(x);
        }
      },
      v);
}

nb::object shape_to_python(const std::optional<tg::SymbolicShape>& shape) {
  if (!shape) return nb::none();
  nb::list out;
  for (const auto& d : *shape) {
    if (d.is_static()) out.append(d.size);
    else out.append(d.symbol);
  }
  return nb::tuple(out);
}

// The node's FLOPs at its values' shapes where they are all known and static
// (the core's rule, tracegraph/flops.h); None otherwise.
nb::object flops_of(const tg::Graph& g, tg::NodeId id) {
  const auto flops = tg::node_flops(g, id);
  return flops ? nb::cast(*flops) : nb::none();
}

// Each node as a dict: name, op, canonical op, input and output value names, attributes.
nb::list nodes_of(const tg::Graph& g) {
  nb::list out;
  for (tg::NodeId id : g.nodes()) {
    const tg::Node& n = g.node(id);
    nb::dict d;
    d["name"] = n.name;
    d["op"] = n.op;
    const auto canonical = tg::canonical_op(n);
    d["canonical"] = canonical ? nb::cast(canonical->name) : nb::none();
    nb::list inputs, outputs;
    for (tg::ValueId v : n.inputs) inputs.append(v.valid() ? nb::cast(g.value(v).name) : nb::none());
    for (tg::ValueId v : n.outputs) outputs.append(g.value(v).name);
    d["inputs"] = inputs;
    d["outputs"] = outputs;
    nb::dict attrs;
    for (const auto& [key, value] : n.attributes) attrs[key.c_str()] = attribute_to_python(value);
    d["attributes"] = attrs;
    d["flops"] = flops_of(g, id);
    // The innermost module's path (None: the root's own node, or not known),
    // and the frames from the outermost as (path, type).
    nb::list frames;
    for (const tg::ModuleFrame& f : g.module_path(id)) frames.append(nb::make_tuple(f.path, f.type));
    d["module"] = n.module.valid() ? nb::cast(g.module(n.module).path) : nb::none();
    d["module_path"] = frames;
    out.append(d);
  }
  return out;
}

// Every value by name: dtype (or None), shape (a tuple whose symbolic dims are
// their symbols, or None), whether it is a constant, and its producer.
nb::dict values_of(const tg::Graph& g) {
  nb::dict out;
  for (tg::ValueId id : g.values()) {
    const tg::Value& v = g.value(id);
    nb::dict d;
    d["dtype"] = v.dtype ? nb::cast(std::string(tg::dtype_name(*v.dtype))) : nb::none();
    d["shape"] = shape_to_python(v.shape);
    d["constant"] = v.is_constant();
    d["producer"] = v.producer ? nb::cast(g.node(*v.producer).name) : nb::none();
    out[v.name.c_str()] = d;
  }
  return out;
}

std::optional<std::string> spec_json(const std::optional<tg::TreeSpec>& spec) {
  return spec ? std::optional<std::string>(spec->to_json()) : std::nullopt;
}

void finalize(Model& m, int threads, bool profile, std::size_t memory_budget, const std::string& conv_algorithm) {
  if (m.graph.is_finalized()) return;  // as in C++: once
  if (threads < 0) tg::fail(tg::ErrorCode::kInvalidArgument, "finalize: threads must be 0 (every core) or more");
  tg::xnnpack::Options options{threads, profile};
  options.memory_budget = memory_budget;
  options.conv_algorithm = tg::xnnpack::conv_algorithm_from(conv_algorithm);
  auto backend = std::make_unique<tg::xnnpack::XnnpackBackend>(options);
  tg::xnnpack::XnnpackBackend* raw = backend.get();
  m.graph.set_backend(std::move(backend));
  m.backend = raw;
  nb::gil_scoped_release release;
  m.graph.finalize();
}

// Runs on inputs in order (a vector) or by name (a map), with the GIL released
// and the graph's runs taking turns; the borrowed views let go of the caller's
// arrays before the GIL is taken again (arrays.cpp takes it for that).
template <class Inputs>
nb::list run_inputs(Model& m, Inputs inputs) {
  std::vector<tg::Tensor> outputs;
  {
    nb::gil_scoped_release release;
    std::lock_guard lock(m.run_mutex);
    outputs = m.graph.run(inputs);
    inputs.clear();
  }
  nb::list out;
  for (auto& t : outputs) out.append(tracegraph::python::to_numpy(std::move(t)));
  return out;
}

nb::list run_list(Model& m, const nb::list& arrays) {
  std::vector<tg::Tensor> inputs;
  for (std::size_t i = 0; i < arrays.size(); ++i) inputs.push_back(tracegraph::python::borrow(arrays[i], "input " + std::to_string(i)));
  return run_inputs(m, std::move(inputs));
}

nb::list run_named(Model& m, const nb::dict& arrays) {
  std::map<std::string, tg::Tensor> named;
  for (auto [key, value] : arrays) {
    const std::string name = nb::cast<std::string>(key);
    named.emplace(name, tracegraph::python::borrow(value, "input '" + name + "'"));
  }
  return run_inputs(m, std::move(named));
}

// Milliseconds of each of `runs` runs timed inside C++ (the inputs borrowed
// once): what a run costs without Python's call around it, for the benchmark.
std::vector<double> time_runs(Model& m, const nb::list& arrays, int runs) {
  std::vector<tg::Tensor> inputs;
  for (std::size_t i = 0; i < arrays.size(); ++i) inputs.push_back(tracegraph::python::borrow(arrays[i], "input " + std::to_string(i)));
  std::vector<double> out;
  nb::gil_scoped_release release;
  std::lock_guard lock(m.run_mutex);
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    m.graph.run(inputs);
    out.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  inputs.clear();
  return out;
}

tg::OptimizeReport optimize(Model& m, const std::optional<std::vector<std::string>>& transforms,
                            std::optional<std::size_t> max_iterations, const std::vector<std::string>& enabled,
                            const std::vector<std::string>& disabled, bool verify_each, std::optional<std::size_t> rewrite_budget) {
  tg::DefaultsOptions defaults;
  defaults.enabled.insert(enabled.begin(), enabled.end());
  defaults.disabled.insert(disabled.begin(), disabled.end());
  defaults.verify_each = verify_each;
  defaults.rewrite_budget = rewrite_budget;
  std::optional<std::vector<std::shared_ptr<tg::Transform>>> chosen;
  if (transforms) {
    chosen.emplace();
    for (const auto& name : *transforms) chosen->push_back(tg::transform_by_name(name));
  }
  return m.graph.optimize(chosen, max_iterations, defaults);
}

nb::list profile_of(const Model& m) {
  nb::list out;
  if (!m.backend) return out;
  for (const auto& t : m.backend->profile()) {
    nb::dict d;
    d["node"] = t.node;
    d["op"] = t.op;
    d["milliseconds"] = t.milliseconds;
    d["engine"] = std::string(tg::xnnpack::engine_name(t.engine));
    d["flops"] = t.flops;
    out.append(d);
  }
  return out;
}

nb::tuple view_of(const tg::ModuleGraph& view) {
  nb::list nodes;
  for (const auto& n : view.nodes) {
    nb::dict d;
    d["op"] = n.op;
    d["inputs"] = n.inputs;
    d["outputs"] = n.outputs;
    if (n.min) d["min"] = *n.min;
    if (n.max) d["max"] = *n.max;
    nodes.append(d);
  }
  return nb::make_tuple(nodes, view.output.empty() ? nb::none() : nb::cast(view.output), view.outputs);
}

// The graph a (nodes, output) view describes, for output_activation: each
// node's op and value names; a clip's constant min and max as its attributes
// (the names the op table reads for that op).
tg::Graph graph_of_view(const nb::list& nodes, const std::vector<std::string>& outputs) {
  tg::Graph g;
  auto value = [&](const std::string& name) {
    if (auto v = g.find_value(name)) return *v;
    return g.add_input(name);
  };
  std::size_t index = 0;
  for (nb::handle h : nodes) {
    const std::string where = "module_graph view: node " + std::to_string(index++);
    if (!nb::isinstance<nb::dict>(h)) tg::fail(tg::ErrorCode::kInvalidArgument, where + " is not a dict");
    nb::dict d = nb::borrow<nb::dict>(h);
    if (!d.contains("op")) tg::fail(tg::ErrorCode::kInvalidArgument, where + " has no \"op\"");
    const std::string op = nb::cast<std::string>(d["op"]);
    std::vector<tg::ValueId> inputs;
    if (d.contains("inputs")) {
      for (nb::handle i : d["inputs"]) inputs.push_back(value(nb::cast<std::string>(i)));
    }
    std::vector<tg::NewValue> outs;
    if (d.contains("outputs")) {
      for (nb::handle o : d["outputs"]) {
        const std::string name = nb::cast<std::string>(o);
        if (g.find_value(name)) tg::fail(tg::ErrorCode::kMultipleProducers, where + " (" + op + ") writes '" + name + "' again");
        outs.emplace_back(name);
      }
    }
    tg::Attributes attrs;
    const std::string base(tg::op_base(op));
    const bool hardtanh = base.rfind("hardtanh", 0) == 0;
    if (d.contains("min")) attrs.set(hardtanh ? "min_val" : "min", nb::cast<double>(d["min"]));
    if (d.contains("max")) attrs.set(hardtanh ? "max_val" : "max", nb::cast<double>(d["max"]));
    g.add_node(op, std::move(inputs), std::move(outs), std::move(attrs));
  }
  std::vector<tg::ValueId> out_ids;
  for (const auto& name : outputs) {
    auto v = g.find_value(name);
    if (!v) tg::fail(tg::ErrorCode::kUnproducedOutput, "module_graph view: the output '" + name + "' is no value of the graph");
    out_ids.push_back(*v);
  }
  g.set_outputs(out_ids);
  return g;
}

// The module tree as dicts, one per group in the tree's order: path, type,
// parent and children (indexes), nodes (names), node_count, parameters,
// flops, signature (an int), repeat_of, repeats.
nb::list module_tree_of(const tg::Graph& g) {
  const tg::ModuleTree tree = tg::module_tree(g);
  nb::list out;
  for (const tg::ModuleGroup& group : tree.groups) {
    nb::dict d;
    d["path"] = group.path;
    d["type"] = group.type;
    d["parent"] = group.parent ? nb::cast(*group.parent) : nb::none();
    d["children"] = group.children;
    nb::list nodes;
    for (tg::NodeId id : group.nodes) nodes.append(g.node(id).name);
    d["nodes"] = nodes;
    d["node_count"] = group.node_count;
    d["parameters"] = group.parameters;
    d["flops"] = group.flops;
    d["signature"] = group.signature;
    d["repeat_of"] = group.repeat_of ? nb::cast(*group.repeat_of) : nb::none();
    d["repeats"] = group.repeats;
    out.append(d);
  }
  return out;
}

// A tree spec as nested dicts: {"kind", "keys", "type_name", "children"}.
nb::dict spec_tree(const tg::TreeSpec& spec) {
  nb::dict d;
  d["kind"] = std::string(tg::tree_kind_name(spec.kind()));
  d["keys"] = spec.keys();
  d["type_name"] = spec.type_name();
  nb::list children;
  for (const auto& c : spec.children()) children.append(spec_tree(c));
  d["children"] = children;
  return d;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "The tracegraph core and its XNNPACK backend (use the tracegraph package, not this module)";
  tracegraph::python::register_errors(m);

  nb::class_<tg::Activation>(m, "Activation", "What a graph output applies last (tracegraph.output_activation)")
      .def_prop_ro("kind", [](const tg::Activation& a) { return std::string(tg::activation_kind_name(a.kind)); })
      .def_ro("dim", &tg::Activation::dim)
      .def_ro("min", &tg::Activation::min)
      .def_ro("max", &tg::Activation::max)
      .def_ro("after", &tg::Activation::after, "range-keeping ops applied after it, in order")
      .def_ro("node", &tg::Activation::node, "the node that applies it (empty for none from an input)")
      .def_ro("op", &tg::Activation::op, "that node's op, the format's own name")
      .def_prop_ro("channels",
                   [](const tg::Activation& a) {
                     nb::list out;
                     for (const auto& c : a.channels) {
                       nb::dict d;
                       d["begin"] = c.begin;
                       d["end"] = c.end;
                       d["kind"] = std::string(tg::activation_kind_name(c.kind));
                       if (c.dim) d["dim"] = *c.dim;
                       if (c.min) d["min"] = *c.min;
                       if (c.max) d["max"] = *c.max;
                       out.append(d);
                     }
                     return out;
                   })
      .def("json", [](const tg::Activation& a) { return tg::output_activation_json({a}); })
      .def("__str__", &tg::Activation::str)
      .def("__repr__", [](const tg::Activation& a) { return "Activation(" + a.str() + ")"; });

  nb::class_<tg::Rational>(m, "Rational", "An exact fraction (num / den, den > 0, in lowest terms): a geometry's offset, stride, context")
      .def(nb::init<>())
      .def_static("of",
                  [](std::int64_t num, std::int64_t den) {
                    if (den == 0) tg::fail(tg::ErrorCode::kInvalidArgument, "Rational.of: the denominator is 0");
                    return tg::Rational::of(num, den);
                  },
                  "num"_a, "den"_a = 1)
      .def_ro("num", &tg::Rational::num)
      .def_ro("den", &tg::Rational::den)
      .def("value", &tg::Rational::value, "as a float")
      .def("is_integer", &tg::Rational::is_integer)
      .def("__float__", &tg::Rational::value)
      .def("__eq__", [](const tg::Rational& a, const tg::Rational& b) { return a == b; }, nb::is_operator())
      .def("__eq__", [](const tg::Rational& a, std::int64_t b) { return a == tg::Rational::of(b); }, nb::is_operator())
      .def("__hash__", [](const tg::Rational& a) { return nb::hash(nb::make_tuple(a.num, a.den)); })
      .def("__str__", &tg::Rational::str)
      .def("__repr__", [](const tg::Rational& a) { return "Rational(" + a.str() + ")"; });

  nb::class_<tg::AxisGeometry::Lattice>(m, "Lattice", "Accepted input sizes that are exactly first + step * k, k >= 0")
      .def_ro("first", &tg::AxisGeometry::Lattice::first)
      .def_ro("step", &tg::AxisGeometry::Lattice::step)
      .def("__repr__", [](const tg::AxisGeometry::Lattice& l) {
        return "Lattice(first=" + std::to_string(l.first) + ", step=" + std::to_string(l.step) + ")";
      });

  nb::class_<tg::AxisGeometry>(m, "AxisGeometry",
                               "One spatial axis of one output, relative to one input (tracegraph.network_geometry)")
      .def_ro("dim", &tg::AxisGeometry::dim, "the axis: its dim in the input and the output (2 for D of N, C, D, H, W)")
      .def_prop_ro("known", &tg::AxisGeometry::known)
      .def_ro("unknown_node", &tg::AxisGeometry::unknown_node, "where the analysis lost the axis ('' when known)")
      .def_ro("unknown_op", &tg::AxisGeometry::unknown_op)
      .def_ro("unknown_reason", &tg::AxisGeometry::unknown_reason)
      .def_ro("period", &tg::AxisGeometry::period)
      .def_ro("periodic_from", &tg::AxisGeometry::periodic_from)
      .def_ro("growth", &tg::AxisGeometry::growth)
      .def_ro("output_sizes", &tg::AxisGeometry::output_sizes, "output_sizes[n - 1] for the first sizes n (0: refused)")
      .def_ro("finite", &tg::AxisGeometry::finite, "the accepted sizes are the finitely many in output_sizes")
      .def_ro("lattice", &tg::AxisGeometry::lattice, "the accepted sizes as first + step * k when exactly that; else None")
      .def_ro("offset", &tg::AxisGeometry::offset, "output voxel i's centre lies at input coordinate offset + stride * i")
      .def_ro("stride", &tg::AxisGeometry::stride)
      .def_ro("reach", &tg::AxisGeometry::reach,
              "output voxel i depends on the input voxels within reach of its centre (the receptive field's radius)")
      .def_ro("edge_effects", &tg::AxisGeometry::edge_effects,
              "an op on the way pads or clamps at an edge: output voxels near it differ from a run on a larger input")
      .def("halo", &tg::AxisGeometry::halo,
           "input voxels a block reads beyond its context per side for outputs equal to the whole run's (0: valid)")
      .def_ro("nonlocal_nodes", &tg::AxisGeometry::nonlocal,
              "nodes whose values depend on the whole axis (C++'s nonlocal, a keyword in Python)")
      .def("accepts", &tg::AxisGeometry::accepts, "n"_a)
      .def("output_size", &tg::AxisGeometry::output_size, "n"_a, "the output size for input size n; None where n is refused")
      .def("smallest", &tg::AxisGeometry::smallest, "the smallest accepted input size; None when none")
      .def("context_before", &tg::AxisGeometry::context_before, "the input voxels cut before the output's first voxel")
      .def("context_after", &tg::AxisGeometry::context_after, "n"_a,
           "the input voxels after the output's last voxel for input size n; None where n is refused")
      .def("valid_sizes_str", &tg::AxisGeometry::valid_sizes_str, "'44 + 8k', '16k, k >= 1', 'n >= 3', '44 or 45', 'none'")
      .def("__str__", &tg::AxisGeometry::str)
      .def("__repr__", [](const tg::AxisGeometry& a) { return "AxisGeometry(dim " + std::to_string(a.dim) + ": " + a.str() + ")"; });

  nb::class_<tg::OutputGeometry>(m, "OutputGeometry", "The geometry of one output relative to one spatial input, per spatial axis")
      .def_ro("output", &tg::OutputGeometry::output)
      .def_ro("input", &tg::OutputGeometry::input)
      .def_ro("axes", &tg::OutputGeometry::axes)
      .def("json", [](const tg::OutputGeometry& o, int indent) { return tg::geometry_json({o}, indent); }, "indent"_a = -1)
      .def("__repr__", [](const tg::OutputGeometry& o) {
        std::string s = "OutputGeometry(%" + o.output + " from %" + o.input;
        for (const auto& a : o.axes) s += "; dim " + std::to_string(a.dim) + ": " + a.str();
        return s + ")";
      });

  m.def("geometry_json", &tg::geometry_json, "geometry"_a, "indent"_a = -1,
        "The geometry as the CLI's inspect --json writes it (its \"geometry\" key)");

  nb::class_<tg::OptimizeReport>(m, "OptimizeReport", "What optimize() did: sweeps, and per transform its runs, rewrites and time")
      .def_ro("sweeps", &tg::OptimizeReport::sweeps)
      .def_ro("converged", &tg::OptimizeReport::converged)
      .def_ro("budget_exhausted", &tg::OptimizeReport::budget_exhausted)
      .def_ro("nodes_before", &tg::OptimizeReport::nodes_before)
      .def_ro("nodes_after", &tg::OptimizeReport::nodes_after)
      .def_ro("values_before", &tg::OptimizeReport::values_before)
      .def_ro("values_after", &tg::OptimizeReport::values_after)
      .def_prop_ro("total_rewrites", &tg::OptimizeReport::total_rewrites)
      .def_prop_ro("transforms",
                   [](const tg::OptimizeReport& r) {
                     nb::list out;
                     for (const auto& t : r.transforms) {
                       nb::dict d;
                       d["name"] = t.name;
                       d["runs"] = t.runs;
                       d["rewrites"] = t.rewrites;
                       d["milliseconds"] = t.milliseconds;
                       out.append(d);
                     }
                     return out;
                   })
      .def("json", &tg::OptimizeReport::json, "indent"_a = -1)
      .def("table", &tg::OptimizeReport::table)
      .def("__str__", &tg::OptimizeReport::table);

  nb::class_<Model>(m, "Model", "A loaded graph on the XNNPACK backend (tracegraph.TracedGraph holds one)")
      .def_prop_ro("name", [](const Model& x) { return x.graph.graph().name(); })
      .def_prop_ro("input_names", [](const Model& x) { return x.graph.input_names(); })
      .def_prop_ro("output_names", [](const Model& x) { return x.graph.output_names(); })
      .def_prop_ro("in_spec_json", [](const Model& x) { return spec_json(x.graph.in_spec()); })
      .def_prop_ro("out_spec_json", [](const Model& x) { return x.graph.out_spec().to_json(); })
      .def_prop_ro("device", [](const Model& x) { return x.graph.device().str(); })
      .def_prop_ro("backend", [](const Model&) { return std::string("xnnpack"); })
      .def_prop_ro("threads", [](const Model& x) { return x.backend ? x.backend->threads() : 0; })
      .def("nodes", [](const Model& x) { return nodes_of(x.graph.graph()); })
      .def("values", [](const Model& x) { return values_of(x.graph.graph()); })
      .def("document", [](const Model& x, int indent) {
             tg::ExportedGraph eg{x.graph.graph(), x.graph.in_spec(), x.graph.out_spec(), {}};
             return tg::graph_json(eg, indent);
           }, "indent"_a = -1)
      .def("dump", [](const Model& x) { return x.graph.graph().dump(); })
      .def("serialize",
           [](const Model& x) {
             const tg::SerializedGraph sg = tg::serialize_graph(
                 tg::ExportedGraph{x.graph.graph(), x.graph.in_spec(), x.graph.out_spec(), {}}, "weights.safetensors");
             return nb::make_tuple(sg.json, nb::bytes(reinterpret_cast<const char*>(sg.weights.data()), sg.weights.size()));
           },
           "The graph in the exported format: (the JSON document, the safetensors weights' bytes)")
      .def("set_input_shapes", [](Model& x, const std::vector<tg::Shape>& shapes) { x.graph.set_input_shapes(shapes); })
      .def("optimize", &optimize, "transforms"_a.none(), "max_iterations"_a.none(), "enabled"_a, "disabled"_a,
           "verify_each"_a, "rewrite_budget"_a.none())
      .def("to",
           [](Model& x, const std::string& where) {
             // The backend comes at finalize() (it takes finalize's options): its
             // refusal of a device it can never run on is asked at once, as C++'s is.
             if (!x.backend) tg::xnnpack::XnnpackBackend().check_device(tg::Device::parse(where));
             x.graph.to(where);
           })
      .def("finalize", &finalize, "threads"_a, "profile"_a, "memory_budget"_a, "conv_algorithm"_a)
      .def("is_finalized", [](const Model& x) { return x.graph.is_finalized(); })
      .def("run", &run_list)
      .def("run_named", &run_named)
      .def("profile", &profile_of)
      .def("time_runs", &time_runs, "inputs"_a, "runs"_a)
      .def("output_activation", [](const Model& x) { return tg::output_activation(x.graph.graph()); })
      .def("module_graph", [](const Model& x) { return view_of(tg::module_graph(x.graph.graph())); })
      .def("network_geometry", [](const Model& x) { return tg::network_geometry(x.graph.graph()); })
      .def("module_tree", [](const Model& x) { return module_tree_of(x.graph.graph()); })
      .def("module_tree_json", [](const Model& x, int indent) {
             const tg::Graph& g = x.graph.graph();
             return tg::module_tree_json(g, tg::module_tree(g), indent);
           }, "indent"_a = -1);

  m.def("load_path", &load_path, "path"_a, "input_shapes"_a);
  m.def("load_bytes", &load_bytes, "data"_a, "name"_a, "input_shapes"_a);
  m.def("load_exported", &load_exported, "json"_a, "weights"_a, "json_name"_a, "weights_name"_a);
  m.def("view_activation", [](const nb::list& nodes, const std::vector<std::string>& outputs) {
    return tg::output_activation(graph_of_view(nodes, outputs));
  });
  m.def("tree_spec_str", [](const std::string& json) { return tg::TreeSpec::from_json(json).str(); });
  m.def("tree_spec_tree", [](const std::string& json) { return spec_tree(tg::TreeSpec::from_json(json)); });
  m.def("parse_device", [](const std::string& text) { return tg::Device::parse(text).str(); });
  m.def("instruction_set", &tg::xnnpack::XnnpackBackend::instruction_set);
  m.def("lowered_ops", &tg::xnnpack::lowered_ops);
  m.def("transform_names", &tg::default_transform_names);
}
