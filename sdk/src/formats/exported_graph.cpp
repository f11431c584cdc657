#include "tracegraph/exported_graph.h"

#include <cmath>
#include <filesystem>
#include <queue>
#include <set>
#include <unordered_map>

#include "formats/json_limits.h"
#include "support/json_util.h"
#include "tracegraph/file_io.h"
#include "tracegraph/safetensors.h"

namespace tracegraph {

using detail::Json;
using detail::JsonPlace;

namespace {

constexpr std::string_view kFormatName = "tracegraph";

Json dims_json(const SymbolicShape& shape) {
  Json a = Json::array();
  for (const Dim& d : shape) {
    if (d.is_static()) a.push_back(d.size);
    else a.push_back(d.symbol);
  }
  return a;
}

Json float_json(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  return d;
}

double read_float(const Json& j, const JsonPlace& place) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return std::nan("");
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    place.fail_with(ErrorCode::kSchema, "expected a number or \"nan\", \"inf\", \"-inf\"; found \"" + s + "\"");
  }
  return detail::expect_number(j, place);
}

Json attribute_json(const AttributeValue& value, const std::string& tensor_key) {
  Json a = Json::object();
  a["type"] = std::string(attribute_kind(value));
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          a["value"] = tensor_key;
        } else if constexpr (std::is_same_v<T, double>) {
          a["value"] = float_json(x);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          Json v = Json::array();
          for (double d : x) v.push_back(float_json(d));
          a["value"] = std::move(v);
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          Json v = Json::array();
          for (bool b : x) v.push_back(b);
          a["value"] = std::move(v);
        } else {
          a["value"] = x;
        }
      },
      value);
  return a;
}

std::string weights_key_for_attribute(const Node& n, const std::string& attr) { return "@" + n.name + "." + attr; }

}  // namespace

