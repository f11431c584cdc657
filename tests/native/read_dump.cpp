// tracegraph_read_dump FILE...: reads each model file by every reader that
// takes it and prints one line per file: the path, then per reader a hash of
// the graph's JSON (ids, names, attributes, weights' layout) or the error's
// code. tests/native/determinism_test.py runs it in two processes and
// compares: the same bytes must give the same graph, ids and names in every
// process (nothing may follow pointer order or a hash seed).
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>

#include "tracegraph/error.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/pt2.h"
#include "tracegraph/torchscript_archive.h"

namespace {

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// "name=HASH/NODES" of what `read` gives, or "name=error:CODE".
std::string reading(const char* name, const std::function<tracegraph::ExportedGraph()>& read) {
  try {
    const tracegraph::ExportedGraph g = read();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%016llx/%zu", static_cast<unsigned long long>(fnv1a(tracegraph::graph_json(g))), g.graph.num_nodes());
    return std::string(name) + "=" + buf;
  } catch (const tracegraph::Error& e) {
    return std::string(name) + "=error:" + std::string(tracegraph::error_code_name(e.code()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string path = argv[i];
    std::string line = path;
    if (tracegraph::is_pt2_file(path)) {
      line += " " + reading("pt2", [&] { return tracegraph::load_pt2(path); });
    } else {
      line += " " + reading("core", [&] { return tracegraph::load_torchscript_archive(path); });
      line += " " + reading("libtorch", [&] { return tracegraph::native::read_torchscript(path); });
    }
    std::printf("%s\n", line.c_str());
  }
  return 0;
}
