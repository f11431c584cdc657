// Python bytes as the core's owned bytes: a file's contents that the graph's
// weights may view (the shared_ptr keeps them alive as long as any view).
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

namespace tracegraph::python {

inline std::shared_ptr<std::vector<std::byte>> copy_bytes(nanobind::bytes data) {
  auto out = std::make_shared<std::vector<std::byte>>(data.size());
  if (data.size()) std::memcpy(out->data(), data.c_str(), data.size());
  return out;
}

}  // namespace tracegraph::python
