// The graph optimizer: an ordered list of transforms run in sweeps until a
// sweep changes nothing or the iteration cap is reached, with a report of
// what each transform did.
//
// A transform has a name, runs on a graph, and returns how many rewrites it
// made. Each rewrite first asks the context for permission (take()), so a
// total rewrite budget can stop the optimizer after N rewrites to bisect a
// bad one. Transforms never change what the graph computes, beyond the float
// rounding of folded constants.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tracegraph/graph.h"

namespace tracegraph {

// Evaluates one node on constant inputs, for constant folding: a backend
// provides it (LibTorch natively). nullopt when it cannot.
class ConstantEvaluator {
 public:
  virtual ~ConstantEvaluator() = default;
  virtual std::optional<std::vector<Tensor>> evaluate(const Node& node, const std::vector<Tensor>& inputs) const = 0;
};

class TransformContext {
 public:
  TransformContext(std::optional<std::size_t> budget, const ConstantEvaluator* evaluator, std::size_t max_fold_bytes)
      : budget_(budget), evaluator_(evaluator), max_fold_bytes_(max_fold_bytes) {}
  // True when one more rewrite may be made (and counts it); false once the budget is spent.
  bool take() {
    if (budget_ && used_ >= *budget_) return false;
    ++used_;
    return true;
  }
  bool exhausted() const { return budget_ && used_ >= *budget_; }
  // True when `n` more rewrites fit in the budget (nothing is counted).
  bool fits(std::size_t n) const { return !budget_ || used_ + n <= *budget_; }
  const ConstantEvaluator* evaluator() const { return evaluator_; }
  std::size_t max_fold_bytes() const { return max_fold_bytes_; }

 private:
  std::optional<std::size_t> budget_;
  std::size_t used_ = 0;
  const ConstantEvaluator* evaluator_;
  std::size_t max_fold_bytes_;
};

class Transform {
 public:
  virtual ~Transform() = default;
  virtual std::string name() const = 0;
  // Returns how many rewrites it made; leaves the graph valid.
  virtual std::size_t run(Graph& graph, TransformContext& context) = 0;
};

// A transform from a name and a function.
std::shared_ptr<Transform> make_transform(std::string name, std::function<std::size_t(Graph&, TransformContext&)> fn);

// The default transforms' names, in the order they run.
std::vector<std::string> default_transform_names();
// A default transform by name; kNotFound for an unknown name.
std::shared_ptr<Transform> transform_by_name(const std::string& name);

struct DefaultsOptions {
  std::set<std::string> enabled;   // when not empty: only these default transforms run, by name
  std::set<std::string> disabled;  // default transforms to leave out, by name
  bool verify_each = true;         // verify() after every transform run
  std::optional<std::size_t> rewrite_budget;  // stop after this many rewrites in total
  std::size_t max_fold_bytes = 16u << 20;     // constant folding makes no constant larger than this
};

inline constexpr std::size_t kDefaultMaxIterations = 16;

struct TransformStats {
  std::string name;
  std::size_t runs = 0;
  std::size_t rewrites = 0;
  double milliseconds = 0;
};

struct OptimizeReport {
  std::size_t sweeps = 0;
  bool converged = false;        // the last sweep changed nothing
  bool budget_exhausted = false;
  std::size_t nodes_before = 0, nodes_after = 0;
  std::size_t values_before = 0, values_after = 0;
  std::vector<TransformStats> transforms;  // in run order

  std::size_t total_rewrites() const;
  std::string table() const;
  std::string json(int indent = -1) const;
};

// Runs `transforms` (nullopt: the defaults, less those disabled) in sweeps.
// max_iterations nullopt: kDefaultMaxIterations.
OptimizeReport optimize(Graph& graph, const std::optional<std::vector<std::shared_ptr<Transform>>>& transforms = std::nullopt,
                        std::optional<std::size_t> max_iterations = std::nullopt, const DefaultsOptions& defaults = {},
                        const ConstantEvaluator* evaluator = nullptr);

}  // namespace tracegraph
