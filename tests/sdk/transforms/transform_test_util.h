// Small graph builders for the transform tests: each test shows the graph
// before and after as text (Graph::dump), counts the rewrites, and has a case
// where the transform must not fire. That the numbers do not change is
// checked on LibTorch, for every transform on every test model, in
// tests/native/optimizer_parity_test.cpp.
#pragma once

#include "test_util.h"
#include "tracegraph/op_table.h"
#include "tracegraph/optimizer.h"
#include "tracegraph/transforms/transforms.h"

namespace tracegraph::testing {

inline std::size_t run_transform(std::size_t (*fn)(Graph&, TransformContext&), Graph& g, std::optional<std::size_t> budget = std::nullopt) {
  TransformContext ctx(budget, nullptr, 1 << 20);
  const std::size_t n = fn(g, ctx);
  g.verify();
  return n;
}

inline Attributes args(std::vector<std::string> names, std::initializer_list<std::pair<const char*, AttributeValue>> extra = {}) {
  Attributes a;
  for (const auto& [k, v] : extra) a.set(k, v);
  a.set(std::string(kArgNamesAttribute), std::move(names));
  return a;
}

inline NewValue typed(const char* name, Shape shape, DType dtype = DType::kFloat32) { return NewValue(name, dtype, symbolic(shape)); }

}  // namespace tracegraph::testing
