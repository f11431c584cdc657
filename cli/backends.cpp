#include "backends.h"

#include <algorithm>

#include "tracegraph/error.h"

namespace tracegraph::cli {
namespace {

// A function-local static: registrations run during static initialization,
// in an order between files that C++ does not fix.
std::vector<BackendEntry>& registry() {
  static std::vector<BackendEntry> entries;
  return entries;
}

}  // namespace

void register_backend(BackendEntry entry) {
  auto& entries = registry();
  const auto at = std::upper_bound(entries.begin(), entries.end(), entry.order,
                                   [](int order, const BackendEntry& e) { return order < e.order; });
  entries.insert(at, std::move(entry));
}

const std::vector<BackendEntry>& backends() { return registry(); }

std::string backend_names() {
  std::string names;
  const auto& entries = registry();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == entries.size() ? " or " : ", ") + entries[i].name;
  }
  return names;
}

const BackendEntry& find_backend(const std::string& name) {
  for (const auto& e : registry()) {
    if (e.name == name) return e;
  }
  fail(ErrorCode::kInvalidArgument, "--backend '" + name + "': expected " + backend_names());
}

}  // namespace tracegraph::cli
