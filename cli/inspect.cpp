#include "inspect.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tracegraph/activation.h"
#include "tracegraph/geometry.h"
#include "tracegraph/op_table.h"

namespace tracegraph::cli {
namespace {

std::string type_str(const Value& v) {
  std::string s = v.dtype ? std::string(dtype_name(*v.dtype)) : "?";
  return s + (v.shape ? shape_str(*v.shape) : "[?]");
}

std::string thousands(std::int64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

std::string bytes_str(std::size_t n) {
  char buf[32];
  if (n >= (1u << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", n / 1048576.0);
  else if (n >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", n / 1024.0);
  else std::snprintf(buf, sizeof buf, "%zu B", n);
  return buf;
}

// Attributes worth showing beside a node: everything but the bookkeeping.
std::string attrs_str(const Node& n) {
  std::string s;
  for (const auto& [name, value] : n.attributes) {
    if (name == kArgNamesAttribute || name == kOverloadAttribute) continue;
    std::string v;
    if (auto* i = std::get_if<std::int64_t>(&value)) v = std::to_string(*i);
    else if (auto* d = std::get_if<double>(&value)) {
      std::ostringstream os;
      os << *d;
      v = os.str();
    } else if (auto* b = std::get_if<bool>(&value)) v = *b ? "true" : "false";
    else if (auto* str = std::get_if<std::string>(&value)) v = "\"" + *str + "\"";
    else if (auto* ints = std::get_if<std::vector<std::int64_t>>(&value)) v = shape_str(*ints);
    else v = "<" + std::string(attribute_kind(value)) + ">";
    s += (s.empty() ? "" : " ") + name + "=" + v;
  }
  return s;
}

}  // namespace

void inspect_text(const ExportedGraph& eg, const std::string& model) {
  const Graph& g = eg.graph;
  std::size_t params = 0, weight_bytes = 0;
  for (auto c : g.constants()) {
    const Tensor& t = g.value(c).data;
    if (is_floating(t.dtype())) params += static_cast<std::size_t>(t.numel());
    weight_bytes += t.nbytes();
  }
  std::map<std::string, int> op_counts;
  for (auto id : g.nodes()) ++op_counts[g.node(id).op];
  const auto activations = output_activation(g);

  std::cout << "model       " << model << "\n";
  std::cout << "nodes       " << g.num_nodes() << "\n";
  std::cout << "values      " << g.num_values() << " (" << g.constants().size() << " constants)\n";
  std::cout << "parameters  " << thousands(static_cast<std::int64_t>(params)) << " (" << bytes_str(weight_bytes) << " of constants)\n";
  std::cout << "in_spec     " << (eg.in_spec ? eg.in_spec->str() : "(none: read from a signature)") << "\n";
  std::cout << "out_spec    " << (eg.out_spec ? eg.out_spec->str() : "(flat)") << "\n";
  std::cout << "\ninputs\n";
  for (auto v : g.inputs()) std::cout << "  %" << g.value(v).name << ": " << type_str(g.value(v)) << "\n";
  std::cout << "\noutputs and their activation\n";
  for (std::size_t i = 0; i < g.outputs().size(); ++i) {
    const Value& v = g.value(g.outputs()[i]);
    std::cout << "  %" << v.name << ": " << type_str(v) << "  ->  " << activations[i].str();
    if (!activations[i].node.empty()) std::cout << "  (node " << activations[i].node << ", " << activations[i].op << ")";
    std::cout << "\n";
  }
  // What a blockwise run needs: per spatial axis, the sizes the network
  // takes, where the output lies in the input, and its voxel size.
  const auto geometry = network_geometry(g);
  if (!geometry.empty()) std::cout << "\ngeometry (per spatial axis)\n";
  for (const OutputGeometry& o : geometry) {
    for (const AxisGeometry& axis : o.axes) std::cout << "  %" << o.output << " from %" << o.input << ", dim " << axis.dim << ": " << axis.str() << "\n";
  }
  std::cout << "\nops\n";
  std::vector<std::pair<std::string, int>> ops(op_counts.begin(), op_counts.end());
  std::stable_sort(ops.begin(), ops.end(), [](auto& a, auto& b) { return a.second > b.second; });
  for (const auto& [op, n] : ops) std::printf("  %5d  %s\n", n, op.c_str());
  std::cout << "\nnodes (in execution order)\n";
  std::size_t index = 0;
  for (auto id : g.nodes()) {
    const Node& n = g.node(id);
    std::string outs, ins;
    for (auto o : n.outputs) outs += (outs.empty() ? "%" : ", %") + g.value(o).name + ": " + type_str(g.value(o));
    for (auto in : n.inputs) ins += (ins.empty() ? "%" : ", %") + g.value(in).name;
    std::printf("  %4zu  %s = %s(%s)", index++, outs.c_str(), n.op.c_str(), ins.c_str());
    const std::string a = attrs_str(n);
    if (!a.empty()) std::printf("  [%s]", a.c_str());
    std::printf("\n");
  }
  std::cout << "\nconstants\n";
  for (auto c : g.constants()) {
    const Value& v = g.value(c);
    std::cout << "  %" << v.name << ": " << type_str(v) << "\n";
  }
}

}  // namespace tracegraph::cli
