#include "tracegraph/optimizer.h"

#include <cstdio>

#include "support/json_util.h"
#include "tracegraph/op_table.h"
#include "tracegraph/transforms/inplace_to_functional.h"
#include "tracegraph/transforms/transforms.h"

namespace tracegraph {
namespace {

class FunctionTransform final : public Transform {
 public:
  FunctionTransform(std::string name, std::function<std::size_t(Graph&, TransformContext&)> fn)
      : name_(std::move(name)), fn_(std::move(fn)) {}
  std::string name() const override { return name_; }
  std::size_t run(Graph& graph, TransformContext& context) override { return fn_(graph, context); }

 private:
  std::string name_;
  std::function<std::size_t(Graph&, TransformContext&)> fn_;
};

struct Entry {
  const char* name;
  std::size_t (*fn)(Graph&, TransformContext&);
};

// The default pipeline, in order: clean up first, fold, then fuse.
constexpr Entry kDefaults[] = {
    {"inplace_to_functional", &inplace_to_functional_transform},
    {"noop_elimination", &noop_elimination},
    {"constant_folding", &constant_folding},
    {"view_chain_collapse", &view_chain_collapse},
    {"batch_norm_folding", &batch_norm_folding},
    {"activation_fusion", &activation_fusion},
    {"common_subexpression_elimination", &common_subexpression_elimination},
    {"dead_code_elimination", &dead_code_elimination},
};

}  // namespace

std::size_t inplace_to_functional_transform(Graph& graph, TransformContext& context) {
  // All-or-nothing: it checks every in-place op before rewriting any.
  std::size_t pending = 0;
  for (NodeId id : graph.nodes()) pending += is_inplace_op(graph.node(id).op) ? 1 : 0;
  if (pending == 0 || !context.fits(pending)) return 0;
  const std::size_t rewrites = inplace_to_functional(graph);
  for (std::size_t i = 0; i < rewrites; ++i) context.take();
  return rewrites;
}

std::shared_ptr<Transform> make_transform(std::string name, std::function<std::size_t(Graph&, TransformContext&)> fn) {
  return std::make_shared<FunctionTransform>(std::move(name), std::move(fn));
}

std::vector<std::string> default_transform_names() {
  std::vector<std::string> names;
  for (const auto& e : kDefaults) names.emplace_back(e.name);
  return names;
}

std::shared_ptr<Transform> transform_by_name(const std::string& name) {
  for (const auto& e : kDefaults) {
    if (name == e.name) return make_transform(e.name, e.fn);
  }
  std::string known;
  for (const auto& e : kDefaults) known += (known.empty() ? "" : ", ") + std::string(e.name);
  fail(ErrorCode::kNotFound, "no transform named '" + name + "' (known: " + known + ")");
}

std::size_t OptimizeReport::total_rewrites() const {
  std::size_t n = 0;
  for (const auto& t : transforms) n += t.rewrites;
  return n;
}

std::string OptimizeReport::table() const {
  std::string s;
  char line[256];
  std::snprintf(line, sizeof line, "%-36s %6s %9s %10s\n", "transform", "runs", "rewrites", "ms");
  s += line;
  for (const auto& t : transforms) {
    std::snprintf(line, sizeof line, "%-36s %6zu %9zu %10.2f\n", t.name.c_str(), t.runs, t.rewrites, t.milliseconds);
    s += line;
  }
  std::snprintf(line, sizeof line, "%zu sweeps, %s; nodes %zu -> %zu, values %zu -> %zu, %zu rewrites\n", sweeps,
                converged ? "converged" : (budget_exhausted ? "stopped by the rewrite budget" : "stopped at the iteration cap"),
                nodes_before, nodes_after, values_before, values_after, total_rewrites());
  return s + line;
}

std::string OptimizeReport::json(int indent) const {
  detail::Json j = detail::Json::object();
  j["sweeps"] = sweeps;
  j["converged"] = converged;
  j["budget_exhausted"] = budget_exhausted;
  j["nodes_before"] = nodes_before;
  j["nodes_after"] = nodes_after;
  j["values_before"] = values_before;
  j["values_after"] = values_after;
  j["total_rewrites"] = total_rewrites();
  detail::Json list = detail::Json::array();
  for (const auto& t : transforms) {
    list.push_back({{"name", t.name}, {"runs", t.runs}, {"rewrites", t.rewrites}, {"milliseconds", t.milliseconds}});
  }
  j["transforms"] = std::move(list);
  return j.dump(indent);
}

OptimizeReport optimize(Graph& graph, const std::optional<std::vector<std::shared_ptr<Transform>>>& transforms,
                        std::optional<std::size_t> max_iterations, const DefaultsOptions& defaults, const ConstantEvaluator* evaluator) {
  std::vector<std::shared_ptr<Transform>> list;
  if (transforms) {
    list = *transforms;
  } else {
    for (const auto& e : kDefaults) {
      const bool on = defaults.enabled.empty() || defaults.enabled.count(e.name);
      if (on && !defaults.disabled.count(e.name)) list.push_back(make_transform(e.name, e.fn));
    }
  }
  // An unknown name is an error, not a silent no-op.
  for (const auto& name : defaults.disabled) transform_by_name(name);
  for (const auto& name : defaults.enabled) transform_by_name(name);
  graph.verify();
  OptimizeReport report;
  report.nodes_before = graph.num_nodes();
  report.values_before = graph.num_values();
  for (const auto& t : list) report.transforms.push_back({t->name(), 0, 0, 0});
  TransformContext ctx(defaults.rewrite_budget, evaluator, defaults.max_fold_bytes);
  const std::size_t cap = max_iterations.value_or(kDefaultMaxIterations);
  while (report.sweeps < cap) {
    ++report.sweeps;
    std::size_t changed = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      const std::size_t n = list[i]->run(graph, ctx);
      report.transforms[i].milliseconds +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      ++report.transforms[i].runs;
      report.transforms[i].rewrites += n;
      changed += n;
      if (defaults.verify_each) {
        try {
          graph.verify();
        } catch (const Error& e) {
          fail(ErrorCode::kInternal, "transform '" + list[i]->name() + "' left an invalid graph: " + e.message());
        }
      }
    }
    if (ctx.exhausted()) {
      report.budget_exhausted = true;
      break;
    }
    if (changed == 0) {
      report.converged = true;
      break;
    }
  }
  report.nodes_after = graph.num_nodes();
  report.values_after = graph.num_values();
  return report;
}

}  // namespace tracegraph
