#include "tracegraph/backend.h"

#include <map>

#include "tracegraph/error.h"

namespace tracegraph {

namespace {
BackendFactory& default_backend_slot() {
  static BackendFactory factory = nullptr;
  return factory;
}
}  // namespace

void set_default_backend(BackendFactory factory) { default_backend_slot() = factory; }
BackendFactory default_backend() { return default_backend_slot(); }

void fail_if_unsupported(std::string_view backend, const std::vector<UnsupportedNode>& nodes) {
  if (nodes.empty()) return;
  // Ops in the order they first appear, each with its nodes.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const UnsupportedNode*>> by_op;
  for (const auto& n : nodes) {
    auto& list = by_op[n.op];
    if (list.empty()) order.push_back(n.op);
    list.push_back(&n);
  }
  std::string message = "the " + std::string(backend) + " backend cannot run " + std::to_string(nodes.size()) +
                        (nodes.size() == 1 ? " node" : " nodes") + " (" + std::to_string(order.size()) +
                        (order.size() == 1 ? " op" : " ops") + "): ";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& list = by_op[order[i]];
    message += (i ? "; " : "") + order[i] + " x" + std::to_string(list.size()) + " (";
    constexpr std::size_t kNamed = 3;  // a few nodes by name, then a count
    for (std::size_t k = 0; k < list.size() && k < kNamed; ++k) message += (k ? ", " : "") + list[k]->node;
    if (list.size() > kNamed) message += ", and " + std::to_string(list.size() - kNamed) + " more";
    message += ": " + list.front()->why + ")";
  }
  fail(ErrorCode::kUnsupported, message);
}

}  // namespace tracegraph