namespace {

// The document, and the tensors its weights file holds (when `weights` is given).
Json graph_document(const ExportedGraph& eg, std::string_view weights_file_name,
                    std::vector<std::pair<std::string, Tensor>>* weights_out) {
  const Graph& g = eg.graph;
  g.verify();
  // Canonical value order: inputs, constants, node outputs.
  std::vector<ValueId> order = g.inputs();
  for (auto c : g.constants()) order.push_back(c);
  for (auto n : g.nodes()) {
    for (auto o : g.node(n).outputs) order.push_back(o);
  }
  std::unordered_map<std::uint32_t, std::size_t> file_id;
  for (std::size_t i = 0; i < order.size(); ++i) file_id.emplace(order[i].index, i);

  std::set<std::string> weight_names;
  auto add_weight = [&](const std::string& key, const Tensor& t) {
    if (!weight_names.insert(key).second) {
      fail(ErrorCode::kDuplicateName, "export: weights key '" + key + "' is used twice (rename the value or node)");
    }
    if (weights_out) weights_out->emplace_back(key, t);
  };

  Json values = Json::array();
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Value& v = g.value(order[i]);
    Json jv = Json::object();
    jv["id"] = i;
    jv["name"] = v.name;
    if (v.dtype) jv["dtype"] = std::string(dtype_name(*v.dtype));
    if (v.shape) jv["shape"] = dims_json(*v.shape);
    if (v.is_constant()) {
      jv["constant"] = v.name;
      add_weight(v.name, v.data);
    }
    values.push_back(std::move(jv));
  }
  // The modules the nodes are in, numbered as first met (a module's parent
  // before it), so equal graphs write equal documents.
  Json modules = Json::array();
  std::unordered_map<std::uint32_t, std::size_t> module_id;
  auto file_module = [&](ModuleId m) -> std::size_t {
    std::vector<ModuleId> chain;  // m and those above it not written yet, innermost first
    for (ModuleId at = m; at.valid() && !module_id.count(at.index); at = g.module(at).parent) chain.push_back(at);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Module& mod = g.module(*it);
      Json jm = Json::object();
      jm["path"] = mod.path;
      jm["type"] = mod.type;
      jm["parent"] = mod.parent.valid() ? Json(module_id.at(mod.parent.index)) : Json(nullptr);
      modules.push_back(std::move(jm));
      module_id.emplace(it->index, modules.size() - 1);
    }
    return module_id.at(m.index);
  };
  Json nodes = Json::array();
  for (std::size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.node(g.nodes()[i]);
    Json jn = Json::object();
    jn["id"] = i;
    jn["name"] = n.name;
    jn["op"] = n.op;
    Json ins = Json::array();
    for (auto in : n.inputs) ins.push_back(file_id.at(in.index));
    Json outs = Json::array();
    for (auto out : n.outputs) outs.push_back(file_id.at(out.index));
    jn["inputs"] = std::move(ins);
    jn["outputs"] = std::move(outs);
    Json attrs = Json::object();
    for (const auto& [name, value] : n.attributes) {
      std::string key;
      if (const Tensor* t = std::get_if<Tensor>(&value)) {
        key = weights_key_for_attribute(n, name);
        add_weight(key, *t);
      }
      attrs[name] = attribute_json(value, key);
    }
    jn["attributes"] = std::move(attrs);
    if (n.module.valid()) jn["module"] = file_module(n.module);
    nodes.push_back(std::move(jn));
  }
  Json ins = Json::array();
  for (auto v : g.inputs()) ins.push_back(file_id.at(v.index));
  Json outs = Json::array();
  for (auto v : g.outputs()) outs.push_back(file_id.at(v.index));

  Json doc = Json::object();
  doc["format"] = kFormatName;
  doc["schema_version"] = kSchemaVersion;
  Json meta = Json::object();
  for (const auto& [k, v] : eg.metadata) meta[k] = v;
  doc["metadata"] = std::move(meta);
  doc["weights"] = std::string(weights_file_name);
  Json graph = Json::object();
  graph["name"] = g.name();
  graph["values"] = std::move(values);
  graph["nodes"] = std::move(nodes);
  graph["inputs"] = std::move(ins);
  graph["outputs"] = std::move(outs);
  if (!modules.empty()) graph["modules"] = std::move(modules);  // optional: documents without modules read as before
  doc["graph"] = std::move(graph);
  doc["in_spec"] = eg.in_spec ? Json::parse(eg.in_spec->to_json()) : Json(nullptr);
  doc["out_spec"] = eg.out_spec ? Json::parse(eg.out_spec->to_json()) : Json(nullptr);
  return doc;
}

}  // namespace

SerializedGraph serialize_graph(const ExportedGraph& eg, std::string_view weights_file_name) {
  std::vector<std::pair<std::string, Tensor>> weights;
  const Json doc = graph_document(eg, weights_file_name, &weights);
  SerializedGraph out;
  out.json = doc.dump(1) + "\n";
  out.weights = write_safetensors(weights);
  return out;
}

std::string graph_json(const ExportedGraph& graph, int indent) {
  return graph_document(graph, "", nullptr).dump(indent);
}

namespace {

struct FileValue {
  std::string name;
  std::optional<DType> dtype;
  std::optional<SymbolicShape> shape;
  std::optional<std::string> constant_key;
  int producer = -1;  // file index of the node that writes it
  bool is_input = false;
  JsonPlace place;
};

struct FileNode {
  std::string name;
  std::string op;
  std::optional<std::size_t> module;  // index into /graph/modules
  std::vector<std::size_t> inputs;   // indexes into the values array
  std::vector<std::size_t> outputs;
  Attributes attributes;
  JsonPlace place;
};

std::optional<SymbolicShape> read_shape(const Json& j, const JsonPlace& place, const LoadLimits& limits) {
  detail::expect_array(j, place);
  if (j.size() > limits.max_rank) {
    place.fail_with(ErrorCode::kLimitExceeded, "rank " + std::to_string(j.size()) + " is over the limit of " + std::to_string(limits.max_rank));
  }
  SymbolicShape shape;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (j[i].is_string()) {
      std::string sym = j[i].get<std::string>();
      if (sym.empty()) place.at(i).fail_with(ErrorCode::kBadShape, "a symbolic dim needs a name");
      shape.push_back(Dim::sym(std::move(sym)));
    } else {
      std::int64_t d = detail::expect_int(j[i], place.at(i));
      if (d < 0) place.at(i).fail_with(ErrorCode::kBadShape, "negative dim " + std::to_string(d));
      shape.push_back(Dim::of(d));
    }
  }
  // Static dims must also multiply without overflow.
  Shape fixed;
  for (const Dim& d : shape) {
    if (d.is_static()) fixed.push_back(d.size);
  }
  try {
    checked_numel(fixed);
  } catch (const Error& e) {
    place.fail_with(ErrorCode::kBadShape, e.message());
  }
  return shape;
}

