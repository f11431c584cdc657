// Fuzzes the backends, not the loaders: a valid exported test model is edited
// as a hostile or broken file would be (attributes, input shapes, constant
// shapes, which value a node reads), then finalized and run on XNNPACK and on
// LibTorch. Every outcome must be a result or a typed tracegraph::Error other
// than kInternal; an untyped exception, an internal error, a trap or a
// sanitizer report is a finding.
//
// The input is an edit script (tests/fuzz/make_backend_seeds.py writes the
// seeds; docs/fuzzing.md has the format):
//   a model name, then '\n'   (a name not found picks a model by its bytes' sum)
//   edits until the input ends, each a kind byte and its operands:
//     kind % 4 == 0  attribute: u16 node, u8 attribute, then by the attribute's
//                    kind: ints: u8 count % 5 and that many numbers; int: a
//                    number; float: a number or a special (NaN, inf); bool: flipped
//     kind % 4 == 1  input shape: u8 input, u8 rank % 6, rank numbers
//     kind % 4 == 2  constant shape: u16 constant, u8 rank % 5, rank numbers
//                    (zeros of that shape, at most 2^20 elements, replace it)
//     kind % 4 == 3  rewire: u16 node, u8 input slot, u16 value it reads instead
//   a number: u8 s; s < 16 picks an edge case (0, 1, -1, 100000, INT64_MAX, ...),
//   else the next 4 bytes as a little-endian int32.
//
// The models: every exported test model under TRACEGRAPH_FUZZ_MODELS (a ':'
// list of folders; the native preset's build/native/exported and
// exported-zoo by default) whose weights are under 1 MB.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tracegraph/error.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/xnnpack/backend.h"

namespace tg = tracegraph;
namespace fs = std::filesystem;

namespace {

struct Model {
  std::string name;
  tg::ExportedGraph graph;
};

std::vector<Model>& models() {
  static std::vector<Model> all = [] {
    const char* env = std::getenv("TRACEGRAPH_FUZZ_MODELS");
    std::string dirs = env ? env : TRACEGRAPH_FUZZ_DEFAULT_MODELS;
    std::vector<Model> out;
    std::size_t at = 0;
    while (at <= dirs.size()) {
      const std::size_t end = std::min(dirs.find(':', at), dirs.size());
      const fs::path dir = dirs.substr(at, end - at);
      at = end + 1;
      std::error_code ec;
      if (dir.empty() || !fs::is_directory(dir, ec)) continue;
      for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        const fs::path json = entry.path() / (name + ".json");
        const fs::path weights = entry.path() / (name + ".safetensors");
        if (!fs::exists(json) || !fs::exists(weights) || fs::file_size(weights) > (1u << 20)) continue;
        out.push_back({name, tg::load_graph(json.string())});
      }
    }
    std::sort(out.begin(), out.end(), [](const Model& a, const Model& b) { return a.name < b.name; });
    if (out.empty()) {
      std::fprintf(stderr, "fuzz_backends: no exported test models in '%s': run the native preset's tests first "
                           "(export_test_models, export_zoo_small_models) or set TRACEGRAPH_FUZZ_MODELS\n", dirs.c_str());
      std::abort();
    }
    return out;
  }();
  return all;
}

