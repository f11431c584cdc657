// Shared by the fuzz targets of the graph readers: a graph read from hostile
// bytes is verified and every byte of its constants read, so that a bad view
// shows up under ASan.
#pragma once

#include <cstdint>

#include "tracegraph/exported_graph.h"

inline void verify_and_touch(const tracegraph::ExportedGraph& eg) {
  eg.graph.verify();
  volatile std::uint8_t sink = 0;
  for (auto v : eg.graph.constants()) {
    for (std::byte b : eg.graph.value(v).data.bytes()) sink = sink ^ static_cast<std::uint8_t>(b);
  }
}