AttributeValue read_attribute(const Json& j, const JsonPlace& place, const Safetensors& weights, std::string_view weights_source) {
  detail::expect_object(j, place);
  const std::string kind = detail::expect_string(detail::member(j, "type", place), place.at("type"));
  const Json& v = detail::member(j, "value", place);
  const JsonPlace vp = place.at("value");
  auto list = [&](auto read_one) {
    detail::expect_array(v, vp);
    std::vector<decltype(read_one(v, vp))> out;
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(read_one(v[i], vp.at(i)));
    return out;
  };
  if (kind == "int") return detail::expect_int(v, vp);
  if (kind == "float") return read_float(v, vp);
  if (kind == "bool") return detail::expect_bool(v, vp);
  if (kind == "string") return detail::expect_string(v, vp);
  if (kind == "ints") return list([](const Json& x, const JsonPlace& p) { return detail::expect_int(x, p); });
  if (kind == "floats") return list([](const Json& x, const JsonPlace& p) { return read_float(x, p); });
  if (kind == "bools") {
    auto b = list([](const Json& x, const JsonPlace& p) { return detail::expect_bool(x, p); });
    return std::vector<bool>(b.begin(), b.end());
  }
  if (kind == "strings") return list([](const Json& x, const JsonPlace& p) { return detail::expect_string(x, p); });
  if (kind == "tensor") {
    const std::string key = detail::expect_string(v, vp);
    const Tensor* t = weights.find(key);
    if (!t) vp.fail_with(ErrorCode::kNotFound, "tensor '" + key + "' is not in " + std::string(weights_source));
    return *t;
  }
  place.at("type").fail_with(ErrorCode::kSchema, "unknown attribute type '" + kind + "'");
}

}  // namespace

