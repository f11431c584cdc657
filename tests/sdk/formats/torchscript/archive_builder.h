// Scripted TorchScript archives made in the tests, from code text: the
// module tree as data.pkl's opcodes and each file under code/ as torch's
// printer writes it (the text torch.jit.save wrote, pasted).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../zip_builder.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/load_limits.h"
#include "tracegraph/torchscript_archive.h"

namespace tracegraph::test {

// A pickled string (BINUNICODE).
inline std::string pickled_string(const std::string& s) {
  std::string out = "X";
  for (int k = 0; k < 4; ++k) out += static_cast<char>((s.size() >> (8 * k)) & 0xff);
  return out + s;
}

// The pickle opcodes of a module object of class `qualified`
// ("__torch__.torch.nn.modules.container.ModuleList") whose state holds
// `attributes`: (name, the value's opcodes), a submodule as module_object's.
inline std::string module_object(const std::string& qualified, const std::vector<std::pair<std::string, std::string>>& attributes = {}) {
  const auto dot = qualified.rfind('.');
  std::string out = "c" + qualified.substr(0, dot) + "\n" + qualified.substr(dot + 1) + "\n)\x81}";
  if (!attributes.empty()) {
    out += "(";
    for (const auto& [name, value] : attributes) out += pickled_string(name) + value;
    out += "u";
  }
  return out + "b";
}

// An archive whose data.pkl holds `root` (module_object's opcodes) and whose
// code/ holds `code`: (path under code/, its text).
inline std::vector<std::byte> scripted_archive(const std::string& root, const std::vector<std::pair<std::string, std::string>>& code) {
  ZipBuilder z;
  z.stored("m/data.pkl", "\x80\x02" + root + ".");
  for (const auto& [path, text] : code) z.stored("m/code/" + path, text);
  return z.finish();
}

// A scripted module `M` without weights or submodules whose class body
// (after the attributes) is `methods`: forward and whatever it calls.
inline std::vector<std::byte> archive(const std::string& methods) {
  return scripted_archive(module_object("__torch__.M"),
                          {{"__torch__.py", "class M(Module):\n  __parameters__ = []\n  __buffers__ = []\n  training : bool\n" + methods}});
}

// `b` read as the file `source`, with these input shapes (none: without them).
inline ExportedGraph read(const std::vector<std::byte>& b, const LoadLimits& limits = {}, const std::vector<Shape>& input_shapes = {},
                          const std::string& source = "hostile.ts") {
  auto owner = std::make_shared<std::vector<std::byte>>(b);
  return read_torchscript_archive(*owner, owner, source, limits, input_shapes);
}

// M's forward of one tensor x returning `expr`.
inline std::string forward_returning(const std::string& expr) {
  return "  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    return " + expr + "\n";
}

}  // namespace tracegraph::test