// Reads the edit script from the front; past the end, everything reads 0.
class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  std::uint8_t u8() { return at_ < size_ ? data_[at_++] : 0; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(u8() | (u8() << 8)); }
  std::int64_t number() {
    static constexpr std::int64_t kEdges[16] = {0, 1, -1, 2, 3, -5, 7, 64, 100000, 6000, 30000,
                                               std::numeric_limits<std::int32_t>::max(),
                                               std::numeric_limits<std::int64_t>::max(),
                                               std::numeric_limits<std::int64_t>::min(), -2, 4};
    const std::uint8_t s = u8();
    if (s < 16) return kEdges[s];
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(u8()) << (8 * i);
    return static_cast<std::int32_t>(v);
  }
  double real() {
    const std::uint8_t s = u8();
    switch (s % 8) {
      case 0: return std::numeric_limits<double>::quiet_NaN();
      case 1: return std::numeric_limits<double>::infinity();
      case 2: return -std::numeric_limits<double>::infinity();
      case 3: return 0.5;
      default: return static_cast<double>(number()) / 4;
    }
  }
  std::string line() {
    std::string s;
    while (at_ < size_ && data_[at_] != '\n' && s.size() < 64) s += static_cast<char>(data_[at_++]);
    if (at_ < size_ && data_[at_] == '\n') ++at_;
    return s;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

const Model& pick_model(Reader& r) {
  const std::string name = r.line();
  const auto& all = models();
  for (const Model& m : all)
    if (m.name == name) return m;
  std::size_t sum = 0;
  for (char c : name) sum += static_cast<unsigned char>(c);
  return all[sum % all.size()];
}

void edit_attribute(tg::Graph& g, Reader& r) {
  if (g.nodes().empty()) return;
  const tg::NodeId node = g.nodes()[r.u16() % g.nodes().size()];
  const auto& attributes = g.node(node).attributes;
  if (attributes.empty()) return;
  auto it = attributes.begin();
  std::advance(it, r.u8() % attributes.size());
  const std::string name = it->first;
  tg::AttributeValue value = it->second;
  if (std::holds_alternative<std::vector<std::int64_t>>(value)) {
    std::vector<std::int64_t> v(r.u8() % 5);
    for (auto& x : v) x = r.number();
    value = v;
  } else if (std::holds_alternative<std::int64_t>(value)) {
    value = r.number();
  } else if (std::holds_alternative<double>(value)) {
    value = r.real();
  } else if (std::holds_alternative<bool>(value)) {
    value = !std::get<bool>(value);
  } else {
    return;
  }
  g.set_attribute(node, name, std::move(value));
}

// As the JavaScript setInputShapes does: the input takes the shape, every
// computed value forgets its own.
void edit_input_shape(tg::Graph& g, Reader& r) {
  if (g.inputs().empty()) return;
  const tg::ValueId input = g.inputs()[r.u8() % g.inputs().size()];
  tg::Shape shape(r.u8() % 6);
  for (auto& d : shape) d = r.number();
  tg::checked_nbytes(tg::DType::kFloat32, shape);
  g.set_value_type(input, g.value(input).dtype, tg::symbolic(shape));
  for (tg::ValueId v : g.values()) {
    const tg::Value& value = g.value(v);
    if (!value.is_constant() && value.producer) g.set_value_type(v, value.dtype, std::nullopt);
  }
}

void edit_constant_shape(tg::Graph& g, Reader& r) {
  const auto constants = g.constants();
  if (constants.empty()) return;
  const tg::ValueId old = constants[r.u16() % constants.size()];
  tg::Shape shape(r.u8() % 5);
  std::int64_t numel = 1;
  for (auto& d : shape) {
    d = r.number();
    if (d < 0 || d > (1 << 20)) return;
    numel *= std::max<std::int64_t>(d, 1);
    if (numel > (1 << 20)) return;
  }
  const tg::DType dtype = g.value(old).dtype.value_or(tg::DType::kFloat32);
  const tg::ValueId replacement = g.add_constant(g.unique_value_name(g.value(old).name), tg::Tensor::zeros(dtype, shape));
  g.replace_all_uses(old, replacement);
  g.erase_value(old);
}

void rewire(tg::Graph& g, Reader& r) {
  if (g.nodes().empty()) return;
  const tg::NodeId node = g.nodes()[r.u16() % g.nodes().size()];
  const std::size_t slots = g.node(node).inputs.size();
  const auto values = g.values();
  const std::size_t slot = r.u8();
  const std::size_t pick = r.u16();
  if (slots == 0 || values.empty()) return;
  g.set_node_input(node, slot % slots, values[pick % values.size()]);
}

void apply_edits(tg::Graph& g, const std::uint8_t* data, std::size_t size) {
  Reader r(data, size);
  pick_model(r);
  for (int edits = 0; !r.done() && edits < 16; ++edits) {
    switch (r.u8() % 4) {
      case 0: edit_attribute(g, r); break;
      case 1: edit_input_shape(g, r); break;
      case 2: edit_constant_shape(g, r); break;
      default: rewire(g, r); break;
    }
  }
}

// Zeros for every input, when every input's shape is known and small enough
// for the harness to make (the backend's own limits are what is under test).
std::optional<std::vector<tg::Tensor>> inputs_for(const tg::Graph& g) {
  std::vector<tg::Tensor> inputs;
  for (tg::ValueId v : g.inputs()) {
    const tg::Value& value = g.value(v);
    if (!value.shape) return std::nullopt;
    tg::Shape shape;
    for (const tg::Dim& d : *value.shape) {
      if (!d.is_static()) return std::nullopt;
      shape.push_back(d.size);
    }
    if (tg::checked_numel(shape) > (1 << 22)) return std::nullopt;
    inputs.push_back(tg::Tensor::zeros(value.dtype.value_or(tg::DType::kFloat32), shape));
  }
  return inputs;
}

[[noreturn]] void finding(const char* backend, const std::string& what) {
  std::fprintf(stderr, "fuzz_backends: %s: %s\n", backend, what.c_str());
  std::abort();
}

// Finalizes and runs; returns whether the run completed. kInternal and
// untyped exceptions are findings.
bool finalize_and_run(const char* backend, tg::TracedGraph& g, bool may_run) {
  try {
    g.finalize();
    if (!may_run) return false;
    const auto inputs = inputs_for(g.graph());
    if (!inputs) return false;
    g.run(*inputs);
    return true;
  } catch (const tg::Error& e) {
    if (e.code() == tg::ErrorCode::kInternal) finding(backend, "an internal error: " + std::string(e.what()));
    return false;
  } catch (const std::exception& e) {
    finding(backend, "an untyped exception: " + std::string(e.what()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  models();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader r(data, size);
  const Model& model = pick_model(r);
  // Each backend gets its own copy, edited the same way. Edits that the graph
  // itself refuses (a shape that overflows, a rewire making a cycle) end here.
  auto edited = [&](std::unique_ptr<tg::Backend> backend) -> std::optional<tg::TracedGraph> {
    tg::TracedGraph g = tg::TracedGraph::from_exported(model.graph, std::move(backend));
    try {
      apply_edits(g.mutable_graph(), data, size);
      return g;
    } catch (const tg::Error& e) {
      if (e.code() == tg::ErrorCode::kInternal) finding("graph", "an internal error while editing: " + std::string(e.what()));
      return std::nullopt;
    }
  };
  // A budget well under libFuzzer's memory limit, so that a plan too large is
  // refused (kOutOfMemory) rather than reported as the harness running out;
  // 64 MiB, as kernels under the fuzzer's instrumentation run about ten times
  // slower: a 3D UNet's input of 1x1x39x400x400 planned within 512 MiB, its
  // convolutions measured for 34 s (the per-input timeout is 30 s).
  tg::xnnpack::Options options;
  options.memory_budget = std::size_t{64} << 20;
  auto on_xnnpack = edited(tg::xnnpack::make_backend(options));
  if (!on_xnnpack) return 0;
  const bool ran = finalize_and_run("xnnpack", *on_xnnpack, true);
  // LibTorch has no budget of its own: it runs what XNNPACK ran within its
  // budget, and finalizes everything else.
  auto on_libtorch = edited(tg::native::make_libtorch_backend());
  if (on_libtorch) finalize_and_run("libtorch", *on_libtorch, ran);
  return 0;
}