namespace {

ExportedGraph deserialize_document(const Json& doc, std::span<const std::byte> weight_bytes,
                                   std::shared_ptr<const void> weights_owner, std::string_view json_source,
                                   std::string_view weights_source, const LoadLimits& limits) {
  const JsonPlace root{json_source, ""};
  detail::expect_object(doc, root);
  const std::string format = detail::expect_string(detail::member(doc, "format", root), root.at("format"));
  if (format != kFormatName) root.at("format").fail_with(ErrorCode::kSchema, "format is '" + format + "', expected 'tracegraph'");
  const std::int64_t version = detail::expect_int(detail::member(doc, "schema_version", root), root.at("schema_version"));
  if (version != kSchemaVersion) {
    root.at("schema_version").fail_with(ErrorCode::kUnsupportedVersion, "schema version " + std::to_string(version) +
                                                                            " (this build reads version " + std::to_string(kSchemaVersion) + ")");
  }
  ExportedGraph out;
  if (const Json* meta = detail::optional_member(doc, "metadata", root)) {
    detail::expect_object(*meta, root.at("metadata"));
    for (auto it = meta->begin(); it != meta->end(); ++it) {
      out.metadata[it.key()] = detail::expect_string(it.value(), root.at("metadata").at(it.key()));
    }
  }
  detail::expect_string(detail::member(doc, "weights", root), root.at("weights"));
  const Safetensors weights = parse_safetensors(weight_bytes, std::move(weights_owner), weights_source, limits);

  const JsonPlace gp = root.at("graph");
  const Json& g = detail::expect_object(detail::member(doc, "graph", root), gp);
  out.graph.set_name(detail::expect_string(detail::member(g, "name", gp), gp.at("name")));

  // Values.
  const JsonPlace vsp = gp.at("values");
  const Json& vs = detail::expect_array(detail::member(g, "values", gp), vsp);
  if (vs.size() > limits.max_values) {
    vsp.fail_with(ErrorCode::kLimitExceeded, std::to_string(vs.size()) + " values, over the limit of " + std::to_string(limits.max_values));
  }
  std::vector<FileValue> values;
  values.reserve(vs.size());
  std::unordered_map<std::uint64_t, std::size_t> value_index;  // file id -> index in `values`
  std::unordered_map<std::string, std::size_t> value_names;
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const JsonPlace p = vsp.at(i);
    detail::expect_object(vs[i], p);
    const std::uint64_t id = detail::expect_index(detail::member(vs[i], "id", p), p.at("id"), UINT32_MAX - 1);
    if (!value_index.emplace(id, i).second) p.at("id").fail_with(ErrorCode::kDuplicateId, "value id " + std::to_string(id) + " is defined twice");
    FileValue fv;
    fv.place = p;
    fv.name = detail::expect_string(detail::member(vs[i], "name", p), p.at("name"));
    if (fv.name.empty()) p.at("name").fail_with(ErrorCode::kSchema, "a value needs a name");
    if (!value_names.emplace(fv.name, i).second) p.at("name").fail_with(ErrorCode::kDuplicateName, "value name %" + fv.name + " is used twice");
    if (const Json* d = detail::optional_member(vs[i], "dtype", p)) {
      const std::string text = detail::expect_string(*d, p.at("dtype"));
      fv.dtype = dtype_from_name(text);
      if (!fv.dtype) p.at("dtype").fail_with(ErrorCode::kUnknownDType, "unknown dtype '" + text + "'");
    }
    if (const Json* s = detail::optional_member(vs[i], "shape", p)) fv.shape = read_shape(*s, p.at("shape"), limits);
    if (const Json* c = detail::optional_member(vs[i], "constant", p)) fv.constant_key = detail::expect_string(*c, p.at("constant"));
    values.push_back(std::move(fv));
  }
  auto resolve = [&](const Json& j, const JsonPlace& p) -> std::size_t {
    const std::uint64_t id = detail::expect_index(j, p, UINT64_MAX);
    auto it = value_index.find(id);
    if (it == value_index.end()) p.fail_with(ErrorCode::kDanglingId, "value id " + std::to_string(id) + " is not defined in /graph/values");
    return it->second;
  };

  // Modules (optional): each names its parent by an earlier index, so the
  // table has no cycle and is built in one pass.
  std::vector<ModuleId> module_ids;
  if (const Json* ms = detail::optional_member(g, "modules", gp)) {
    const JsonPlace msp = gp.at("modules");
    detail::expect_array(*ms, msp);
    if (ms->size() > limits.max_nodes) {
      msp.fail_with(ErrorCode::kLimitExceeded, std::to_string(ms->size()) + " modules, over the limit of " + std::to_string(limits.max_nodes));
    }
    for (std::size_t i = 0; i < ms->size(); ++i) {
      const JsonPlace p = msp.at(i);
      detail::expect_object((*ms)[i], p);
      std::string path = detail::expect_string(detail::member((*ms)[i], "path", p), p.at("path"));
      std::string type = detail::expect_string(detail::member((*ms)[i], "type", p), p.at("type"));
      ModuleId parent;
      if (const Json* jp = detail::optional_member((*ms)[i], "parent", p); jp && !jp->is_null()) {
        const std::uint64_t k = detail::expect_index(*jp, p.at("parent"), UINT64_MAX);
        if (k >= i) p.at("parent").fail_with(ErrorCode::kDanglingId, "parent " + std::to_string(k) + " is not an earlier module");
        parent = module_ids[k];
        if (out.graph.module(parent).depth >= limits.max_json_depth) {
          p.at("parent").fail_with(ErrorCode::kLimitExceeded, "modules nest deeper than max_json_depth (" + std::to_string(limits.max_json_depth) + ")");
        }
      }
      module_ids.push_back(out.graph.add_module(std::move(path), std::move(type), parent));
    }
  }

  // Nodes.
  const JsonPlace nsp = gp.at("nodes");
  const Json& ns = detail::expect_array(detail::member(g, "nodes", gp), nsp);
  if (ns.size() > limits.max_nodes) {
    nsp.fail_with(ErrorCode::kLimitExceeded, std::to_string(ns.size()) + " nodes, over the limit of " + std::to_string(limits.max_nodes));
  }
  std::vector<FileNode> nodes;
  nodes.reserve(ns.size());
  std::set<std::uint64_t> node_ids;
  std::set<std::string> node_names;
  for (std::size_t i = 0; i < ns.size(); ++i) {
    const JsonPlace p = nsp.at(i);
    detail::expect_object(ns[i], p);
    const std::uint64_t id = detail::expect_index(detail::member(ns[i], "id", p), p.at("id"), UINT32_MAX - 1);
    if (!node_ids.insert(id).second) p.at("id").fail_with(ErrorCode::kDuplicateId, "node id " + std::to_string(id) + " is defined twice");
    FileNode fn;
    fn.place = p;
    fn.name = detail::expect_string(detail::member(ns[i], "name", p), p.at("name"));
    if (fn.name.empty()) p.at("name").fail_with(ErrorCode::kSchema, "a node needs a name");
    if (!node_names.insert(fn.name).second) p.at("name").fail_with(ErrorCode::kDuplicateName, "node name '" + fn.name + "' is used twice");
    fn.op = detail::expect_string(detail::member(ns[i], "op", p), p.at("op"));
    if (fn.op.empty()) p.at("op").fail_with(ErrorCode::kSchema, "node '" + fn.name + "' has an empty op");
    const Json& ins = detail::expect_array(detail::member(ns[i], "inputs", p), p.at("inputs"));
    for (std::size_t k = 0; k < ins.size(); ++k) fn.inputs.push_back(resolve(ins[k], p.at("inputs").at(k)));
    const Json& outs = detail::expect_array(detail::member(ns[i], "outputs", p), p.at("outputs"));
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const std::size_t v = resolve(outs[k], p.at("outputs").at(k));
      FileValue& fv = values[v];
      if (fv.producer >= 0 || fv.constant_key) {
        p.at("outputs").at(k).fail_with(ErrorCode::kMultipleProducers,
                                        "value %" + fv.name + " is written by node '" + fn.name + "' and " +
                                            (fv.constant_key ? std::string("is a constant") : "by node '" + nodes[fv.producer].name + "'"));
      }
      fv.producer = static_cast<int>(i);
      fn.outputs.push_back(v);
    }
    if (const Json* attrs = detail::optional_member(ns[i], "attributes", p)) {
      detail::expect_object(*attrs, p.at("attributes"));
      for (auto it = attrs->begin(); it != attrs->end(); ++it) {
        fn.attributes.set(it.key(), read_attribute(it.value(), p.at("attributes").at(it.key()), weights, weights_source));
      }
    }
    if (const Json* m = detail::optional_member(ns[i], "module", p); m && !m->is_null()) {
      const std::uint64_t k = detail::expect_index(*m, p.at("module"), UINT64_MAX);
      if (k >= module_ids.size()) p.at("module").fail_with(ErrorCode::kDanglingId, "module " + std::to_string(k) + " is not defined in /graph/modules");
      fn.module = k;
    }
    nodes.push_back(std::move(fn));
  }

  // Graph inputs and outputs.
  std::vector<std::size_t> inputs, outputs;
  const Json& gin = detail::expect_array(detail::member(g, "inputs", gp), gp.at("inputs"));
  for (std::size_t k = 0; k < gin.size(); ++k) {
    const JsonPlace p = gp.at("inputs").at(k);
    const std::size_t v = resolve(gin[k], p);
    FileValue& fv = values[v];
    if (fv.producer >= 0 || fv.constant_key) {
      p.fail_with(ErrorCode::kMultipleProducers, "graph input %" + fv.name + " is also " +
                                                     (fv.constant_key ? std::string("a constant") : "written by node '" + nodes[fv.producer].name + "'"));
    }
    if (fv.is_input) p.fail_with(ErrorCode::kDuplicateId, "graph input %" + fv.name + " is listed twice");
    fv.is_input = true;
    inputs.push_back(v);
  }
  const Json& gout = detail::expect_array(detail::member(g, "outputs", gp), gp.at("outputs"));
  for (std::size_t k = 0; k < gout.size(); ++k) outputs.push_back(resolve(gout[k], gp.at("outputs").at(k)));

  // Every value that is read is defined somewhere; constants have their data.
  auto defined = [&](std::size_t v) { return values[v].producer >= 0 || values[v].is_input || values[v].constant_key; };
  for (const FileNode& fn : nodes) {
    for (std::size_t k = 0; k < fn.inputs.size(); ++k) {
      if (!defined(fn.inputs[k])) {
        fn.place.at("inputs").at(k).fail_with(ErrorCode::kUnproducedOutput, "node '" + fn.name + "' (" + fn.op + ") reads %" +
                                                                                   values[fn.inputs[k]].name + ", which nothing produces");
      }
    }
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (!defined(outputs[k])) {
      gp.at("outputs").at(k).fail_with(ErrorCode::kUnproducedOutput, "graph output %" + values[outputs[k]].name + " is never produced");
    }
  }
  std::vector<Tensor> constant_data(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const FileValue& fv = values[i];
    if (!fv.constant_key) continue;
    const Tensor* t = weights.find(*fv.constant_key);
    if (!t) fv.place.at("constant").fail_with(ErrorCode::kNotFound, "tensor '" + *fv.constant_key + "' is not in " + std::string(weights_source));
    if (fv.dtype && *fv.dtype != t->dtype()) {
      fv.place.at("dtype").fail_with(ErrorCode::kDTypeMismatch, "constant %" + fv.name + " says " + std::string(dtype_name(*fv.dtype)) +
                                                                  ", its data in " + std::string(weights_source) + " is " + std::string(dtype_name(t->dtype())));
    }
    if (fv.shape && *fv.shape != symbolic(t->shape())) {
      fv.place.at("shape").fail_with(ErrorCode::kShapeMismatch, "constant %" + fv.name + " says " + shape_str(*fv.shape) + ", its data in " +
                                                                  std::string(weights_source) + " is " + shape_str(t->shape()));
    }
    constant_data[i] = *t;
  }

  // Order nodes so each runs after the producers of its inputs, keeping file
  // order where it already works; what cannot be ordered is a cycle.
  std::vector<std::size_t> pending(nodes.size(), 0);
  std::vector<std::vector<std::size_t>> readers(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (std::size_t v : nodes[i].inputs) {
      if (values[v].producer >= 0) {
        ++pending[i];
        readers[static_cast<std::size_t>(values[v].producer)].push_back(i);
      }
    }
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<std::size_t> sorted;
  sorted.reserve(nodes.size());
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    sorted.push_back(i);
    for (std::size_t r : readers[i]) {
      if (--pending[r] == 0) ready.push(r);
    }
  }
  if (sorted.size() != nodes.size()) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (pending[i] != 0) {
        nodes[i].place.fail_with(ErrorCode::kCycle, "node '" + nodes[i].name + "' (" + nodes[i].op +
                                                        ") is on a cycle: it depends, through its inputs, on its own outputs");
      }
    }
  }

  // Build the graph: inputs, constants, then nodes, as the writer orders them.
  Graph& graph = out.graph;
  std::vector<ValueId> ids(values.size());
  for (std::size_t v : inputs) ids[v] = graph.add_input(values[v].name, values[v].dtype, values[v].shape);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].constant_key) ids[i] = graph.add_constant(values[i].name, constant_data[i]);
  }
  for (std::size_t i : sorted) {
    FileNode& fn = nodes[i];
    std::vector<ValueId> in;
    for (std::size_t v : fn.inputs) in.push_back(ids[v]);
    std::vector<NewValue> outs;
    for (std::size_t v : fn.outputs) outs.emplace_back(values[v].name, values[v].dtype, values[v].shape);
    const NodeId n = graph.add_node(fn.op, std::move(in), std::move(outs), std::move(fn.attributes), fn.name);
    if (fn.module) graph.set_node_module(n, module_ids[*fn.module]);
    for (std::size_t k = 0; k < fn.outputs.size(); ++k) ids[fn.outputs[k]] = graph.node(n).outputs[k];
  }
  std::vector<ValueId> out_ids;
  for (std::size_t v : outputs) out_ids.push_back(ids[v]);
  graph.set_outputs(std::move(out_ids));

  auto read_spec = [&](std::string_view key) -> std::optional<TreeSpec> {
    const Json* j = detail::optional_member(doc, key, root);
    if (!j || j->is_null()) return std::nullopt;
    try {
      return TreeSpec::from_json(j->dump(), limits.max_json_depth);
    } catch (const Error& e) {
      root.at(key).fail_with(e.code(), e.message());
    }
  };
  out.in_spec = read_spec("in_spec");
  out.out_spec = read_spec("out_spec");
  if (out.in_spec && out.in_spec->num_leaves() != graph.inputs().size()) {
    root.at("in_spec").fail_with(ErrorCode::kTreeSpecMismatch, "in_spec has " + std::to_string(out.in_spec->num_leaves()) +
                                                                   " leaves for " + std::to_string(graph.inputs().size()) + " graph inputs");
  }
  if (out.out_spec && out.out_spec->num_leaves() != graph.outputs().size()) {
    root.at("out_spec").fail_with(ErrorCode::kTreeSpecMismatch, "out_spec has " + std::to_string(out.out_spec->num_leaves()) +
                                                                    " leaves for " + std::to_string(graph.outputs().size()) + " graph outputs");
  }
  graph.verify();
  return out;
}

}  // namespace

ExportedGraph deserialize_graph(std::string_view json, std::span<const std::byte> weight_bytes,
                                std::shared_ptr<const void> weights_owner, std::string_view json_source,
                                std::string_view weights_source, const LoadLimits& limits) {
  if (json.size() > limits.max_file_bytes) {
    fail(ErrorCode::kLimitExceeded, std::string(json_source) + ": " + std::to_string(json.size()) + " bytes is over the limit of " +
                                        std::to_string(limits.max_file_bytes));
  }
  const Json doc = detail::parse_json(json, json_source, detail::json_limits(limits));
  return deserialize_document(doc, weight_bytes, std::move(weights_owner), json_source, weights_source, limits);
}

void save_graph(const ExportedGraph& graph, const std::string& json_path) {
  const std::filesystem::path p(json_path);
  const std::string weights_name = p.stem().string() + ".safetensors";
  const SerializedGraph s = serialize_graph(graph, weights_name);
  write_file_bytes((p.parent_path() / weights_name).string(), s.weights);
  write_file_bytes(json_path, std::as_bytes(std::span(s.json.data(), s.json.size())));
}

ExportedGraph load_graph(const std::string& json_path, const LoadLimits& limits) {
  const std::string json = read_text_file(json_path, limits.max_file_bytes);
  // Only the weights' file name is needed before parsing the rest, but it must
  // not reach outside the JSON's own directory.
  const Json doc = detail::parse_json(json, json_path, detail::json_limits(limits));
  const JsonPlace root{json_path, ""};
  detail::expect_object(doc, root);
  const std::string weights_name = detail::expect_string(detail::member(doc, "weights", root), root.at("weights"));
  if (weights_name.empty() || weights_name.find('/') != std::string::npos || weights_name.find('\\') != std::string::npos ||
      weights_name == "." || weights_name == "..") {
    root.at("weights").fail_with(ErrorCode::kSchema, "weights must be a plain file name beside the JSON, found '" + weights_name + "'");
  }
  const std::string weights_path = (std::filesystem::path(json_path).parent_path() / weights_name).string();
  auto bytes = read_file_bytes(weights_path, limits.max_file_bytes);
  std::span<const std::byte> view(bytes->data(), bytes->size());
  return deserialize_document(doc, view, std::move(bytes), json_path, weights_path, limits);
}

}  // namespace tracegraph
